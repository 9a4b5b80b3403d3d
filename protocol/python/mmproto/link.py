"""One node's serial link, the one the scheduler, the Rig and the tools all use.

A pyserial port (a path such as /dev/ttyUSB0 or a bench pty, or a URL such as socket://host:port) read by
pyserial's `serial.threaded.ReaderThread`, whose Protocol feeds this module's StreamDecoder. Every decoded
frame goes to the link's sink as an `Arrival` stamped with the link's clock when the read that completed
it returned; a port that fails (a bench that died, a USB adapter pulled) gives the sink one `LinkDown`.
The sink is any callable: the scheduler passes one inbox shared by both nodes (so a run sees frames and
faults in the order they happened), the Rig one queue per node.

Sending numbers frames with the link's own sequence counter; the HELLO handshake asks with
QUERY(HELLO) and checks the protocol version and the node kind.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Union

import serial
import serial.threaded

from .decoder import Received, StreamDecoder
from .framing import DecoderCounters
from .messages import PROTO_VERSION, Hello, Message, NodeKind, Query
from .sequence import SeqTracker

NODE_KINDS: dict[str, NodeKind] = {"profiler": NodeKind.PROFILER, "executor": NodeKind.EXECUTOR}


@dataclass(frozen=True)
class Arrival:
    """A decoded frame from `node` and the link clock's time at which the read that completed it returned."""

    node: str
    at: float
    received: Received

    @property
    def message(self) -> Message:
        return self.received.message


@dataclass(frozen=True)
class LinkDown:
    """The port of `node` failed at `at` (link clock); `error` says how."""

    node: str
    at: float
    error: str


Item = Union[Arrival, LinkDown]
Waiter = Callable[[Callable[[], bool], float], bool]


class LinkError(RuntimeError):
    """A link that cannot be used. `code` is one of: port_error, no_hello, protocol_version, node_kind."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class _FrameProtocol(serial.threaded.Protocol):
    """pyserial's Protocol: the ReaderThread calls it with whatever the port gave."""

    def __init__(self, link: "Link") -> None:
        self.link = link

    def data_received(self, data: bytes) -> None:
        self.link._received(data)

    def connection_lost(self, exc: BaseException | None) -> None:
        self.link._lost(exc)


class _Reader(serial.threaded.ReaderThread):
    """pyserial's reader thread, plus one case it lets escape: its `in_waiting` raises a bare OSError (EIO)
    when the other side of a pty closes (a bench that died), which would end the thread without calling
    connection_lost, so the run would never hear of it."""

    def run(self) -> None:
        try:
            super().run()
        except OSError as exc:
            self.alive = False
            if self.protocol is not None:
                self.protocol.connection_lost(exc)


