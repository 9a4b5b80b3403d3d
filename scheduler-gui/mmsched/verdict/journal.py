"""A run's journal: its events as they end, so that a write failing at the end (a full disk, a folder gone) or a
process killed before it loses nothing that was measured (docs/data-format.md, "The journal").

Beside the run's files, for `--out NAME`: NAME.partial.json (journal_sidecar), written (atomically) once before the
first event is made, says what the run was (format, name, config, target, timebase) and that it is incomplete and invalid
(`invalid_reasons`: `incomplete`); NAME.partial.csv gets the CSV's header, then one row per event the moment the
event ends, in the order they end: the row as it was then (validity by cause, normal mode's budget and the fault
ledger's revisions are applied at the end, to NAME.csv only). Each row is one write() to the file, unbuffered:
it is in the kernel's hands once the event has ended, so a killed process keeps it; nothing is fsynced during the
run (a power cut may lose the last rows, and leave the last one cut: the reader drops a cut last row of a
journal). A write that fails (the disk full) is taken back to the last whole row and the journal stops there; the
run goes on and its end says how many events the journal holds.

A run in phases (`--phases`) has its plan in the sidecar's config from the start, and NAME.partial.json is written
again (atomically, the whole file) at each of its switches, with `phases`: each phase's boundaries so far
(phasefigures.boundaries: start_s once its condition is in place, end_s once the switch away from it began, the
stress-ng command, any error; a phase not begun yet null), so a run killed in its fifth hour says where its
phases began. It is written through PhasedLoad.on_switch: the first phase's before the first event is made, each
next one's on the phases' own thread (its fsync delays no event), the last end_s after the events have ended.

The pair reads as a run (mmanalysis.read_run, `mmrig report NAME.partial.csv`): incomplete, invalid, never a
result. Once NAME.csv and NAME.json are written the journal is removed; when they cannot be, `RunNotWritten`
says in one line which file holds what."""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmanalysis import safefiles
from mmanalysis.schema import FORMAT, FORMAT_VERSION
from mmproto import TimeBase

from .. import __version__
from . import export
from ..model.config import RunConfig
from ..model.event import COLUMNS, Event
from ..model.phaseplan import PhasePlan, PhaseSpan
from .phasefigures import boundaries


INCOMPLETE_TEXT = ("incomplete: the run's files were never written (the disk full, the process killed): these are "
                   "its events as each ended, without the end's revisions (validity by cause, budget)")


COUNTED_TEXT = ("incomplete: the run's files were never written (the disk full, the process killed): these are the "
                "profiler's figures as its last report before the journal's last edge gave them (no event rows)")


def incomplete(text: str) -> dict[str, Any]:
    """A journal's sidecar keys that mark it invalid, `incomplete`, with TEXT."""
    return {"valid": False, "invalid_reason": text, "invalid_reasons": [{"code": "incomplete", "text": text}]}


def journal_sidecar(cfg: RunConfig, timebase: TimeBase, baud: int, identity: dict[str, Any],
                    hellos: dict[str, Any]) -> dict[str, Any]:
    """The journal's sidecar (NAME.partial.json), written before the first event is made: what the run is (its
    configuration at the links' `baud` and the profiler's `timebase`, the endpoint's identity, the nodes' HELLOs),
    and that these files are incomplete and invalid."""
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "mmrig_version": __version__,
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "name": cfg.name,
            "incomplete": True, "config": cfg.sidecar(baud, timebase.tick_s), "target": identity,
            "nodes": hellos,
            "timebase": {"timer_hz": timebase.timer_hz, "tick_counts": timebase.tick_counts},
            **incomplete(INCOMPLETE_TEXT)}


class RunNotWritten(OSError):
    """The run's files could not be written; the message (one line) names the file and where the run's events
    are instead (its journal). An OSError, so what caught a failed write before still catches it."""

    code = "incomplete"            # what views say about it (mmanalysis.schema.INVALID_REASONS)

    def __init__(self, text: str, cause: OSError) -> None:
        super().__init__(text)
        self.text, self.cause = text, cause
        self.errno = cause.errno

    def __str__(self) -> str:
        return self.text

    def __reduce__(self) -> tuple[type, tuple[str, OSError]]:   # pickled as it was made (a run's child process)
        return (RunNotWritten, (self.text, self.cause))


