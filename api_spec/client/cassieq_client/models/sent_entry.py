from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="SentEntry")



@_attrs_define
class SentEntry:
    """ 
        Attributes:
            id (str):
            message_tag (str):
            duplicate (bool | None | Unset):
            sequence_number (None | str | Unset):
     """

    id: str
    message_tag: str
    duplicate: bool | None | Unset = UNSET
    sequence_number: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        message_tag = self.message_tag

        duplicate: bool | None | Unset
        if isinstance(self.duplicate, Unset):
            duplicate = UNSET
        else:
            duplicate = self.duplicate

        sequence_number: None | str | Unset
        if isinstance(self.sequence_number, Unset):
            sequence_number = UNSET
        else:
            sequence_number = self.sequence_number


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "id": id,
            "messageTag": message_tag,
        })
        if duplicate is not UNSET:
            field_dict["duplicate"] = duplicate
        if sequence_number is not UNSET:
            field_dict["sequenceNumber"] = sequence_number

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        message_tag = d.pop("messageTag")

        def _parse_duplicate(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        duplicate = _parse_duplicate(d.pop("duplicate", UNSET))


        def _parse_sequence_number(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        sequence_number = _parse_sequence_number(d.pop("sequenceNumber", UNSET))


        sent_entry = cls(
            id=id,
            message_tag=message_tag,
            duplicate=duplicate,
            sequence_number=sequence_number,
        )


        sent_entry.additional_properties = d
        return sent_entry

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
