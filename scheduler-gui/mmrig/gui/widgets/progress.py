"""A run's progress: events ended of the total, elapsed time, the time left."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QGridLayout, QLabel, QProgressBar, QWidget

from mmrig.progress import tick_fit_words


def clock_text(s: float) -> str:
    """Seconds as m:ss (h:mm:ss from an hour)."""
    s = max(0, int(round(s)))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def remaining_s(done: int, total: int | None, elapsed_s: float, first_done_s: float | None,
                duration_s: float | None = None, started_s: float | None = None) -> float | None:
    """Estimated seconds left of a run: by events, the pace of the events ended so far (from the first one's end,
    so the start-up before it does not count as pace); by duration, the generation time left plus the tail.
    None while there is nothing to go on."""
    if duration_s is not None:
        return None if started_s is None else max(0.0, duration_s - (elapsed_s - started_s))
    if not total or first_done_s is None or done < 2:
        return None
    pace = (elapsed_s - first_done_s) / (done - 1)
    return max(0.0, (total - done) * pace)


class RunProgress(QWidget):
    """During a run: events ended / total as a bar, elapsed time and the estimated time left (a label that tests and
    screenshots read); after it, what the run took."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QGridLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.bar = QProgressBar()
        self.bar.setTextVisible(True)
        self.bar.setFixedWidth(190)
        self.label = QLabel("no run yet")
        self.label.setObjectName("progress")
        lay.addWidget(self.bar, 0, 0)
        lay.addWidget(self.label, 0, 1)
        lay.setColumnStretch(1, 1)
        self.reset()

    def reset(self) -> None:
        self.total: int | None = None
        self.duration_s: float | None = None
        self.t0: float | None = None
        self.first_done: float | None = None
        self.first_created: float | None = None
        self.done = 0
        self.fit: tuple[int, int] | None = None    # normal mode before it fires: the tick fit's TIMECODEs (have, need)
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.bar.setFormat("")

    def start(self, total: int | None, duration_s: float | None, now: float | None = None) -> None:
        self.reset()
        self.total, self.duration_s = total, duration_s
        self.t0 = time.monotonic() if now is None else now
        if total:
            self.bar.setRange(0, total)
        else:
            self.bar.setRange(0, max(1, int(round((duration_s or 1) * 10))))
        self.bar.setFormat("%v / %m events" if total else "%p %")
        self.label.setText("starting: bench, HELLO, calibration...")

    def set_fit(self, have: int, need: int) -> None:
        """Normal mode gathering TIMECODEs for its tick fit, said at the next update in the command line's words
        (mmrig.progress.tick_fit_words)."""
        self.fit = (have, need) if have < need else None

    def update_counts(self, done: int, created: int, now: float | None = None) -> str:
        """The run has created `created` events and ended `done` of them; returns the label's text."""
        if self.t0 is None:
            return self.label.text()
        now = time.monotonic() if now is None else now
        elapsed = now - self.t0
        if created and self.first_created is None:
            self.first_created = elapsed
        if done and self.first_done is None:
            self.first_done = elapsed
        self.done = done
        left = remaining_s(done, self.total, elapsed, self.first_done, self.duration_s, self.first_created)
        if self.total:
            self.bar.setValue(min(done, self.total))
            head = f"{done} / {self.total} events"
        else:
            gen = 0.0 if self.first_created is None else elapsed - self.first_created
            self.bar.setValue(min(self.bar.maximum(), int(round(gen * 10))))
            self.bar.setFormat(f"{done} events, %p % of {self.duration_s:g} s")
            head = f"{done} events ended"
        if self.fit is not None and not done:
            waiting = tick_fit_words(*self.fit)
        else:
            waiting = "remaining: estimating..."
        text = (f"{head}, elapsed {clock_text(elapsed)}, "
                + (waiting if left is None else f"about {clock_text(left)} left"))
        self.label.setText(text)
        return text

    def finish(self, done: int, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        took = clock_text(now - self.t0) if self.t0 is not None else "?"
        if self.total:
            self.bar.setValue(min(done, self.total))
        else:
            self.bar.setRange(0, 1)
            self.bar.setValue(1)
            self.bar.setFormat(f"{done} events")
        self.label.setText(f"run over: {done} events ended in {took}")
        self.t0 = None
