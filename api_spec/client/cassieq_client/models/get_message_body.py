from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="GetMessageBody")



@_attrs_define
class GetMessageBody:
    """ 
        Attributes:
            delivery_count (int):
            message (str):
            message_tag (str):
            pop_receipt (str):
     """

    delivery_count: int
    message: str
    message_tag: str
    pop_receipt: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        delivery_count = self.delivery_count

        message = self.message

        message_tag = self.message_tag

        pop_receipt = self.pop_receipt


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "deliveryCount": delivery_count,
            "message": message,
            "messageTag": message_tag,
            "popReceipt": pop_receipt,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        delivery_count = d.pop("deliveryCount")

        message = d.pop("message")

        message_tag = d.pop("messageTag")

        pop_receipt = d.pop("popReceipt")

        get_message_body = cls(
            delivery_count=delivery_count,
            message=message,
            message_tag=message_tag,
            pop_receipt=pop_receipt,
        )


        get_message_body.additional_properties = d
        return get_message_body

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
