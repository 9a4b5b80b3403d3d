"""A run in a process of its own: how the GUI runs an experiment without sharing its interpreter lock.

A run started in the GUI's process shares the interpreter lock with the Qt event loop, so the normal-mode
firing thread and the links' reader threads wait behind every redraw (p50 4 ms from the GUI against
0.5 ms from the command line, measured by perf/perf_gui_firing.py). `RunProcess` starts the whole run (Runner, endpoint, links, firing
thread) in a child process of the "spawn" kind, which imports no Qt, and streams back what a live view
needs, in order, through one pipe:

    ("started", {"pid", "qt"})      first; "qt": the Qt packages loaded in the child (none, or a bug)
    ("identity", dict)              the endpoint's identity whenever it changes (the bench's pid, ...)
    ("log", str)                    the Runner's progress lines
    ("timecode", int)               the Runner's observer notifications ...
    ("rows", [Row, ...])            ... events as Rows, newest state only, batched
    ("phase", str)
    ("health", dict)                `health_of` every HEALTH_S
    ("result", RunResult)           last: the run's result (its CSV + JSON are on disk; a run of more than
                                    ROWS_KEPT events sends its final rows as "rows" first, then a result
                                    holding its newest events only: `sent_result`), or
    ("failed", Failure)             last: a run that could not start or broke: a code and words, no traceback
    ("died", Failure)               made by the parent: the process ended without a last message

The child sends batches (a list of such messages) from one housekeeping thread, right after each
TIMECODE: the moment farthest from the next FIRE (normal mode fires at tick starts), so the firing thread
never waits for it at the interpreter lock (`_housekeeping`). The observer only snapshots an event into a
tuple under a lock, so the run's threads pay microseconds for the view. The endpoint is built in the
child: the parent passes the endpoint object before `open()` (it pickles: `Boards`,
`mmhil.BenchEndpoint`). Stop is a multiprocessing Event the child maps to `Runner.stop_requested`. A
child that dies leaves whatever it wrote; the parent ends the target process group it reported
(`identity()["bench_pid"]`), which would otherwise run on with no one to stop it.

This module is core (no Qt, no mmhil): the GUI's worker reads `RunProcess.messages()` in a thread and
turns them into its signals.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Iterator, NamedTuple

from mmsched.model.config import RunConfig
from mmsched.link.endpoint import Endpoint
from mmsched.model.event import Event
from mmsched.model.eventstore import EventStore
from mmsched.model.result import RunResult
from mmsched.verdict.export import run_paths
from mmsched.run.runner import Runner
from mmsched.link.session import Session

HEALTH_S = 0.5          # link health for the view, at most this often
SETUP_WAKE_S = 0.1      # before the run's window: how often the child looks at the endpoint's identity
IDLE_WAKE_S = 1.0       # in the run's window: the child's housekeeping when no TIMECODE wakes it
JOIN_S = 10.0           # a child that sent its last message gets this long to exit
# the newest events a view keeps as rows (mmrig.gui.model); a longer run's result comes as its final rows, a
# batch at a time, and its newest events: sent whole, a run of an hour at 1 kHz was gigabytes in one message
ROWS_KEPT = 100_000
FINAL_BATCH = 4096
QT = ("PySide6", "pyqtgraph")

class Row(NamedTuple):
    """What a view keeps of an event: an immutable snapshot of its fields, taken in the run's threads (so a
    view never reads an Event the runner is still changing), cheap to pickle from the run process. The one
    definition: the run process sends these, the GUI's model, feed and run reader (mmrig.gui.rows) keep them."""

    event: int
    event_id: int
    scheduled_tc: int
    created_tc: int
    sent_s: float | None
    ack_tc: int | None
    fired_tc: int | None
    result_tc: int | None
    latency_us: float | None
    outcome: str | None
    reason: str | None
    measurable: bool = True
    stall_us: float | None = None
    due_counts: int = 0                   # due this many profiler counts into scheduled_tc (a grid's moment)

    @classmethod
    def of(cls, ev: Event) -> "Row":
        """An event's view fields now."""
        return cls(ev.event, ev.event_id, ev.scheduled_tc, ev.created_tc, ev.sent_s, ev.ack_tc, ev.fired_tc,
                   ev.result_tc, ev.latency_us, ev.outcome, ev.reason, ev.measurable, ev.stall_us, ev.due_counts)


def health_of(session: Session, endpoint: Endpoint) -> dict[str, Any]:
    """What a view shows of a run's links: bytes, frames, decoder errors per node, and the endpoint's own
    figures (the bench's lag) if it has any."""
    out: dict[str, Any] = {"nodes": session.health()}
    extra = endpoint.health()
    if extra:
        out["bench"] = extra
    return out


