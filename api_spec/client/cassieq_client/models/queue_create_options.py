from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="QueueCreateOptions")



@_attrs_define
class QueueCreateOptions:
    """ 
        Attributes:
            queue_name (str):
            bucket_size (int | Unset):  Default: 20.
            delete_buckets_after_finalize (bool | Unset):  Default: True.
            dlq_name (None | str | Unset):
            max_delivery_count (int | Unset):  Default: 5.
            repair_worker_bucket_finalize_time_seconds (int | Unset):  Default: 15.
            repair_worker_poll_seconds (int | Unset):  Default: 5.
            strict_fifo (bool | Unset):  Default: False.
     """

    queue_name: str
    bucket_size: int | Unset = 20
    delete_buckets_after_finalize: bool | Unset = True
    dlq_name: None | str | Unset = UNSET
    max_delivery_count: int | Unset = 5
    repair_worker_bucket_finalize_time_seconds: int | Unset = 15
    repair_worker_poll_seconds: int | Unset = 5
    strict_fifo: bool | Unset = False
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        queue_name = self.queue_name

        bucket_size = self.bucket_size

        delete_buckets_after_finalize = self.delete_buckets_after_finalize

        dlq_name: None | str | Unset
        if isinstance(self.dlq_name, Unset):
            dlq_name = UNSET
        else:
            dlq_name = self.dlq_name

        max_delivery_count = self.max_delivery_count

        repair_worker_bucket_finalize_time_seconds = self.repair_worker_bucket_finalize_time_seconds

        repair_worker_poll_seconds = self.repair_worker_poll_seconds

        strict_fifo = self.strict_fifo


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "queueName": queue_name,
        })
        if bucket_size is not UNSET:
            field_dict["bucketSize"] = bucket_size
        if delete_buckets_after_finalize is not UNSET:
            field_dict["deleteBucketsAfterFinalize"] = delete_buckets_after_finalize
        if dlq_name is not UNSET:
            field_dict["dlqName"] = dlq_name
        if max_delivery_count is not UNSET:
            field_dict["maxDeliveryCount"] = max_delivery_count
        if repair_worker_bucket_finalize_time_seconds is not UNSET:
            field_dict["repairWorkerBucketFinalizeTimeSeconds"] = repair_worker_bucket_finalize_time_seconds
        if repair_worker_poll_seconds is not UNSET:
            field_dict["repairWorkerPollSeconds"] = repair_worker_poll_seconds
        if strict_fifo is not UNSET:
            field_dict["strictFifo"] = strict_fifo

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        queue_name = d.pop("queueName")

        bucket_size = d.pop("bucketSize", UNSET)

        delete_buckets_after_finalize = d.pop("deleteBucketsAfterFinalize", UNSET)

        def _parse_dlq_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        dlq_name = _parse_dlq_name(d.pop("dlqName", UNSET))


        max_delivery_count = d.pop("maxDeliveryCount", UNSET)

        repair_worker_bucket_finalize_time_seconds = d.pop("repairWorkerBucketFinalizeTimeSeconds", UNSET)

        repair_worker_poll_seconds = d.pop("repairWorkerPollSeconds", UNSET)

        strict_fifo = d.pop("strictFifo", UNSET)

        queue_create_options = cls(
            queue_name=queue_name,
            bucket_size=bucket_size,
            delete_buckets_after_finalize=delete_buckets_after_finalize,
            dlq_name=dlq_name,
            max_delivery_count=max_delivery_count,
            repair_worker_bucket_finalize_time_seconds=repair_worker_bucket_finalize_time_seconds,
            repair_worker_poll_seconds=repair_worker_poll_seconds,
            strict_fifo=strict_fifo,
        )


        queue_create_options.additional_properties = d
        return queue_create_options

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
