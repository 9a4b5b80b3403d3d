"""The run's own loop above the machine's other work (mmsched.host.loopnice): every thread of the process at nice -10 for
the run where the host allows it (else why not, in the sidecar's words), threads started meanwhile inheriting it,
the firing thread kept at the process's own nice (it is the PC's part that is measured), every thread put back at
the end. Whether the loop then keeps up beside a CPU hog is the host's, measured by `make perf`."""

from __future__ import annotations

import os
import threading
import time

import pytest

from mmproto import Link
from mmsched.host import firethread, renice
from mmsched.model.event import Event
from mmsched.run.firing import Firer
from mmsched.host.loopnice import LOOP_NICE, LoopNice
from mmsched.run.nativefirer import NativeFirer


def may_lower_nice() -> bool:
    """Whether this process may lower a thread's nice to LOOP_NICE itself (root, CAP_SYS_NICE, RLIMIT_NICE)."""
    import resource
    soft, _ = resource.getrlimit(resource.RLIMIT_NICE)
    return os.geteuid() == 0 or soft == resource.RLIM_INFINITY or 20 - soft <= LOOP_NICE


def nice_of(tid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, tid)


@pytest.fixture
def idle_thread():
    """A thread of this process running before the loop is raised: raised with it, put back with it."""
    started, stop = threading.Event(), threading.Event()
    tid: list[int] = []

    def idle() -> None:
        tid.append(threading.get_native_id())
        started.set()
        stop.wait()
    t = threading.Thread(target=idle)
    t.start()
    started.wait()
    yield tid[0]
    stop.set()
    t.join()


def test_the_loops_threads_run_above_other_work_and_are_put_back(idle_thread: int) -> None:
    me = threading.get_native_id()
    before = {tid: nice_of(tid) for tid in renice.threads()}
    loop = LoopNice().raise_()
    try:
        assert loop.measured_nice == before[me]
        if not may_lower_nice():
            # a normal user: RealtimeKit's nice, or why not, never a silent nothing
            assert (loop.via is not None and "rtkit" in loop.via) or (loop.nice is None and loop.why)
            return
        assert (loop.nice, loop.via, loop.why) == (LOOP_NICE, "setpriority", None)
        assert nice_of(me) == nice_of(idle_thread) == LOOP_NICE
        later: list[int] = []
        t = threading.Thread(target=lambda: later.append(nice_of(threading.get_native_id())))
        t.start()
        t.join()
        assert later == [LOOP_NICE]                  # a thread the run starts inherits it
        assert loop.section() == {"nice": LOOP_NICE, "via": "setpriority", "why": None,
                                  "measured_nice": before[me]}
    finally:
        loop.restore()
    assert {tid: nice_of(tid) for tid in (me, idle_thread)} == {me: before[me], idle_thread: before[idle_thread]}


def test_a_process_already_at_the_loops_nice_is_left_as_it_is() -> None:
    loop = LoopNice(wanted=nice_of(threading.get_native_id()) + 1).raise_()
    assert loop.nice == loop.measured_nice and loop.via is None and loop.why is None
    loop.restore()


def event(i: int) -> Event:
    return Event(i, i + 1, i % 8, "normal", 1, 10, 9, 0.0)


@pytest.mark.parametrize("kind", ["native", "python"])
def test_the_firing_thread_keeps_the_processs_own_nice(kind: str) -> None:
    """Started from the raised loop, the firing thread would inherit -10; without -p it measures what a normal
    program of the user's gets, so it runs at the nice the process had."""
    if not may_lower_nice():
        pytest.skip("this user may not lower a nice: the loop is not raised, so there is nothing to keep apart")
    if kind == "native" and isinstance(firethread.load(), str):
        pytest.fail(f"the native firing thread must build on a machine `make setup` prepared: {firethread.load()}")
    master, slave = os.openpty()
    link = Link("profiler", os.ttyname(slave), lambda item: None)
    link.open()
    loop = LoopNice().raise_()
    try:
        if kind == "native":
            firer: NativeFirer | Firer = NativeFirer(link, lambda ev, w: None, nice=loop.measured_nice).start()
        else:
            firer = Firer(lambda ev, wire: None, nice=loop.measured_nice).start()
        try:
            deadline = time.monotonic() + 5
            while firer.tid is None and time.monotonic() < deadline:
                time.sleep(0.01)
            assert firer.tid is not None
            assert nice_of(firer.tid) == loop.measured_nice != LOOP_NICE
            assert nice_of(threading.get_native_id()) == LOOP_NICE
        finally:
            firer.stop()
    finally:
        loop.restore()
        link.close()
        os.close(master)
        os.close(slave)


def test_renice_sets_every_thread_and_restore_puts_each_back() -> None:
    """The one helper the run's loop, the bench endpoint and the turns use: every running thread of a process, each
    thread's nice before remembered (a normal user may lower a priority, not raise it back)."""
    started, stop = threading.Event(), threading.Event()

    def idle() -> None:
        started.set()
        stop.wait()
    t = threading.Thread(target=idle)
    t.start()
    started.wait()
    try:
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        if mine >= 19:               # (`nice -n 19 make test`): no lower priority left to set
            pytest.skip("the tests run at nice 19 already: a thread cannot be set below it")
        before, every = renice.renice(mine + 1)
        assert every and set(before) == set(renice.threads()) and len(before) >= 2
        assert all(os.getpriority(os.PRIO_PROCESS, tid) == mine + 1 for tid in before)
        renice.restore(before)
        if os.geteuid() == 0:             # raising a nice back needs the privilege
            assert all(os.getpriority(os.PRIO_PROCESS, tid) == mine for tid in before)
    finally:
        stop.set()
        t.join()
