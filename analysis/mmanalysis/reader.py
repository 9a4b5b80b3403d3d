"""Reading runs (docs/data-format.md): typed DataFrames, the sidecar, schema errors with file/line/column."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple

import numpy as np
import pandas as pd
from mmproto import PROFILER_KINDS

from .schema import (COLUMN_NAMES, COLUMNS, DERIVED_COLUMNS, FORMAT, LOAD_CONDITIONS, MEASURED, MODES, OUTCOMES,
                     READABLE_VERSIONS, REASONS, SchemaError, load_condition, missing_defaults)

OUTCOME_DTYPE = pd.CategoricalDtype(OUTCOMES)
MODE_DTYPE = pd.CategoricalDtype(MODES)
REASON_DTYPE = pd.CategoricalDtype(REASONS)


class RunSet(NamedTuple):
    """`df`: one row per event of every run, with a `run` column; `meta`: run name -> its JSON sidecar.

    Columns beyond the file's: `run`, `profiler_kind` (the bench's or board's profiler that stamped the run:
    "avr", input capture, or "8051", the paper's 87C51 image with its event input polled; the sidecar's
    target.profiler_kind, and "avr" for a sidecar without it, written before the 8051 profiler existed:
    profiler_kind()), `load` (config.load's condition: idle, cpu, memory, disk, network, heavy, all;
    a sidecar from before named loads has a bool there, read as all / idle), `latency_ticks` (latency_counts / tick_counts),
    `jitter_us` (Kohout, "Hardware Support for Real-Time Operating Systems", 2002: |interval between successive
    measured events - intended interval|, which is |latency - latency of the previous measured event of the same
    run|; empty for the first one).
    """

    df: pd.DataFrame
    meta: dict[str, dict]

    @property
    def runs(self) -> list[str]:
        return list(self.meta)

    def valid_runs(self) -> list[str]:
        return [r for r, m in self.meta.items() if m.get("valid", True)]




def profiler_kind(meta: dict) -> str:
    """The run's profiler kind from its sidecar: target.profiler_kind, "avr" when the key is missing (a run from
    before the 8051 bench, docs/bench.md "The 8051 profiler": only the AVR profiler existed then)."""
    target = meta.get("target")
    kind = target.get("profiler_kind") if isinstance(target, dict) else None
    return str(kind) if kind else "avr"


def kind_label(name: str, meta: dict) -> str:
    """The run NAME as a view lists it beside runs of the other profiler kind: "NAME [8051]" for a run the 8051
    profiler stamped (docs/lab.md step 6), NAME itself for the AVR's (the hand-in's runs keep their names)."""
    kind = profiler_kind(meta)
    return name if kind == "avr" else f"{name} [{kind}]"


def _line(i: int) -> int:
    return int(i) + 2  # line 1 is the header, row 0 is on line 2


def decode_utf8(path: Path | str, data: bytes) -> str:
    """DATA, the bytes of the run file PATH, as text; SchemaError naming the line and the byte offset of the first
    byte that is not UTF-8 (a file saved in another encoding, or not text at all)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SchemaError(path, f"not UTF-8 text: byte 0x{data[exc.start]:02x} at byte offset {exc.start}",
                          line=data.count(b"\n", 0, exc.start) + 1) from None


def read_sidecar(path: Path) -> dict:
    try:
        meta = json.loads(decode_utf8(path, Path(path).read_bytes()))
    except FileNotFoundError:
        raise SchemaError(path, "sidecar missing (every NAME.csv has a NAME.json beside it)") from None
    except json.JSONDecodeError as exc:
        raise SchemaError(path, f"not JSON: {exc.msg}", line=exc.lineno) from None
    except RecursionError:            # [[[[... 100,000 deep: the decoder's stack, not a traceback
        raise SchemaError(path, "not a sidecar: JSON nested too deep to read") from None
    if not isinstance(meta, dict):
        raise SchemaError(path, "not a JSON object")
    if meta.get("format") != FORMAT:
        raise SchemaError(path, f"format is {meta.get('format')!r}, expected {FORMAT!r}", column="format")
    if meta.get("format_version") not in READABLE_VERSIONS:
        raise SchemaError(path, f"format_version {meta.get('format_version')!r} is not one of {READABLE_VERSIONS}",
                          column="format_version")
    tb = meta.get("timebase")
    for key in ("timer_hz", "tick_counts"):
        v = tb.get(key) if isinstance(tb, dict) else None
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
            raise SchemaError(path, f"timebase.{key} must be a positive number, got {v!r}", column=f"timebase.{key}")
    if not isinstance(meta.get("config"), dict):
        raise SchemaError(path, "config missing", column="config")
    return meta


