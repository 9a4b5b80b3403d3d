"""A logic analyzer's capture of the wires between the boards, lined up with a run's CSV: on boards, where one
can be had, the event port and the timecode as the analyzer saw them (sigrok's formats) beside what the run
recorded.

Probe the timecode (profiler PA0..7 = executor PK0..7), the event id (PC0..2) and the strobe (executor PC3 =
profiler PL1), capture with PulseView or sigrok-cli into a sigrok session file (.sr), name the channels
timecode0..7, event_id0..2 and strobe (or give `channels`), and:

    python -m mmanalysis capture CAPTURE.sr --run RUN.csv [--channels timecode0=D0,...,strobe=D11]

Each event edge the analyzer saw is placed in its tick (the timecode it saw, unwrapped and put on the run's
extended timeline), matched to the run's event of that tick and id, and its delay from the tick's edge set
beside the profiler's latency for the same event: the analyzer checks the instrument, to its sample period.
The capture's wires become an ExecTrace (no tasks or interrupts, its clock the sample rate), so the same
functions read both.
"""

from __future__ import annotations

import configparser
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from .exectrace import ExecTrace, event_edges, extended_ticks, timecode_edges

WIRES = tuple(f"timecode{i}" for i in range(8)) + ("event_id0", "event_id1", "event_id2", "strobe")
UNITS = {"hz": 1, "khz": 1_000, "mhz": 1_000_000, "ghz": 1_000_000_000}


class CaptureError(ValueError):
    """A capture that cannot be used: names the file and what is wrong."""


def _samplerate(text: str, path: Path) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kMG]?Hz)?\s*", text, flags=re.IGNORECASE)
    if not m:
        raise CaptureError(f"{path}: samplerate {text!r} is not a rate (e.g. '16 MHz')")
    return int(round(float(m.group(1)) * UNITS[(m.group(2) or "hz").lower()]))


