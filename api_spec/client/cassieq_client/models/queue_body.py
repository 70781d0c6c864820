from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.queue_body_deduplication_scope import QueueBodyDeduplicationScope
from ..models.queue_body_fifo_throughput_limit import QueueBodyFifoThroughputLimit
from typing import cast






T = TypeVar("T", bound="QueueBody")



@_attrs_define
class QueueBody:
    """ 
        Attributes:
            bucket_size (int):
            content_based_deduplication (bool):
            created_at (str):
            dead_letter_queue (None | str):
            deduplication_scope (QueueBodyDeduplicationScope):
            delay_seconds (int):
            delete_buckets_after_finalize (bool):
            fifo (bool):
            fifo_throughput_limit (QueueBodyFifoThroughputLimit):
            max_delivery_count (int):
            max_message_bytes (int):
            message_retention_seconds (int):
            partitions (int):
            queue_name (str):
            repair_worker_bucket_finalize_time_seconds (int):
            repair_worker_poll_seconds (int):
            strict_fifo (bool):
            visibility_timeout_seconds (int):
     """

    bucket_size: int
    content_based_deduplication: bool
    created_at: str
    dead_letter_queue: None | str
    deduplication_scope: QueueBodyDeduplicationScope
    delay_seconds: int
    delete_buckets_after_finalize: bool
    fifo: bool
    fifo_throughput_limit: QueueBodyFifoThroughputLimit
    max_delivery_count: int
    max_message_bytes: int
    message_retention_seconds: int
    partitions: int
    queue_name: str
    repair_worker_bucket_finalize_time_seconds: int
    repair_worker_poll_seconds: int
    strict_fifo: bool
    visibility_timeout_seconds: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        bucket_size = self.bucket_size

        content_based_deduplication = self.content_based_deduplication

        created_at = self.created_at

        dead_letter_queue: None | str
        dead_letter_queue = self.dead_letter_queue

        deduplication_scope = self.deduplication_scope.value

        delay_seconds = self.delay_seconds

        delete_buckets_after_finalize = self.delete_buckets_after_finalize

        fifo = self.fifo

        fifo_throughput_limit = self.fifo_throughput_limit.value

        max_delivery_count = self.max_delivery_count

        max_message_bytes = self.max_message_bytes

        message_retention_seconds = self.message_retention_seconds

        partitions = self.partitions

        queue_name = self.queue_name

        repair_worker_bucket_finalize_time_seconds = self.repair_worker_bucket_finalize_time_seconds

        repair_worker_poll_seconds = self.repair_worker_poll_seconds

        strict_fifo = self.strict_fifo

        visibility_timeout_seconds = self.visibility_timeout_seconds


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "bucketSize": bucket_size,
            "contentBasedDeduplication": content_based_deduplication,
            "createdAt": created_at,
            "deadLetterQueue": dead_letter_queue,
            "deduplicationScope": deduplication_scope,
            "delaySeconds": delay_seconds,
            "deleteBucketsAfterFinalize": delete_buckets_after_finalize,
            "fifo": fifo,
            "fifoThroughputLimit": fifo_throughput_limit,
            "maxDeliveryCount": max_delivery_count,
            "maxMessageBytes": max_message_bytes,
            "messageRetentionSeconds": message_retention_seconds,
            "partitions": partitions,
            "queueName": queue_name,
            "repairWorkerBucketFinalizeTimeSeconds": repair_worker_bucket_finalize_time_seconds,
            "repairWorkerPollSeconds": repair_worker_poll_seconds,
            "strictFifo": strict_fifo,
            "visibilityTimeoutSeconds": visibility_timeout_seconds,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        bucket_size = d.pop("bucketSize")

        content_based_deduplication = d.pop("contentBasedDeduplication")

        created_at = d.pop("createdAt")

        def _parse_dead_letter_queue(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        dead_letter_queue = _parse_dead_letter_queue(d.pop("deadLetterQueue"))


        deduplication_scope = QueueBodyDeduplicationScope(d.pop("deduplicationScope"))




        delay_seconds = d.pop("delaySeconds")

        delete_buckets_after_finalize = d.pop("deleteBucketsAfterFinalize")

        fifo = d.pop("fifo")

        fifo_throughput_limit = QueueBodyFifoThroughputLimit(d.pop("fifoThroughputLimit"))




        max_delivery_count = d.pop("maxDeliveryCount")

        max_message_bytes = d.pop("maxMessageBytes")

        message_retention_seconds = d.pop("messageRetentionSeconds")

        partitions = d.pop("partitions")

        queue_name = d.pop("queueName")

        repair_worker_bucket_finalize_time_seconds = d.pop("repairWorkerBucketFinalizeTimeSeconds")

        repair_worker_poll_seconds = d.pop("repairWorkerPollSeconds")

        strict_fifo = d.pop("strictFifo")

        visibility_timeout_seconds = d.pop("visibilityTimeoutSeconds")

        queue_body = cls(
            bucket_size=bucket_size,
            content_based_deduplication=content_based_deduplication,
            created_at=created_at,
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
            queue_name=queue_name,
            repair_worker_bucket_finalize_time_seconds=repair_worker_bucket_finalize_time_seconds,
            repair_worker_poll_seconds=repair_worker_poll_seconds,
            strict_fifo=strict_fifo,
            visibility_timeout_seconds=visibility_timeout_seconds,
        )


        queue_body.additional_properties = d
        return queue_body

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
