from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.outgoing_entry_attributes import OutgoingEntryAttributes





T = TypeVar("T", bound="OutgoingEntry")



@_attrs_define
class OutgoingEntry:
    """ 
        Attributes:
            body (str):
            attributes (OutgoingEntryAttributes | Unset):
            deduplication_id (None | str | Unset): 1-128 characters: letters, digits and ASCII punctuation (no space)
            delay_seconds (int | None | Unset):
            group_id (None | str | Unset): 1-128 characters: letters, digits and ASCII punctuation (no space)
            partition_key (None | str | Unset):
     """

    body: str
    attributes: OutgoingEntryAttributes | Unset = UNSET
    deduplication_id: None | str | Unset = UNSET
    delay_seconds: int | None | Unset = UNSET
    group_id: None | str | Unset = UNSET
    partition_key: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.outgoing_entry_attributes import OutgoingEntryAttributes # noqa: PLC0415
        body = self.body

        attributes: dict[str, Any] | Unset = UNSET
        if not isinstance(self.attributes, Unset):
            attributes = self.attributes.to_dict()

        deduplication_id: None | str | Unset
        if isinstance(self.deduplication_id, Unset):
            deduplication_id = UNSET
        else:
            deduplication_id = self.deduplication_id

        delay_seconds: int | None | Unset
        if isinstance(self.delay_seconds, Unset):
            delay_seconds = UNSET
        else:
            delay_seconds = self.delay_seconds

        group_id: None | str | Unset
        if isinstance(self.group_id, Unset):
            group_id = UNSET
        else:
            group_id = self.group_id

        partition_key: None | str | Unset
        if isinstance(self.partition_key, Unset):
            partition_key = UNSET
        else:
            partition_key = self.partition_key


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "body": body,
        })
        if attributes is not UNSET:
            field_dict["attributes"] = attributes
        if deduplication_id is not UNSET:
            field_dict["deduplicationId"] = deduplication_id
        if delay_seconds is not UNSET:
            field_dict["delaySeconds"] = delay_seconds
        if group_id is not UNSET:
            field_dict["groupId"] = group_id
        if partition_key is not UNSET:
            field_dict["partitionKey"] = partition_key

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.outgoing_entry_attributes import OutgoingEntryAttributes # noqa: PLC0415
        d = dict(src_dict)
        body = d.pop("body")

        _attributes = d.pop("attributes", UNSET)
        attributes: OutgoingEntryAttributes | Unset
        if isinstance(_attributes,  Unset):
            attributes = UNSET
        else:
            attributes = OutgoingEntryAttributes.from_dict(_attributes)




        def _parse_deduplication_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        deduplication_id = _parse_deduplication_id(d.pop("deduplicationId", UNSET))


        def _parse_delay_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        delay_seconds = _parse_delay_seconds(d.pop("delaySeconds", UNSET))


        def _parse_group_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        group_id = _parse_group_id(d.pop("groupId", UNSET))


        def _parse_partition_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        partition_key = _parse_partition_key(d.pop("partitionKey", UNSET))


        outgoing_entry = cls(
            body=body,
            attributes=attributes,
            deduplication_id=deduplication_id,
            delay_seconds=delay_seconds,
            group_id=group_id,
            partition_key=partition_key,
        )


        outgoing_entry.additional_properties = d
        return outgoing_entry

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
