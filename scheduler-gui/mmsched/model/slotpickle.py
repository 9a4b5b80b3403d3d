"""Pickling for the slotted dataclasses a long run retires by the million (eventstore.py: Event, EventBytes and
its parts): the fields' values as one tuple, made again by setting each slot. The dataclasses' own pickling
(Python 3.11, slots=True) looks up the fields of every object again: 15.8 us to read back an event and 14.5 us
to write one (2/3 of it in dataclasses.fields), which a retired run's end pays a dozen times an event."""

from __future__ import annotations

from typing import Any


def remade(cls: type, values: tuple[Any, ...]) -> Any:
    """An object of CLS with its slots set to VALUES, in the order of its __slots__ (frozen ones too)."""
    obj = object.__new__(cls)
    for name, value in zip(cls.__slots__, values):
        object.__setattr__(obj, name, value)
    return obj


class SlotPickle:
    """A base for a dataclass(slots=True): pickled as (its class, its slots' values)."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, tuple[type, tuple[Any, ...]]]:
        cls = type(self)
        return remade, (cls, tuple([getattr(self, name) for name in cls.__slots__]))


__all__ = ["SlotPickle", "remade"]
