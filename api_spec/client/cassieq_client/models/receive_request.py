from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ReceiveRequest")



@_attrs_define
class ReceiveRequest:
    """ 
        Attributes:
            max_messages (int | Unset):  Default: 1.
            receive_attempt_id (None | str | Unset): 1-128 characters: letters, digits and ASCII punctuation (no space)
            visibility_timeout_seconds (int | None | Unset):
            wait_seconds (int | Unset):  Default: 0.
     """

    max_messages: int | Unset = 1
    receive_attempt_id: None | str | Unset = UNSET
    visibility_timeout_seconds: int | None | Unset = UNSET
    wait_seconds: int | Unset = 0
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        max_messages = self.max_messages

        receive_attempt_id: None | str | Unset
        if isinstance(self.receive_attempt_id, Unset):
            receive_attempt_id = UNSET
        else:
            receive_attempt_id = self.receive_attempt_id

        visibility_timeout_seconds: int | None | Unset
        if isinstance(self.visibility_timeout_seconds, Unset):
            visibility_timeout_seconds = UNSET
        else:
            visibility_timeout_seconds = self.visibility_timeout_seconds

        wait_seconds = self.wait_seconds


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if max_messages is not UNSET:
            field_dict["maxMessages"] = max_messages
        if receive_attempt_id is not UNSET:
            field_dict["receiveAttemptId"] = receive_attempt_id
        if visibility_timeout_seconds is not UNSET:
            field_dict["visibilityTimeoutSeconds"] = visibility_timeout_seconds
        if wait_seconds is not UNSET:
            field_dict["waitSeconds"] = wait_seconds

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        max_messages = d.pop("maxMessages", UNSET)

        def _parse_receive_attempt_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        receive_attempt_id = _parse_receive_attempt_id(d.pop("receiveAttemptId", UNSET))


        def _parse_visibility_timeout_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        visibility_timeout_seconds = _parse_visibility_timeout_seconds(d.pop("visibilityTimeoutSeconds", UNSET))


        wait_seconds = d.pop("waitSeconds", UNSET)

        receive_request = cls(
            max_messages=max_messages,
            receive_attempt_id=receive_attempt_id,
            visibility_timeout_seconds=visibility_timeout_seconds,
            wait_seconds=wait_seconds,
        )


        receive_request.additional_properties = d
        return receive_request

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
