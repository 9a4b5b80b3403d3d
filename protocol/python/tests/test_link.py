"""The one serial link (mmproto.Link) on a real pseudo-terminal: a fake node answers on the master side."""

from __future__ import annotations

import os
import queue
import select
import threading
import time

import pytest

import mmproto as mp
from mmproto import Arrival, Link, LinkDown, LinkError


def hello(kind: int = 1, version: int = mp.PROTO_VERSION) -> mp.Hello:
    return mp.Hello(version, kind, 0x0100, 16_000_000, 16_000_000, 1_137_778, 9600, 1, 0)


class FakeNode:
    """The master side of a pty: answers QUERY(HELLO) with `answer`, records what the link sent."""

    def __init__(self, answer: mp.Hello | None) -> None:
        self.master, slave = os.openpty()
        self.path = os.ttyname(slave)
        self.slave = slave                 # kept open: the pty lives while the test wants it
        self.answer = answer
        self.got: list[mp.Message] = []
        self.seqs: list[int] = []
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        dec = mp.StreamDecoder()
        while not self._stop:
            # never block in read: a descriptor another thread is reading cannot really be closed
            if not select.select([self.master], [], [], 0.02)[0]:
                continue
            try:
                data = os.read(self.master, 256)
            except OSError:
                return
            for r in dec.feed(data):
                self.got.append(r.message)
                self.seqs.append(r.seq)
                if isinstance(r.message, mp.Query) and r.message.what == mp.Hello.TYPE and self.answer:
                    os.write(self.master, self.answer.wire(0))

    def write(self, message: mp.Message, seq: int) -> None:
        os.write(self.master, message.wire(seq))

    def close_master(self) -> None:
        self._stop = True
        self.thread.join(2)
        os.close(self.master)

    def close(self) -> None:
        self._stop = True
        self.thread.join(2)            # before the descriptors go: their numbers are reused at once
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


@pytest.fixture
def inbox() -> "queue.Queue":
    return queue.Queue()


def test_handshake_checks_kind_and_version_and_frames_arrive_in_order(inbox) -> None:
    node = FakeNode(hello(kind=1))
    try:
        with Link("profiler", node.path, inbox.put, clock=lambda: 42.0) as link:
            h = link.handshake(2.0)
            assert h.node_kind == mp.NodeKind.PROFILER and link.hello == h
            for i in range(3):
                node.write(mp.Timecode(100 + i), 1 + i)
            got = []
            while len(got) < 4:
                item = inbox.get(timeout=2)
                assert isinstance(item, Arrival) and item.node == "profiler" and item.at == 42.0   # the link's clock
                got.append(item.message)
            assert got[0] == h and [m.timecode for m in got[1:]] == [100, 101, 102]
            link.send(mp.Fire(event_id=3, tag=7))
            link.send(mp.Fire(event_id=4, tag=8))
            deadline = time.monotonic() + 2
            while len([m for m in node.got if isinstance(m, mp.Fire)]) < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            fires = [(s, m) for s, m in zip(node.seqs, node.got) if isinstance(m, mp.Fire)]
            assert [m.tag for _, m in fires] == [7, 8] and fires[1][0] == (fires[0][0] + 1) & 0xFF
    finally:
        node.close()


@pytest.mark.parametrize("answer,code", [(hello(kind=2), "node_kind"), (hello(version=9), "protocol_version"),
                                         (None, "no_hello")])
def test_handshake_refusals_carry_a_code(inbox, answer, code) -> None:
    node = FakeNode(answer)
    try:
        with Link("profiler", node.path, inbox.put) as link:
            with pytest.raises(LinkError) as err:
                link.handshake(0.6)
            assert err.value.code == code
    finally:
        node.close()


def test_a_port_that_cannot_be_opened_is_a_port_error(inbox) -> None:
    with pytest.raises(LinkError) as err:
        Link("profiler", "/dev/mmrig-no-such-port", inbox.put).open()
    assert err.value.code == "port_error" and "mmrig-no-such-port" in str(err.value)


