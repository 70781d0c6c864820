from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.read_message_body_attributes import ReadMessageBodyAttributes





T = TypeVar("T", bound="ReadMessageBody")



@_attrs_define
class ReadMessageBody:
    """ 
        Attributes:
            attributes (ReadMessageBodyAttributes):
            body (str):
            id (str):
            position (str):
            sent_at (str):
            group_id (None | str | Unset):
     """

    attributes: ReadMessageBodyAttributes
    body: str
    id: str
    position: str
    sent_at: str
    group_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.read_message_body_attributes import ReadMessageBodyAttributes # noqa: PLC0415
        attributes = self.attributes.to_dict()

        body = self.body

        id = self.id

        position = self.position

        sent_at = self.sent_at

        group_id: None | str | Unset
        if isinstance(self.group_id, Unset):
            group_id = UNSET
        else:
            group_id = self.group_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "attributes": attributes,
            "body": body,
            "id": id,
            "position": position,
            "sentAt": sent_at,
        })
        if group_id is not UNSET:
            field_dict["groupId"] = group_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.read_message_body_attributes import ReadMessageBodyAttributes # noqa: PLC0415
        d = dict(src_dict)
        attributes = ReadMessageBodyAttributes.from_dict(d.pop("attributes"))




        body = d.pop("body")

        id = d.pop("id")

        position = d.pop("position")

        sent_at = d.pop("sentAt")

        def _parse_group_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        group_id = _parse_group_id(d.pop("groupId", UNSET))


        read_message_body = cls(
            attributes=attributes,
            body=body,
            id=id,
            position=position,
            sent_at=sent_at,
            group_id=group_id,
        )


        read_message_body.additional_properties = d
        return read_message_body

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
