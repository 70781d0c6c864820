from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="StatisticsBody")



@_attrs_define
class StatisticsBody:
    """ 
        Attributes:
            acked (int):
            dead_lettered (int):
            delivered (int):
            in_flight (int):
            published (int):
            size (int):
     """

    acked: int
    dead_lettered: int
    delivered: int
    in_flight: int
    published: int
    size: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        acked = self.acked

        dead_lettered = self.dead_lettered

        delivered = self.delivered

        in_flight = self.in_flight

        published = self.published

        size = self.size


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "acked": acked,
            "deadLettered": dead_lettered,
            "delivered": delivered,
            "inFlight": in_flight,
            "published": published,
            "size": size,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        acked = d.pop("acked")

        dead_lettered = d.pop("deadLettered")

        delivered = d.pop("delivered")

        in_flight = d.pop("inFlight")

        published = d.pop("published")

        size = d.pop("size")

        statistics_body = cls(
            acked=acked,
            dead_lettered=dead_lettered,
            delivered=delivered,
            in_flight=in_flight,
            published=published,
            size=size,
        )


        statistics_body.additional_properties = d
        return statistics_body

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