def parse_channels(text: str) -> dict[str, str]:
    """`timecode0=D0,...,strobe=D11` -> {our wire: the capture's channel}."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        ours, _, theirs = part.partition("=")
        if ours not in WIRES or not theirs:
            raise CaptureError(f"--channels: {part!r} is not WIRE=CHANNEL with WIRE one of {', '.join(WIRES)}")
        out[ours] = theirs
    return out


def read_sr(path: Path | str, channels: dict[str, str] | None = None) -> ExecTrace:
    """The wires of a sigrok session file (.sr, format version 2: a zip with `metadata` and the raw
    `logic-1-N` chunks). `channels` maps our wire names to the capture's; by default the capture's channels
    carry our names. Every named wire must be in the capture."""
    path = Path(path)
    try:
        z = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise CaptureError(f"{path}: not a sigrok session file ({exc})") from None
    with z:
        meta = configparser.ConfigParser(interpolation=None)
        try:
            meta.read_string(z.read("metadata").decode("utf-8", "replace"))
            dev = meta["device 1"]
            rate = _samplerate(dev["samplerate"], path)
            unit = int(dev.get("unitsize", "1"))
            capfile = dev.get("capturefile", "logic-1")
            names = {dev[k]: int(k[5:]) - 1 for k in dev if re.fullmatch(r"probe\d+", k)}
        except (KeyError, configparser.Error, ValueError) as exc:
            raise CaptureError(f"{path}: metadata unreadable ({exc})") from None
        want = channels or {w: w for w in WIRES if w in names}
        missing = [f"{ours} ({theirs})" for ours, theirs in want.items() if theirs not in names]
        if missing or not any(w.startswith("timecode") for w in want) or "strobe" not in want:
            raise CaptureError(f"{path}: channels {', '.join(missing) or 'timecode0..7 and strobe'} not in the capture "
                               f"(it has {', '.join(names)}); name them, or give --channels")
        bits = {ours: names[theirs] for ours, theirs in want.items()}
        chunks = sorted((n for n in z.namelist() if re.fullmatch(re.escape(capfile) + r"-\d+", n)),
                        key=lambda n: int(n.rsplit("-", 1)[1]))
        if not chunks:
            raise CaptureError(f"{path}: no sample data ({capfile}-N)")
        dtype = {1: np.uint8, 2: np.dtype("<u2"), 4: np.dtype("<u4"), 8: np.dtype("<u8")}.get(unit)
        if dtype is None:
            raise CaptureError(f"{path}: unitsize {unit} is not 1, 2, 4 or 8")
        wires: list[tuple[int, str, int]] = []
        initial: dict[str, int] = {}
        offset, prev = 0, None
        for name in chunks:
            raw = z.read(name)
            data = np.frombuffer(raw[: len(raw) - len(raw) % unit], dtype=dtype)
            if not data.size:
                continue
            if prev is None:                      # the levels at the first sample: where the capture began
                first = int(data[0])
                initial = {w: (first >> b) & 1 for w, b in bits.items()}
                prev = data[0]
            joined = np.concatenate(([prev], data))
            at = np.flatnonzero(joined[1:] != joined[:-1])
            for i in at:
                old, new = int(joined[i]), int(joined[i + 1])
                diff = old ^ new
                for w, b in bits.items():
                    if diff >> b & 1:
                        wires.append((offset + int(i), w, (new >> b) & 1))
            prev = data[-1]
            offset += data.size
    return ExecTrace(path, rate, {}, {}, wires=wires, start=0, end=max(offset - 1, 0), initial=initial)


def line_up(tr: ExecTrace, run: Any) -> Any:
    """One row per event edge the analyzer saw: its sample, its tick (the run's extended timecode), its
    id, its delay after the tick's edge (us, to the sample period), and the run's event of that tick and
    id with the profiler's latency for it and the difference. `run` is the run's CSV as a DataFrame."""
    import pandas as pd

    ticks = extended_ticks(tr, run["scheduled_tc"].astype(int))
    cyc = np.array([c for c, _ in ticks], dtype=np.int64)
    by = {(int(r.scheduled_tc), int(r.event_id)): r for r in run.itertuples(index=False)}
    rows = []
    for c, eid in event_edges(tr):
        i = int(np.searchsorted(cyc, c, side="right")) - 1
        if i < 0:
            continue
        tick = ticks[i][1]
        ev = by.get((tick, eid))
        la_us = (c - ticks[i][0]) * 1e6 / tr.cpu_hz
        lat = float(ev.latency_us) if ev is not None and ev.latency_us == ev.latency_us else float("nan")
        rows.append({"sample": c, "tick": tick, "event_id": eid, "la_delay_us": round(la_us, 4),
                     "event": int(ev.event) if ev is not None else -1, "outcome": ev.outcome if ev is not None else "",
                     "latency_us": lat, "difference_us": round(la_us - lat, 4) if lat == lat else float("nan")})
    return pd.DataFrame(rows, columns=["sample", "tick", "event_id", "la_delay_us", "event", "outcome", "latency_us",
                                       "difference_us"])


def summary(lined: Any, tr: ExecTrace) -> str:
    """A few lines for the terminal: how many edges matched, and how far the analyzer and the profiler
    agree (the analyzer's resolution is one sample)."""
    m = lined[lined["event"] >= 0]
    d = m["difference_us"].dropna()
    res = 1e6 / tr.cpu_hz
    lines = [f"{len(lined)} event edges in the capture ({tr.cpu_hz / 1e6:g} MS/s: {res:.4g} us a sample), "
             f"{len(m)} matched to the run's events, {len(timecode_edges(tr))} timecode edges"]
    if len(d):
        lines.append(f"analyzer minus profiler: median {d.median():+.3f} us, min {d.min():+.3f}, max {d.max():+.3f} "
                     f"(within one sample: {int((d.abs() <= res + 1e-9).sum())} of {len(d)})")
    return "\n".join(lines)
