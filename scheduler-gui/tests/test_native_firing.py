"""Normal mode's native firing thread (mmsched.run.nativefirer over native/firethread.c) with a real mmproto Link on a
pty: each FIRE at its moment and never before, in the order of the moments; the link's own writes meanwhile go
through the thread and are booked with the FIREs in the one order the line saw; stopping gives the link back.
How soon after its moment a FIRE goes out is the host's, measured by `make perf`, never asserted here."""

from __future__ import annotations

import os
import threading
import time

import pytest

import mmproto as mp
from mmproto import Link, Written
from mmsched.model.event import Event
from mmsched.run.nativefirer import NativeFirer
from mmsched.host import firethread


def event(i: int) -> Event:
    return Event(i, i + 1, i % 8, "normal", 1, 10, 9, 0.0)


@pytest.fixture
def link_on_pty():
    """A Link on the slave side of a fresh pty, and the master's descriptor (what the line received)."""
    if isinstance(firethread.load(), str):
        pytest.fail(f"the native firing thread must build on a machine `make setup` prepared: {firethread.load()}")
    master, slave = os.openpty()
    link = Link("profiler", os.ttyname(slave), lambda item: None)
    link.open()
    yield link, master
    link.close()
    os.close(master)
    os.close(slave)


def read_all(fd: int, n: int, timeout_s: float = 5.0) -> bytes:
    got = b""
    deadline = time.monotonic() + timeout_s
    os.set_blocking(fd, False)
    while len(got) < n and time.monotonic() < deadline:
        try:
            got += os.read(fd, 4096)
        except BlockingIOError:
            time.sleep(0.001)
    return got


def test_fires_go_out_at_their_moments_in_order_and_are_booked_on_the_link(link_on_pty) -> None:
    link, master = link_on_pty
    written: list[tuple[Event, Written]] = []
    firer = NativeFirer(link, lambda ev, w: written.append((ev, w))).start()
    assert firer.kind == "native" and firer.tid and firer.timer_slack_ns == 1
    t0 = time.monotonic() + 0.05
    moments = [t0 + 0.004 * k for k in (3, 0, 2, 1)]          # added out of order
    wires = [link.prepare(mp.Fire(event_id=i, tag=i + 1)) for i in range(4)]
    for i, (at, wire) in enumerate(zip(moments, wires)):
        firer.add(event(i), at, wire)
    deadline = time.monotonic() + 5
    while len(written) < 4 and time.monotonic() < deadline:
        time.sleep(0.005)
        firer.collect()
    firer.stop()
    assert [ev.event for ev, _ in written] == [1, 3, 2, 0]   # by moment
    for ev, w in written:
        assert w.began >= moments[ev.event]                  # never before its moment
        assert w.ended >= w.began
    assert [w.offset for _, w in written] == [0, len(wires[1]), 2 * len(wires[1]), 3 * len(wires[1])]
    assert firer.fired == 4 and len(firer.late_wakeups_s) == 4 and firer.late_wakeups_s.min >= 0
    line = read_all(master, sum(map(len, wires)))
    assert line == wires[1] + wires[3] + wires[2] + wires[0]
    assert bytes(link.written[link.generation]) == line and link.bytes_out == len(line) and link.frames_out == 4


def test_the_links_own_writes_go_through_the_thread_in_the_lines_order(link_on_pty) -> None:
    link, master = link_on_pty
    written: list[Written] = []
    firer = NativeFirer(link, lambda ev, w: written.append(w)).start()
    fire = link.prepare(mp.Fire(event_id=0, tag=1))
    firer.add(event(0), time.monotonic() + 0.03, fire)
    query = link.send_frame(mp.Query(what=mp.Counters.TYPE))   # written at once, by the thread
    assert query.offset == 0 and query.gen == link.generation
    time.sleep(0.06)
    firer.collect()
    firer.stop()
    assert len(written) == 1 and written[0].offset == query.size      # the FIRE after the QUERY, on the line too
    line = read_all(master, query.size + len(fire))
    assert line[query.size:] == fire
    # the thread gone, the link writes by itself again
    after = link.send_frame(mp.Query(what=mp.Hello.TYPE))
    assert after.offset == query.size + len(fire)


def test_a_priority_the_host_refuses_is_said_and_the_thread_runs_as_it_is(link_on_pty) -> None:
    link, _ = link_on_pty
    granted: list[str | None] = []

    def probe() -> None:                       # what this host allows a thread of this process
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(20))
            granted.append(None)
        except OSError as exc:
            granted.append(exc.strerror)
    t = threading.Thread(target=probe)
    t.start()
    t.join()
    firer = NativeFirer(link, lambda ev, w: None, priority=20).start()
    firer.stop()
    if granted[0] is None:
        assert firer.sched == "fifo 20" and firer.sched_why is None
    else:
        assert firer.sched == "other" and firer.sched_why and "SCHED_FIFO 20 refused" in firer.sched_why


@pytest.mark.parametrize("planted", ["link", "fifo"])
def test_the_build_lock_is_never_opened_through_a_planted_name(tmp_path, monkeypatch, planted: str) -> None:
    """The library's build lock is taken as every lock of ours (safefiles.lock_file): a link planted at its name is
    refused (its target neither made nor touched), a FIFO refused without blocking; nothing is built."""
    lib = tmp_path / "native" / firethread.LIB_NAME
    lib.parent.mkdir()
    monkeypatch.setattr(firethread, "library_path", lambda: lib)
    victim = tmp_path / "victim"
    if planted == "link":
        victim.write_text("precious\n")
        (lib.parent / ".build.lock").symlink_to(victim)
    else:
        os.mkfifo(lib.parent / ".build.lock")
    with pytest.raises(OSError, match="refused"):
        firethread.build()
    assert not lib.exists()
    assert planted == "fifo" or victim.read_text() == "precious\n"


def test_a_reopened_port_stops_the_thread_first_and_a_new_one_writes_on_the_new_port() -> None:
    # a reconnect closes the port: the thread must not write on its descriptor after that (the number, reused,
    # would lead to another file); the moments it held fail as unwritten; a moment added after the reopen goes out
    # on the new port from a thread of its own
    master, slave = os.openpty()
    link = Link("profiler", os.ttyname(slave), lambda item: None).open()
    written: list[Event] = []
    failed: list[Event] = []
    firer = NativeFirer(link, lambda ev, w: written.append(ev), on_error=lambda ev, exc: failed.append(ev)).start()
    try:
        firer.add(event(0), time.monotonic() + 5.0, link.prepare(mp.Fire(event_id=0, tag=1)))   # held at close
        link.close()
        assert [e.event for e in failed] == [0] and firer._thread is None
        link.open()
        fire = link.prepare(mp.Fire(event_id=1, tag=2))
        firer.add(event(1), time.monotonic() + 0.02, fire)
        deadline = time.monotonic() + 5
        while not written and time.monotonic() < deadline:
            time.sleep(0.005)
            firer.collect()
        assert [e.event for e in written] == [1]
        assert read_all(master, len(fire)) == fire
    finally:
        firer.stop()
        link.close()
        os.close(master)
        os.close(slave)
