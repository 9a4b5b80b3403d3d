"""The selected event's explanation, computed off the GUI thread: `ExplainWorker` lives in a QThread of its own and
answers each request by a signal; `Explainer`, in the GUI thread, owns that thread and sends it requests. The
first explanation of a run reads its host trace through trace-cmd (seconds: mmanalysis.runexplainer), around
every event with a latency, so the next events of the same run are explained at once (about 20 ms each); the worker
keeps one run's trace at a time."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QThread, Signal, Slot

from mmanalysis.explain import ExplainError
from mmanalysis.runexplainer import RunExplainer


class ExplainWorker(QObject):
    """Explains events of runs on disk, in its own thread. `explained(ticket, item)`: an Explanation or a Refused;
    `failed(ticket, text)`: the run or the event cannot be read (one line)."""

    explained = Signal(int, object)
    failed = Signal(int, str)
    reading = Signal(int, str)          # (ticket, what is read): the first request of a run reads its trace

    def __init__(self) -> None:
        super().__init__()
        self._run: tuple[Path, int] | None = None      # the cached run: its CSV and the CSV's mtime (ns)
        self._explainer: RunExplainer | None = None

    @Slot(int, str, int)
    def explain(self, ticket: int, csv: str, event: int) -> None:
        path = Path(csv)
        try:
            key = (path, path.stat().st_mtime_ns)
            if key != self._run or self._explainer is None:
                self._explainer, self._run = None, None
                explainer = RunExplainer.open(path)
                if explainer.traced:
                    self.reading.emit(ticket, f"reading {path.stem}'s host trace ({explainer.meta['host_trace']['file']}) "
                                              "with trace-cmd: seconds for a run of a few seconds, once a run")
                self._explainer, self._run = explainer, key
            item = self._explainer.explain(event)
        except (ExplainError, OSError) as exc:
            self.failed.emit(ticket, str(exc))
            return
        self.explained.emit(ticket, item)


class Explainer(QObject):
    """The GUI thread's side: `request(csv, event)` returns a ticket; the answer comes back with it on `explained`,
    `failed` or `reading` (an older ticket's answer is the caller's to drop)."""

    explained = Signal(int, object)
    failed = Signal(int, str)
    reading = Signal(int, str)
    _ask = Signal(int, str, int)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ticket = 0
        self.thread: QThread | None = None
        self.worker: ExplainWorker | None = None

    def _start(self) -> None:
        self.thread = QThread()
        self.thread.setObjectName("mmgui-explain")
        self.worker = ExplainWorker()
        self.worker.moveToThread(self.thread)
        self._ask.connect(self.worker.explain)          # queued: the worker's thread runs it
        self.worker.explained.connect(self.explained)
        self.worker.failed.connect(self.failed)
        self.worker.reading.connect(self.reading)
        self.thread.start()

    def request(self, csv: Path, event: int) -> int:
        if self.thread is None:
            self._start()
        self.ticket += 1
        self._ask.emit(self.ticket, str(csv), int(event))
        return self.ticket

    def stop(self, wait_ms: int = 15000) -> None:
        """Ends the worker's thread once its current explanation is done (a trace being read: up to `wait_ms`)."""
        if self.thread is not None:
            self.thread.quit()
            self.thread.wait(wait_ms)
            self.thread = None
            self.worker = None


__all__ = ["ExplainWorker", "Explainer"]
