from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.subscription_body_mode import SubscriptionBodyMode






T = TypeVar("T", bound="SubscriptionBody")



@_attrs_define
class SubscriptionBody:
    """ 
        Attributes:
            created_at (str):
            mode (SubscriptionBodyMode):
            name (str):
            position (str):
            start (str):
     """

    created_at: str
    mode: SubscriptionBodyMode
    name: str
    position: str
    start: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        mode = self.mode.value

        name = self.name

        position = self.position

        start = self.start


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "createdAt": created_at,
            "mode": mode,
            "name": name,
            "position": position,
            "start": start,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = d.pop("createdAt")

        mode = SubscriptionBodyMode(d.pop("mode"))




        name = d.pop("name")

        position = d.pop("position")

        start = d.pop("start")

        subscription_body = cls(
            created_at=created_at,
            mode=mode,
            name=name,
            position=position,
            start=start,
        )


        subscription_body.additional_properties = d
        return subscription_body

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
