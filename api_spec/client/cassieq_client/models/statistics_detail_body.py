from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.ack_latency_body import AckLatencyBody
  from ..models.statistics_detail_body_delivery_count_histogram import StatisticsDetailBodyDeliveryCountHistogram





T = TypeVar("T", bound="StatisticsDetailBody")



@_attrs_define
class StatisticsDetailBody:
    """ 
        Attributes:
            ack_latency_ms (AckLatencyBody):
            acked (int):
            backlog (int):
            computed_at (int):
            dead_lettered (int):
            delivered (int):
            delivery_count_histogram (StatisticsDetailBodyDeliveryCountHistogram):
            in_flight (int):
            oldest_unacked_age_seconds (float | None):
            published (int):
            rows_scanned (int):
     """

    ack_latency_ms: AckLatencyBody
    acked: int
    backlog: int
    computed_at: int
    dead_lettered: int
    delivered: int
    delivery_count_histogram: StatisticsDetailBodyDeliveryCountHistogram
    in_flight: int
    oldest_unacked_age_seconds: float | None
    published: int
    rows_scanned: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.ack_latency_body import AckLatencyBody # noqa: PLC0415
        from ..models.statistics_detail_body_delivery_count_histogram import StatisticsDetailBodyDeliveryCountHistogram # noqa: PLC0415
        ack_latency_ms = self.ack_latency_ms.to_dict()

        acked = self.acked

        backlog = self.backlog

        computed_at = self.computed_at

        dead_lettered = self.dead_lettered

        delivered = self.delivered

        delivery_count_histogram = self.delivery_count_histogram.to_dict()

        in_flight = self.in_flight

        oldest_unacked_age_seconds: float | None
        oldest_unacked_age_seconds = self.oldest_unacked_age_seconds

        published = self.published

        rows_scanned = self.rows_scanned


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "ackLatencyMs": ack_latency_ms,
            "acked": acked,
            "backlog": backlog,
            "computedAt": computed_at,
            "deadLettered": dead_lettered,
            "delivered": delivered,
            "deliveryCountHistogram": delivery_count_histogram,
            "inFlight": in_flight,
            "oldestUnackedAgeSeconds": oldest_unacked_age_seconds,
            "published": published,
            "rowsScanned": rows_scanned,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.ack_latency_body import AckLatencyBody # noqa: PLC0415
        from ..models.statistics_detail_body_delivery_count_histogram import StatisticsDetailBodyDeliveryCountHistogram # noqa: PLC0415
        d = dict(src_dict)
        ack_latency_ms = AckLatencyBody.from_dict(d.pop("ackLatencyMs"))




        acked = d.pop("acked")

        backlog = d.pop("backlog")

        computed_at = d.pop("computedAt")

        dead_lettered = d.pop("deadLettered")

        delivered = d.pop("delivered")

        delivery_count_histogram = StatisticsDetailBodyDeliveryCountHistogram.from_dict(d.pop("deliveryCountHistogram"))




        in_flight = d.pop("inFlight")

        def _parse_oldest_unacked_age_seconds(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        oldest_unacked_age_seconds = _parse_oldest_unacked_age_seconds(d.pop("oldestUnackedAgeSeconds"))


        published = d.pop("published")

        rows_scanned = d.pop("rowsScanned")

        statistics_detail_body = cls(
            ack_latency_ms=ack_latency_ms,
            acked=acked,
            backlog=backlog,
            computed_at=computed_at,
            dead_lettered=dead_lettered,
            delivered=delivered,
            delivery_count_histogram=delivery_count_histogram,
            in_flight=in_flight,
            oldest_unacked_age_seconds=oldest_unacked_age_seconds,
            published=published,
            rows_scanned=rows_scanned,
        )


        statistics_detail_body.additional_properties = d
        return statistics_detail_body

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