@dataclass(frozen=True)
class Failure:
    """Why a run could not start or did not finish, as data: the error's code (an invalid-run reason code of
    mmanalysis.schema.INVALID_REASONS when it has one), the kind of error, its text. Never a traceback."""

    code: str | None
    kind: str
    text: str
    invalid_settings: bool = False      # a ValueError: the settings, not the rig

    @classmethod
    def of(cls, exc: BaseException) -> "Failure":
        code = getattr(exc, "code", None)
        return cls(code if isinstance(code, str) else None, type(exc).__name__, str(exc), isinstance(exc, ValueError))


def describe_exit(exitcode: int | None) -> str:
    if exitcode is None:
        return "still running"
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit status {exitcode}"


# ---- the child's side ------------------------------------------------------------------------------------
class Outbox:
    """The child's end of the pipe. The Runner's observer and log put messages here (events coalesced to
    their newest state, order kept otherwise); the housekeeping thread sends them as batches when woken."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._cv = threading.Condition()
        self._items: list[tuple[str, Any]] = []
        self._rows: dict[int, Row] = {}
        self._woken = False
        self.broken = False                      # the parent is gone: nothing is sent any more

    def observer(self, kind: str, obj: Any) -> None:
        if kind == "event":
            row = Row.of(obj)
            with self._cv:
                self._rows.pop(row[0], None)    # the newest snapshot, in change order
                self._rows[row[0]] = row
        elif kind == "timecode":
            self.put("timecode", int(obj), wake=True)
        else:
            self.put(kind, obj, wake=True)

    def put(self, kind: str, obj: Any, wake: bool = False) -> None:
        with self._cv:
            self._move_rows()
            self._items.append((kind, obj))
            if wake:
                self._woken = True
                self._cv.notify()

    def wake(self) -> None:
        with self._cv:
            self._woken = True
            self._cv.notify()

    def wait(self, timeout_s: float) -> None:
        """Until woken (a TIMECODE, a phase, the run's end) or `timeout_s`."""
        with self._cv:
            if not self._woken:
                self._cv.wait(timeout_s)
            self._woken = False

    def _move_rows(self) -> None:
        if self._rows:
            self._items.append(("rows", list(self._rows.values())))
            self._rows.clear()

    def take(self) -> list[tuple[str, Any]]:
        with self._cv:
            self._move_rows()
            batch, self._items = self._items, []
        return batch

    def send(self, batch: list[tuple[str, Any]]) -> bool:
        if not batch or self.broken:
            return not self.broken
        try:
            self.conn.send(batch)
            return True
        except (OSError, EOFError):              # BrokenPipeError: the GUI went away
            self.broken = True
            return False


def _housekeeping(runner: Runner, out: Outbox, stop: Any, done: threading.Event, health_s: float) -> None:
    """The child's one thread besides the run's own: it sends what the run reported, passes on Stop and a
    parent that went away (both end event generation; the events in flight end as usual and the run is
    written), sends the endpoint's identity whenever it changes and the links' health every health_s.

    When: right after each TIMECODE (the run wakes it). Normal mode fires at tick starts and a TIMECODE
    frame is complete a frame's time after its tick began, so this is as far as it gets from the next
    firing moment (and from accuracy's busy-wait before it): the firing thread never waits for this one's
    turn at the interpreter lock. Before the run's window (set-up, no firing) it also wakes every
    SETUP_WAKE_S, so the parent learns the bench's pid at once; once running, every IDLE_WAKE_S if no
    TIMECODE comes."""
    ppid = os.getppid()
    identity: dict[str, Any] | None = None
    next_health = time.monotonic() + health_s
    running = False
    while True:
        finished = done.is_set()
        if not finished:
            out.wait(IDLE_WAKE_S if running else SETUP_WAKE_S)
        if stop.is_set() or out.broken or os.getppid() != ppid:
            runner.stop_requested.set()
        try:
            now_id = runner.endpoint.identity()
        except Exception:  # noqa: BLE001 - identity is for the parent's clean-up; the run goes on
            now_id = None
        if now_id is not None and now_id != identity:
            identity = now_id
            out.put("identity", dict(now_id))
        if not finished and time.monotonic() >= next_health:
            next_health = time.monotonic() + health_s
            if not runner.over:        # (once over, its ports are being closed on purpose, not lost)
                try:
                    out.put("health", health_of(runner.session, runner.endpoint))
                except Exception:  # noqa: BLE001 - health is a view; the run reports real faults
                    pass
        batch = out.take()
        for kind, obj in batch:
            if kind == "phase":
                running = obj == "running"
        out.send(batch)
        if finished:
            return


def child_main(conn: Connection, stop: Any, cfg: RunConfig, endpoint: Endpoint, health_s: float = HEALTH_S) -> None:
    """The run process: one Runner, its messages to `conn`, its last message the result or the failure."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # Ctrl-C in the GUI's terminal is the GUI's to handle
    out = Outbox(conn)
    out.send([("started", {"pid": os.getpid(), "qt": sorted({m.split(".")[0] for m in sys.modules} & set(QT))})])
    try:
        runner = Runner(cfg, endpoint, log=lambda text: out.put("log", text))
    except Exception as exc:  # noqa: BLE001 - every failure becomes data, never a traceback
        out.send([("failed", Failure.of(exc))])
        return
    runner.observer = out.observer
    done = threading.Event()
    keeper = threading.Thread(target=_housekeeping, args=(runner, out, stop, done, health_s), name="mmrun-house",
                              daemon=True)
    keeper.start()
    last: tuple[str, Any]
    try:
        last = ("result", runner.run())
    except Exception as exc:  # noqa: BLE001
        last = ("failed", Failure.of(exc))
    finally:
        done.set()
        out.wake()
        keeper.join()
    if last[0] == "result":
        last = ("result", sent_result(last[1], out))
    out.send([last])        # (a parent that went away gets nothing: the run's files are on disk)


def sent_result(result: RunResult, out: Outbox) -> RunResult:
    """The result as the parent gets it: whole, or for a run of more than ROWS_KEPT events every event's final
    row sent first, FINAL_BATCH at a time (one chunk of the run's scratch file in memory at a time), and the
    result holding its newest FINAL_BATCH events (EventStore.tail_only; every one is in the run's CSV)."""
    events = result.events
    if not isinstance(events, EventStore) or len(events) <= ROWS_KEPT:
        return result
    batch: list[Row] = []
    for e in events:
        batch.append(Row.of(e))
        if len(batch) == FINAL_BATCH:
            if not out.send([("rows", batch)]):
                break
            batch = []
    out.send([("rows", batch)] if batch else [])
    return replace(result, events=events.tail_only(FINAL_BATCH))


# ---- the parent's side -----------------------------------------------------------------------------------
class RunProcess:
    """The parent's handle on a run in a process of its own: `start()`, then read `messages()` (in a thread
    of the parent's: it blocks) until the last one; `stop()` from anywhere."""

    def __init__(self, cfg: RunConfig, endpoint: Endpoint, health_s: float = HEALTH_S) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.cfg = cfg
        self._conn, self._child_conn = ctx.Pipe(duplex=False)
        self._stop = ctx.Event()
        self.process = ctx.Process(target=child_main, name="mmrig-run", daemon=False,
                                   args=(self._child_conn, self._stop, cfg, endpoint, health_s))
        self.identity: dict[str, Any] = {}
        self.started: dict[str, Any] = {}
        self.ended: str | None = None           # "result", "failed" or "died" once over

    def start(self) -> "RunProcess":
        self.process.start()
        self._child_conn.close()                 # only the child writes: its exit is our end of file
        return self

    def stop(self) -> None:
        self._stop.set()

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def messages(self) -> Iterator[tuple[str, Any]]:
        """The child's messages in order, ending with ("result", RunResult), ("failed", Failure) or, if the
        process ended without saying either, ("died", Failure)."""
        try:
            while True:
                ready = wait([self._conn, self.process.sentinel])
                if self._conn in ready or self._conn.poll():
                    try:
                        batch = self._conn.recv()
                    except (EOFError, OSError):
                        yield self._died()
                        return
                    for kind, obj in batch:
                        if kind == "identity":
                            self.identity = obj
                        elif kind == "started":
                            self.started = obj
                        yield kind, obj
                        if kind in ("result", "failed"):
                            self.ended = kind
                            self._join()
                            return
                elif self.process.sentinel in ready:
                    yield self._died()
                    return
        finally:
            self._conn.close()

    def _join(self) -> None:
        self.process.join(JOIN_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(JOIN_S)

    def _died(self) -> tuple[str, Failure]:
        self.process.join(JOIN_S)
        self.ended = "died"
        how = describe_exit(self.process.exitcode)
        ended = self.end_target()
        files = [p for p in self.files() if p.exists()]
        kept = (f"its files are kept: {', '.join(str(p) for p in files)}" if files else
                "it had written no files yet (a run writes its CSV + JSON when it ends); the view keeps the "
                "events it reported")
        extra = f"; its bench (process group {ended}) was ended" if ended else ""
        return "died", Failure("run_process", "died", f"the run's process ended unexpectedly ({how}): {kept}{extra}")

    def files(self) -> list[Path]:
        if self.cfg.out is None:
            return []
        return list(run_paths(self.cfg.out))

    def end_target(self) -> int | None:
        """Ends the process group the child's endpoint started (the bench), if it outlived the child."""
        pid = self.identity.get("bench_pid")
        if not isinstance(pid, int) or pid <= 1:
            return None
        try:
            if os.getpgid(pid) != pid:           # not the group leader we were told of (gone, pid reused)
                return None
            os.killpg(pid, signal.SIGKILL)
            return pid
        except (ProcessLookupError, PermissionError):
            return None


__all__ = ["Failure", "HEALTH_S", "Row", "RunProcess", "child_main", "describe_exit", "health_of"]
