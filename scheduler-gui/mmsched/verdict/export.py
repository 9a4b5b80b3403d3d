"""Writing a run: NAME.csv (one row per event, columns of docs/data-format.md in order) and NAME.json
(the sidecar). `pandas.read_csv("NAME.csv")` with no arguments reads it right.

Crash-safe and never through a planted link: each file is written through mmanalysis.safefiles (`replacing`,
the CSV streamed a chunk at a time; `atomic_write`, the sidecar: a new
temporary file in the same directory, ".NAME.csv.XXXX.tmp", which no reader takes for a run, flushed and fsynced,
then renamed over NAME.csv / NAME.json).
The CSV goes first, the sidecar last; the sidecar holds the CSV's SHA-256 (`csv_sha256`), so a CSV left
from another run or a pair cut short between the two renames is caught by the reader. Text cells go
through mmanalysis.csvsafe (no spreadsheet formulas). While the run goes, its events are in its journal
(NAME.partial.csv + NAME.partial.json, mmsched.verdict.journal), removed once these two are written."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from mmanalysis.csvsafe import neutralise
from mmanalysis.safefiles import atomic_write, replacing

from ..model.event import COLUMNS, Event


def _cell(v: object) -> object:
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return repr(round(v, 9))
    return neutralise(v)


def csv_chunks(events: Iterable[Event], rows: int = 4096) -> Iterator[bytes]:
    """The run CSV, header first, ROWS rows at a time (a long run's CSV is never whole in memory)."""
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for k, e in enumerate(events, 1):
        w.writerow([_cell(v) for v in e.row()])
        if k % rows == 0:
            yield buf.getvalue().encode("utf-8")
            buf.seek(0)
            buf.truncate()
    yield buf.getvalue().encode("utf-8")


def csv_line(values: Sequence[object]) -> bytes:
    """One line of the run CSV (the header's names, or an event's row()) as csv_chunks writes it."""
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="\n").writerow([_cell(v) for v in values])
    return buf.getvalue().encode("utf-8")


def write_csv(path: Path, events: Sequence[Event]) -> str:
    """Writes PATH atomically, a chunk at a time; returns the SHA-256 (hex) of what it wrote."""
    return write_chunks(path, csv_chunks(events))


def write_chunks(path: Path, chunks: Iterable[bytes]) -> str:
    """PATH written atomically from CHUNKS; the SHA-256 (hex) of what it wrote."""
    digest = hashlib.sha256()
    with replacing(Path(path)) as f:
        for chunk in chunks:
            digest.update(chunk)
            f.write(chunk)
    return digest.hexdigest()


def file_chunks(path: Path, size: int = 1 << 20) -> Iterator[bytes]:
    """The bytes of the file at PATH, SIZE at a time."""
    with open(path, "rb") as f:
        while chunk := f.read(size):
            yield chunk


def write_sidecar(path: Path, sidecar: dict[str, Any], fsync: bool = True) -> None:
    atomic_write(Path(path), (json.dumps(sidecar, indent=2, default=str) + "\n").encode("utf-8"), fsync=fsync)


def run_stem(out: Path | str) -> Path:
    """A run's `--out` without .csv / .json: the stem every file of the run is named from (NAME.csv, NAME.json,
    NAME.exectrace ...). The one place the rule is."""
    out = Path(out)
    return out.with_suffix("") if out.suffix in (".csv", ".json") else out


def run_paths(out: Path | str) -> tuple[Path, Path]:
    """(NAME.csv, NAME.json) of a run's `--out`."""
    stem = run_stem(out)
    return stem.with_name(stem.name + ".csv"), stem.with_name(stem.name + ".json")


def journal_paths(out: Path | str) -> tuple[Path, Path]:
    """(NAME.partial.csv, NAME.partial.json): the run's journal beside its files (mmsched.verdict.journal)."""
    stem = run_stem(out)
    return stem.with_name(stem.name + ".partial.csv"), stem.with_name(stem.name + ".partial.json")


def record_paths(out: Path | str) -> tuple[Path, Path]:
    """(NAME.inputs, NAME.pc.inputs): the run's records of its inputs beside its files (mmsched.run.inputlog)."""
    stem = run_stem(out)
    return stem.with_name(stem.name + ".inputs"), stem.with_name(stem.name + ".pc.inputs")


def write_run(out: Path, events: Sequence[Event], sidecar: dict[str, Any], csv_from: Path | None = None
              ) -> tuple[Path, Path]:
    """`out` is the path without suffix (or with .csv / .json, which is stripped). The CSV first, then the
    sidecar with the CSV's hash (`csv_sha256`); the caller's dict is not changed. An OSError names the file
    that could not be written (not its temporary file); when it is the sidecar, the CSV just written is removed
    again, and an earlier run's sidecar there with it (its CSV was just replaced): no CSV is left without its
    sidecar, nor a sidecar without its CSV, for a rerun to trip over. `csv_from`: the CSV is a copy of the one
    there (the run's own, written from these events: a view that holds only a long run's newest ones exports so)."""
    csv_path, json_path = run_paths(out)
    try:
        digest = write_chunks(csv_path, file_chunks(csv_from)) if csv_from is not None else write_csv(csv_path, events)
    except OSError as exc:
        exc.filename = str(csv_path)
        raise
    try:
        write_sidecar(json_path, dict(sidecar, csv_sha256=digest))
    except OSError as exc:
        for path in (csv_path, json_path):
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass
        exc.filename = str(json_path)
        raise
    return csv_path, json_path