@dataclass
class Link:
    node: str                                    # "profiler" or "executor": the kind its HELLO must say
    url: str
    sink: Callable[[Item], Any]
    baud: int = 9600
    clock: Callable[[], float] = time.monotonic
    write_timeout_s: float = 2.0                 # a write that blocks longer raises (a hung port)
    hello: Hello | None = field(default=None, init=False)
    decoder: StreamDecoder = field(default_factory=StreamDecoder, init=False)
    vanished: LinkDown | None = field(default=None, init=False)
    reconnects: int = field(default=0, init=False)
    bytes_in: int = field(default=0, init=False)
    bytes_out: int = field(default=0, init=False)
    frames_out: int = field(default=0, init=False)
    # What the decoder dropped before the first HELLO: opening a port flushes its input, which can cut the
    # frame on the line in two, so the first frame heard may be a tail. Kept apart from the link's error
    # counters (which start at the first HELLO), never hidden.
    before_hello: dict[str, int] | None = field(default=None, init=False)
    _port: serial.SerialBase | None = field(default=None, init=False)
    _reader: _Reader | None = field(default=None, init=False)
    _closing: bool = field(default=False, init=False)
    _tx_lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _seq: int = field(default=0, init=False)
    _hello_seen: threading.Event = field(default_factory=threading.Event, init=False)

    # ---- life cycle ------------------------------------------------------------------------
    def open(self) -> "Link":
        """Opens the port and starts the reader. Raises LinkError(port_error) if the port cannot be opened."""
        self._closing = False
        try:
            self._port = serial.serial_for_url(self.url, baudrate=self.baud, timeout=0.05,
                                               write_timeout=self.write_timeout_s)
        except (serial.SerialException, OSError, ValueError) as exc:
            raise LinkError("port_error", f"{self.node}: cannot open {self.url}: {exc}") from exc
        self.vanished = None
        self._reader = _Reader(self._port, lambda: _FrameProtocol(self))
        self._reader.name = f"mmproto-{self.node}"
        self._reader.start()
        self._reader.connect()
        return self

    def close(self) -> None:
        self._closing = True
        reader, self._reader = self._reader, None
        if reader is not None:
            try:
                reader.close()
            except (serial.SerialException, OSError):
                pass
        self._port = None

    def reopen(self, timeout_s: float = 2.0, wait: Waiter | None = None) -> bool:
        """Closes what is left of the port and opens it again (and reads a HELLO) until the timeout, on the
        link's clock. Frames already received stay where they are; the decoder's counters go on. `wait` as
        in `handshake`: a co-simulation whose time stands still while we wait (lockstep) passes one that
        advances it, so a port its bench re-plugs after some virtual time comes back."""
        self.close()
        deadline = self.clock() + timeout_s
        while self.clock() < deadline:
            try:
                self.open()
                self.handshake(max(0.1, deadline - self.clock()), wait=wait)
                self.reconnects += 1
                return True
            except LinkError:
                self.close()
                if wait is None:
                    time.sleep(0.1)
                else:
                    wait(lambda: False, 0.1)
        return False

    def __enter__(self) -> "Link":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- reading (the ReaderThread's thread) -----------------------------------------------
    def _received(self, data: bytes) -> None:
        now = self.clock()
        for r in self.decoder.feed(data):
            if isinstance(r.message, Hello):
                if self.before_hello is None:   # the decoder belongs to this thread: no lock needed
                    self.before_hello = self.decoder.counters.as_dict()
                    self.decoder.counters = DecoderCounters()
                    self.decoder.seq = SeqTracker(last=self.decoder.seq.last)
                self.hello = r.message
                self._hello_seen.set()
            self.sink(Arrival(self.node, now, r))
        # counted once its frames are in the sink: whoever waits for a byte count (lockstep) then finds them
        self.bytes_in += len(data)

    def _lost(self, exc: BaseException | None) -> None:
        if exc is None or self._closing:
            return
        self.vanished = LinkDown(self.node, self.clock(), f"{type(exc).__name__}: {exc}")
        self.sink(self.vanished)

    # ---- writing ---------------------------------------------------------------------------
    def send(self, message: Message) -> float:
        """Writes one frame with the link's next sequence number; returns the clock after the write
        returned. Raises LinkError(port_error) if the port is gone or the write failed or timed out."""
        return self.write(self.prepare(message))

    def prepare(self, message: Message) -> bytes:
        """The frame's bytes with the link's next sequence number, for `write` later: a sender that must
        hit a moment encodes ahead and writes only the bytes then (normal mode's FIRE)."""
        with self._tx_lock:
            wire = message.wire(self._seq)
            self._seq = (self._seq + 1) & 0xFF
            return wire

    def write(self, wire: bytes) -> float:
        """Writes a prepared frame; returns the clock after the write returned (see send)."""
        port = self._port
        if port is None or self.vanished is not None:
            raise LinkError("port_error", f"{self.node}: port {self.url} is gone")
        with self._tx_lock:
            try:
                port.write(wire)
            except (serial.SerialException, OSError) as exc:
                raise LinkError("port_error", f"{self.node}: write failed: {exc}") from exc
            self.bytes_out += len(wire)
            self.frames_out += 1
            return self.clock()

    # ---- HELLO -----------------------------------------------------------------------------
    def handshake(self, timeout_s: float = 5.0, wait: Waiter | None = None) -> Hello:
        """Asks for HELLO (a node that booted before the port was opened said hello to nobody, and
        opening the port flushed its input) every 0.5 s until `timeout_s`, and checks the protocol version
        and the node kind. `wait(done, seconds)` waits for `done()` (default: on the wall clock; a
        co-simulation passes one that advances its own time)."""
        self._hello_seen.clear()
        self.hello = None
        waiter: Waiter = wait or (lambda done, seconds: self._hello_seen.wait(seconds))
        left = timeout_s
        while left > 0:
            if self.vanished is not None:
                raise LinkError("port_error", f"{self.node}: port vanished during the handshake ({self.vanished.error})")
            self.send(Query(Hello.TYPE))
            if waiter(self._hello_seen.is_set, min(0.5, left)):
                break
            left -= 0.5
        h = self.hello
        if h is None:
            raise LinkError("no_hello", f"{self.node}: no HELLO within {timeout_s} s on {self.url}")
        if h.proto_version != PROTO_VERSION:
            raise LinkError("protocol_version",
                            f"{self.node}: speaks protocol version {h.proto_version}, we speak {PROTO_VERSION}")
        want = NODE_KINDS[self.node]
        if h.node_kind != want:
            raise LinkError("node_kind", f"{self.node}: HELLO says node kind {h.node_kind}, expected {int(want)}"
                            " (ports swapped?)")
        return h

    def hello_dict(self) -> dict[str, int] | None:
        return None if self.hello is None else dict(self.hello.__dict__)

    def health(self) -> dict[str, Any]:
        """What a live view shows of the link."""
        c = self.decoder.counters
        return {"hello": self.hello_dict(), "bytes_in": self.bytes_in, "frames_out": self.frames_out,
                "frames_in": c.frames_ok, "errors": c.frames_dropped, "seq_lost": c.seq_lost,
                "reconnects": self.reconnects, "vanished": self.vanished.error if self.vanished else None}
