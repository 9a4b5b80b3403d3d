"""The Rig: the two serial links of the rig, the same object on the virtual bench or on real boards.

Each link is opened with pyserial (a path such as /dev/ttyUSB0 or a bench pty, or a URL such as
socket://host:port or rfc2217://host:port); a reader thread per link feeds an mmproto.StreamDecoder
and queues what it decodes, with the wall time of the read that completed it.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, TypeVar

import serial

import mmproto
from mmproto import Hello, Message, Query, Received, StreamDecoder

from .bench import Bench

M = TypeVar("M", bound=Message)


class RigError(RuntimeError):
    pass


@dataclass(frozen=True)
class Arrival:
    """A decoded frame and when (time.monotonic) the read that completed it returned."""

    at: float
    received: Received

    @property
    def message(self) -> Message:
        return self.received.message


@dataclass
class Link:
    name: str
    url: str
    baud: int = 9600
    port: serial.SerialBase | None = field(default=None, init=False)
    decoder: StreamDecoder = field(default_factory=StreamDecoder, init=False)
    messages: "queue.Queue[Arrival]" = field(default_factory=queue.Queue, init=False)
    seq: int = field(default=0, init=False)
    bytes_in: int = field(default=0, init=False)
    error: BaseException | None = field(default=None, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def open(self) -> None:
        self.port = serial.serial_for_url(self.url, baudrate=self.baud, timeout=0.05)
        self._thread = threading.Thread(target=self._reader, name=f"rig-{self.name}", daemon=True)
        self._thread.start()

    def _reader(self) -> None:
        assert self.port is not None
        try:
            while not self._stop.is_set():
                data = self.port.read(max(1, self.port.in_waiting))
                if not data:
                    continue
                now = time.monotonic()
                self.bytes_in += len(data)
                for r in self.decoder.feed(data):
                    self.messages.put(Arrival(now, r))
        except (serial.SerialException, OSError, TypeError) as exc:  # port closed under us
            if not self._stop.is_set():
                self.error = exc

    def send(self, message: Message) -> int:
        """Sends one frame with the link's next sequence number; returns that number."""
        assert self.port is not None
        with self._lock:
            seq = self.seq
            self.seq = (self.seq + 1) & 0xFF
            self.port.write(message.wire(seq))
            self.port.flush()
        return seq

    def recv(self, timeout: float = 1.0) -> Arrival:
        try:
            return self.messages.get(timeout=timeout)
        except queue.Empty:
            if self.error:
                raise RigError(f"{self.name} link failed: {self.error}") from self.error
            raise

    def drain(self) -> list[Arrival]:
        """Takes everything queued so far (so that the next wait_for sees only fresh messages)."""
        out: list[Arrival] = []
        while True:
            try:
                out.append(self.messages.get_nowait())
            except queue.Empty:
                return out

    def wait_for(self, kind: type[M], timeout: float = 2.0, where: Callable[[M], bool] | None = None) -> tuple[Arrival, M]:
        """The next message of this kind (others that arrive meanwhile are discarded)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RigError(f"{self.name}: no {kind.__name__} within {timeout} s")
            try:
                a = self.recv(left)
            except queue.Empty:
                continue
            if isinstance(a.message, kind) and (where is None or where(a.message)):
                return a, a.message

    def close(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(1.0)
        if self.port is not None:
            self.port.close()


@dataclass
class Rig:
    """Both links. `Rig(profiler_url, executor_url)` for real boards, `Rig.on_bench(bench)` for the bench."""

    profiler_url: str
    executor_url: str
    baud: int = 9600
    bench: Bench | None = None
    profiler: Link = field(init=False)
    executor: Link = field(init=False)
    hellos: dict[str, Hello] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.profiler = Link("profiler", self.profiler_url, self.baud)
        self.executor = Link("executor", self.executor_url, self.baud)

    @classmethod
    def on_bench(cls, bench: Bench) -> "Rig":
        return cls(bench.profiler_port, bench.executor_port, bench.baud, bench)

    def link(self, node: str) -> Link:
        return {"profiler": self.profiler, "executor": self.executor}[node]

    def open(self, hello_timeout: float = 5.0) -> "Rig":
        """Opens both links and reads a HELLO from each (asking with QUERY if none comes by itself:
        a node that booted before the port was opened said hello to nobody)."""
        for link in (self.profiler, self.executor):
            link.open()
        for link in (self.profiler, self.executor):
            self.hellos[link.name] = self.hello(link.name, hello_timeout)
        return self

    def hello(self, node: str, timeout: float = 5.0) -> Hello:
        link = self.link(node)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                _, h = link.wait_for(Hello, timeout=min(0.5, max(0.01, deadline - time.monotonic())))
                return h
            except RigError:
                link.send(Query(0x01))
        raise RigError(f"{node}: no HELLO within {timeout} s")

    def send(self, node: str, message: Message) -> int:
        return self.link(node).send(message)

    def recv(self, node: str, timeout: float = 1.0) -> Arrival:
        return self.link(node).recv(timeout)

    def wait_for(self, node: str, kind: type[M], timeout: float = 2.0, where: Callable[[M], bool] | None = None) -> tuple[Arrival, M]:
        return self.link(node).wait_for(kind, timeout, where)

    def drain(self, node: str) -> list[Arrival]:
        return self.link(node).drain()

    def time_base(self) -> mmproto.TimeBase:
        return mmproto.TimeBase.from_hello(self.hellos["profiler"])

    def close(self) -> None:
        for link in (self.profiler, self.executor):
            link.close()

    def __enter__(self) -> "Rig":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()
