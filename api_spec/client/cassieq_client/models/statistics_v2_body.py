from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.statistics_detail_body import StatisticsDetailBody





T = TypeVar("T", bound="StatisticsV2Body")



@_attrs_define
class StatisticsV2Body:
    """ 
        Attributes:
            acked (int):
            dead_letter_pending (int):
            dead_lettered (int):
            delayed (int):
            delivered (int):
            expired (int):
            in_flight (int):
            oldest_message_age_seconds (float | None):
            published (int):
            size (int):
            visible (int):
            detail (None | StatisticsDetailBody | Unset):
     """

    acked: int
    dead_letter_pending: int
    dead_lettered: int
    delayed: int
    delivered: int
    expired: int
    in_flight: int
    oldest_message_age_seconds: float | None
    published: int
    size: int
    visible: int
    detail: None | StatisticsDetailBody | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.statistics_detail_body import StatisticsDetailBody # noqa: PLC0415
        acked = self.acked

        dead_letter_pending = self.dead_letter_pending

        dead_lettered = self.dead_lettered

        delayed = self.delayed

        delivered = self.delivered

        expired = self.expired

        in_flight = self.in_flight

        oldest_message_age_seconds: float | None
        oldest_message_age_seconds = self.oldest_message_age_seconds

        published = self.published

        size = self.size

        visible = self.visible

        detail: dict[str, Any] | None | Unset
        if isinstance(self.detail, Unset):
            detail = UNSET
        elif isinstance(self.detail, StatisticsDetailBody):
            detail = self.detail.to_dict()
        else:
            detail = self.detail


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "acked": acked,
            "deadLetterPending": dead_letter_pending,
            "deadLettered": dead_lettered,
            "delayed": delayed,
            "delivered": delivered,
            "expired": expired,
            "inFlight": in_flight,
            "oldestMessageAgeSeconds": oldest_message_age_seconds,
            "published": published,
            "size": size,
            "visible": visible,
        })
        if detail is not UNSET:
            field_dict["detail"] = detail

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.statistics_detail_body import StatisticsDetailBody # noqa: PLC0415
        d = dict(src_dict)
        acked = d.pop("acked")

        dead_letter_pending = d.pop("deadLetterPending")

        dead_lettered = d.pop("deadLettered")

        delayed = d.pop("delayed")

        delivered = d.pop("delivered")

        expired = d.pop("expired")

        in_flight = d.pop("inFlight")

        def _parse_oldest_message_age_seconds(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        oldest_message_age_seconds = _parse_oldest_message_age_seconds(d.pop("oldestMessageAgeSeconds"))


        published = d.pop("published")

        size = d.pop("size")

        visible = d.pop("visible")

        def _parse_detail(data: object) -> None | StatisticsDetailBody | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                detail_type_0 = StatisticsDetailBody.from_dict(data)



                return detail_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | StatisticsDetailBody | Unset, data)

        detail = _parse_detail(d.pop("detail", UNSET))


        statistics_v2_body = cls(
            acked=acked,
            dead_letter_pending=dead_letter_pending,
            dead_lettered=dead_lettered,
            delayed=delayed,
            delivered=delivered,
            expired=expired,
            in_flight=in_flight,
            oldest_message_age_seconds=oldest_message_age_seconds,
            published=published,
            size=size,
            visible=visible,
            detail=detail,
        )


        statistics_v2_body.additional_properties = d
        return statistics_v2_body

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
