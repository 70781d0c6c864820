from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="QueueOptionsBody")



@_attrs_define
class QueueOptionsBody:
    """ 
        Attributes:
            bucket_size (int | Unset):  Default: 20.
            dead_letter_queue (None | str | Unset):
            delay_seconds (int | Unset):  Default: 0.
            delete_buckets_after_finalize (bool | Unset):  Default: True.
            max_delivery_count (int | Unset):  Default: 5.
            max_message_bytes (int | Unset):  Default: 1048576.
            message_retention_seconds (int | Unset):  Default: 1209600.
            partitions (int | None | Unset):
            repair_worker_bucket_finalize_time_seconds (int | Unset):  Default: 15.
            repair_worker_poll_seconds (int | Unset):  Default: 5.
            strict_fifo (bool | Unset):  Default: True.
            visibility_timeout_seconds (int | Unset):  Default: 30.
     """

    bucket_size: int | Unset = 20
    dead_letter_queue: None | str | Unset = UNSET
    delay_seconds: int | Unset = 0
    delete_buckets_after_finalize: bool | Unset = True
    max_delivery_count: int | Unset = 5
    max_message_bytes: int | Unset = 1048576
    message_retention_seconds: int | Unset = 1209600
    partitions: int | None | Unset = UNSET
    repair_worker_bucket_finalize_time_seconds: int | Unset = 15
    repair_worker_poll_seconds: int | Unset = 5
    strict_fifo: bool | Unset = True
    visibility_timeout_seconds: int | Unset = 30
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        bucket_size = self.bucket_size

        dead_letter_queue: None | str | Unset
        if isinstance(self.dead_letter_queue, Unset):
            dead_letter_queue = UNSET
        else:
            dead_letter_queue = self.dead_letter_queue

        delay_seconds = self.delay_seconds

        delete_buckets_after_finalize = self.delete_buckets_after_finalize

        max_delivery_count = self.max_delivery_count

        max_message_bytes = self.max_message_bytes

        message_retention_seconds = self.message_retention_seconds

        partitions: int | None | Unset
        if isinstance(self.partitions, Unset):
            partitions = UNSET
        else:
            partitions = self.partitions

        repair_worker_bucket_finalize_time_seconds = self.repair_worker_bucket_finalize_time_seconds

        repair_worker_poll_seconds = self.repair_worker_poll_seconds

        strict_fifo = self.strict_fifo

        visibility_timeout_seconds = self.visibility_timeout_seconds


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if bucket_size is not UNSET:
            field_dict["bucketSize"] = bucket_size
        if dead_letter_queue is not UNSET:
            field_dict["deadLetterQueue"] = dead_letter_queue
        if delay_seconds is not UNSET:
            field_dict["delaySeconds"] = delay_seconds
        if delete_buckets_after_finalize is not UNSET:
            field_dict["deleteBucketsAfterFinalize"] = delete_buckets_after_finalize
        if max_delivery_count is not UNSET:
            field_dict["maxDeliveryCount"] = max_delivery_count
        if max_message_bytes is not UNSET:
            field_dict["maxMessageBytes"] = max_message_bytes
        if message_retention_seconds is not UNSET:
            field_dict["messageRetentionSeconds"] = message_retention_seconds
        if partitions is not UNSET:
            field_dict["partitions"] = partitions
        if repair_worker_bucket_finalize_time_seconds is not UNSET:
            field_dict["repairWorkerBucketFinalizeTimeSeconds"] = repair_worker_bucket_finalize_time_seconds
        if repair_worker_poll_seconds is not UNSET:
            field_dict["repairWorkerPollSeconds"] = repair_worker_poll_seconds
        if strict_fifo is not UNSET:
            field_dict["strictFifo"] = strict_fifo
        if visibility_timeout_seconds is not UNSET:
            field_dict["visibilityTimeoutSeconds"] = visibility_timeout_seconds

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        bucket_size = d.pop("bucketSize", UNSET)

        def _parse_dead_letter_queue(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        dead_letter_queue = _parse_dead_letter_queue(d.pop("deadLetterQueue", UNSET))


        delay_seconds = d.pop("delaySeconds", UNSET)

        delete_buckets_after_finalize = d.pop("deleteBucketsAfterFinalize", UNSET)

        max_delivery_count = d.pop("maxDeliveryCount", UNSET)

        max_message_bytes = d.pop("maxMessageBytes", UNSET)

        message_retention_seconds = d.pop("messageRetentionSeconds", UNSET)

        def _parse_partitions(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        partitions = _parse_partitions(d.pop("partitions", UNSET))


        repair_worker_bucket_finalize_time_seconds = d.pop("repairWorkerBucketFinalizeTimeSeconds", UNSET)

        repair_worker_poll_seconds = d.pop("repairWorkerPollSeconds", UNSET)

        strict_fifo = d.pop("strictFifo", UNSET)

        visibility_timeout_seconds = d.pop("visibilityTimeoutSeconds", UNSET)

        queue_options_body = cls(
            bucket_size=bucket_size,
            dead_letter_queue=dead_letter_queue,
            delay_seconds=delay_seconds,
            delete_buckets_after_finalize=delete_buckets_after_finalize,
            max_delivery_count=max_delivery_count,
            max_message_bytes=max_message_bytes,
            message_retention_seconds=message_retention_seconds,
            partitions=partitions,
            repair_worker_bucket_finalize_time_seconds=repair_worker_bucket_finalize_time_seconds,
            repair_worker_poll_seconds=repair_worker_poll_seconds,
            strict_fifo=strict_fifo,
            visibility_timeout_seconds=visibility_timeout_seconds,
        )


        queue_options_body.additional_properties = d
        return queue_options_body

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
