from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.subscription_options_body_mode import SubscriptionOptionsBodyMode
from ..types import UNSET, Unset






T = TypeVar("T", bound="SubscriptionOptionsBody")



@_attrs_define
class SubscriptionOptionsBody:
    """ 
        Attributes:
            mode (SubscriptionOptionsBodyMode):
            start (str | Unset): earliest, latest or an RFC 3339 time with its offset ("2026-11-27T09:00:00Z") Default:
                'latest'.
     """

    mode: SubscriptionOptionsBodyMode
    start: str | Unset = 'latest'
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        mode = self.mode.value

        start = self.start


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "mode": mode,
        })
        if start is not UNSET:
            field_dict["start"] = start

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        mode = SubscriptionOptionsBodyMode(d.pop("mode"))




        start = d.pop("start", UNSET)

        subscription_options_body = cls(
            mode=mode,
            start=start,
        )


        subscription_options_body.additional_properties = d
        return subscription_options_body

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
