"""A link's port read by the C reading thread (mmsched.link.nativereader over native/readthread.c): each frame arrives
stamped with the moment its bytes were read, never before they were written and never when the interpreter got to
them; a line closed at the far end is one LinkDown; closing the link ends both threads; a port with no descriptor is
read by pyserial's thread as before. How soon after a write the stamp comes is the host's (`make perf`)."""

from __future__ import annotations

import os
import queue
import socket
import threading
import time
from pathlib import Path

import pytest

import mmproto as mp
from mmproto import Arrival, Link, LinkDown
from mmsched.host import firethread
from mmsched.link.nativereader import NativeReader, reader_factory


@pytest.fixture(autouse=True)
def native() -> None:
    if isinstance(firethread.load(), str):
        pytest.fail(f"the native library must build on a machine `make setup` prepared: {firethread.load()}")


def test_frames_arrive_stamped_when_read_not_when_python_got_to_them() -> None:
    # Five frames are written 40 ms apart while this thread holds the interpreter's lock, and it goes on holding it
    # for most of a second after the last (a switch interval longer than that: no Python thread runs meanwhile).
    # The C thread stamps each as it reads it, so each stamp falls after its write and before the lock came free;
    # pyserial's Python reader could stamp none before then. (How soon after its write: the host's, `make perf`; a
    # loaded machine has held the reading thread 58 ms.)
    import sys

    master, slave = os.openpty()
    inbox: "queue.Queue" = queue.Queue()
    link = Link("profiler", os.ttyname(slave), inbox.put, reader=reader_factory(None)).open()
    old = sys.getswitchinterval()
    try:
        assert isinstance(link._reader, NativeReader)
        written = []
        sys.setswitchinterval(5.0)
        t0 = time.monotonic()
        for tc in range(5):
            written.append(time.monotonic())
            os.write(master, mp.Timecode(timecode=tc).wire(tc))
            while time.monotonic() < written[-1] + 0.04:    # busy, holding the lock
                pass
        while time.monotonic() < written[-1] + 0.8:
            pass
        released = time.monotonic()
        sys.setswitchinterval(old)
        got = [inbox.get(timeout=5) for _ in range(5)]
        assert all(isinstance(a, Arrival) and isinstance(a.message, mp.Timecode) for a in got)
        assert [a.message.timecode for a in got] == list(range(5))
        for a, w in zip(got, written):
            assert w <= a.at < released, (a.at - w, released - w)    # read after its write, not when the lock came free
        assert [a.at for a in got] == sorted(a.at for a in got)
        assert released - t0 >= 0.2
        assert link.bytes_in == sum(len(mp.Timecode(timecode=tc).wire(tc)) for tc in range(5))
    finally:
        sys.setswitchinterval(old)
        link.close()
        os.close(master)
        os.close(slave)


def test_a_line_closed_at_the_far_end_is_one_link_down(tmp_path: Path) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server.bind(str(tmp_path / "p.sock"))
    server.listen(1)
    accepted: list[socket.socket] = []

    def bench() -> None:
        conn, _ = server.accept()
        conn.send(b"H" + (1).to_bytes(8, "little") + (9600).to_bytes(4, "little"))
        accepted.append(conn)
    threading.Thread(target=bench, daemon=True).start()
    inbox: "queue.Queue" = queue.Queue()
    link = Link("profiler", f"unix://{tmp_path / 'p.sock'}", inbox.put, reader=reader_factory(None)).open()
    try:
        deadline = time.monotonic() + 5
        while not accepted and time.monotonic() < deadline:
            time.sleep(0.01)
        conn = accepted[0]
        conn.recv(64)                                     # the port's rate, told on opening
        conn.send(b"D" + mp.Timecode(timecode=3).wire(0))  # a data packet: its bytes are the frame
        first = inbox.get(timeout=5)
        assert isinstance(first, Arrival) and first.message.timecode == 3
        conn.close()
        down = inbox.get(timeout=5)
        assert isinstance(down, LinkDown) and "closed the line" in down.error
        assert link.vanished is not None
    finally:
        link.close()
        server.close()


def test_a_port_without_a_descriptor_is_read_by_pyserial() -> None:
    inbox: "queue.Queue" = queue.Queue()
    link = Link("profiler", "loop://", inbox.put, reader=reader_factory(None)).open()
    try:
        assert not isinstance(link._reader, NativeReader)
        link.write(mp.Timecode(timecode=1).wire(0))
        assert isinstance(inbox.get(timeout=5), Arrival)
    finally:
        link.close()


def test_closing_the_link_ends_the_reading_threads() -> None:
    master, slave = os.openpty()
    before = threading.active_count()
    link = Link("profiler", os.ttyname(slave), lambda item: None, reader=reader_factory(None)).open()
    assert threading.active_count() == before + 1       # the Python side's one thread (the C one is not Python's)
    t0 = time.monotonic()
    link.close()
    assert time.monotonic() - t0 < 2.0 and threading.active_count() == before
    os.close(master)
    os.close(slave)
