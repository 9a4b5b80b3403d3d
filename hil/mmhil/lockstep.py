"""Lockstep time from the host's side: the scheduler (through LockstepEndpoint) and a HIL script (through
the Rig) advance a `--lockstep` bench's virtual time with grants, one frame at a time.

One step: grant up to a virtual time, with `frame` (the bench stops where the next frame's delimiter
completes) and with the byte counts the host's links have written (the bench takes exactly those in
first, at the current virtual time); then wait until the links' readers have taken in every byte the
bench wrote by then (`out` of the reply), so that every frame complete at the stop cycle is in the
host's queues before the host decides what to send next. docs/bench.md, "Lockstep", has the bench's side.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from mmproto import Link

from .bench import F_CPU, Bench, BenchError

READ_TIMEOUT_S = 5.0     # the host's readers must take in the bench's output within this (wall) time


@dataclass
class Stepper:
    bench: Bench
    links: dict[str, Link] = field(default_factory=dict)
    cycle: int = 0
    ended: bool = False
    grants: int = 0
    on_step: Callable[[float], None] | None = None    # called with the new virtual time after each step
    # A `hangup` replaces a node's pty, and the bench counts `in`/`out` per pty (0 on the new one; its
    # reply's pty_generation says which): per node, the generation last seen and the link's own byte
    # counts when it began (the link object, as a host that reopens the port may use a new one).
    _gen: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)   # node: (gen, id(link), out, in)

    def _base(self, node: str, link: Link) -> tuple[int, int]:
        gen, lid, out0, in0 = self._gen.get(node, (1, id(link), 0, 0))
        return (out0, in0) if lid == id(link) else (0, 0)

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
        written = {n: link.bytes_out - self._base(n, link)[0] for n, link in self.links.items()}
        reply = self.bench.grant(max(self.cycle, self.to_cycle(until_s)), frame=frame, written=written)
        self.grants += 1
        self.cycle = int(reply["cycle"])
        self.ended = reply.get("stop") == "end"
        deadline = time.monotonic() + READ_TIMEOUT_S
        for node, link in self.links.items():
            gen = int(reply.get("pty_generation", {}).get(node, 1))
            if gen != self._gen.get(node, (1,))[0]:
                # a fresh pty since the last step: what this link did so far was on the old one
                self._gen[node] = (gen, id(link), link.bytes_out, link.bytes_in)
            if reply.get("hung_up", {}).get(node):
                continue        # no pty: nothing to wait for
            want = int(reply["out"].get(node, 0)) + self._base(node, link)[1]
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
