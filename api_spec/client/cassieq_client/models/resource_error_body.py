from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ResourceErrorBody")



@_attrs_define
class ResourceErrorBody:
    """ 
        Attributes:
            message (str):
            operation (str):
            reason (str):
            account (None | str | Unset):
            detail (None | str | Unset):
            queue_name (None | str | Unset):
     """

    message: str
    operation: str
    reason: str
    account: None | str | Unset = UNSET
    detail: None | str | Unset = UNSET
    queue_name: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        message = self.message

        operation = self.operation

        reason = self.reason

        account: None | str | Unset
        if isinstance(self.account, Unset):
            account = UNSET
        else:
            account = self.account

        detail: None | str | Unset
        if isinstance(self.detail, Unset):
            detail = UNSET
        else:
            detail = self.detail

        queue_name: None | str | Unset
        if isinstance(self.queue_name, Unset):
            queue_name = UNSET
        else:
            queue_name = self.queue_name


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "message": message,
            "operation": operation,
            "reason": reason,
        })
        if account is not UNSET:
            field_dict["account"] = account
        if detail is not UNSET:
            field_dict["detail"] = detail
        if queue_name is not UNSET:
            field_dict["queueName"] = queue_name

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        message = d.pop("message")

        operation = d.pop("operation")

        reason = d.pop("reason")

        def _parse_account(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        account = _parse_account(d.pop("account", UNSET))


        def _parse_detail(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        detail = _parse_detail(d.pop("detail", UNSET))


        def _parse_queue_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        queue_name = _parse_queue_name(d.pop("queueName", UNSET))


        resource_error_body = cls(
            message=message,
            operation=operation,
            reason=reason,
            account=account,
            detail=detail,
            queue_name=queue_name,
        )


        resource_error_body.additional_properties = d
        return resource_error_body

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