def test_the_other_side_closing_gives_one_link_down(inbox) -> None:
    # A bench that dies closes the pty master: pyserial's in_waiting then raises a bare OSError, which
    # its reader thread does not catch; the link must still report it.
    node = FakeNode(hello())
    try:
        link = Link("profiler", node.path, inbox.put).open()
        link.handshake(2.0)
        os.close(node.slave)
        node.close_master()
        deadline = time.monotonic() + 3
        down = None
        while down is None and time.monotonic() < deadline:
            try:
                item = inbox.get(timeout=0.2)
            except queue.Empty:
                continue
            if isinstance(item, LinkDown):
                down = item
        assert down is not None and down.node == "profiler" and link.vanished is down
        with pytest.raises(LinkError):
            link.send(mp.Fire(event_id=1, tag=1))
        link.close()
    finally:
        node.close()


@pytest.mark.parametrize("far_end_first", [True, False])
def test_a_closed_link_is_freed_without_the_cycle_collector(inbox, far_end_first: bool) -> None:
    # its port, reader thread and buffers go with its last reference, whether the node hung up first (the reader
    # ended on an error) or the link was closed under a waiting read; the collector is off, so that only reference
    # counting can free them
    import gc
    import weakref

    node = FakeNode(hello())
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        link = Link("profiler", node.path, inbox.put).open()
        link.handshake(2.0)
        if far_end_first:
            os.close(node.slave)
            node.close_master()
            deadline = time.monotonic() + 3
            while link.vanished is None and time.monotonic() < deadline:
                time.sleep(0.01)
            assert link.vanished is not None
        port, reader = weakref.ref(link._port), weakref.ref(link._reader)
        link.close()
        dead = weakref.ref(link)
        del link
        while not inbox.empty():
            inbox.get()          # (a LinkDown names the node and the time, not the link)
        assert (dead(), port(), reader()) == (None, None, None)
    finally:
        if was_enabled:
            gc.enable()
        node.close()


def test_other_side_closing_between_two_reads_gives_link_down(inbox) -> None:
    # The same, in the window pyserial's reader does not cover: the pty closes while the link is handling
    # a frame, so the reader's next step is `in_waiting`, which raises a bare OSError (EIO).
    node = FakeNode(hello())
    closed = threading.Event()

    def sink(item) -> None:
        inbox.put(item)
        if isinstance(item, Arrival) and isinstance(item.message, mp.Timecode):
            closed.wait(3)              # the reader thread is inside data_received while the pty closes

    try:
        link = Link("profiler", node.path, sink).open()
        link.handshake(2.0)
        node.write(mp.Timecode(5), 1)
        deadline = time.monotonic() + 2
        while not any(isinstance(m, mp.Timecode) for m in list(inbox.queue)) and time.monotonic() < deadline:
            time.sleep(0.01)
        os.close(node.slave)
        node.close_master()
        closed.set()
        downs = []
        deadline = time.monotonic() + 3
        while not downs and time.monotonic() < deadline:
            try:
                item = inbox.get(timeout=0.2)
            except queue.Empty:
                continue
            downs += [item] if isinstance(item, LinkDown) else []
        assert downs and link.vanished is downs[0], "the reader died without reporting the link down"
        link.close()
    finally:
        node.close()


# ---- a node whose port's open resets it (an Arduino Mega's DTR) -----------------------------------------
def _fake_arduino(**kw):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from fake_arduino import FakeArduino

    return FakeArduino(hello(kind=1), **kw)


