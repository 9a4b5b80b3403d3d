"""Message constructors for HIL scripts: keyword fields, the protocol's names instead of numbers, and
defaults for what a script rarely sets, so user code never reads `Mode(2, 0, 0, 0, 0)`.

    frames.mode("mixed", dispatch="isr")          # MODE: mixed, ISR dispatch
    frames.mode("verification", distance=2, period=1, random_ids=True)
    frames.mode("mixed", dispatch="task", executor_load="cpu,periodic=10ms/2ms")   # with the executor's load
    frames.schedule(event_id=5, timecode=1234, tag=7)
    frames.fire(event_id=3, tag=9)
    frames.query("hello")                          # QUERY for a HELLO (or "counters", "status")
    frames.cancel(7)                               # CANCEL the pending event with tag 7 (no tag: all)

Each returns the `mmproto` dataclass (the wire format stays defined there, once). A name that is not the
protocol's raises ValueError naming the ones that are.
"""

from __future__ import annotations

import enum
from typing import TypeVar

import mmproto as mp
from mmsched.model.exload import ExecutorLoad

E = TypeVar("E", bound=enum.IntEnum)

QUERY_TARGETS: dict[str, type[mp.Message]] = {"hello": mp.Hello, "counters": mp.Counters, "status": mp.Status}


def by_name(kind: type[E], value: str | int, what: str) -> E:
    """The enum member `value` names ("mixed", "MIXED", mp.ExecutorMode.MIXED or its number)."""
    if isinstance(value, str):
        try:
            return kind[value.upper()]
        except KeyError:
            pass
    else:
        try:
            return kind(value)
        except ValueError:
            pass
    names = ", ".join(m.name.lower() for m in kind)
    raise ValueError(f"{what} {value!r}: one of {names}")


def executor_load_of(executor_load: "str | ExecutorLoad", old: dict[str, object], where: str) -> ExecutorLoad:
    """The executor's load of a call that may still say it by its former name `load` (a DeprecationWarning):
    one name for it everywhere, `executor_load`, as run_experiment's `load` is the PC's."""
    if "load" in old:
        import warnings

        warnings.warn(f"{where}(load=...) is now {where}(executor_load=...) (run_experiment's `load` is the PC's "
                      "load)", DeprecationWarning, stacklevel=3)
        executor_load = old.pop("load")  # type: ignore[assignment]
    if old:
        raise TypeError(f"{where}() got an unexpected keyword argument {next(iter(old))!r}")
    return ExecutorLoad.parse(executor_load) if isinstance(executor_load, str) else executor_load  # type: ignore[return-value]


def mode(mode: str | int = "mixed", *, dispatch: str | int = "isr", distance: int = 0, period: int = 0,
         random_ids: bool = False, executor_load: "str | ExecutorLoad" = "none", **old: object) -> mp.Mode:
    """MODE for the executor. `distance`, `period` (ticks between events) and `random_ids` matter in
    verification mode only (the executor schedules its own events); mixed mode leaves them 0. `executor_load`
    is the executor's load as `mmrig run --executor-load` and run_experiment's `executor_load` take it
    ("cpu,periodic=10ms/2ms"; its rx part is traffic a script sends itself, frames.nop()); every MODE sets it,
    so the default turns any load off. (`load=`, its former name, still works with a DeprecationWarning: in
    run_experiment `load` is the PC's load.)"""
    load = executor_load_of(executor_load, old, "frames.mode")
    return mp.Mode(mode=by_name(mp.ExecutorMode, mode, "executor mode"),
                   dispatch=by_name(mp.Dispatch, dispatch, "dispatch"),
                   distance=distance, period=period, random_ids=int(bool(random_ids)), cpu_load=int(load.cpu),
                   periodic_period_us=load.period_us, periodic_exec_us=load.exec_us)


def nop() -> mp.Nop:
    """NOP: filler the executor decodes and drops (receive load), never answered."""
    return mp.Nop(fill=0)


def schedule(*, event_id: int, timecode: int, tag: int) -> mp.Schedule:
    """SCHEDULE: fire `event_id` (0..7) at the start of tick `timecode` (the executor's timeline)."""
    check_event_id(event_id)
    return mp.Schedule(tag=tag, event_id=event_id, timecode=timecode)


def fire(*, event_id: int, tag: int) -> mp.Fire:
    """FIRE (normal mode): the profiler stamps this frame's first byte as the event."""
    check_event_id(event_id)
    return mp.Fire(event_id=event_id, tag=tag)


def cancel(tag: int | None = None) -> mp.Cancel:
    """CANCEL: takes the event with `tag` out of the executor's list before it fires; no tag: every
    pending event (the executor answers CANCELLED either way)."""
    if tag is None:
        return mp.Cancel(tag=0, flags=mp.CANCEL_ALL)
    if not isinstance(tag, int) or not 0 <= tag <= 0xFFFF:
        raise ValueError(f"tag {tag!r}: a u16 (0..65535)")
    return mp.Cancel(tag=tag, flags=0)


def query(what: str | type[mp.Message] = "hello") -> mp.Query:
    """QUERY: asks a node for a HELLO, COUNTERS or STATUS."""
    if isinstance(what, str):
        if what.lower() not in QUERY_TARGETS:
            raise ValueError(f"query {what!r}: one of {', '.join(QUERY_TARGETS)}")
        what = QUERY_TARGETS[what.lower()]
    return mp.Query(what=what.TYPE)


def check_event_id(event_id: int) -> None:
    if not isinstance(event_id, int) or not 0 <= event_id <= 7:
        raise ValueError(f"event id {event_id!r}: the event port carries 3 bits (0..7)")
