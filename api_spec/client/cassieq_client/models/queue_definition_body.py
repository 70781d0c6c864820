from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="QueueDefinitionBody")



@_attrs_define
class QueueDefinitionBody:
    """ 
        Attributes:
            account_name (str):
            bucket_size (int):
            delete_buckets_after_finalization (bool):
            dlq_name (None | str):
            id (str):
            max_delivery_count (int):
            queue_name (str):
            queue_stats_id (str):
            repair_worker_poll_frequency_seconds (int):
            repair_worker_tombstoned_bucket_timeout_seconds (int):
            status (str):
            strict_fifo (bool):
            version (int):
     """

    account_name: str
    bucket_size: int
    delete_buckets_after_finalization: bool
    dlq_name: None | str
    id: str
    max_delivery_count: int
    queue_name: str
    queue_stats_id: str
    repair_worker_poll_frequency_seconds: int
    repair_worker_tombstoned_bucket_timeout_seconds: int
    status: str
    strict_fifo: bool
    version: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        account_name = self.account_name

        bucket_size = self.bucket_size

        delete_buckets_after_finalization = self.delete_buckets_after_finalization

        dlq_name: None | str
        dlq_name = self.dlq_name

        id = self.id

        max_delivery_count = self.max_delivery_count

        queue_name = self.queue_name

        queue_stats_id = self.queue_stats_id

        repair_worker_poll_frequency_seconds = self.repair_worker_poll_frequency_seconds

        repair_worker_tombstoned_bucket_timeout_seconds = self.repair_worker_tombstoned_bucket_timeout_seconds

        status = self.status

        strict_fifo = self.strict_fifo

        version = self.version


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "accountName": account_name,
            "bucketSize": bucket_size,
            "deleteBucketsAfterFinalization": delete_buckets_after_finalization,
            "dlqName": dlq_name,
            "id": id,
            "maxDeliveryCount": max_delivery_count,
            "queueName": queue_name,
            "queueStatsId": queue_stats_id,
            "repairWorkerPollFrequencySeconds": repair_worker_poll_frequency_seconds,
            "repairWorkerTombstonedBucketTimeoutSeconds": repair_worker_tombstoned_bucket_timeout_seconds,
            "status": status,
            "strictFifo": strict_fifo,
            "version": version,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        account_name = d.pop("accountName")

        bucket_size = d.pop("bucketSize")

        delete_buckets_after_finalization = d.pop("deleteBucketsAfterFinalization")

        def _parse_dlq_name(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        dlq_name = _parse_dlq_name(d.pop("dlqName"))


        id = d.pop("id")

        max_delivery_count = d.pop("maxDeliveryCount")

        queue_name = d.pop("queueName")

        queue_stats_id = d.pop("queueStatsId")

        repair_worker_poll_frequency_seconds = d.pop("repairWorkerPollFrequencySeconds")

        repair_worker_tombstoned_bucket_timeout_seconds = d.pop("repairWorkerTombstonedBucketTimeoutSeconds")

        status = d.pop("status")

        strict_fifo = d.pop("strictFifo")

        version = d.pop("version")

        queue_definition_body = cls(
            account_name=account_name,
            bucket_size=bucket_size,
            delete_buckets_after_finalization=delete_buckets_after_finalization,
            dlq_name=dlq_name,
            id=id,
            max_delivery_count=max_delivery_count,
            queue_name=queue_name,
            queue_stats_id=queue_stats_id,
            repair_worker_poll_frequency_seconds=repair_worker_poll_frequency_seconds,
            repair_worker_tombstoned_bucket_timeout_seconds=repair_worker_tombstoned_bucket_timeout_seconds,
            status=status,
            strict_fifo=strict_fifo,
            version=version,
        )


        queue_definition_body.additional_properties = d
        return queue_definition_body

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
