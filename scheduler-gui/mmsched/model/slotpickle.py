"""Pickling for the slotted dataclasses a long run retires by the million (eventstore.py: Event, EventBytes and
its parts): the fields' values as one tuple, made again by a function written once for each class. The
dataclasses' own pickling (Python 3.11, slots=True) looks up the fields of every object again: 15.8 us to read
back an event and 14.5 us to write one (2/3 of it in dataclasses.fields), which a retired run's end pays a dozen
times an event. Setting the slots one by one in a loop (object.__setattr__ for each of an Event's 38) was still
12 us an Event and 3/4 of a long run's end (cProfile, 83,360 retired events: 20 of its 31 s); the function
written for the class assigns them in one statement, 0.8 us (/tmp benchmark, the same machine, the same minute)."""

from __future__ import annotations

from functools import cache
from operator import attrgetter
from typing import Any, Callable


@cache                                   # (one per class, written the first time it is needed)
def maker(cls: type) -> Callable[[tuple[Any, ...]], Any]:
    """A function that makes an object of CLS from its slots' values, in the order of its __slots__: for a class
    whose attributes may be set, one assignment of them all; for a frozen one, each slot's descriptor set (what
    the frozen class's own __init__ does)."""
    names: tuple[str, ...] = cls.__slots__
    scope: dict[str, Any] = {"new": object.__new__, "cls": cls}
    params = getattr(cls, "__dataclass_params__", None)
    if params is not None and not params.frozen and names:
        body = ["    (" + ", ".join(f"obj.{n}" for n in names) + ",) = values"]
    else:
        body = [f"    set_{n}(obj, values[{i}])" for i, n in enumerate(names)]
        scope.update({f"set_{n}": cls.__dict__[n].__set__ for n in names})
    # (the names are the class's own slots, identifiers: nothing from outside goes into the code)
    exec("def make(values):\n    obj = new(cls)\n" + "\n".join(body) + "\n    return obj\n", scope)
    return scope["make"]


def remade(cls: type, values: tuple[Any, ...]) -> Any:
    """An object of CLS with its slots set to VALUES, in the order of its __slots__ (frozen ones too)."""
    return maker(cls)(values)


class SlotPickle:
    """A base for a dataclass(slots=True): pickled as (its class, its slots' values)."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, tuple[type, tuple[Any, ...]]]:
        cls = type(self)
        return remade, (cls, values_of(cls)(self))


@cache
def values_of(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """A function giving an object of CLS's slots' values as a tuple, in the order of its __slots__ (attrgetter:
    the look-ups in C, not a loop of getattr)."""
    names: tuple[str, ...] = cls.__slots__
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names) if names else (lambda obj: ())


__all__ = ["SlotPickle", "maker", "remade"]