def test_asking_at_once_holds_a_reset_arduino_in_its_bootloader(inbox) -> None:
    """The old handshake (QUERY at once, every 0.5 s): its bytes keep the bootloader from starting the
    application, so no HELLO comes within 5 s (what every run on real Megas ended with)."""
    with _fake_arduino() as node:
        with Link("profiler", node.path, inbox.put) as link:
            with pytest.raises(LinkError) as exc:
                link.handshake(3.0, listen_s=0.0)
        assert exc.value.code == "no_hello" and node.held == 1 and node.hellos_sent == 0


def test_listening_first_reads_a_reset_arduinos_boot_hello_at_the_first_try(inbox) -> None:
    with _fake_arduino() as node:
        with Link("profiler", node.path, inbox.put, reset_on_open=True) as link:
            t0 = time.monotonic()
            h = link.handshake(5.0)
            took = time.monotonic() - t0
        assert h.node_kind == mp.NodeKind.PROFILER and node.resets == 1
        assert node.held == 0 and node.bytes_in_bootloader == 0
        assert node.got == []                    # the boot HELLO answered it: nothing was asked
        assert took > 0.7                        # it listened through the boot (at the first try: nothing asked)


def test_a_node_already_running_is_asked_as_soon_as_a_frame_is_heard(inbox) -> None:
    """An adapter without DTR reset: the profiler's TIMECODE (every 71 ms) ends the listening early. The listen
    is made 30 s long here, so that what ends it is the frame heard, whatever the host's load (a wait that ran
    its time out returns False)."""
    ended: list[bool] = []

    def recording(done, seconds: float) -> bool:
        ended.append(mp.poll_until(done, seconds))
        return ended[-1]

    with _fake_arduino(resets_on_open=False, running_at_start=True, timecodes=True) as node:
        with Link("profiler", node.path, inbox.put, reset_on_open=True) as link:
            h = link.handshake(60.0, wait=recording, listen_s=30.0)
        assert h.node_kind == mp.NodeKind.PROFILER and node.resets == 0
        assert any(isinstance(m, mp.Query) and m.what == mp.Hello.TYPE for _, m in node.got)
        assert ended[0] is True                  # the listen ended because a frame was heard, not by its time


def test_a_silent_node_is_asked_after_listening_within_the_one_timeout(inbox) -> None:
    """A running node that sends nothing by itself: asked after HELLO_LISTEN_S; the timeout covers both."""
    with _fake_arduino(resets_on_open=False, running_at_start=True) as node:
        with Link("profiler", node.path, inbox.put, reset_on_open=True) as link:
            t0 = time.monotonic()
            link.handshake(3.0)
            took = time.monotonic() - t0
            assert took >= mp.link.HELLO_LISTEN_S             # it listened first (however busy the host, never less)
    node = FakeNode(None)
    try:
        with Link("profiler", node.path, inbox.put, reset_on_open=True) as link:
            t0 = time.monotonic()
            with pytest.raises(LinkError):
                link.handshake(2.0)
            assert time.monotonic() - t0 >= 2.0               # the timeout covered the listening and the asking
            asks = [m for m in node.got if isinstance(m, mp.Query)]
            assert len(asks) == 1                 # 1.5 s listening, then one ask in the 0.5 s left
    finally:
        node.close()


def test_reopen_after_a_reset_meets_the_node_at_its_boot_rate_and_listens(inbox) -> None:
    """A reopened Arduino port reset the node: it is back at its boot rate, and must not be asked while its
    bootloader runs."""
    with _fake_arduino() as node:
        link = Link("profiler", node.path, inbox.put, reset_on_open=True).open()
        try:
            link.handshake(5.0)
            link.close()                         # the port vanished (the fake must see it gone to reset)
            assert mp.poll_until(lambda: not node.plugged, 1.0)
            assert link.reopen(4.0)
            assert node.resets == 2 and node.held == 0 and link.reconnects == 1
        finally:
            link.close()


