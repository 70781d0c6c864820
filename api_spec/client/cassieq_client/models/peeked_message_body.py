from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.peeked_message_body_attributes import PeekedMessageBodyAttributes





T = TypeVar("T", bound="PeekedMessageBody")



@_attrs_define
class PeekedMessageBody:
    """ 
        Attributes:
            attributes (PeekedMessageBodyAttributes):
            body (str):
            delivery_count (int):
            id (str):
            sent_at (str):
            visible (bool):
            group_id (None | str | Unset):
            sequence_number (None | str | Unset):
     """

    attributes: PeekedMessageBodyAttributes
    body: str
    delivery_count: int
    id: str
    sent_at: str
    visible: bool
    group_id: None | str | Unset = UNSET
    sequence_number: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.peeked_message_body_attributes import PeekedMessageBodyAttributes # noqa: PLC0415
        attributes = self.attributes.to_dict()

        body = self.body

        delivery_count = self.delivery_count

        id = self.id

        sent_at = self.sent_at

        visible = self.visible

        group_id: None | str | Unset
        if isinstance(self.group_id, Unset):
            group_id = UNSET
        else:
            group_id = self.group_id

        sequence_number: None | str | Unset
        if isinstance(self.sequence_number, Unset):
            sequence_number = UNSET
        else:
            sequence_number = self.sequence_number


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "attributes": attributes,
            "body": body,
            "deliveryCount": delivery_count,
            "id": id,
            "sentAt": sent_at,
            "visible": visible,
        })
        if group_id is not UNSET:
            field_dict["groupId"] = group_id
        if sequence_number is not UNSET:
            field_dict["sequenceNumber"] = sequence_number

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.peeked_message_body_attributes import PeekedMessageBodyAttributes # noqa: PLC0415
        d = dict(src_dict)
        attributes = PeekedMessageBodyAttributes.from_dict(d.pop("attributes"))




        body = d.pop("body")

        delivery_count = d.pop("deliveryCount")

        id = d.pop("id")

        sent_at = d.pop("sentAt")

        visible = d.pop("visible")

        def _parse_group_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        group_id = _parse_group_id(d.pop("groupId", UNSET))


        def _parse_sequence_number(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        sequence_number = _parse_sequence_number(d.pop("sequenceNumber", UNSET))


        peeked_message_body = cls(
            attributes=attributes,
            body=body,
            delivery_count=delivery_count,
            id=id,
            sent_at=sent_at,
            visible=visible,
            group_id=group_id,
            sequence_number=sequence_number,
        )


        peeked_message_body.additional_properties = d
        return peeked_message_body

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