@dataclass
class Journal:
    out: Path
    csv_path: Path = field(init=False)
    json_path: Path = field(init=False)
    rows: int = field(default=0, init=False)        # events whose row is in the journal
    ended: int = field(default=0, init=False)       # events that ended (rows + those the journal could not take)
    error: OSError | None = field(default=None, init=False)   # why the journal stopped, or never began
    _fd: int | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _size: int = field(default=0, init=False, repr=False)      # bytes of whole rows written
    # NAME.partial.json as written (None: not written, or the journal removed), rewritten with the phases so far
    # under _json_lock: the phases' thread writes it at a switch, the run's thread at the phases' end
    _sidecar: dict[str, Any] | None = field(default=None, init=False, repr=False)
    _json_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        self.csv_path, self.json_path = export.journal_paths(self.out)

    def _write_json(self, sidecar: dict[str, Any]) -> None:
        export.atomic_write(self.json_path, (json.dumps(sidecar, indent=2, default=str) + "\n").encode())

    def open(self, sidecar: dict[str, Any]) -> None:
        """Writes NAME.partial.json (SIDECAR) and NAME.partial.csv's header. A failure is kept in `error` (the run
        goes on without a journal), never raised."""
        try:
            with self._json_lock:
                self._write_json(sidecar)
                self._sidecar = sidecar
            # made as every file of ours (safefiles.stream: a new file renamed over the name, so a link planted
            # there is replaced and a FIFO refused, never opened), the header in it before it has the name
            header = export.csv_line(COLUMNS)
            self._fd = safefiles.stream(self.csv_path, header)
            self._size = len(header)
        except OSError as exc:
            self._stop(exc)

    def open_run(self, cfg: RunConfig, timebase: TimeBase, baud: int, identity: dict[str, Any],
                 hellos: dict[str, Any]) -> str | None:
        """Opens the journal of the run these describe (journal_sidecar), before its first event is made: no
        event's timing pays for the sidecar's fsync. A journal that cannot be written is returned in words, for
        the run to say; the run goes on without it."""
        self.open(journal_sidecar(cfg, timebase, baud, identity, hellos))
        if self.error is None:
            return None
        return (f"WARNING: no journal ({self.csv_path}: {self.error.strerror or self.error}): until the run is "
                "written at its end its events are in memory only")

    def phases(self, plan: PhasePlan, spans: list[PhaseSpan]) -> str | None:
        """NAME.partial.json again, with `phases`: PLAN's phases as far as SPANS (the switches so far) go (`rewrite`:
        a failure in words, never raised: the phases' thread goes on switching)."""
        return self.rewrite({"phases": boundaries(plan, spans)}, "the phases so far",
                            "a killed run would not say where they began")

    def sections(self, sections: dict[str, Any]) -> str | None:
        """NAME.partial.json again, with SECTIONS (a run on the profiler's histogram alone: its summary, histogram,
        maxima and phases so far, which it has no rows for) in place of those it had (`rewrite`)."""
        return self.rewrite(sections, "the profiler's figures so far", "a killed run would keep only those written "
                                                                        "before")

    def rewrite(self, sections: dict[str, Any], what: str, lost: str) -> str | None:
        """NAME.partial.json again, SECTIONS in place of those it had, the rest kept. Nothing without a sidecar
        written (or once the journal is removed); a write that fails keeps the previous file (atomic) and is
        returned in words (WHAT could not be written, what is LOST then), never raised."""
        with self._json_lock:
            if self._sidecar is None:
                return None
            sidecar = {**self._sidecar, **sections}
            try:
                self._write_json(sidecar)
            except OSError as exc:
                return f"WARNING: {self.json_path} could not be written with {what} ({exc.strerror or exc}): {lost}"
            self._sidecar = sidecar
        return None

    def add(self, ev: Event) -> None:
        """EV has just ended: its row, now."""
        self.ended += 1
        if self._fd is None:
            return
        try:
            self._write(export.csv_line(ev.row()))
            self.rows += 1
        except OSError as exc:
            self._stop(exc)

    def _write(self, data: bytes) -> None:
        assert self._fd is not None
        done = 0
        while done < len(data):              # a short write (the disk filling) is finished or fails
            done += os.write(self._fd, data[done:])
        self._size += len(data)

    def _stop(self, exc: OSError) -> None:
        """The journal ends at its last whole row: a row cut by the failing write is taken back."""
        self.error = exc
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, self._size)
            except OSError:
                pass
        self.close()

    def close(self) -> None:
        # once, whichever thread gets here (the run's end and a signal's): closing the number twice would close
        # whatever the process opened under it since
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def remove(self) -> None:
        """The run's files are written: the journal is not needed any more."""
        self.close()
        with self._json_lock:            # no phase written back after this
            self._sidecar = None
        for path in (self.csv_path, self.json_path):
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass

    def words(self) -> str:
        """Where the run's events are, for the one line that says the run could not be written."""
        n = self.ended
        if n == 0:
            return "no event had ended"
        if self.csv_path.exists() and self.rows == n and self.error is None:
            return (f"the {n} events that ended are in {self.csv_path} (what the run was: {self.json_path}; "
                    f"`mmrig report {self.csv_path}` reads it, incomplete and invalid)")
        if self.csv_path.exists() and self.rows:
            why = (self.error.strerror or self.error) if self.error is not None else "unknown"
            return (f"{self.csv_path} holds {self.rows} of the {n} events that ended (writing it failed after that: "
                    f"{why}; what the run was: {self.json_path})")
        why = (self.error.strerror or self.error) if self.error is not None else "not begun"
        return f"no journal could be kept either ({self.csv_path}: {why}): the {n} events that ended are lost"

    def failed(self, exc: OSError) -> RunNotWritten:
        """The error to raise when the run's files could not be written (EXC): the file, why, and the journal."""
        self.close()
        why = exc.strerror or str(exc)
        return RunNotWritten(f"cannot write {exc.filename or self.out}: {why}; {self.words()}", exc)
