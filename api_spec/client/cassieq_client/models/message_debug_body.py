from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="MessageDebugBody")



@_attrs_define
class MessageDebugBody:
    """ 
        Attributes:
            acked (bool):
            created_at (int):
            dead_lettered (bool):
            delivery_count (int):
            message (str):
            monoton (int):
            next_visible_on (int):
            republished_to (int | None):
            tag (str):
            updated_at (int):
            version (int):
     """

    acked: bool
    created_at: int
    dead_lettered: bool
    delivery_count: int
    message: str
    monoton: int
    next_visible_on: int
    republished_to: int | None
    tag: str
    updated_at: int
    version: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        acked = self.acked

        created_at = self.created_at

        dead_lettered = self.dead_lettered

        delivery_count = self.delivery_count

        message = self.message

        monoton = self.monoton

        next_visible_on = self.next_visible_on

        republished_to: int | None
        republished_to = self.republished_to

        tag = self.tag

        updated_at = self.updated_at

        version = self.version


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "acked": acked,
            "createdAt": created_at,
            "deadLettered": dead_lettered,
            "deliveryCount": delivery_count,
            "message": message,
            "monoton": monoton,
            "nextVisibleOn": next_visible_on,
            "republishedTo": republished_to,
            "tag": tag,
            "updatedAt": updated_at,
            "version": version,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        acked = d.pop("acked")

        created_at = d.pop("createdAt")

        dead_lettered = d.pop("deadLettered")

        delivery_count = d.pop("deliveryCount")

        message = d.pop("message")

        monoton = d.pop("monoton")

        next_visible_on = d.pop("nextVisibleOn")

        def _parse_republished_to(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        republished_to = _parse_republished_to(d.pop("republishedTo"))


        tag = d.pop("tag")

        updated_at = d.pop("updatedAt")

        version = d.pop("version")

        message_debug_body = cls(
            acked=acked,
            created_at=created_at,
            dead_lettered=dead_lettered,
            delivery_count=delivery_count,
            message=message,
            monoton=monoton,
            next_visible_on=next_visible_on,
            republished_to=republished_to,
            tag=tag,
            updated_at=updated_at,
            version=version,
        )


        message_debug_body.additional_properties = d
        return message_debug_body

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
