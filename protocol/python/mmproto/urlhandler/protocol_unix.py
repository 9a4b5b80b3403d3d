"""`unix://PATH`: a virtual bench's line socket (hil/bench/linesock.c) as a pyserial port.

The bench offers each node's serial line on a pty (RUN_DIR/NODE.tty, for any program) and on a Unix socket
(RUN_DIR/NODE.sock). Through a pty the PC's bytes reach the bench only after a normal-priority kernel worker ran
(the tty flip buffer's flush_to_ldisc): on a loaded machine milliseconds that are neither the PC's cost nor a real
USB-serial line's. Through the socket the writer's own call wakes the bench's reader, so mmrig's links use it
(docs/bench.md, "The line sockets").

The socket is SOCK_SEQPACKET, each packet one message whose first byte says what it is (the bench's linesock.h):

    bench -> host   'H' generation(u64 LE) baud(u32 LE)   on connecting: the line is this connection's
                    'X' words                              on connecting: another connection holds the line
                    'D' bytes                              the node's output
    host -> bench   'D' baud(u32 LE) bytes                 bytes written, at the port's rate
                    'B' baud(u32 LE)                       the port's rate set (a pty's tcsetattr)

`generation` names this connection's byte stream in the bench's record of the bytes it read (as a pty's
generation does), so a link finds its frames there by (generation, offset). The port keeps pyserial's semantics:
`read(size)` waits up to `timeout` for `size` bytes, `write` waits up to `write_timeout` for the socket to take
a packet, `cancel_read` ends a waiting read (pyserial's ReaderThread stops so), modem lines are ignored.
"""

from __future__ import annotations

import errno
import os
import select
import socket
import struct
from urllib.parse import urlsplit

from serial.serialutil import PortNotOpenError, SerialBase, SerialException, SerialTimeoutException, Timeout, to_bytes

HELLO, BUSY, DATA, BAUD = b"H", b"X", b"D", b"B"
MAX_PACKET = 4096            # the bench's LINESOCK_MAX: the largest packet either side sends
WELCOME_TIMEOUT_S = 10.0     # the bench takes a connection at its next look at its descriptors (lockstep: between
                             # grants), within milliseconds; a bench that never answers is not one


def packet(baud: int, data: bytes) -> bytes:
    """What a write of `data` at `baud` puts on the socket: one DATA packet (the bench's linesock.h)."""
    return DATA + struct.pack("<I", baud & 0xFFFFFFFF) + data


def path_of(url: str) -> str:
    """The socket's path in `unix:///abs/path` (or `unix://rel/path`)."""
    parts = urlsplit(url)
    if parts.scheme != "unix":
        raise SerialException(f'expected "unix://PATH", got {url!r}')
    path = (parts.netloc + parts.path) if parts.netloc else parts.path
    if not path:
        raise SerialException(f'expected "unix://PATH", got {url!r}: no path')
    return path


