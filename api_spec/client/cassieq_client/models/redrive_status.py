from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="RedriveStatus")



@_attrs_define
class RedriveStatus:
    """ 
        Attributes:
            failed (int):
            moved (int):
            status (str):
            to (None | str):
            total (int):
     """

    failed: int
    moved: int
    status: str
    to: None | str
    total: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        failed = self.failed

        moved = self.moved

        status = self.status

        to: None | str
        to = self.to

        total = self.total


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "failed": failed,
            "moved": moved,
            "status": status,
            "to": to,
            "total": total,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        failed = d.pop("failed")

        moved = d.pop("moved")

        status = d.pop("status")

        def _parse_to(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        to = _parse_to(d.pop("to"))


        total = d.pop("total")

        redrive_status = cls(
            failed=failed,
            moved=moved,
            status=status,
            to=to,
            total=total,
        )


        redrive_status.additional_properties = d
        return redrive_status

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
