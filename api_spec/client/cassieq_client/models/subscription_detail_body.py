from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.subscription_detail_body_mode import SubscriptionDetailBodyMode
from typing import cast






T = TypeVar("T", bound="SubscriptionDetailBody")



@_attrs_define
class SubscriptionDetailBody:
    """ 
        Attributes:
            created_at (str):
            lag (int):
            mode (SubscriptionDetailBodyMode):
            name (str):
            oldest_unacked_age_seconds (float | None):
            position (str):
            start (str):
     """

    created_at: str
    lag: int
    mode: SubscriptionDetailBodyMode
    name: str
    oldest_unacked_age_seconds: float | None
    position: str
    start: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        lag = self.lag

        mode = self.mode.value

        name = self.name

        oldest_unacked_age_seconds: float | None
        oldest_unacked_age_seconds = self.oldest_unacked_age_seconds

        position = self.position

        start = self.start


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "createdAt": created_at,
            "lag": lag,
            "mode": mode,
            "name": name,
            "oldestUnackedAgeSeconds": oldest_unacked_age_seconds,
            "position": position,
            "start": start,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = d.pop("createdAt")

        lag = d.pop("lag")

        mode = SubscriptionDetailBodyMode(d.pop("mode"))




        name = d.pop("name")

        def _parse_oldest_unacked_age_seconds(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        oldest_unacked_age_seconds = _parse_oldest_unacked_age_seconds(d.pop("oldestUnackedAgeSeconds"))


        position = d.pop("position")

        start = d.pop("start")

        subscription_detail_body = cls(
            created_at=created_at,
            lag=lag,
            mode=mode,
            name=name,
            oldest_unacked_age_seconds=oldest_unacked_age_seconds,
            position=position,
            start=start,
        )


        subscription_detail_body.additional_properties = d
        return subscription_detail_body

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