class Serial(SerialBase):
    """A bench's line socket as a serial port (pyserial's `serial_for_url("unix://PATH")`)."""

    BAUDRATES = (1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, 230400, 250000, 460800, 500000, 576000,
                 921600, 1000000, 2000000)

    def __init__(self, *args, **kwargs) -> None:
        self._socket: socket.socket | None = None
        self._rx = bytearray()
        self._wake_r = self._wake_w = -1
        self.generation: int | None = None    # the bench's name for this connection's byte stream
        super().__init__(*args, **kwargs)

    # ---- life cycle ------------------------------------------------------------------------------
    def open(self) -> None:
        if self._port is None:
            raise SerialException("Port must be configured before it can be used.")
        if self.is_open:
            raise SerialException("Port is already open.")
        path = path_of(self.portstr)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            sock.settimeout(WELCOME_TIMEOUT_S)
            sock.connect(path)
            first = sock.recv(MAX_PACKET)
        except OSError as exc:
            sock.close()
            raise SerialException(exc.errno, f"could not open port {self.portstr}: {exc.strerror or exc}") from exc
        if first[:1] == BUSY:
            sock.close()
            # (EWOULDBLOCK: what a port another program holds gives a pyserial opener, so a caller says it once)
            raise SerialException(errno.EWOULDBLOCK, f"{self.portstr}: {first[1:].decode(errors='replace')}")
        if first[:1] != HELLO or len(first) != 13:
            sock.close()
            raise SerialException(f"{self.portstr}: not a bench's line socket (its first packet: {first[:16]!r})")
        self.generation, _ = struct.unpack("<QI", first[1:])
        sock.setblocking(False)
        self._socket = sock
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._rx.clear()
        self.is_open = True
        self._reconfigure_port()

    def _reconfigure_port(self, force_update: bool = False) -> None:
        """The port's rate, told to the bench (as a pty's termios would be); the other settings mean nothing here."""
        if self._socket is None:
            return
        self._send(BAUD + struct.pack("<I", int(self._baudrate) & 0xFFFFFFFF))

    def close(self) -> None:
        if self._socket is not None:
            try:
                self._socket.close()
            finally:
                self._socket = None
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._wake_r = self._wake_w = -1
        self.is_open = False

    # ---- reading ---------------------------------------------------------------------------------
    def _take(self, packet_bytes: bytes) -> None:
        if not packet_bytes:
            raise SerialException("the bench closed the line (a hang-up, or the bench ended)")
        if packet_bytes[:1] == DATA:
            self._rx += packet_bytes[1:]

    def _take_one(self, timeout_s: float | None) -> bool:
        """One packet into the buffer if one comes within `timeout_s` (0: only if one waits; None: wait for it);
        False if none came or `cancel_read` ended the wait. A select then a recv that cannot block: no exception
        on the path a kilohertz run takes a thousand times a second."""
        assert self._socket is not None
        try:
            ready, _, _ = select.select([self._socket, self._wake_r], [], [], timeout_s)
        except InterruptedError:
            return False
        if self._wake_r in ready:
            try:
                os.read(self._wake_r, 64)
            except BlockingIOError:
                pass
            return False
        if not ready:
            return False
        try:
            self._take(self._socket.recv(MAX_PACKET))
        except BlockingIOError:
            return False
        except OSError as exc:
            raise SerialException(f"read failed: {exc}") from exc
        return True

    @property
    def in_waiting(self) -> int:
        if not self.is_open:
            raise PortNotOpenError()
        if not self._rx:
            self._take_one(0)
        return len(self._rx)

    def read(self, size: int = 1) -> bytes:
        if not self.is_open or self._socket is None:
            raise PortNotOpenError()
        timeout = Timeout(self._timeout)
        while len(self._rx) < size and self._take_one(timeout.time_left()):
            pass                              # (False: the timeout passed, or cancel_read)
        out = bytes(self._rx[:size])
        del self._rx[:size]
        return out

    def unpack(self, raw: bytes) -> bytes:
        """The bytes a packet read on `fileno()` by a reader of its own carries (a data packet's; none of another)."""
        return raw[1:] if raw[:1] == DATA else b""

    def cancel_read(self) -> None:
        if self._wake_w >= 0:
            try:
                os.write(self._wake_w, b"x")
            except BlockingIOError:
                pass

    def reset_input_buffer(self) -> None:
        if not self.is_open:
            raise PortNotOpenError()
        while self._take_one(0):
            pass
        self._rx.clear()

    def reset_output_buffer(self) -> None:
        if not self.is_open:
            raise PortNotOpenError()

    # ---- writing ---------------------------------------------------------------------------------
    def packet(self, data: bytes) -> bytes:
        """The bytes a writer of its own on `fileno()` puts on the socket for `data` (one packet): mmrig's native
        firing thread writes them so."""
        return packet(int(self._baudrate), data)

    def _send(self, pkt: bytes) -> None:
        assert self._socket is not None
        timeout = Timeout(self._write_timeout)
        while True:
            try:
                self._socket.send(pkt)
                return
            except (BlockingIOError, InterruptedError):
                pass
            except OSError as exc:
                raise SerialException(f"write failed: {exc}") from exc
            if timeout.is_non_blocking or timeout.expired():
                raise SerialTimeoutException("Write timeout")
            _, ready, _ = select.select([], [self._socket], [], timeout.time_left())
            if not ready:
                raise SerialTimeoutException("Write timeout")

    def write(self, data: bytes) -> int:
        if not self.is_open or self._socket is None:
            raise PortNotOpenError()
        d = to_bytes(data)
        step = MAX_PACKET - 5
        for i in range(0, len(d), step):
            self._send(self.packet(d[i:i + step]))
        return len(d)

    def flush(self) -> None:
        """A packet is in the bench's socket once `write` returned: nothing waits on this side."""

    # ---- the rest of a serial port: nothing on a socket ------------------------------------------
    def send_break(self, duration: float = 0.25) -> None:
        if not self.is_open:
            raise PortNotOpenError()

    def _update_break_state(self) -> None:
        pass

    def _update_rts_state(self) -> None:
        pass

    def _update_dtr_state(self) -> None:
        pass

    @property
    def cts(self) -> bool:
        return True

    @property
    def dsr(self) -> bool:
        return True

    @property
    def ri(self) -> bool:
        return False

    @property
    def cd(self) -> bool:
        return True

    def fileno(self) -> int:
        if self._socket is None:
            raise PortNotOpenError()
        return self._socket.fileno()
