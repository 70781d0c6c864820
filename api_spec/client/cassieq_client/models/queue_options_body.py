from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.queue_options_body_deduplication_scope import QueueOptionsBodyDeduplicationScope
from ..models.queue_options_body_fifo_throughput_limit import QueueOptionsBodyFifoThroughputLimit
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="QueueOptionsBody")



@_attrs_define
class QueueOptionsBody:
    """ 
        Attributes:
            bucket_size (int | Unset):  Default: 20.
            content_based_deduplication (bool | Unset):  Default: False.
            dead_letter_queue (None | str | Unset):
            deduplication_scope (QueueOptionsBodyDeduplicationScope | Unset):  Default:
                QueueOptionsBodyDeduplicationScope.QUEUE.
            delay_seconds (int | Unset):  Default: 0.
            delete_buckets_after_finalize (bool | Unset):  Default: True.
            fifo (bool | Unset):  Default: False.
            fifo_throughput_limit (QueueOptionsBodyFifoThroughputLimit | Unset):  Default:
                QueueOptionsBodyFifoThroughputLimit.PERQUEUE.
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
    content_based_deduplication: bool | Unset = False
    dead_letter_queue: None | str | Unset = UNSET
    deduplication_scope: QueueOptionsBodyDeduplicationScope | Unset = QueueOptionsBodyDeduplicationScope.QUEUE
    delay_seconds: int | Unset = 0
    delete_buckets_after_finalize: bool | Unset = True
    fifo: bool | Unset = False
    fifo_throughput_limit: QueueOptionsBodyFifoThroughputLimit | Unset = QueueOptionsBodyFifoThroughputLimit.PERQUEUE
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

        content_based_deduplication = self.content_based_deduplication

        dead_letter_queue: None | str | Unset
        if isinstance(self.dead_letter_queue, Unset):
            dead_letter_queue = UNSET
        else:
            dead_letter_queue = self.dead_letter_queue

        deduplication_scope: str | Unset = UNSET
        if not isinstance(self.deduplication_scope, Unset):
            deduplication_scope = self.deduplication_scope.value


        delay_seconds = self.delay_seconds

        delete_buckets_after_finalize = self.delete_buckets_after_finalize

        fifo = self.fifo

        fifo_throughput_limit: str | Unset = UNSET
        if not isinstance(self.fifo_throughput_limit, Unset):
            fifo_throughput_limit = self.fifo_throughput_limit.value


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
        bucket_size = d.pop("bucketSize", UNSET)

        content_based_deduplication = d.pop("contentBasedDeduplication", UNSET)

        def _parse_dead_letter_queue(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        dead_letter_queue = _parse_dead_letter_queue(d.pop("deadLetterQueue", UNSET))


        _deduplication_scope = d.pop("deduplicationScope", UNSET)
        deduplication_scope: QueueOptionsBodyDeduplicationScope | Unset
        if isinstance(_deduplication_scope,  Unset):
            deduplication_scope = UNSET
        else:
            deduplication_scope = QueueOptionsBodyDeduplicationScope(_deduplication_scope)




        delay_seconds = d.pop("delaySeconds", UNSET)

        delete_buckets_after_finalize = d.pop("deleteBucketsAfterFinalize", UNSET)

        fifo = d.pop("fifo", UNSET)

        _fifo_throughput_limit = d.pop("fifoThroughputLimit", UNSET)
        fifo_throughput_limit: QueueOptionsBodyFifoThroughputLimit | Unset
        if isinstance(_fifo_throughput_limit,  Unset):
            fifo_throughput_limit = UNSET
        else:
            fifo_throughput_limit = QueueOptionsBodyFifoThroughputLimit(_fifo_throughput_limit)




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
