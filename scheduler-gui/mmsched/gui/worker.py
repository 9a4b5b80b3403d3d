"""A run in its own QThread: the worker builds the core's Runner, hangs the EventFeed on it as its
observer, runs it, and reports the result or a readable error by signals. A small poller (a plain
thread: the run's thread is busy) samples link health: bytes, frames, decoder errors, bench lag."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import serial
from PySide6.QtCore import QObject, QThread, Signal, Slot

from ..config import RunConfig
from ..runner import RunResult, Runner
from ..target import Target
from .feed import EventFeed


@dataclass
class Problem:
    title: str
    text: str
    details: str = ""


def explain(reason: str) -> Problem:
    """A readable message for a failed or invalid run: the core's reason, said for a person."""
    r = reason.lower()
    if "protocol version" in r:
        return Problem("Version mismatch", "A node speaks another protocol version than this scheduler. "
                       "Rebuild and flash the firmware of this checkout (make build, make flash-*).", reason)
    if "node kind" in r:
        return Problem("Ports swapped?", "The profiler port answered as the executor (or the other way round). "
                       "Swap the two ports.", reason)
    if "no hello" in r:
        return Problem("Node does not answer", "No HELLO from a node: check the port, the cable, the baud rate "
                       "and that the board is flashed and powered.", reason)
    if "vanished" in r or "link_fault" in r or "is gone" in r or "silent" in r:
        return Problem("Connection lost", "A serial port went away during the run (board unplugged, or the "
                       "virtual bench died). The events in flight were counted as lost.", reason)
    if "bench lag bound exceeded" in r:
        return Problem("Bench fell behind", "The virtual bench lagged wall time beyond its bound, so this run "
                       "is kept on disk but is not a result. Close other programs and run again.", reason)
    if "stress-ng" in r:
        return Problem("Heavy load unavailable", "stress-ng is not installed (tools/setup.sh installs it).", reason)
    return Problem("Run problem", reason.splitlines()[0] if reason else "unknown error", reason)


def explain_exception(exc: BaseException) -> Problem:
    text = str(exc)
    name = type(exc).__name__
    if name == "BenchError":
        first = text.splitlines()[0] if text else "the bench failed"
        return Problem("Virtual bench failed", f"The virtual bench could not run: {first}", text)
    if isinstance(exc, serial.SerialException) or isinstance(exc, OSError):
        return Problem("Serial port error", f"Cannot use the serial port: {text}", text)
    if isinstance(exc, ValueError):
        return Problem("Invalid settings", text, text)
    p = explain(text)
    if p.title == "Run problem":
        p.text = f"{name}: {text.splitlines()[0] if text else ''}"
    return p


def health_of(runner: Runner) -> dict[str, Any]:
    out: dict[str, Any] = {"nodes": {}}
    for name, s in list(runner.sessions.items()):
        c = s.decoder.counters
        out["nodes"][name] = {"hello": s.hello_dict(), "bytes_in": s.bytes_in, "frames_out": s.frames_out,
                              "frames_in": c.frames_ok, "errors": c.frames_dropped, "seq_lost": c.seq_lost,
                              "reconnects": s.reconnects, "vanished": s.vanished.error if s.vanished else None}
    st = runner.target.status() if runner.target.kind == "bench" else None
    if st:
        lag = st.get("lag", {})
        out["bench"] = {"lag_max_us": lag.get("max_us"), "lag_p99_us": lag.get("p99_us"),
                        "bound_us": lag.get("bound_us"), "exceeded": lag.get("exceeded"),
                        "speed": st.get("speed"), "virtual_s": st.get("virtual_s")}
    return out


class RunWorker(QObject):
    finished = Signal(object)          # RunResult
    failed = Signal(object)            # Problem
    health = Signal(object)            # dict (health_of)
    log = Signal(str)

    def __init__(self, cfg: RunConfig, target: Target, feed: EventFeed, health_every_s: float = 0.5) -> None:
        super().__init__()
        self.cfg, self.target, self.feed = cfg, target, feed
        self.runner = Runner(cfg, target, log=self.log.emit)
        self.runner.observer = feed
        self.health_every_s = health_every_s
        self._done = threading.Event()

    def stop(self) -> None:
        self.runner.stop_requested.set()

    def _poll(self) -> None:
        while not self._done.wait(self.health_every_s):
            r = self.runner
            if getattr(r, "generating", True) is False and all(e.terminal for e in list(r.events)):
                continue     # the run is over: its ports are being closed on purpose, not lost
            try:
                self.health.emit(health_of(self.runner))
            except Exception:  # noqa: BLE001 - health is a view; the run reports real faults
                pass

    @Slot()
    def run(self) -> None:
        poller = threading.Thread(target=self._poll, name="mmgui-health", daemon=True)
        poller.start()
        try:
            result: RunResult = self.runner.run()
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message, never a traceback
            self._done.set()
            self.feed.flush()
            self.failed.emit(explain_exception(exc))
            return
        finally:
            self._done.set()
        self.feed.flush()
        self.finished.emit(result)


def start_in_thread(worker: RunWorker) -> QThread:
    thread = QThread()
    thread.setObjectName("mmgui-run")
    worker.moveToThread(thread)
    thread.started.connect(worker.run)
    worker.finished.connect(thread.quit)
    worker.failed.connect(thread.quit)
    thread.start()
    return thread


@dataclass
class Probe:
    """Connect without running: open the target, read each node's HELLO, close again."""

    target: Target

    def run(self) -> dict[str, Any]:
        import queue

        from ..session import Session

        inbox: queue.Queue = queue.Queue()
        sessions = []
        try:
            prof, exe = self.target.open()
            for name, url in (("profiler", prof), ("executor", exe)):
                if url:
                    s = Session(name, url, inbox)
                    s.open()
                    sessions.append(s)
            for s in sessions:
                s.handshake(3.0)
            time.sleep(0.2)
            runner_like = type("R", (), {})()
            runner_like.sessions = {s.node: s for s in sessions}
            runner_like.target = self.target
            return health_of(runner_like)   # type: ignore[arg-type]
        finally:
            for s in sessions:
                s.close()
            self.target.close()


class ProbeWorker(QObject):
    done = Signal(object)
    failed = Signal(object)

    def __init__(self, target: Target) -> None:
        super().__init__()
        self.target = target

    @Slot()
    def run(self) -> None:
        try:
            self.done.emit(Probe(self.target).run())
        except Exception as exc:  # noqa: BLE001
            self.failed.emit(explain_exception(exc))
