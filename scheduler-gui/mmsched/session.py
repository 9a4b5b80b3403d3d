"""A serial session with one node: a pyserial port, a reader thread feeding an mmproto.StreamDecoder,
the HELLO/version check, and what happens when the port vanishes (the bench died, a USB adapter was
pulled): the session says so once, keeps what it received, and can try to reconnect.

Every decoded frame goes to a queue shared by the sessions of a run, as (node, Arrival); a vanished
port puts one LinkDown item there, so the run loop sees frames and faults in the order they happened.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Union

import serial

from mmproto import PROTO_VERSION, Hello, Message, Query, Received, StreamDecoder
from mmproto.framing import DecoderCounters
from mmproto.sequence import SeqTracker

NODE_KINDS = {"profiler": 1, "executor": 2}


class SessionError(RuntimeError):
    pass


@dataclass(frozen=True)
class Arrival:
    """A decoded frame and the time.monotonic() at which the read that completed it returned."""

    node: str
    at: float
    received: Received

    @property
    def message(self) -> Message:
        return self.received.message


@dataclass(frozen=True)
class LinkDown:
    """The port of `node` failed at `at` (time.monotonic()); `error` says how."""

    node: str
    at: float
    error: str


Item = Union[Arrival, LinkDown]


@dataclass
class Session:
    node: str
    url: str
    inbox: "queue.Queue[Item]"
    baud: int = 9600
    hello: Hello | None = field(default=None, init=False)
    decoder: StreamDecoder = field(default_factory=StreamDecoder, init=False)
    vanished: LinkDown | None = field(default=None, init=False)
    reconnects: int = field(default=0, init=False)
    bytes_in: int = field(default=0, init=False)
    frames_out: int = field(default=0, init=False)
    _port: serial.SerialBase | None = field(default=None, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _tx_lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _seq: int = field(default=0, init=False)
    _hello_seen: threading.Event = field(default_factory=threading.Event, init=False)
    # What the decoder dropped before the first HELLO: pyserial flushes the input when it opens the port,
    # which can cut the frame on the line in two, so the first frame heard may be a tail. Kept apart from
    # the link's error counters (which start at the first HELLO), never hidden.
    before_hello: dict[str, int] | None = field(default=None, init=False)

    # ---- life cycle ------------------------------------------------------------------------
    def open(self) -> None:
        self._stop.clear()
        self._port = serial.serial_for_url(self.url, baudrate=self.baud, timeout=0.05)
        self.vanished = None
        self._thread = threading.Thread(target=self._reader, name=f"mmsched-{self.node}", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1.0)
        if self._port is not None:
            try:
                self._port.close()
            except (serial.SerialException, OSError):
                pass
        self._port = None

    def reconnect(self, timeout_s: float = 2.0) -> bool:
        """Closes what is left of the port and tries to open it again (and read a HELLO) until the
        timeout. Frames already received stay where they are."""
        self.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                self.open()
                self.handshake(max(0.1, deadline - time.monotonic()))
                self.reconnects += 1
                return True
            except (serial.SerialException, OSError, SessionError):
                self.close()
                time.sleep(0.1)
        return False

    # ---- reading ---------------------------------------------------------------------------
    def _reader(self) -> None:
        port = self._port
        assert port is not None
        try:
            while not self._stop.is_set():
                data = port.read(max(1, port.in_waiting))
                if not data:
                    continue
                now = time.monotonic()
                self.bytes_in += len(data)
                for r in self.decoder.feed(data):
                    if isinstance(r.message, Hello):
                        if self.before_hello is None:   # (in this thread: the decoder is this thread's)
                            self.before_hello = self.decoder.counters.as_dict()
                            self.decoder.counters = DecoderCounters()
                            self.decoder.seq = SeqTracker(last=self.decoder.seq.last)
                        self.hello = r.message
                        self._hello_seen.set()
                    self.inbox.put(Arrival(self.node, now, r))
        except (serial.SerialException, OSError, TypeError, AttributeError) as exc:
            if not self._stop.is_set():
                self.vanished = LinkDown(self.node, time.monotonic(), f"{type(exc).__name__}: {exc}")
                self.inbox.put(self.vanished)

    # ---- writing ---------------------------------------------------------------------------
    def send(self, message: Message) -> float:
        """Writes one frame with the session's next sequence number; returns time.monotonic() after
        the write returned. Raises SessionError if the port is gone."""
        port = self._port
        if port is None or self.vanished is not None:
            raise SessionError(f"{self.node}: port {self.url} is gone")
        with self._tx_lock:
            wire = message.wire(self._seq)
            self._seq = (self._seq + 1) & 0xFF
            try:
                port.write(wire)
            except (serial.SerialException, OSError) as exc:
                raise SessionError(f"{self.node}: write failed: {exc}") from exc
            self.frames_out += 1
            return time.monotonic()

    # ---- HELLO -----------------------------------------------------------------------------
    def handshake(self, timeout_s: float = 5.0) -> Hello:
        """Asks for HELLO (a node that booted before the port was opened said hello to nobody, and
        pyserial flushes input on open) and checks the protocol version and the node kind."""
        self._hello_seen.clear()
        self.hello = None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.vanished is not None:
                raise SessionError(f"{self.node}: port vanished during the handshake ({self.vanished.error})")
            self.send(Query(0x01))
            if self._hello_seen.wait(min(0.5, max(0.01, deadline - time.monotonic()))):
                break
        h = self.hello
        if h is None:
            raise SessionError(f"{self.node}: no HELLO within {timeout_s} s on {self.url}")
        if h.proto_version != PROTO_VERSION:
            raise SessionError(f"{self.node}: speaks protocol version {h.proto_version}, we speak {PROTO_VERSION}")
        if h.node_kind != NODE_KINDS[self.node]:
            raise SessionError(f"{self.node}: HELLO says node kind {h.node_kind}, expected {NODE_KINDS[self.node]}"
                               " (ports swapped?)")
        return h

    def hello_dict(self) -> dict[str, int] | None:
        return None if self.hello is None else dict(self.hello.__dict__)
