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
