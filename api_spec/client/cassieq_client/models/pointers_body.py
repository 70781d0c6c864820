from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.pointers_body_stragglers import PointersBodyStragglers





T = TypeVar("T", bound="PointersBody")



@_attrs_define
class PointersBody:
    """ 
        Attributes:
            invisibility (int):
            invisibility_lag (int):
            reader (int):
            repair (int):
            repair_lag (int):
            stragglers (PointersBodyStragglers):
     """

    invisibility: int
    invisibility_lag: int
    reader: int
    repair: int
    repair_lag: int
    stragglers: PointersBodyStragglers
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.pointers_body_stragglers import PointersBodyStragglers # noqa: PLC0415
        invisibility = self.invisibility

        invisibility_lag = self.invisibility_lag

        reader = self.reader

        repair = self.repair

        repair_lag = self.repair_lag

        stragglers = self.stragglers.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "invisibility": invisibility,
            "invisibilityLag": invisibility_lag,
            "reader": reader,
            "repair": repair,
            "repairLag": repair_lag,
            "stragglers": stragglers,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.pointers_body_stragglers import PointersBodyStragglers # noqa: PLC0415
        d = dict(src_dict)
        invisibility = d.pop("invisibility")

        invisibility_lag = d.pop("invisibilityLag")

        reader = d.pop("reader")

        repair = d.pop("repair")

        repair_lag = d.pop("repairLag")

        stragglers = PointersBodyStragglers.from_dict(d.pop("stragglers"))




        pointers_body = cls(
            invisibility=invisibility,
            invisibility_lag=invisibility_lag,
            reader=reader,
            repair=repair,
            repair_lag=repair_lag,
            stragglers=stragglers,
        )


        pointers_body.additional_properties = d
        return pointers_body

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
