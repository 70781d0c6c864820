from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.queue_options_patch_deduplication_scope_type_0 import QueueOptionsPatchDeduplicationScopeType0
from ..models.queue_options_patch_fifo_throughput_limit_type_0 import QueueOptionsPatchFifoThroughputLimitType0
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="QueueOptionsPatch")



@_attrs_define
class QueueOptionsPatch:
    """ 
        Attributes:
            bucket_size (int | Unset):
            content_based_deduplication (bool | Unset):
            dead_letter_queue (None | str | Unset):
            deduplication_scope (QueueOptionsPatchDeduplicationScopeType0 | Unset):
            delay_seconds (int | Unset):
            delete_buckets_after_finalize (bool | Unset):
            fifo (bool | Unset):
            fifo_throughput_limit (QueueOptionsPatchFifoThroughputLimitType0 | Unset):
            max_delivery_count (int | Unset):
            max_message_bytes (int | Unset):
            message_retention_seconds (int | Unset):
            partitions (int | Unset):
            repair_worker_bucket_finalize_time_seconds (int | Unset):
            repair_worker_poll_seconds (int | Unset):
            strict_fifo (bool | Unset):
            visibility_timeout_seconds (int | Unset):
     """

    bucket_size: int | Unset = UNSET
    content_based_deduplication: bool | Unset = UNSET
    dead_letter_queue: None | str | Unset = UNSET
    deduplication_scope: QueueOptionsPatchDeduplicationScopeType0 | Unset = UNSET
    delay_seconds: int | Unset = UNSET
    delete_buckets_after_finalize: bool | Unset = UNSET
    fifo: bool | Unset = UNSET
    fifo_throughput_limit: QueueOptionsPatchFifoThroughputLimitType0 | Unset = UNSET
    max_delivery_count: int | Unset = UNSET
    max_message_bytes: int | Unset = UNSET
    message_retention_seconds: int | Unset = UNSET
    partitions: int | Unset = UNSET
    repair_worker_bucket_finalize_time_seconds: int | Unset = UNSET
    repair_worker_poll_seconds: int | Unset = UNSET
    strict_fifo: bool | Unset = UNSET
    visibility_timeout_seconds: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        bucket_size: int | Unset
        if isinstance(self.bucket_size, Unset):
            bucket_size = UNSET
        else:
            bucket_size = self.bucket_size

        content_based_deduplication: bool | Unset
        if isinstance(self.content_based_deduplication, Unset):
            content_based_deduplication = UNSET
        else:
            content_based_deduplication = self.content_based_deduplication

        dead_letter_queue: None | str | Unset
        if isinstance(self.dead_letter_queue, Unset):
            dead_letter_queue = UNSET
        else:
            dead_letter_queue = self.dead_letter_queue

        deduplication_scope: str | Unset
        if isinstance(self.deduplication_scope, Unset):
            deduplication_scope = UNSET
        else:
            deduplication_scope = self.deduplication_scope.value


        delay_seconds: int | Unset
        if isinstance(self.delay_seconds, Unset):
            delay_seconds = UNSET
        else:
            delay_seconds = self.delay_seconds

        delete_buckets_after_finalize: bool | Unset
        if isinstance(self.delete_buckets_after_finalize, Unset):
            delete_buckets_after_finalize = UNSET
        else:
            delete_buckets_after_finalize = self.delete_buckets_after_finalize

        fifo: bool | Unset
        if isinstance(self.fifo, Unset):
            fifo = UNSET
        else:
            fifo = self.fifo

        fifo_throughput_limit: str | Unset
        if isinstance(self.fifo_throughput_limit, Unset):
            fifo_throughput_limit = UNSET
        else:
            fifo_throughput_limit = self.fifo_throughput_limit.value


        max_delivery_count: int | Unset
        if isinstance(self.max_delivery_count, Unset):
            max_delivery_count = UNSET
        else:
            max_delivery_count = self.max_delivery_count

        max_message_bytes: int | Unset
        if isinstance(self.max_message_bytes, Unset):
            max_message_bytes = UNSET
        else:
            max_message_bytes = self.max_message_bytes

        message_retention_seconds: int | Unset
        if isinstance(self.message_retention_seconds, Unset):
            message_retention_seconds = UNSET
        else:
            message_retention_seconds = self.message_retention_seconds

        partitions: int | Unset
        if isinstance(self.partitions, Unset):
            partitions = UNSET
        else:
            partitions = self.partitions

        repair_worker_bucket_finalize_time_seconds: int | Unset
        if isinstance(self.repair_worker_bucket_finalize_time_seconds, Unset):
            repair_worker_bucket_finalize_time_seconds = UNSET
        else:
            repair_worker_bucket_finalize_time_seconds = self.repair_worker_bucket_finalize_time_seconds

        repair_worker_poll_seconds: int | Unset
        if isinstance(self.repair_worker_poll_seconds, Unset):
            repair_worker_poll_seconds = UNSET
        else:
            repair_worker_poll_seconds = self.repair_worker_poll_seconds

        strict_fifo: bool | Unset
        if isinstance(self.strict_fifo, Unset):
            strict_fifo = UNSET
        else:
            strict_fifo = self.strict_fifo

        visibility_timeout_seconds: int | Unset
        if isinstance(self.visibility_timeout_seconds, Unset):
            visibility_timeout_seconds = UNSET
        else:
            visibility_timeout_seconds = self.visibility_timeout_seconds


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if bucket_size is not UNSET:
            field_dict["bucketSize"] = bucket_size
        if content_based_deduplication is not UNSET:
            field_dict["contentBasedDeduplication"] = content_based_deduplication
        if dead_letter_queue is not UNSET:
            field_dict["deadLetterQueue"] = dead_letter_queue
        if deduplication_scope is not UNSET:
            field_dict["deduplicationScope"] = deduplication_scope
        if delay_seconds is not UNSET:
            field_dict["delaySeconds"] = delay_seconds
        if delete_buckets_after_finalize is not UNSET:
            field_dict["deleteBucketsAfterFinalize"] = delete_buckets_after_finalize
        if fifo is not UNSET:
            field_dict["fifo"] = fifo
        if fifo_throughput_limit is not UNSET:
            field_dict["fifoThroughputLimit"] = fifo_throughput_limit
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
        def _parse_bucket_size(data: object) -> int | Unset:
            if isinstance(data, Unset):
                return data
            return cast(int | Unset, data)

        bucket_size = _parse_bucket_size(d.pop("bucketSize", UNSET))


        def _parse_content_based_deduplication(data: object) -> bool | Unset:
            if isinstance(data, Unset):
                return data
            return cast(bool | Unset, data)

        content_based_deduplication = _parse_content_based_deduplication(d.pop("contentBasedDeduplication", UNSET))


        def _parse_dead_letter_queue(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        dead_letter_queue = _parse_dead_letter_queue(d.pop("deadLetterQueue", UNSET))


        def _parse_deduplication_scope(data: object) -> QueueOptionsPatchDeduplicationScopeType0 | Unset:
            if isinstance(data, Unset):
                return data
            if not isinstance(data, str):
                raise TypeError()
            deduplication_scope_type_0 = QueueOptionsPatchDeduplicationScopeType0(data)



            return deduplication_scope_type_0

        deduplication_scope = _parse_deduplication_scope(d.pop("deduplicationScope", UNSET))


        def _parse_delay_seconds(data: object) -> int | Unset:
            if isinstance(data, Unset):
                return data
            return cast(int | Unset, data)

        delay_seconds = _parse_delay_seconds(d.pop("delaySeconds", UNSET))


        def _parse_delete_buckets_after_finalize(data: object) -> bool | Unset:
            if isinstance(data, Unset):
                return data
            return cast(bool | Unset, data)

        delete_buckets_after_finalize = _parse_delete_buckets_after_finalize(d.pop("deleteBucketsAfterFinalize", UNSET))


        def _parse_fifo(data: object) -> bool | Unset:
            if isinstance(data, Unset):
                return data
            return cast(bool | Unset, data)

        fifo = _parse_fifo(d.pop("fifo", UNSET))


        def _parse_fifo_throughput_limit(data: object) -> QueueOptionsPatchFifoThroughputLimitType0 | Unset:
            if isinstance(data, Unset):
                return data
            if not isinstance(data, str):
                raise TypeError()
            fifo_throughput_limit_type_0 = QueueOptionsPatchFifoThroughputLimitType0(data)



            return fifo_throughput_limit_type_0

        fifo_throughput_limit = _parse_fifo_throughput_limit(d.pop("fifoThroughputLimit", UNSET))


        def _parse_max_delivery_count(data: object) -> int | Unset:
            if isinstance(data, Unset):
                return data
            return cast(int | Unset, data)

        max_delivery_count = _parse_max_delivery_count(d.pop("maxDeliveryCount", UNSET))


        def _parse_max_message_bytes(data: object) -> int | Unset:
            if isinstance(data, Unset):
                return data
            return cast(int | Unset, data)

        max_message_bytes = _parse_max_message_bytes(d.pop("maxMessageBytes", UNSET))


        def _parse_message_retention_seconds(data: object) -> int | Unset:
            if isinstance(data, Unset):
                return data
            return cast(int | Unset, data)

        message_retention_seconds = _parse_message_retention_seconds(d.pop("messageRetentionSeconds", UNSET))


        def _parse_partitions(data: object) -> int | Unset:
            if isinstance(data, Unset):
                return data
            return cast(int | Unset, data)

        partitions = _parse_partitions(d.pop("partitions", UNSET))


        def _parse_repair_worker_bucket_finalize_time_seconds(data: object) -> int | Unset:
            if isinstance(data, Unset):
                return data
            return cast(int | Unset, data)

        repair_worker_bucket_finalize_time_seconds = _parse_repair_worker_bucket_finalize_time_seconds(d.pop("repairWorkerBucketFinalizeTimeSeconds", UNSET))


        def _parse_repair_worker_poll_seconds(data: object) -> int | Unset:
            if isinstance(data, Unset):
                return data
            return cast(int | Unset, data)

        repair_worker_poll_seconds = _parse_repair_worker_poll_seconds(d.pop("repairWorkerPollSeconds", UNSET))


        def _parse_strict_fifo(data: object) -> bool | Unset:
            if isinstance(data, Unset):
                return data
            return cast(bool | Unset, data)

        strict_fifo = _parse_strict_fifo(d.pop("strictFifo", UNSET))


        def _parse_visibility_timeout_seconds(data: object) -> int | Unset:
            if isinstance(data, Unset):
                return data
            return cast(int | Unset, data)

        visibility_timeout_seconds = _parse_visibility_timeout_seconds(d.pop("visibilityTimeoutSeconds", UNSET))


        queue_options_patch = cls(
            bucket_size=bucket_size,
            content_based_deduplication=content_based_deduplication,
            dead_letter_queue=dead_letter_queue,
            deduplication_scope=deduplication_scope,
            delay_seconds=delay_seconds,
            delete_buckets_after_finalize=delete_buckets_after_finalize,
            fifo=fifo,
            fifo_throughput_limit=fifo_throughput_limit,
            max_delivery_count=max_delivery_count,
            max_message_bytes=max_message_bytes,
            message_retention_seconds=message_retention_seconds,
            partitions=partitions,
            repair_worker_bucket_finalize_time_seconds=repair_worker_bucket_finalize_time_seconds,
            repair_worker_poll_seconds=repair_worker_poll_seconds,
            strict_fifo=strict_fifo,
            visibility_timeout_seconds=visibility_timeout_seconds,
        )


        queue_options_patch.additional_properties = d
        return queue_options_patch

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