def test_the_second_of_two_reset_nodes_keeps_the_boot_hello_it_sent_while_the_first_was_listened_to(inbox) -> None:
    """Both Megas reset when their ports open; the executor's boot HELLO comes while the profiler's link
    listens, and its link does not throw it away and listen 1.5 s more. (Here both boot HELLOs are in before
    either handshake begins, so the order cannot depend on how busy the host is: neither link listens.)"""
    with _fake_arduino() as p, _fake_arduino() as e:
        e.answer = hello(kind=2)
        links = [Link("profiler", p.path, inbox.put, reset_on_open=True).open(),
                 Link("executor", e.path, inbox.put, reset_on_open=True).open()]
        listened: list[str] = []

        def recording(done, seconds: float) -> bool:
            listened.append(link.node)
            return mp.poll_until(done, seconds)
        try:
            assert mp.poll_until(lambda: all(link.hello is not None for link in links), 30.0)   # both booted
            for link in links:
                link.handshake(5.0, wait=recording)
            assert listened == []                 # a boot HELLO already heard is kept: no listening for it
            assert p.got == [] and e.got == []    # nor asking
        finally:
            for link in links:
                link.close()


def test_a_written_frame_says_where_it_is_in_the_ports_byte_stream(inbox) -> None:
    # validity by cause finds a frame the PC wrote in the bench's record of its input by this offset: the bytes
    # written since the port was opened (a pty loses nothing from the PC to the bench)
    link = Link("profiler", "loop://", inbox.put).open()
    try:
        first = link.send_frame(mp.Nop(fill=0))
        second = link.write_frame(link.prepare(mp.Query(what=mp.Counters.TYPE)))
        assert (first.offset, first.gen) == (0, 1)
        assert second.offset == len(mp.Nop(fill=0).wire(0)) and second.gen == 1
        assert first.began <= first.ended <= second.began <= second.ended
        link.close()
        link.open()                              # a new opening counts its own bytes
        again = link.send_frame(mp.Nop(fill=0))
        assert (again.offset, again.gen) == (0, 2)
        assert link.bytes_out == 2 * len(mp.Nop(fill=0).wire(0)) + len(mp.Query(what=mp.Counters.TYPE).wire(0))
    finally:
        link.close()


def test_a_port_held_by_a_link_is_refused_to_a_second_one(inbox) -> None:
    # Two readers of one serial port each take bytes from the other (pyserial then reports "readiness to read but
    # no data"): a run never shares its ports, and the second opener is told so in one line, as root too.
    node = FakeNode(hello(kind=1))
    try:
        with Link("profiler", node.path, inbox.put):
            with pytest.raises(LinkError) as refused:
                Link("profiler", node.path, inbox.put).open()
            assert refused.value.code == "port_error" and "\n" not in str(refused.value)
            assert "in use" in str(refused.value)
        with Link("profiler", node.path, inbox.put) as again:          # let go: the port is free again
            assert again.handshake(2.0).node_kind == mp.NodeKind.PROFILER
    finally:
        node.close()


def test_a_write_the_host_held_off_past_the_timeout_but_completed_is_not_a_failure(inbox, monkeypatch) -> None:
    # On a loaded host the writing thread can be held off for longer than the write timeout while the kernel took
    # every byte: the frame went out whole, and the link must say so (a hung port is one that takes nothing).
    node = FakeNode(hello(kind=1))
    try:
        with Link("profiler", node.path, inbox.put, write_timeout_s=0.05) as link:
            port_fd = link._port.fd
            real_write = os.write

            def held_off(fd: int, data) -> int:
                n = real_write(fd, data)
                if fd == port_fd:
                    time.sleep(0.2)          # the thread descheduled right after its write, 4 timeouts long
                return n

            monkeypatch.setattr(os, "write", held_off)
            link.send(mp.Query(mp.Hello.TYPE))
            monkeypatch.undo()
            deadline = time.monotonic() + 5
            while not any(isinstance(m, mp.Query) for m in node.got) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert any(isinstance(m, mp.Query) for m in node.got)
    finally:
        node.close()
