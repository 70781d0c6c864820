from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.failed_entry import FailedEntry
  from ..models.updated_entry import UpdatedEntry





T = TypeVar("T", bound="VisibilityResponse")



@_attrs_define
class VisibilityResponse:
    """ 
        Attributes:
            failed (list[FailedEntry]):
            updated (list[UpdatedEntry]):
     """

    failed: list[FailedEntry]
    updated: list[UpdatedEntry]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.failed_entry import FailedEntry # noqa: PLC0415
        from ..models.updated_entry import UpdatedEntry # noqa: PLC0415
        failed = []
        for failed_item_data in self.failed:
            failed_item = failed_item_data.to_dict()
            failed.append(failed_item)



        updated = []
        for updated_item_data in self.updated:
            updated_item = updated_item_data.to_dict()
            updated.append(updated_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "failed": failed,
            "updated": updated,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.failed_entry import FailedEntry # noqa: PLC0415
        from ..models.updated_entry import UpdatedEntry # noqa: PLC0415
        d = dict(src_dict)
        failed = []
        _failed = d.pop("failed")
        for failed_item_data in (_failed):
            failed_item = FailedEntry.from_dict(failed_item_data)



            failed.append(failed_item)


        updated = []
        _updated = d.pop("updated")
        for updated_item_data in (_updated):
            updated_item = UpdatedEntry.from_dict(updated_item_data)



            updated.append(updated_item)


        visibility_response = cls(
            failed=failed,
            updated=updated,
        )


        visibility_response.additional_properties = d
        return visibility_response

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
