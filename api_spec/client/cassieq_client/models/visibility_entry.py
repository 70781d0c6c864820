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
            body (None | str | Unset):
            visibility_timeout_seconds (int | None | Unset):
     """

    pop_receipt: str
    body: None | str | Unset = UNSET
    visibility_timeout_seconds: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        pop_receipt = self.pop_receipt

        body: None | str | Unset
        if isinstance(self.body, Unset):
            body = UNSET
        else:
            body = self.body

        visibility_timeout_seconds: int | None | Unset
        if isinstance(self.visibility_timeout_seconds, Unset):
            visibility_timeout_seconds = UNSET
        else:
            visibility_timeout_seconds = self.visibility_timeout_seconds


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "popReceipt": pop_receipt,
        })
        if body is not UNSET:
            field_dict["body"] = body
        if visibility_timeout_seconds is not UNSET:
            field_dict["visibilityTimeoutSeconds"] = visibility_timeout_seconds

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        pop_receipt = d.pop("popReceipt")

        def _parse_body(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        body = _parse_body(d.pop("body", UNSET))


        def _parse_visibility_timeout_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        visibility_timeout_seconds = _parse_visibility_timeout_seconds(d.pop("visibilityTimeoutSeconds", UNSET))


        visibility_entry = cls(
            pop_receipt=pop_receipt,
            body=body,
            visibility_timeout_seconds=visibility_timeout_seconds,
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
