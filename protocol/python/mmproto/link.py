"""One node's serial link, the one the scheduler, the Rig and the tools all use.

A pyserial port (a path such as /dev/ttyUSB0 or a bench pty, or a URL such as socket://host:port) read by
pyserial's `serial.threaded.ReaderThread`, whose Protocol feeds this module's StreamDecoder. Every decoded
frame goes to the link's sink as an `Arrival` stamped with the link's clock when the read that completed
it returned; a port that fails (a bench that died, a USB adapter pulled) gives the sink one `LinkDown`.
The sink is any callable: the scheduler passes one inbox shared by both nodes (so a run sees frames and
faults in the order they happened), the Rig one queue per node.

Sending numbers frames with the link's own sequence counter; the HELLO handshake asks with
QUERY(HELLO) and checks the protocol version and the node kind. A link whose open resets the node
(`reset_on_open`: an Arduino's DTR) listens first, HELLO_LISTEN_S without sending, so no byte reaches the
node's bootloader (which would hold it there for seconds). `change_baud` moves the link to another
rate with BAUD (SPEC.md 0x06): the node answers with HELLO at the new rate.
"""

from __future__ import annotations


import errno
import os
import select
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Union

import serial
import serial.threaded

from .decoder import Received, StreamDecoder
from .framing import DecoderCounters
from .messages import PROTO_VERSION, Baud, Error, Hello, Message, NodeKind, Query
from .sequence import SeqTracker
from .wiretime import wire_time_s
from .writelog import WriteLog

NODE_KINDS: dict[str, NodeKind] = {"profiler": NodeKind.PROFILER, "executor": NodeKind.EXECUTOR}
# BAUD (SPEC.md 0x06): the HELLO at the new rate is asked for again after ASK_AGAIN_S and given up after
# GIVE_UP_S; a refusal (ERROR BAD_VALUE at the old rate) is awaited this long beyond the two frames' wire time
BAUD_ASK_AGAIN_S = 0.3
BAUD_GIVE_UP_S = 1.0
BAUD_REFUSAL_MARGIN_S = 0.02
# Opening an Arduino Mega's port asserts DTR, which resets the board into its stk500v2 bootloader (measured in
# simavr): left alone it starts the application after 0.835 s, but a byte at 0.435 s keeps it in the
# bootloader until 9.4 s (a byte every 0.5 s: 13.4 s). So after an open that may have reset the node the link
# first listens, sending nothing, this long: the bootloader's 0.835 s, the application's way to its boot HELLO
# (the profiler's LED self-test first, 8 x 30 ms, then its 28-byte frame, 29 ms at 9600 baud: ~1.1 s in all;
# the executor's a few ms), and 0.4 s of margin. The node's boot HELLO, or any frame (an application already
# running), ends it; a QUERY after it reaches the application, whatever the bootloader took.
HELLO_LISTEN_S = 1.5
HELLO_ASK_EVERY_S = 0.5     # then QUERY(HELLO) this often until the handshake's timeout


def write_all(port: serial.SerialBase, data: bytes, timeout_s: float) -> None:
    """All of DATA onto PORT; SerialTimeoutException when the port takes nothing of what is left for TIMEOUT_S (a
    hung port). Not pyserial's own write on a device port: it looks at the clock after os.write and before counting
    what was written, so a write the kernel took whole is reported as a timeout when the writing thread was held off
    past the timeout right after it (a 7-byte QUERY came back "Write timeout" on a host with two busy real-time
    benches and a CPU hog). A pyserial URL (socket://, rfc2217://, loop://) has no descriptor: its own write."""
    fd = getattr(port, "fd", None)
    if not isinstance(fd, int):
        port.write(data)
        return
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:      # (the port is non-blocking: its buffer is full, wait until it takes more)
            n = 0
        view = view[n:]
        if view and not select.select([], [fd], [], timeout_s)[1]:
            raise serial.SerialTimeoutException("Write timeout")


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
class Written:
    """A frame the link wrote: its first byte's offset in the bytes written to the port's stream `gen` (the
    link's `generation` then), the link clock just before the write began and after it returned. Neither a
    bench's pty nor its line socket loses anything from the PC to the bench, so (gen, offset) finds the frame
    in what the bench recorded of its input."""

    offset: int
    gen: int
    began: float
    ended: float
    size: int = 0          # the frame's bytes on the wire


