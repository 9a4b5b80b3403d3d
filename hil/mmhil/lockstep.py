"""Lockstep time from the host's side: the scheduler's run and a HIL script's Rig, both through
LockstepEndpoint, advance a `--lockstep` bench's virtual time with grants, one frame at a time.

One step: grant up to a virtual time, with `frame` (the bench stops where the next frame's delimiter
completes) and with the byte counts the host's links have written (the bench takes exactly those in
first, at the current virtual time); then wait until the links' readers have taken in every byte the
bench wrote by then (`out` of the reply), so that every frame complete at the stop cycle is in the
host's queues before the host decides what to send next. docs/bench.md, "Lockstep", has the bench's side.
"""

from __future__ import annotations

import dataclasses
import math
import queue
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from mmproto import Item, Link

from .bench import F_CPU, Bench, BenchError

# The host's readers must take in the bench's output within this (wall) time. A liveness check only (a dead
# reader, a lost pty): a lockstep outcome never depends on the host's speed. 5 s was too short on a 2-vCPU VM
# with `stress-ng --cpu 2` and a paced bench's SCHED_FIFO threads beside the test (readers 8 of 10451 and 1 of
# 115 bytes short after 5 s, `make test` under tools/test_under_load.py: a pty hands its bytes on through the
# kernel's workqueue, which real-time threads can hold off); a minute tells a dead link from a starved one.
READ_TIMEOUT_S = 60.0


def stamped(incoming: "queue.Queue[Item]", now: float) -> Iterator[Item]:
    """What the links have put in `incoming` so far, each stamped with `now`, the virtual time of the last
    grant's stop: every frame in it was complete exactly then (the Stepper grants up to a frame's end).
    LockstepEndpoint takes its frames so, for a run and for the Rig."""
    while True:
        try:
            item = incoming.get_nowait()
        except queue.Empty:
            return
        yield dataclasses.replace(item, at=now)


@dataclass
class _PtyCount:
    """A node's link on a pty counts against the bench's, which are per stream: a `hangup` replaces a node's pty
    and its counts start again at 0 on the new one (`generation` in the grant reply; docs/bench.md, "Faults").
    The link may be the same object reopened (its own counts go on) or a new one (from 0). (A link on a line
    socket needs none of this: its stream is named, Link.stream_named.)"""
    gen: int = 1
    link_id: int = 0
    written: int = 0    # bytes the host's links wrote on this pty: what a grant's `in` announces
    seen_out: int = 0   # the link's bytes_out when last added to `written`
    in0: int = 0        # the link's bytes_in when the bench's `out` count began for it
    skip: int = 0       # bytes the bench wrote on this pty that the link never reads (a port opened anew
                        # flushes its input; while the port is down nothing is read)
    last_out: int = 0   # the bench's `out` at the last step


@dataclass
class Stepper:
    bench: Bench
    links: dict[str, Link] = field(default_factory=dict)
    cycle: int = 0
    ended: bool = False
    grants: int = 0
    on_step: Callable[[float], None] | None = None    # called with the new virtual time after each step
    _pty: dict[str, "_PtyCount"] = field(default_factory=dict)
    _named: set[str] = field(default_factory=set)    # nodes whose link is on a line socket

    @property
    def virtual_s(self) -> float:
        return self.cycle / F_CPU

    @staticmethod
    def to_cycle(t_s: float) -> int:
        """The first cycle whose virtual time (cycle / F_CPU, as the float `virtual_s` gives it) is at or
        after `t_s`: so a wait for `t_s` always ends with `virtual_s >= t_s`, and a grant for a time
        after `virtual_s` always advances (float rounding must never leave either one cycle short)."""
        c = math.ceil(t_s * F_CPU)
        while c / F_CPU < t_s:
            c += 1
        return c

    def step(self, until_s: float, frame: bool = True) -> dict[str, Any]:
        """Lets virtual time run to `until_s` (or to the next frame end); returns the bench's reply."""
        written: dict[str, int | tuple[int, int]] = {}
        for node, link in self.links.items():
            if link.stream_named:
                self._named.add(node)
            if node in self._named:
                # a line socket: the link's counts since its open are the bench's for that stream, which the
                # grant names (the bench waits for them only while that stream holds the line; generation 0
                # names none: the link is closed, between a hang-up and its reopen)
                written[node] = (link.bytes_out_open, link.generation) if link.stream_named else (0, 0)
                continue
            pc = self._pty.setdefault(node, _PtyCount(link_id=id(link)))
            if pc.link_id != id(link):
                # a link opened anew on the port: its counts start at 0, and what the bench wrote before
                # it opened (by the last step: nothing runs between steps) was flushed
                pc.link_id, pc.seen_out, pc.in0, pc.skip = id(link), 0, 0, pc.last_out
            pc.written += link.bytes_out - pc.seen_out
            pc.seen_out = link.bytes_out
            written[node] = pc.written
        reply = self.bench.grant(max(self.cycle, self.to_cycle(until_s)), frame=frame, written=written)
        self.grants += 1
        self.cycle = int(reply["cycle"])
        self.ended = reply.get("stop") == "end"
        deadline = time.monotonic() + READ_TIMEOUT_S
        for node, link in self.links.items():
            out = int(reply["out"].get(node, 0))
            gen = int(reply.get("generation", {}).get(node, 0))
            down = bool(reply.get("hung_up", {}).get(node)) or link.vanished is not None
            if node in self._named:
                # a line socket: every byte the bench wrote to the link's stream reaches it (none, while another
                # stream holds the line)
                while (not down and link.stream_named and gen == link.generation and link.bytes_in_open < out
                       and link.vanished is None):
                    if time.monotonic() > deadline:
                        raise BenchError(f"lockstep: the {node} link read {link.bytes_in_open} of the {out} bytes "
                                         f"the bench wrote within {READ_TIMEOUT_S} s", self.bench.log_tail())
                    time.sleep(0.0001)
                continue
            pc = self._pty[node]
            gen = gen or pc.gen
            fresh = gen != pc.gen
            if fresh:
                pc.gen, pc.written = gen, 0      # a fresh pty: the host's bytes from now on go to it
            if fresh or down:
                # a fresh pty, or the port is down: what the bench has written on this pty so far never
                # reaches the link
                pc.in0, pc.skip = link.bytes_in, out
            pc.last_out = out
            if down:
                continue        # no port to read: nothing to wait for
            want = pc.in0 + out - pc.skip
            while link.bytes_in < want and link.vanished is None:
                if time.monotonic() > deadline:
                    raise BenchError(f"lockstep: the {node} link read {link.bytes_in} of the {want} bytes the bench "
                                     f"wrote within {READ_TIMEOUT_S} s", self.bench.log_tail())
                time.sleep(0.0001)
        if self.on_step is not None:
            self.on_step(self.virtual_s)
        return reply

    def wait_until(self, done: Callable[[], bool], timeout_s: float) -> bool:
        """Steps virtual time until `done()` or `timeout_s` of virtual time has passed."""
        deadline = self.virtual_s + timeout_s
        while not done():
            if self.virtual_s >= deadline or self.ended:
                return False
            self.step(deadline)
        return True