def check_csv_hash(csv_path: Path, meta: dict) -> None:
    """The sidecar's `csv_sha256` (written last, after the CSV) against the CSV on disk: a mismatch is a CSV of
    another run or a write cut short. Sidecars without the key (older runs) are not checked."""
    want = meta.get("csv_sha256")
    if want is None:
        return
    if not isinstance(want, str):
        raise SchemaError(csv_path.with_suffix(".json"), f"csv_sha256 must be a hex string, got {want!r}",
                          column="csv_sha256")
    h = hashlib.sha256()
    try:
        with open(csv_path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except FileNotFoundError:
        raise SchemaError(csv_path, "file not found") from None
    if h.hexdigest() != want.lower():
        raise SchemaError(csv_path, f"{csv_path.name} does not match its sidecar (csv_sha256): "
                          "written by another run or cut short")


def _read_csv_checked(path: Path, version: int = 2, journal: bool = False) -> pd.DataFrame:
    """PATH's rows, checked. JOURNAL: a run's journal (its sidecar says `incomplete`, mmsched.verdict.journal), whose last
    row a power cut may have left cut: a last line without its newline is dropped."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SchemaError(path, "file not found") from None
    if journal and not data.endswith(b"\n"):
        data = data[:data.rfind(b"\n") + 1]
    text = decode_utf8(path, data)   # read whole: a byte that is not UTF-8 named by its offset
    header = next(csv.reader(io.StringIO(text, newline="")), None)
    if not header:
        raise SchemaError(path, "empty file, no header line", line=1)
    defaults = missing_defaults(version)
    derived = {c for c, added in DERIVED_COLUMNS.items() if version < added}    # read as the writer derives them
    for name in COLUMN_NAMES:
        if name not in header and name not in defaults and name not in derived:
            raise SchemaError(path, "column missing from the header", line=1, column=name)
    dup = [c for c in set(header) if header.count(c) > 1]
    if dup:
        raise SchemaError(path, "column appears twice in the header", line=1, column=sorted(dup)[0])
    try:
        raw = pd.read_csv(io.StringIO(text, newline=""), skip_blank_lines=False, low_memory=False,
                          dtype={"mode": object, "outcome": object, "reason": object})
    except pd.errors.ParserError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise SchemaError(path, f"malformed CSV: {exc}", line=int(m.group(1)) if m else None) from None

    for name, value in defaults.items():
        if name not in raw:                      # an older file: the value its rows read as
            raw[name] = value
    out = {}
    for name, kind, nullable in COLUMNS:
        if name in derived and name not in raw:
            out[name] = _in_stats(out)        # (after outcome and measurable: the schema lists them first)
            continue
        col = raw[name]
        if kind == "bool":
            if col.dtype != bool:
                text = col.astype(str).str.strip().str.lower()
                bad = (~text.isin(["true", "false"])).to_numpy()
                if bad.any():
                    i = int(np.argmax(bad))
                    raise SchemaError(path, f"not True or False: {col.iloc[i]!r}", line=_line(i), column=name)
                col = text == "true"
            out[name] = col.to_numpy(dtype=bool)
            continue
        if kind == "str":
            vals = col.to_numpy(dtype=object)
            isnull = pd.isna(vals)
            allowed = {"mode": MODES, "outcome": OUTCOMES, "reason": REASONS}[name]
            bad = ~isnull & ~np.isin(vals.astype(str), allowed)
            if bad.any():
                i = int(np.argmax(bad))
                raise SchemaError(path, f"unknown value {vals[i]!r} (allowed: {', '.join(allowed)})",
                                  line=_line(i), column=name)
            dtype = {"mode": MODE_DTYPE, "outcome": OUTCOME_DTYPE, "reason": REASON_DTYPE}[name]
            out[name] = pd.Categorical(vals, dtype=dtype)
        else:
            if not pd.api.types.is_numeric_dtype(col.dtype):
                num = pd.to_numeric(col, errors="coerce")
                bad = (col.notna() & num.isna()).to_numpy()
                if bad.any():
                    i = int(np.argmax(bad))
                    raise SchemaError(path, f"not a number: {col.iloc[i]!r}", line=_line(i), column=name)
                col = num
            v = col.to_numpy(dtype=float)
            isnull = np.isnan(v)
            bad = ~isnull & ~np.isfinite(v)      # 1e999 reads as inf: a figure no run can have had
            if bad.any():
                i = int(np.argmax(bad))
                raise SchemaError(path, f"not a finite number: {v[i]:g} (as read)", line=_line(i), column=name)
            if kind == "int":
                bad = ~isnull & (v != np.round(v))
                if bad.any():
                    i = int(np.argmax(bad))
                    raise SchemaError(path, f"not an integer: {col.iloc[i]!r}", line=_line(i), column=name)
                out[name] = col.astype("Int64") if isnull.any() or col.dtype.kind != "i" else col.astype("int64")
            else:
                out[name] = v
        if not nullable and isnull.any():
            i = int(np.argmax(isnull))
            raise SchemaError(path, "empty value in a column that must always have one", line=_line(i), column=name)
    df = pd.DataFrame(out)
    # integer columns are nullable Int64 throughout, so runs concatenate with one dtype per column
    for name, kind, _ in COLUMNS:
        if kind == "int":
            df[name] = df[name].astype("Int64")

    outcome = df["outcome"].to_numpy(dtype=object)
    measured = np.isin(outcome, MEASURED)
    no_lat = measured & np.isnan(df["latency_us"].to_numpy())
    if no_lat.any():
        i = int(np.argmax(no_lat))
        raise SchemaError(path, f"outcome {outcome[i]!r} needs a latency", line=_line(i), column="latency_us")
    has_reason = df["reason"].notna().to_numpy()
    bad = (outcome == "ok") & has_reason
    if bad.any():
        i = int(np.argmax(bad))
        raise SchemaError(path, "an ok row has no reason", line=_line(i), column="reason")
    bad = (outcome != "ok") & ~has_reason
    if bad.any():
        i = int(np.argmax(bad))
        raise SchemaError(path, f"outcome {outcome[i]!r} needs a reason", line=_line(i), column="reason")
    bad = df["in_stats"].to_numpy(dtype=bool) != _in_stats(out)
    if bad.any():
        i = int(np.argmax(bad))
        raise SchemaError(path, f"in_stats {bool(df['in_stats'].iloc[i])} for a row that is {outcome[i]} and "
                          f"{'' if df['measurable'].iloc[i] else 'not '}measurable (in the figures: ok or late, "
                          "and measurable)", line=_line(i), column="in_stats")
    ev = df["event"].to_numpy(dtype=np.int64)
    if len(ev) and len(np.unique(ev)) != len(ev):
        seen = pd.Series(ev).duplicated().to_numpy()
        i = int(np.argmax(seen))
        raise SchemaError(path, f"event {ev[i]} appears twice (one row per event)", line=_line(i), column="event")
    return df


def _in_stats(columns: dict[str, object]) -> np.ndarray:
    """schema.in_stats over a file's columns (its outcome and measurable, as read): the rows in the figures."""
    return np.isin(np.asarray(columns["outcome"], dtype=object), MEASURED) & np.asarray(columns["measurable"], dtype=bool)


def jitter_us(latency_us: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """The jitter of Kohout's "Hardware Support for Real-Time Operating Systems" for one run in event order:
    |latency_i - latency_j| for consecutive measured events."""
    out = np.full(len(latency_us), np.nan)
    idx = np.flatnonzero(measured)
    if len(idx) > 1:
        out[idx[1:]] = np.abs(np.diff(latency_us[idx]))
    return out


def read_run(csv_path: Path | str, run: str | None = None) -> RunSet:
    csv_path = Path(csv_path)
    if csv_path.suffix == ".json":
        csv_path = csv_path.with_suffix(".csv")
    meta = read_sidecar(csv_path.with_suffix(".json"))
    check_csv_hash(csv_path, meta)
    df = _read_csv_checked(csv_path, int(meta["format_version"]), journal=meta.get("incomplete") is True)
    if not df["event"].is_monotonic_increasing:
        df = df.sort_values("event", kind="stable").reset_index(drop=True)
    name = run or str(meta.get("name") or csv_path.stem)
    meta = dict(meta, _csv=str(csv_path))
    tb = meta["timebase"]
    df.insert(0, "run", name)
    df["load"] = load_condition(meta["config"].get("load"))
    df["profiler_kind"] = profiler_kind(meta)
    df["latency_ticks"] = df["latency_counts"].to_numpy(dtype=float, na_value=np.nan) / float(tb["tick_counts"])
    measured = df["outcome"].isin(MEASURED).to_numpy() & df["measurable"].to_numpy()
    df["jitter_us"] = jitter_us(df["latency_us"].to_numpy(), measured)
    return RunSet(df, {name: meta})


def iter_runs(directory: Path | str, recursive: bool = True) -> Iterator[Path]:
    """find_runs one run at a time: a sidecar is parsed only when the caller asks for the next run, so
    `any(iter_runs(d))` stops at the first."""
    directory = Path(directory)
    for p in sorted(directory.rglob("*.csv") if recursive else directory.glob("*.csv")):
        js = p.with_suffix(".json")
        if js.is_file():
            try:
                if json.loads(js.read_text()).get("format") == FORMAT:
                    yield p
            except (OSError, ValueError, AttributeError, RecursionError):
                yield p  # read_sidecar will name the file and line


def find_runs(directory: Path | str, recursive: bool = True) -> list[Path]:
    """NAME.csv files under DIRECTORY (recursively, or only those directly in it) that have a NAME.json sidecar
    of this format."""
    return list(iter_runs(directory, recursive))


def run_files(paths: Path | str | Iterable[Path | str]) -> list[Path]:
    """The NAME.csv of each run PATHS names: a run (NAME.csv or NAME.json), a directory of runs, or several of
    either. FileNotFoundError for a path that is neither, or a directory without runs."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            got = find_runs(p)
            if not got:
                raise FileNotFoundError(f"{p}: no runs (NAME.csv with a NAME.json sidecar) in this directory")
            files += got
        elif p.suffix in (".csv", ".json") and not (p.with_suffix(".csv").exists() or p.exists()):
            raise FileNotFoundError(f"{p}: no such file")
        elif p.suffix in (".csv", ".json") or p.with_suffix(".csv").exists():
            files.append(p.with_suffix(".csv"))
        else:
            raise FileNotFoundError(f"{p}: neither a run (NAME.csv + NAME.json) nor a directory of runs")
    return files


def read_runs(paths: Path | str | Iterable[Path | str], label_kinds: bool = False) -> RunSet:
    """One run (NAME.csv or NAME.json), a directory of runs, or several of either.

    Returns RunSet(df, meta). Raises SchemaError naming file, line and column when a file breaks the format.
    LABEL_KINDS: each run not stamped by the AVR profiler is named kind_label's "NAME [8051]", so that the 8051
    demo's results/8051/NAME never takes the name of the AVR run results/NAME (the lab notebook).
    """
    frames, meta = [], {}
    for f in run_files(paths):
        _add_run(f, frames, meta, label_kinds)
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return typed_runset(df, meta)


class Readings(NamedTuple):
    """What read_each got: the runs it could read (None: not one) and one line per run it could not."""

    data: RunSet | None
    problems: list[str]


def read_each(files: Iterable[Path], label_kinds: bool = False) -> Readings:
    """The runs FILES (run_files'), each read on its own: a run the reader refuses (SchemaError: the format, text
    that is not UTF-8; a file it cannot open) is a line of `problems` naming the file, and the others are read.
    LABEL_KINDS as read_runs'."""
    frames: list[pd.DataFrame] = []
    meta: dict[str, dict] = {}
    problems: list[str] = []
    for f in files:
        try:
            _add_run(f, frames, meta, label_kinds)
        except SchemaError as exc:
            problems.append(str(exc).replace("\n", " "))
        except (OSError, ValueError) as exc:     # not a run the reader can take apart
            problems.append(f"{f}: unreadable ({type(exc).__name__}: {exc})".replace("\n", " "))
    if not frames:
        return Readings(None, problems)
    return Readings(typed_runset(pd.concat(frames, ignore_index=True), meta), problems)


def _add_run(f: Path, frames: list[pd.DataFrame], meta: dict[str, dict], label_kinds: bool = False) -> None:
    rs = read_run(f)
    read_as, run_meta = next(iter(rs.meta.items()))
    label = (lambda n: kind_label(n, run_meta)) if label_kinds else (lambda n: n)
    name = read_as
    if label(name) in meta:  # two runs with one name: tell them apart by their path
        name = str(f.with_suffix(""))
    name = label(name)
    if name != read_as:
        rs = RunSet(rs.df.assign(run=name), {name: run_meta})
    frames.append(rs.df)
    meta.update(rs.meta)


def typed_runset(df: pd.DataFrame, meta: dict[str, dict]) -> RunSet:
    """The RunSet of DF, read_run's frames of the runs in META concatenated, with the column types of every
    RunSet: `run` categorical in META's order, mode/outcome/reason of the schema's categories, profiler_kind
    ordered by PROFILER_KINDS and load by LOAD_CONDITIONS (an unknown name after them, sorted)."""
    df["run"] = pd.Categorical(df["run"], categories=list(meta))
    for name, dtype in (("mode", MODE_DTYPE), ("outcome", OUTCOME_DTYPE), ("reason", REASON_DTYPE)):
        df[name] = df[name].astype(dtype)
    for column, known in (("profiler_kind", PROFILER_KINDS), ("load", LOAD_CONDITIONS)):
        # groups in this order; an unknown name after them
        df[column] = pd.Categorical(df[column], categories=list(known) + sorted(
            set(df[column].astype(str)) - set(known)))
    return RunSet(df, meta)