@dataclass(frozen=True)
class LinkDown:
    """The port of `node` failed at `at` (link clock); `error` says how."""

    node: str
    at: float
    error: str


Item = Union[Arrival, LinkDown]
Waiter = Callable[[Callable[[], bool], float], bool]


class LinkError(RuntimeError):
    """A link that cannot be used. `code` is one of: port_error, no_hello, protocol_version, node_kind,
    baud_refused (the node cannot run at a rate asked for), baud_lost (no HELLO at the new rate)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def poll_until(done: Callable[[], bool], seconds: float) -> bool:
    """Waits on the wall clock until done() or `seconds` have passed (every 5 ms); returns done()."""
    end = time.monotonic() + seconds
    while not done():
        if time.monotonic() >= end:
            return False
        time.sleep(0.005)
    return True


class _FrameProtocol(serial.threaded.Protocol):
    """pyserial's Protocol: the ReaderThread calls it with whatever the port gave."""

    def __init__(self, link: "Link") -> None:
        self.link = link

    def data_received(self, data: bytes) -> None:
        self.link._received(data)

    def connection_lost(self, exc: BaseException | None) -> None:
        try:
            self.link._lost(exc)
        finally:
            _drop_tracebacks(exc)


def _drop_tracebacks(exc: BaseException | None) -> None:
    """Forgets the tracebacks of `exc` and of the exceptions it was raised from, which nothing reads after the
    reader thread ends (LinkDown keeps the words). pyserial's ReaderThread.run keeps the exception that ended it
    in a local (`error`), whose traceback holds that very frame: a reference cycle through the thread, its port,
    the protocol and the whole Link, freed only by a full collection (one per hung-up line, 2 a bench run; what a
    process running many runs kept, with a run's freezing of the interpreter: mmsched.host.quiet)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        exc.__traceback__ = None
        exc = exc.__cause__ or exc.__context__


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

    def stop(self) -> None:
        """pyserial's stop waits 2 s for the thread; a loaded host can starve it longer. Its `close` would then close
        the port under a thread still reading it, and the descriptor's number, reused at once by the next open (a
        reconnect, the next run), would be read by two threads ("device reports readiness to read but returned
        no data", the port taken for vanished). So the thread is waited for until it has ended."""
        super().stop()
        if self.is_alive():
            self.join(30)


@dataclass
class Link:
    node: str                                    # "profiler" or "executor": the kind its HELLO must say
    url: str
    sink: Callable[[Item], Any]
    baud: int = 9600                             # the port's rate now (the node's after reset until change_baud)
    clock: Callable[[], float] = time.monotonic
    write_timeout_s: float = 2.0                 # a write that blocks longer raises (a hung port)
    # opening the port resets the node (an Arduino's DTR): the handshake listens first (HELLO_LISTEN_S) and a
    # reopen meets the node at its boot rate
    reset_on_open: bool = False
    # Who reads the port: None, pyserial's ReaderThread (a Python thread: a frame is stamped when that thread holds
    # the interpreter's lock and the CPU); or a factory `reader(port, link)` of a reader of its own that stamps each
    # read as it comes and feeds `link._received(data, at)` (mmsched.link.nativereader: a C thread, for a run whose clock
    # is the host's), or returns None for a port it cannot read (pyserial's thread then). A reader has `close()`,
    # which closes the port too.
    reader: Callable[[Any, "Link"], Any] | None = None
    hello: Hello | None = field(default=None, init=False)
    decoder: StreamDecoder = field(default_factory=StreamDecoder, init=False)
    vanished: LinkDown | None = field(default=None, init=False)
    reconnects: int = field(default=0, init=False)
    bytes_in: int = field(default=0, init=False)
    bytes_in_open: int = field(default=0, init=False)  # bytes read since the last open
    hellos_in: int = field(default=0, init=False)     # HELLO frames received, ever (a reopen's count them)
    bytes_out: int = field(default=0, init=False)
    frames_out: int = field(default=0, init=False)
    opens: int = field(default=0, init=False)          # times the port was opened (a reopen counts)
    # The byte stream the port's writes go to since the last open, as the far end names it: a bench's line
    # socket says its generation when it takes the connection (mmproto.urlhandler.protocol_unix); any other
    # port's is the count of opens (a bench's pty: its generation, while the link is its only opener).
    generation: int = field(default=0, init=False)
    bytes_out_open: int = field(default=0, init=False)  # bytes written since the last open
    # the last writes' bytes, by stream (`generation`), and each one's (generation, offset, size, rate) and the
    # link clock when it began (writelog.py): the bench's input record names its reads by (generation, offset),
    # and a run's records of its inputs (mmanalysis.inputrecord) take their bytes from here; a board run's places
    # them on the profiler's time base by the run's tick fit (mmsched.run.inputlog)
    written: WriteLog = field(default_factory=WriteLog, init=False, repr=False)
    # What the decoder dropped before the first HELLO: opening a port flushes its input, which can cut the
    # frame on the line in two, so the first frame heard may be a tail. Kept apart from the link's error
    # counters (which start at the first HELLO), never hidden.
    before_hello: dict[str, int] | None = field(default=None, init=False)
    _port: serial.SerialBase | None = field(default=None, init=False)
    _reader: Any = field(default=None, init=False)    # the port's reader: a _Reader, or what `reader` made
    _closing: bool = field(default=False, init=False)
    _tx_lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _writer: Callable[[bytes], Written] | None = field(default=None, init=False)
    _writer_close: Callable[[], None] | None = field(default=None, init=False)
    _seq: int = field(default=0, init=False)
    _hello_seen: threading.Event = field(default_factory=threading.Event, init=False)
    _heard: threading.Event = field(default_factory=threading.Event, init=False)   # any valid frame
    _baud_refused: threading.Event = field(default_factory=threading.Event, init=False)
    boot_baud: int = field(default=0, init=False)   # the rate the link was opened at: the node's after a reset
    # What the decoder dropped while the rate changed (a frame the node was sending at the old rate arrives
    # as garbage at the new one): moved out of the link's error counters when the HELLO at the new rate
    # comes, kept here, never hidden. _baud_mark: the counters when BAUD went out, and the rate asked for.
    during_baud_change: dict[str, int] = field(default_factory=dict, init=False)
    _baud_mark: tuple[int, dict[str, int]] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.boot_baud = self.baud

    # ---- life cycle ------------------------------------------------------------------------
    def open(self) -> "Link":
        """Opens the port and starts the reader. Raises LinkError(port_error) if the port cannot be opened, or if
        this link has it open already (a second open would leave the first port's reader taking its bytes)."""
        if self.is_open:
            raise LinkError("port_error", f"{self.node}: {self.url} is open already (on this link)")
        self._closing = False
        try:
            # exclusive: an advisory lock (flock) every opener through this link takes, root included. Two readers of
            # one port each take bytes from the other; a run whose bench was killed reopened links that by then led
            # to another bench's ptys, and both runs lost frames ("readiness to read but returned no data")
            self._port = serial.serial_for_url(self.url, baudrate=self.baud, timeout=0.05,
                                               write_timeout=self.write_timeout_s, exclusive=True)
        except (serial.SerialException, OSError, ValueError) as exc:
            if getattr(exc, "errno", None) == errno.EWOULDBLOCK:    # (pyserial's flock refused: another holds it)
                raise LinkError("port_error", f"{self.node}: {self.url} is in use by another program (it holds "
                                              "the port's lock)") from exc
            raise LinkError("port_error", f"{self.node}: cannot open {self.url}: {exc}") from exc
        self.vanished = None
        self.opens += 1
        self.generation = int(getattr(self._port, "generation", None) or self.opens)
        self.bytes_out_open = 0
        self.bytes_in_open = 0
        self._hello_seen.clear()          # (a HELLO seen from here on is this open's: handshake keeps it)
        self._heard.clear()
        made = self.reader(self._port, self) if self.reader is not None else None
        if made is not None:       # (a factory returns None for a port it cannot read: pyserial's thread reads it)
            self._reader = made
            return self
        self._reader = _Reader(self._port, lambda: _FrameProtocol(self))
        self._reader.name = f"mmproto-{self.node}"
        self._reader.start()
        self._reader.connect()
        return self

    @property
    def is_open(self) -> bool:
        return self._port is not None

    def unread(self) -> bool:
        """Whether bytes came on the port that the sink has not been given yet, as far as the reader can tell
        (a reader of its own: mmsched.link.nativereader; pyserial's thread cannot tell without reading: False)."""
        reader = self._reader
        check = getattr(reader, "unread", None)
        return bool(check()) if check is not None else False

    @property
    def stream_named(self) -> bool:
        """Whether the far end named this open's byte stream (`generation`): a bench's line socket does, so its
        byte counts since the open (bytes_in_open, bytes_out_open) are exactly the bench's for that stream."""
        return self._port is not None and getattr(self._port, "generation", None) is not None

    def close(self) -> None:
        self._closing = True
        with self._tx_lock:
            stop_writer, self._writer_close, self._writer = self._writer_close, None, None
        if stop_writer is not None:
            stop_writer()                    # (before the descriptor goes: hand_writes_to)
        reader, self._reader = self._reader, None
        if reader is not None:
            try:
                reader.close()
            except (serial.SerialException, OSError):
                pass
        self._port = None

    def reopen(self, timeout_s: float = 2.0, wait: Waiter | None = None,
               give_up: Callable[[], bool] | None = None) -> bool:
        """Closes what is left of the port and opens it again (and reads a HELLO) until the timeout, on the
        link's clock. Frames already received stay where they are; the decoder's counters go on. `wait` as
        in `handshake`: a co-simulation whose time stands still while we wait (lockstep) passes one that
        advances it, so a port its bench re-plugs after some virtual time comes back.

        With `reset_on_open` the open reset the node: it is met at its boot rate (then asked for ours) and
        listened to first; every try resets it again, so one try gets the whole time left (at least
        HELLO_LISTEN_S and one ask). `give_up()`, asked before every try, ends the tries at once (False returned):
        the caller has learnt the port cannot come back."""
        self.close()
        deadline = self.clock() + timeout_s
        rate = self.baud
        while self.clock() < deadline and not (give_up is not None and give_up()):
            try:
                if self.reset_on_open:
                    self.baud = self.boot_baud
                self.open()
                if self.reset_on_open:
                    self.handshake(max(HELLO_LISTEN_S + HELLO_ASK_EVERY_S, deadline - self.clock()), wait=wait)
                    if rate != self.baud:
                        self.change_baud(rate, wait=wait)
                    self.reconnects += 1
                    return True
                try:
                    self.handshake(max(0.1, min(1.0, deadline - self.clock())), wait=wait)
                except LinkError as exc:
                    if exc.code != "no_hello" or rate == self.boot_baud:
                        raise
                    # a node that reset runs at its build-time rate again (SPEC.md 0x06): meet it there, then
                    # ask it for ours
                    self.set_port_baud(self.boot_baud)
                    self.handshake(max(0.1, deadline - self.clock()), wait=wait)
                    self.change_baud(rate, wait=wait)
                self.reconnects += 1
                return True
            except LinkError:
                self.baud = rate
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
    def _received(self, data: bytes, at: float | None = None) -> None:
        """(the reader's thread) Bytes read from the port, complete at `at` on the link's clock (None: now)."""
        now = self.clock() if at is None else at
        for r in self.decoder.feed(data):
            self._heard.set()
            if isinstance(r.message, Hello):
                if self.before_hello is None:   # the decoder belongs to this thread: no lock needed
                    self.before_hello = self.decoder.counters.as_dict()
                    self.decoder.counters = DecoderCounters()
                    self.decoder.seq = SeqTracker(last=self.decoder.seq.last)
                self.hello = r.message
                self.hellos_in += 1
                if self._baud_mark is not None and r.message.baud == self._baud_mark[0]:
                    self._settle_baud_change(self._baud_mark[1])
                self._hello_seen.set()
            elif isinstance(r.message, Error) and r.message.ref_type == Baud.TYPE:
                self._baud_refused.set()
            self.sink(Arrival(self.node, now, r))
        # counted once its frames are in the sink: whoever waits for a byte count (lockstep) then finds them
        self.bytes_in += len(data)
        self.bytes_in_open += len(data)

    def _settle_baud_change(self, mark: dict[str, int]) -> None:
        """(reader thread) The errors since BAUD went out belong to the change, not to the link."""
        self._baud_mark = None
        c = self.decoder.counters
        for name in ("bad_crc", "bad_cobs", "too_long", "too_short", "unknown_type", "bad_length", "bytes_dropped"):
            d = getattr(c, name) - mark[name]
            if d > 0:
                setattr(c, name, mark[name])
                self.during_baud_change[name] = self.during_baud_change.get(name, 0) + d

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

    def send_frame(self, message: Message) -> Written:
        """As `send`, and says where and when the frame was written."""
        return self.write_frame(self.prepare(message))

    def prepare(self, message: Message) -> bytes:
        """The frame's bytes with the link's next sequence number, for `write` later: a sender that must
        hit a moment encodes ahead and writes only the bytes then (normal mode's FIRE)."""
        with self._tx_lock:
            wire = message.wire(self._seq)
            self._seq = (self._seq + 1) & 0xFF
            return wire

    def write(self, wire: bytes) -> float:
        """Writes a prepared frame; returns the clock after the write returned (see send)."""
        return self.write_frame(wire).ended

    def write_frame(self, wire: bytes) -> Written:
        """Writes a prepared frame; says where and when (Written). Raises as `send`. While a writer of its own
        holds the port (`hand_writes_to`), the frame goes through it."""
        port = self._port
        if port is None or self.vanished is not None:
            raise LinkError("port_error", f"{self.node}: port {self.url} is gone")
        writer = self._writer
        if writer is not None:
            return writer(wire)
        with self._tx_lock:
            began = self.clock()
            try:
                write_all(port, wire, self.write_timeout_s)
            except (serial.SerialException, OSError) as exc:
                raise LinkError("port_error", f"{self.node}: write failed: {exc}") from exc
            return self._book(wire, began, self.clock())

    def _book(self, wire: bytes, began: float, ended: float) -> Written:
        """(tx lock held) A frame on the port, in write order: counted, kept, placed in its stream."""
        offset = self.bytes_out_open
        self.bytes_out += len(wire)
        self.bytes_out_open += len(wire)
        self.written.add(self.generation, offset, wire, self.baud, began)
        self.frames_out += 1
        return Written(offset, self.generation, began, ended, len(wire))

    # ---- a writer of its own (normal mode's native firing thread) ------------------------------
    def hand_writes_to(self, writer: Callable[[bytes], Written] | None,
                       on_close: Callable[[], None] | None = None) -> None:
        """While `writer` is set, every frame the link writes goes through it: a thread of its own that must be the
        port's only writer (it writes on `port_fd()` the bytes `port_bytes` gives, at moments of its choosing)
        and books each write it made, in the order it made them, with `book`. None: the link writes again.
        `on_close()` is called when the port is closed (a reconnect, the run's end), before its descriptor is, so
        the writer stops writing on it first (a number closed and reused would lead elsewhere); the link writes by
        itself from then on, until handed to a writer again."""
        with self._tx_lock:
            self._writer = writer
            self._writer_close = on_close if writer is not None else None

    def port_fd(self) -> int:
        """The port's descriptor, for a writer of its own. Raises LinkError(port_error) if the port is gone."""
        port = self._port
        if port is None or self.vanished is not None:
            raise LinkError("port_error", f"{self.node}: port {self.url} is gone")
        return port.fileno()

    def port_bytes(self, wire: bytes) -> bytes:
        """What goes on the port's descriptor for a frame: the frame itself, or on a bench's line socket the
        packet that carries it (mmproto.urlhandler.protocol_unix)."""
        pack = getattr(self._port, "packet", None)
        return pack(wire) if pack is not None else wire

    def book(self, wire: bytes, began: float, ended: float) -> Written:
        """A frame a writer of its own put on the port (began, ended: the link's clock), booked as `write_frame`
        books its own; call in the order the writes were made."""
        with self._tx_lock:
            return self._book(wire, began, ended)

    # ---- HELLO -----------------------------------------------------------------------------
    def handshake(self, timeout_s: float = 5.0, wait: Waiter | None = None,
                  listen_s: float | None = None) -> Hello:
        """Reads the node's HELLO and checks the protocol version and the node kind.

        First, if the open may have reset the node (`listen_s`; None: HELLO_LISTEN_S with `reset_on_open`,
        else 0), listens without sending: the node's boot HELLO ends it, and so does any other frame (the
        node's application was running already). Then asks with QUERY(HELLO) (a node that booted before the
        port was opened said hello to nobody, and opening the port flushed its input) every
        HELLO_ASK_EVERY_S. `timeout_s` covers both. `wait(done, seconds)` waits for `done()` (default: on the
        wall clock; a co-simulation passes one that advances its own time)."""
        if listen_s is None:
            listen_s = HELLO_LISTEN_S if self.reset_on_open else 0.0
        if not (listen_s > 0 and self._hello_seen.is_set()):
            # (a boot HELLO that came since the open, while another link was listened to, is kept)
            self._hello_seen.clear()
            self.hello = None
        self._heard.clear()
        left = timeout_s
        listen = min(listen_s, left)
        if listen > 0 and not self._hello_seen.is_set():
            (wait or poll_until)(self._heard.is_set, listen)
            # the whole listen is counted even if a frame ended it early (a waiter does not say how long it
            # waited on a co-simulation's clock): a node heard is running and answers a QUERY within ms
            left -= listen
        waiter: Waiter = wait or (lambda done, seconds: self._hello_seen.wait(seconds))
        while left > 0 and not self._hello_seen.is_set():
            if self.vanished is not None:
                raise LinkError("port_error", f"{self.node}: port vanished during the handshake ({self.vanished.error})")
            self.send(Query(Hello.TYPE))
            if waiter(self._hello_seen.is_set, min(HELLO_ASK_EVERY_S, left)):
                break
            left -= HELLO_ASK_EVERY_S
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

    def set_port_baud(self, baud: int) -> None:
        """The port's own rate (the USB-serial adapter's, or the bench pty's); the node is not told."""
        port = self._port
        if port is None:
            raise LinkError("port_error", f"{self.node}: port {self.url} is gone")
        try:
            port.baudrate = baud
        except (serial.SerialException, OSError, ValueError) as exc:
            raise LinkError("port_error", f"{self.node}: cannot set {self.url} to {baud} baud: {exc}") from exc
        self.baud = baud

    def change_baud(self, baud: int, wait: Waiter | None = None) -> Hello:
        """Moves the link to `baud` (SPEC.md 0x06): BAUD at the old rate; a refusal (ERROR BAD_VALUE) comes at
        the old rate within the two frames' wire time; else the port follows once the frame has left, and
        the node's HELLO at the new rate answers (asked for again with QUERY(HELLO) after BAUD_ASK_AGAIN_S).
        Raises LinkError baud_refused, or baud_lost (the port is back at the old rate then). `wait` as in
        `handshake`."""
        if self.hello is not None and self.hello.baud == baud == self.baud:
            return self.hello
        old = self.baud
        waiter: Waiter = wait or poll_until
        self._baud_refused.clear()
        self._hello_seen.clear()
        self._baud_mark = (baud, self.decoder.counters.as_dict())
        self.send(Baud.of(baud))
        # (no flush: on a lockstep bench's pty it would block until the next grant) the refusal's wait covers
        # the frame's time on the line before the port's rate changes
        settle = wire_time_s(Baud, old) + wire_time_s(Error, old) + BAUD_REFUSAL_MARGIN_S
        if waiter(self._baud_refused.is_set, settle):
            self._baud_mark = None
            raise LinkError("baud_refused", f"{self.node}: cannot run at {baud} baud (ERROR BAD_VALUE); "
                                            f"still at {old}")
        self.set_port_baud(baud)
        at_rate = lambda: self._hello_seen.is_set() and self.hello is not None and self.hello.baud == baud  # noqa: E731
        if not waiter(at_rate, BAUD_ASK_AGAIN_S):
            self.send(Query(Hello.TYPE))
            if not waiter(at_rate, BAUD_GIVE_UP_S - BAUD_ASK_AGAIN_S):
                self._baud_mark = None
                self.set_port_baud(old)
                raise LinkError("baud_lost", f"{self.node}: no HELLO at {baud} baud within {BAUD_GIVE_UP_S} s after "
                                             f"BAUD; the port is back at {old}")
        assert self.hello is not None
        return self.hello

    def hello_dict(self) -> dict[str, int] | None:
        return None if self.hello is None else dict(self.hello.__dict__)

    def health(self) -> dict[str, Any]:
        """What a live view shows of the link."""
        c = self.decoder.counters
        return {"hello": self.hello_dict(), "bytes_in": self.bytes_in, "frames_out": self.frames_out,
                "frames_in": c.frames_ok, "errors": c.frames_dropped, "seq_lost": c.seq_lost,
                "reconnects": self.reconnects, "vanished": self.vanished.error if self.vanished else None}
