"""A run in its own QThread: the worker builds the core's Runner, hangs the EventFeed on it as its
observer, runs it, and reports the result or a readable error by signals. A small poller (a plain
thread: the run's thread is busy) samples link health: bytes, frames, decoder errors, bench lag."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from mmanalysis.schema import INVALID_REASONS

from ..config import RunConfig
from ..endpoint import Endpoint, Reason
from ..runner import RunResult, Runner
from ..session import Session
from .feed import EventFeed


@dataclass
class Problem:
    title: str
    text: str
    details: str = ""


def explain(reason: Reason | dict[str, str]) -> Problem:
    """A readable message for an invalid run's reason: the core gives a code, this says it for a person
    (mmanalysis.schema.INVALID_REASONS, the words every view uses)."""
    code, text = (reason.code, reason.text) if isinstance(reason, Reason) else (reason.get("code"), reason.get("text", ""))
    title, words = INVALID_REASONS.get(code or "", ("Run problem", text.splitlines()[0] if text else "unknown error"))
    return Problem(title, words, text)


def explain_exception(exc: BaseException) -> Problem:
    """A run that could not start: an endpoint or link error carries a code; anything else is said as is."""
    code = getattr(exc, "code", None)
    text = str(exc)
    if code in INVALID_REASONS:
        p = explain(Reason(code, text))
        p.text = f"{p.text} ({text.splitlines()[0]})" if text else p.text
        return p
    if isinstance(exc, ValueError):
        return Problem("Invalid settings", text, text)
    return Problem("Run problem", f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}", text)


def health_of(session: Session, endpoint: Endpoint) -> dict[str, Any]:
    out: dict[str, Any] = {"nodes": session.health()}
    bench = endpoint.health()
    if bench:
        out["bench"] = bench
    return out


class RunWorker(QObject):
    finished = Signal(object)          # RunResult
    failed = Signal(object)            # Problem
    health = Signal(object)            # dict (health_of)
    log = Signal(str)

    def __init__(self, cfg: RunConfig, endpoint: Endpoint, feed: EventFeed, health_every_s: float = 0.5) -> None:
        super().__init__()
        self.cfg, self.endpoint, self.feed = cfg, endpoint, feed
        self.runner = Runner(cfg, endpoint, log=self.log.emit)
        self.runner.observer = feed
        self.health_every_s = health_every_s
        self._done = threading.Event()

    def stop(self) -> None:
        self.runner.stop_requested.set()

    def _poll(self) -> None:
        while not self._done.wait(self.health_every_s):
            r = self.runner
            if r.state is not None and not r.state.generating and r.events and all(e.terminal for e in list(r.events)):
                continue     # the run is over: its ports are being closed on purpose, not lost
            try:
                self.health.emit(health_of(r.session, r.endpoint))
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
    """Connect without running: open the endpoint, read each node's HELLO, close again."""

    endpoint: Endpoint
    cfg: RunConfig

    def run(self) -> dict[str, Any]:
        import time

        session = Session(self.endpoint)
        try:
            session.open(self.endpoint.open(self.cfg))
            session.handshake(3.0)
            time.sleep(0.2)
            return health_of(session, self.endpoint)
        finally:
            session.close()
            self.endpoint.close()


class ProbeWorker(QObject):
    done = Signal(object)
    failed = Signal(object)

    def __init__(self, endpoint: Endpoint, cfg: RunConfig) -> None:
        super().__init__()
        self.endpoint, self.cfg = endpoint, cfg

    @Slot()
    def run(self) -> None:
        try:
            self.done.emit(Probe(self.endpoint, self.cfg).run())
        except Exception as exc:  # noqa: BLE001
            self.failed.emit(explain_exception(exc))
