"""A run and the GUI: the worker runs in its own QThread and reports the run by signals (`finished` with the
RunResult, `failed` with a readable Problem, `health`, `log`); the events go through the EventFeed.

Where the run itself goes is the config's `firing_process`:
- "own" (the default): the whole run (Runner, endpoint, links, normal mode's firing thread) runs in a
  process of its own (`mmrig.child.RunProcess`, no Qt in it), so its threads never wait for the GUI's
  interpreter lock; the worker's thread reads the child's messages and emits the same signals.
- "gui": the Runner runs right here in the worker's QThread with the EventFeed as its observer, sharing
  the GUI's interpreter lock on purpose (to show what the GUI's load costs); a small poller thread
  samples link health."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from mmanalysis.schema import INVALID_REASONS

from mmrig.child import Failure, RunProcess, health_of
from mmsched.model.config import RunConfig
from mmsched.link.endpoint import Endpoint
from mmsched.model.reason import Reason
from mmsched.model.result import RunResult
from mmsched.run.runner import Runner
from mmsched.link.session import Session
from mmrig.gui.feed import EventFeed


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


def explain_failure(f: Failure) -> Problem:
    """A run that could not start, broke, or whose process died: an endpoint or link error carries a code;
    anything else is said as is."""
    text = f.text
    if f.kind == "died":
        return Problem("Run process ended", text[0].upper() + text[1:] if text else "the run's process ended", text)
    if f.code in INVALID_REASONS:
        p = explain(Reason(f.code, text))
        p.text = f"{p.text} ({text.splitlines()[0]})" if text else p.text
        return p
    if f.invalid_settings:
        return Problem("Invalid settings", text, text)
    return Problem("Run problem", f"{f.kind}: {text.splitlines()[0] if text else ''}", text)


def explain_exception(exc: BaseException) -> Problem:
    return explain_failure(Failure.of(exc))


class RunWorker(QObject):
    finished = Signal(object)          # RunResult
    failed = Signal(object)            # Problem
    health = Signal(object)            # dict (mmrig.child.health_of)
    log = Signal(str)

    def __init__(self, cfg: RunConfig, endpoint: Endpoint, feed: EventFeed, health_every_s: float = 0.5) -> None:
        super().__init__()
        self.cfg, self.endpoint, self.feed = cfg, endpoint, feed
        self.health_every_s = health_every_s
        self.in_process = cfg.firing_process == "gui"
        self.runner: Runner | None = None          # the in-process run ("gui")
        self.child: RunProcess | None = None       # the run's own process ("own")
        if self.in_process:
            self.runner = Runner(cfg, endpoint, log=self.log.emit)
            self.runner.observer = feed
        else:
            self.child = RunProcess(cfg, endpoint, health_s=health_every_s)
        self._done = threading.Event()

    def stop(self) -> None:
        if self.runner is not None:
            self.runner.stop_requested.set()
        if self.child is not None:
            self.child.stop()

    @property
    def identity(self) -> dict[str, Any]:
        """The endpoint's identity (the bench's pid, ...) as the run knows it so far."""
        if self.child is not None:
            return dict(self.child.identity)
        return self.endpoint.identity()

    @Slot()
    def run(self) -> None:
        if self.child is not None:
            self._run_child()
        else:
            self._run_here()

    # ---- "own": the run in its own process ------------------------------------------------------------
    def _run_child(self) -> None:
        assert self.child is not None
        try:
            self.child.start()
        except Exception as exc:  # noqa: BLE001 - e.g. an endpoint that cannot be sent to a process
            self.failed.emit(explain_exception(exc))
            return
        for kind, obj in self.child.messages():
            if kind == "rows":
                self.feed.deliver(obj)         # mmrig.child.Row, as the view keeps them
            elif kind == "timecode":
                self.feed.timecode.emit(obj)
            elif kind == "phase":
                self.feed.phase.emit(obj)
            elif kind == "tick_fit":
                self.feed.tick_fit.emit(tuple(obj))
            elif kind == "log":
                self.log.emit(obj)
            elif kind == "health":
                self.health.emit(obj)
            elif kind == "started" and obj.get("qt"):
                self.log.emit(f"warning: the run process imported {', '.join(obj['qt'])}")
            elif kind == "result":
                self.finished.emit(obj)
            elif kind in ("failed", "died"):
                self.failed.emit(explain_failure(obj))

    # ---- "gui": the run in this process -----------------------------------------------------------------
    def _poll(self) -> None:
        assert self.runner is not None
        while not self._done.wait(self.health_every_s):
            r = self.runner
            if r.over:
                continue     # the run is over: its ports are being closed on purpose, not lost
            try:
                self.health.emit(health_of(r.session, r.endpoint))
            except Exception:  # noqa: BLE001 - health is a view; the run reports real faults
                pass

    def _run_here(self) -> None:
        assert self.runner is not None
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
