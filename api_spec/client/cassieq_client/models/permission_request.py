from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="PermissionRequest")



@_attrs_define
class PermissionRequest:
    """ 
        Attributes:
            account_name (str):
            key_name (str):
            levels (list[str]):
            end_time (None | str | Unset):
            queue_name (None | str | Unset):
            start_time (None | str | Unset):
     """

    account_name: str
    key_name: str
    levels: list[str]
    end_time: None | str | Unset = UNSET
    queue_name: None | str | Unset = UNSET
    start_time: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        account_name = self.account_name

        key_name = self.key_name

        levels = self.levels



        end_time: None | str | Unset
        if isinstance(self.end_time, Unset):
            end_time = UNSET
        else:
            end_time = self.end_time

        queue_name: None | str | Unset
        if isinstance(self.queue_name, Unset):
            queue_name = UNSET
        else:
            queue_name = self.queue_name

        start_time: None | str | Unset
        if isinstance(self.start_time, Unset):
            start_time = UNSET
        else:
            start_time = self.start_time


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "accountName": account_name,
            "keyName": key_name,
            "levels": levels,
        })
        if end_time is not UNSET:
            field_dict["endTime"] = end_time
        if queue_name is not UNSET:
            field_dict["queueName"] = queue_name
        if start_time is not UNSET:
            field_dict["startTime"] = start_time

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        account_name = d.pop("accountName")

        key_name = d.pop("keyName")

        levels = cast(list[str], d.pop("levels"))


        def _parse_end_time(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        end_time = _parse_end_time(d.pop("endTime", UNSET))


        def _parse_queue_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        queue_name = _parse_queue_name(d.pop("queueName", UNSET))


        def _parse_start_time(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        start_time = _parse_start_time(d.pop("startTime", UNSET))


        permission_request = cls(
            account_name=account_name,
            key_name=key_name,
            levels=levels,
            end_time=end_time,
            queue_name=queue_name,
            start_time=start_time,
        )


        permission_request.additional_properties = d
        return permission_request

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
