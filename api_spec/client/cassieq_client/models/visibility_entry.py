from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="VisibilityEntry")



@_attrs_define
class VisibilityEntry:
    """ 
        Attributes:
            pop_receipt (str):
            visibility_timeout_seconds (int):
            body (None | str | Unset):
     """

    pop_receipt: str
    visibility_timeout_seconds: int
    body: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        pop_receipt = self.pop_receipt

        visibility_timeout_seconds = self.visibility_timeout_seconds

        body: None | str | Unset
        if isinstance(self.body, Unset):
            body = UNSET
        else:
            body = self.body


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "popReceipt": pop_receipt,
            "visibilityTimeoutSeconds": visibility_timeout_seconds,
        })
        if body is not UNSET:
            field_dict["body"] = body

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        pop_receipt = d.pop("popReceipt")

        visibility_timeout_seconds = d.pop("visibilityTimeoutSeconds")

        def _parse_body(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        body = _parse_body(d.pop("body", UNSET))


        visibility_entry = cls(
            pop_receipt=pop_receipt,
            visibility_timeout_seconds=visibility_timeout_seconds,
            body=body,
        )


        visibility_entry.additional_properties = d
        return visibility_entry

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
