from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="TombstoneBody")



@_attrs_define
class TombstoneBody:
    """ 
        Attributes:
            bucket (int):
            finalized_at (int | None):
            sealed_at (int | None):
     """

    bucket: int
    finalized_at: int | None
    sealed_at: int | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        bucket = self.bucket

        finalized_at: int | None
        finalized_at = self.finalized_at

        sealed_at: int | None
        sealed_at = self.sealed_at


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "bucket": bucket,
            "finalizedAt": finalized_at,
            "sealedAt": sealed_at,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        bucket = d.pop("bucket")

        def _parse_finalized_at(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        finalized_at = _parse_finalized_at(d.pop("finalizedAt"))


        def _parse_sealed_at(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        sealed_at = _parse_sealed_at(d.pop("sealedAt"))


        tombstone_body = cls(
            bucket=bucket,
            finalized_at=finalized_at,
            sealed_at=sealed_at,
        )


        tombstone_body.additional_properties = d
        return tombstone_body

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
