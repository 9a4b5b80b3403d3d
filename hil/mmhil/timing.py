"""The paced bench's `timing` reply (hil/bench/hostin.c, pacing.c) as what validity by cause judges events by
(mmsched.verdict.validity): the PC's bytes with their stamps and the output handed over late as a `ByteRecord`, and
the stall intervals, all placed on the host clock (virtual time v was due at wall_start + v)."""

from __future__ import annotations

from typing import Any

from mmanalysis.inputrecord import BenchRead
from mmsched.model.byterecord import HeldByFault
from mmsched.model.byterecord import ByteRecord, Entry, Held, Stall


def byte_record(reply: dict[str, Any]) -> ByteRecord:
    """The record of a `timing` reply: entries by node in (pty generation, offset) order, held output runs by
    node in due order."""
    ws = float(reply["wall_start_s"])
    entries: dict[str, list[Entry]] = {}
    for node, gen, offset, n, stamp_s, moved_us, *_ in reply.get("inputs", []):   # (then cycle, baud: inputs)
        entries.setdefault(node, []).append(Entry(node, int(gen), int(offset), int(n), ws + float(stamp_s),
                                                  float(moved_us) / 1e6))
    held: dict[str, list[Held]] = {}
    for node, due0, due1, n, late_us in reply.get("held", []):
        held.setdefault(node, []).append(Held(node, ws + float(due0), ws + float(due1), int(n), float(late_us) / 1e6))
    for es in entries.values():
        es.sort(key=lambda e: (e.gen, e.offset))
    return ByteRecord(entries, held, float(reply.get("held_min_us", 0.0)) / 1e6,
                      int(reply.get("inputs_dropped", 0)) + int(reply.get("held_dropped", 0)))


def bench_reads(reply: dict[str, Any]) -> list[BenchRead]:
    """The reads of the PC's bytes in a `timing` reply, with the cycle each was queued at and the port's rate
    (a run's record of its inputs: mmanalysis.inputrecord)."""
    return [BenchRead(node, int(gen), int(offset), int(n), int(cycle), int(baud))
            for node, gen, offset, n, _stamp, _moved, cycle, baud in reply.get("inputs", [])]


def bench_commands(reply: dict[str, Any]) -> list[tuple[int, str]]:
    """The commands that changed the simulation (faults, resets, cuts, injections) with the cycle each took effect
    at (hil/bench/commands.c): a replay issues them again at their cycles."""
    return [(int(cycle), str(text)) for cycle, text in reply.get("commands", [])]


def stalls(reply: dict[str, Any]) -> list[Stall]:
    """The stall intervals of a `timing` (or `stalls`) reply on the host clock: a stall from virtual v0 to v1
    (catch-up included) starts at wall_start + v0 and ends on the host at wall_start + v1."""
    ws = float(reply["wall_start_s"])
    return [Stall(ws + float(v0), ws + float(v1), float(lag)) for v0, v1, lag in reply.get("stalls", [])]


def held_by_fault(reply: dict[str, Any]) -> list[HeldByFault]:
    """The `injected` reply's runs of host bytes an injected delay held back (hil/bench/faulthold.c)."""
    return [HeldByFault(node, int(gen), int(offset), int(n), float(us))
            for node, gen, offset, n, us in reply.get("held_by_fault", [])]
