from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.seek_request_to_type_0 import SeekRequestToType0
from typing import cast

if TYPE_CHECKING:
  from ..models.seek_point import SeekPoint





T = TypeVar("T", bound="SeekRequest")



@_attrs_define
class SeekRequest:
    """ 
        Attributes:
            to (SeekPoint | SeekRequestToType0):
     """

    to: SeekPoint | SeekRequestToType0
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.seek_point import SeekPoint # noqa: PLC0415
        to: dict[str, Any] | str
        if isinstance(self.to, SeekRequestToType0):
            to = self.to.value
        else:
            to = self.to.to_dict()



        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "to": to,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.seek_point import SeekPoint # noqa: PLC0415
        d = dict(src_dict)
        def _parse_to(data: object) -> SeekPoint | SeekRequestToType0:
            try:
                if not isinstance(data, str):
                    raise TypeError()
                to_type_0 = SeekRequestToType0(data)



                return to_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            to_type_1 = SeekPoint.from_dict(data)



            return to_type_1

        to = _parse_to(d.pop("to"))


        seek_request = cls(
            to=to,
        )


        seek_request.additional_properties = d
        return seek_request

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
