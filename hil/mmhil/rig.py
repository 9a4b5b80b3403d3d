"""The Rig: the two serial links of the rig, the same object on the virtual bench or on real boards.

Each link is an `mmproto.Link` (the one link of the project: pyserial port, reader thread, decoder,
sequence numbers, HELLO check) whose sink is a queue of this Rig's, one per node, so a HIL script reads
each node's frames in order with `recv`, `wait_for` and `drain`.

On a lockstep bench (`Bench(lockstep=True)`) the Rig steps virtual time itself (mmhil.lockstep): a
wait for a frame grants time frame by frame until one comes, timeouts count in virtual seconds, and
`advance(seconds)` lets time run with nothing to wait for. A script then gives the same result however
busy the host is.
"""

from __future__ import annotations

import queue
import time
from dataclasses import dataclass, field
from typing import Callable, TypeVar

import mmproto
from mmproto import Arrival, Hello, Item, Link, LinkDown, LinkError, Message

from .bench import Bench
from .lockstep import Stepper

M = TypeVar("M", bound=Message)
NODES = ("profiler", "executor")


class RigError(RuntimeError):
    pass


@dataclass
class Rig:
    """Both links. `Rig(profiler_url, executor_url)` for real boards, `Rig.on_bench(bench)` for the bench."""

    profiler_url: str
    executor_url: str
    baud: int = 9600
    bench: Bench | None = None
    links: dict[str, Link] = field(default_factory=dict, init=False)
    queues: dict[str, "queue.Queue[Item]"] = field(init=False)
    hellos: dict[str, Hello] = field(default_factory=dict, init=False)
    stepper: Stepper | None = field(default=None, init=False)    # a lockstep bench's time

    def __post_init__(self) -> None:
        self.queues = {n: queue.Queue() for n in NODES}
        urls = {"profiler": self.profiler_url, "executor": self.executor_url}
        self.links = {n: Link(n, urls[n], self.queues[n].put, baud=self.baud) for n in NODES}
        if self.bench is not None and self.bench.lockstep:
            self.stepper = Stepper(self.bench, self.links)

    def now(self) -> float:
        """Virtual seconds on a lockstep bench, else time.monotonic()."""
        return self.stepper.virtual_s if self.stepper is not None else time.monotonic()

    def advance(self, seconds: float) -> None:
        """Lockstep: lets virtual time run `seconds` (frames that come meanwhile are queued). Elsewhere time
        runs by itself: this sleeps."""
        if self.stepper is None:
            time.sleep(seconds)
            return
        self.stepper.wait_until(lambda: False, seconds)

    @classmethod
    def on_bench(cls, bench: Bench) -> "Rig":
        return cls(bench.profiler_port, bench.executor_port, bench.baud, bench)

    @property
    def profiler(self) -> Link:
        return self.links["profiler"]

    @property
    def executor(self) -> Link:
        return self.links["executor"]

    def open(self, hello_timeout: float = 5.0) -> "Rig":
        """Opens both links and reads a HELLO from each (the link asks with QUERY: a node that booted
        before the port was opened said hello to nobody), checking version and node kind."""
        try:
            for link in self.links.values():
                link.open()
            wait = self.stepper.wait_until if self.stepper is not None else None
            for n, link in self.links.items():
                self.hellos[n] = link.handshake(hello_timeout, wait=wait)
        except LinkError as exc:
            self.close()
            raise RigError(str(exc)) from exc
        return self

    def send(self, node: str, message: Message) -> float:
        """Sends one frame; returns time.monotonic() after the write returned."""
        try:
            return self.links[node].send(message)
        except LinkError as exc:
            raise RigError(str(exc)) from exc

    def recv(self, node: str, timeout: float = 1.0) -> Arrival:
        """The node's next frame. Raises queue.Empty after `timeout` (virtual seconds in lockstep), RigError
        if its link failed."""
        if self.stepper is not None and not self.stepper.wait_until(lambda: not self.queues[node].empty(), timeout):
            raise queue.Empty
        item = self.queues[node].get(timeout=timeout)
        if isinstance(item, LinkDown):
            raise RigError(f"{node} link failed: {item.error}")
        return item

    def drain(self, node: str) -> list[Arrival]:
        """Takes everything queued so far (so that the next wait_for sees only fresh frames)."""
        out: list[Arrival] = []
        while True:
            try:
                item = self.queues[node].get_nowait()
            except queue.Empty:
                return out
            if isinstance(item, Arrival):
                out.append(item)

    def wait_for(self, node: str, kind: type[M], timeout: float = 2.0,
                 where: Callable[[M], bool] | None = None) -> tuple[Arrival, M]:
        """The node's next message of this kind (others that arrive meanwhile are discarded)."""
        deadline = self.now() + timeout
        while True:
            left = deadline - self.now()
            if left <= 0:
                raise RigError(f"{node}: no {kind.__name__} within {timeout} s")
            try:
                a = self.recv(node, left)
            except queue.Empty:
                continue
            if isinstance(a.message, kind) and (where is None or where(a.message)):
                return a, a.message

    def time_base(self) -> mmproto.TimeBase:
        return mmproto.TimeBase.from_hello(self.hellos["profiler"])

    def close(self) -> None:
        for link in self.links.values():
            link.close()

    def __enter__(self) -> "Rig":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()
