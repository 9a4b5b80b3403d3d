"""`unix://PATH` (mmproto.urlhandler.protocol_unix) against a stand-in for a bench's line socket: the packets it sends
and takes (hil/bench/linesock.h), pyserial's read/write/timeout semantics, and one line for what is not a line."""

from __future__ import annotations

import errno
import socket
import struct
import threading
import time
from pathlib import Path

import pytest
import serial

import mmproto  # noqa: F401  (registers the handler)
from mmproto.urlhandler.protocol_unix import packet, path_of


class FakeLine:
    """A listening SOCK_SEQPACKET socket that welcomes one connection as a bench does (generation 7, 9600 baud)."""

    def __init__(self, path: Path, first: bytes | None = None) -> None:
        self.path = path
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.server.bind(str(path))
        self.server.listen(1)
        self.first = first if first is not None else b"H" + struct.pack("<QI", 7, 9600)
        self.conn: socket.socket | None = None
        self.accepted = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self.conn, _ = self.server.accept()
        self.conn.send(self.first)
        self.accepted.set()

    def packets(self, n: int, timeout: float = 2.0) -> list[bytes]:
        assert self.accepted.wait(timeout) and self.conn is not None
        self.conn.settimeout(timeout)
        return [self.conn.recv(4096) for _ in range(n)]

    def close(self) -> None:
        for s in (self.conn, self.server):
            if s is not None:
                s.close()


@pytest.fixture
def line(tmp_path: Path):
    fake = FakeLine(tmp_path / "profiler.sock")
    yield fake
    fake.close()


def test_the_welcome_names_the_stream_and_the_port_says_its_rate(line: FakeLine) -> None:
    with serial.serial_for_url(f"unix://{line.path}", 115200, timeout=0.1) as port:
        assert port.generation == 7
        assert line.packets(1) == [b"B" + struct.pack("<I", 115200)]     # the rate set at open, as tcsetattr
        port.baudrate = 500000
        assert line.packets(1) == [b"B" + struct.pack("<I", 500000)]
        port.write(b"\x01\x02\x00")
        assert line.packets(1) == [packet(500000, b"\x01\x02\x00")] == [b"D" + struct.pack("<I", 500000) + b"\x01\x02\x00"]


def test_reads_take_the_data_packets_in_order_with_pyserials_timeout(line: FakeLine) -> None:
    with serial.serial_for_url(f"unix://{line.path}", 9600, timeout=0.05) as port:
        line.packets(1)
        assert line.conn is not None
        line.conn.send(b"Dabc")
        line.conn.send(b"Dde")
        t0 = time.monotonic()
        assert port.read(4) == b"abcd"                      # across packets
        assert port.in_waiting == 1 and port.read(10) == b"e"   # what there is once the timeout passed
        assert time.monotonic() - t0 >= 0.05
        assert port.read(1) == b""                           # nothing: after the timeout


def test_cancel_read_ends_a_waiting_read(line: FakeLine) -> None:
    with serial.serial_for_url(f"unix://{line.path}", 9600, timeout=None) as port:
        got: list[bytes] = []
        t = threading.Thread(target=lambda: got.append(port.read(1)))
        t.start()
        time.sleep(0.05)
        port.cancel_read()
        t.join(2)
        assert not t.is_alive() and got == [b""]


def test_the_bench_closing_the_line_is_a_serial_exception(line: FakeLine) -> None:
    with serial.serial_for_url(f"unix://{line.path}", 9600, timeout=0.5) as port:
        line.packets(1)
        assert line.conn is not None
        line.conn.close()
        with pytest.raises(serial.SerialException, match="closed the line"):
            port.read(1)


def test_a_line_another_connection_holds_is_refused_as_a_port_in_use(tmp_path: Path) -> None:
    fake = FakeLine(tmp_path / "executor.sock", first=b"Xexecutor: the line is held by another connection")
    try:
        with pytest.raises(serial.SerialException, match="held by another connection") as err:
            serial.serial_for_url(f"unix://{fake.path}", 9600)
        assert err.value.errno == errno.EWOULDBLOCK
    finally:
        fake.close()


def test_what_is_not_a_line_is_said_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(serial.SerialException, match="could not open port"):
        serial.serial_for_url(f"unix://{tmp_path / 'nothing.sock'}", 9600)
    fake = FakeLine(tmp_path / "other.sock", first=b"HTTP/1.1 200 OK")
    try:
        with pytest.raises(serial.SerialException, match="not a bench's line socket"):
            serial.serial_for_url(f"unix://{fake.path}", 9600)
    finally:
        fake.close()
    assert path_of("unix:///tmp/x/p.sock") == "/tmp/x/p.sock" and path_of("unix://rel/p.sock") == "rel/p.sock"
    with pytest.raises(serial.SerialException):
        path_of("unix://")
