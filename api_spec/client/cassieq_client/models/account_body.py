from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.account_body_keys import AccountBodyKeys





T = TypeVar("T", bound="AccountBody")



@_attrs_define
class AccountBody:
    """ 
        Attributes:
            account_name (str):
            keys (AccountBodyKeys):
     """

    account_name: str
    keys: AccountBodyKeys
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.account_body_keys import AccountBodyKeys # noqa: PLC0415
        account_name = self.account_name

        keys = self.keys.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "accountName": account_name,
            "keys": keys,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.account_body_keys import AccountBodyKeys # noqa: PLC0415
        d = dict(src_dict)
        account_name = d.pop("accountName")

        keys = AccountBodyKeys.from_dict(d.pop("keys"))




        account_body = cls(
            account_name=account_name,
            keys=keys,
        )


        account_body.additional_properties = d
        return account_body

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
