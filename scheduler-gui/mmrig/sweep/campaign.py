"""`mmrig sweep`: a campaign, a grid of runs over schedule distance, rate, baud, dispatch path and load
condition, in one folder (docs/campaigns.md). Headless: no Qt, no bench. The entry point (`mmrig.cli`)
hands in the function that runs one point (`mmrig.sweep.task.run_point`); this module plans the grid,
knows which points are done, runs the rest and keeps the campaign's sidecar.

- every point is a normal run: `FOLDER/points/<point>.csv` + `.json` (docs/data-format.md), named from its
  values (`d2-rtick-isr-idle`; `-b9600` too when a baud axis was given);
- `FOLDER/points.jsonl`: the points' record, one flat JSON line appended each time a point's state changes
  (flushed at once, fsynced at most every second; a line a crash cut short is dropped on the next start), the
  last line of a point is its state; `mmanalysis.sweepplots.points_table` reads it into pandas in one call;
- `FOLDER/campaign.json`: the axes, the options, the sessions, the mmrig version, the cluster, start and end
  times, the status and totals, and a snapshot of every point's entry: rewritten atomically when a session
  starts and ends and, during a run, at most every few seconds (never more than ~2 % of the client's time);
- a point is done when its CSV and JSON are on disk and the sidecar's `csv_sha256` matches the CSV
  (`mmanalysis.reader`); rerunning the same command (or `--resume --out FOLDER`) runs only the others;
- lockstep points (host-independent by construction) run in parallel on a Dask cluster (mmrig.sweep.cluster: a
  local cluster of processes, or a running Dask scheduler, `cluster="tcp://HOST:PORT"`), reached before anything
  is written; a task returns its points' files' bytes and the client writes them here, so remote workers need no
  shared filesystem; a cluster left with no worker (or a scheduler that stopped answering) for `lost_after_s`
  ends the campaign (exit 4, the points done kept);
- paced points measure the host, so they never compete for it: one at a time, in this process.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import itertools
import json
import os
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from mmanalysis.reader import check_csv_hash, read_sidecar
from mmanalysis.safefiles import appending, atomic_write, output_folder
from mmproto import PROFILER_KINDS
from mmanalysis.schema import NOMINAL_TICK_S, SchemaError

from mmsched import __version__
from mmsched.model.config import RunConfig, baud_problem
from mmsched.verdict.export import run_paths, write_sidecar
from mmsched.model.load import CONDITIONS

from mmanalysis.sweepplots import CAMPAIGN_FILE, CAMPAIGN_FORMAT, POINTS_FILE, load_campaign  # noqa: F401
from mmrig.sweep.points import (FORMAT_VERSION, SNAPSHOT_MIN_S, SNAPSHOT_POINT_S, SNAPSHOT_SHARE,  # noqa: F401
                               PointsRecord, PointStore)
from mmrig.sweep.cluster import (ClusterLost, ClusterUnreachable, RunPoint, connect, run_on_cluster,
                                 unsecured_warning)

# The paper's tick (11.0592 MHz / 12 / 65536): rates given in ticks become ms with it. Tick-aligned generation
# creates one event every round(rate / tick) ticks, so 'Nticks' means exactly N ticks for any image whose tick
# is within a third of a tick of this (the AVR profiler's default is 71.111 ms to 0.2 ppm).
NOMINAL_TICK_MS = 1000.0 * NOMINAL_TICK_S
LOADS = CONDITIONS                # the PC load conditions, as mmrig run --load takes them
DISPATCHES = ("isr", "task")
MAX_DISTANCE = 255


LOCK_FILE = "sweep.lock"     # held (flock) by the one mmrig sweep that runs the campaign in its folder
EXIT_INTERRUPTED = 130       # as a shell reports a process Ctrl-C ended: the points done are kept
EXIT_CLUSTER_LOST = 4        # no Dask worker left (or the scheduler gone) for lost_after_s: the points done are kept
LOST_AFTER_S = 10.0          # how long a cluster may have no worker / a silent scheduler before the campaign ends


class SweepError(ValueError):
    """Bad input to a sweep: one line, exit 2."""


# ---- the axes, from their text -------------------------------------------------------------------
def parse_distances(text: str) -> list[int]:
    """'1..4', '1,2,4', '2' -> sorted distinct whole ticks, 1..255 (mixed mode)."""
    out: set[int] = set()
    for part in _parts(text, "--distance"):
        m = re.fullmatch(r"(\d+)\.\.(\d+)", part)
        try:
            lo, hi = (int(m.group(1)), int(m.group(2))) if m else (int(part), int(part))
        except ValueError:
            raise SweepError(f"--distance: {part!r} is not a whole number of ticks or a range like 1..4") from None
        if lo > hi:
            raise SweepError(f"--distance: {part!r} is an empty range")
        if lo < 1 or hi > MAX_DISTANCE:
            raise SweepError(f"--distance: {part!r}: distances are 1..{MAX_DISTANCE} ticks ahead")
        out.update(range(lo, hi + 1))
    return sorted(out)


def canonical_rate(part: str) -> str:
    """'tick', '1tick' -> 'tick'; '2tick', '2ticks' -> '2ticks'; '50', '50ms', '50.0ms' -> '50ms'."""
    p = part.strip().lower()
    m = re.fullmatch(r"(\d*)ticks?", p)
    if m:
        n = int(m.group(1) or 1)
        if n < 1 or n > 255:
            raise SweepError(f"--rate: {part!r}: 1..255 ticks")
        return "tick" if n == 1 else f"{n}ticks"
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms)?", p)
    if m:
        v = float(m.group(1))
        if not 0 < v <= 60_000:
            raise SweepError(f"--rate: {part!r}: a rate in ms is > 0 and at most 60000")
        return f"{v:g}ms"
    raise SweepError(f"--rate: {part!r} is neither 'tick', 'Nticks' nor a time in ms like '50ms'")


def parse_rates(text: str) -> list[str]:
    return _distinct(canonical_rate(p) for p in _parts(text, "--rate"))


MS_GENERATIONS = ("free", "periodic")


def rate_fields(rate: str, ms_generation: str = "free") -> dict[str, Any]:
    """A rate token -> RunConfig fields. Ticks: tick-aligned generation, one event every N ticks. A time in
    ms: by default the paper's free-running scheduling timer at that period (aligned generation would round it
    to whole ticks, so 50 ms would be the same run as 'tick'); with `ms_generation` "periodic" (mixed mode) the
    executor's periodic series at that interval, moments inside ticks (docs/kilohertz.md)."""
    if rate == "tick":
        return {"rate_ms": None, "generation": "aligned"}
    if rate.endswith("ticks"):
        return {"rate_ms": round(int(rate[:-5]) * NOMINAL_TICK_MS, 6), "generation": "aligned"}
    return {"rate_ms": float(rate[:-2]), "generation": ms_generation}


def parse_choices(text: str, allowed: tuple[str, ...], option: str) -> list[str]:
    got = [p.strip().lower() for p in _parts(text, option)]
    for p in got:
        if p not in allowed:
            raise SweepError(f"{option}: unknown value {p!r} (one of {', '.join(allowed)})")
    return _distinct(got)


def parse_bauds(text: str) -> list[int]:
    out = []
    for p in _parts(text, "--baud"):
        problem = baud_problem(int(p)) if p.isdigit() else f"must be a rate in hundreds of baud, not {p!r}"
        if problem:
            raise SweepError(f"--baud {problem}")
        out.append(int(p))
    return _distinct(out)


def _parts(text: str, option: str) -> list[str]:
    parts = [p.strip() for p in str(text).split(",")]
    if not parts or any(not p for p in parts):
        raise SweepError(f"{option}: empty value in {text!r}")
    return parts


def _distinct(items) -> list:
    seen: list = []
    for i in items:
        if i not in seen:
            seen.append(i)
    return seen


# ---- the grid ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Point:
    distance: int
    rate: str
    dispatch: str
    load: str
    baud: int | None = None     # None: whatever the images run at (no baud axis given)

    @property
    def name(self) -> str:
        baud = f"-b{self.baud}" if self.baud is not None else ""
        return f"d{self.distance}-r{self.rate}{baud}-{self.dispatch}-{self.load}"

    def values(self) -> dict[str, Any]:
        return {"distance": self.distance, "rate": self.rate, "baud": self.baud, "dispatch": self.dispatch,
                "load": self.load}


@dataclass
class Plan:
    distance: list[int]
    rate: list[str] = field(default_factory=lambda: ["tick"])
    dispatch: list[str] = field(default_factory=lambda: ["isr"])
    load: list[str] = field(default_factory=lambda: ["idle"])
    baud: list[int] | None = None
    mode: str = "mixed"
    count: int = 200
    paced: bool = False
    seed: int = 1
    profiler_kind: str = "avr"  # the bench's profiler for every point (avr, or the paper's 8051)
    generation: str = "free"    # what an ms rate means: the free-running timer, or a periodic series (mixed)

    def __post_init__(self) -> None:
        if self.generation not in MS_GENERATIONS:
            raise SweepError(f"--generation: {self.generation!r} (free or periodic)")
        if self.generation == "periodic" and self.mode != "mixed":
            raise SweepError("--generation periodic is the executor's series: mixed mode only (normal mode's ms "
                             "rates faster than a tick are on a grid already)")
        if self.profiler_kind not in PROFILER_KINDS:
            raise SweepError(f"--profiler-kind: {self.profiler_kind!r} (avr or 8051)")
        if not isinstance(self.count, int) or isinstance(self.count, bool) or self.count < 1:
            raise SweepError(f"--count must be at least 1, not {self.count}")
        if self.mode not in ("mixed", "verification", "normal"):
            raise SweepError(f"--mode: {self.mode!r} (mixed, normal or verification)")
        if self.mode == "normal" and not self.paced:
            raise SweepError("--mode normal measures the PC against wall time: add --paced (lockstep never is late)")
        if not self.paced and any(x != "idle" for x in self.load):
            raise SweepError("--load: a lockstep point does not depend on the host, so a load condition changes "
                             "nothing but the campaign's speed; use --paced for " +
                             ", ".join(x for x in self.load if x != "idle"))

    @property
    def axes(self) -> dict[str, Any]:
        return {"distance": self.distance, "rate": self.rate, "baud": self.baud, "dispatch": self.dispatch,
                "load": self.load}

    @property
    def options(self) -> dict[str, Any]:
        return {"mode": self.mode, "count": self.count, "paced": self.paced, "seed": self.seed,
                "profiler_kind": self.profiler_kind, "generation": self.generation}

    def points(self) -> list[Point]:
        bauds = self.baud if self.baud else [None]
        return [Point(d, r, disp, ld, b)
                for d, r, b, disp, ld in itertools.product(self.distance, self.rate, bauds, self.dispatch, self.load)]

    def refusal(self, p: Point) -> str | None:
        """Why the scheduler refuses the point's run as given (RunConfig's one line: a rate the line cannot
        carry at the point's baud), or None. Such a point is never run: no rerun, no --resume changes it."""
        try:
            RunConfig(**self.run_fields(p))
        except (TypeError, ValueError) as exc:
            return str(exc)
        return None

    def run_fields(self, p: Point) -> dict[str, Any]:
        """The point's RunConfig fields (plain JSON values: they travel to a Dask worker)."""
        return {"mode": self.mode, "distance": p.distance, "count": self.count, "dispatch": p.dispatch,
                "load": p.load, "seed": self.seed, "name": p.name, "baud": p.baud,
                **rate_fields(p.rate, self.generation)}

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> "Plan":
        a, o = doc["axes"], doc["options"]
        return cls(distance=list(a["distance"]), rate=list(a["rate"]), dispatch=list(a["dispatch"]),
                   load=list(a["load"]), baud=list(a["baud"]) if a.get("baud") else None, mode=o["mode"],
                   count=int(o["count"]), paced=bool(o["paced"]), seed=int(o.get("seed", 1)),
                   profiler_kind=str(o.get("profiler_kind", "avr")), generation=str(o.get("generation", "free")))


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


# ---- the campaign folder (its record of the points: mmrig.sweep.points) ------------------------
@dataclass
class Campaign(PointsRecord):
    folder: Path
    plan: Plan
    doc: dict[str, Any]
    store: PointStore | None = None
    lock_fd: int | None = None
    _saved_at: float = 0.0
    _save_s: float = 0.0
    _since_save: int = 0

    def stem(self, p: Point) -> Path:
        return self.points_dir / p.name

    @classmethod
    def open(cls, folder: Path | str, plan: Plan | None) -> "Campaign":
        """The campaign in FOLDER: a new one for `plan`, or the one there (its axes and options must be the
        plan's; `plan=None`, i.e. --resume without axes: the folder's own plan)."""
        folder = Path(folder)
        path = folder / CAMPAIGN_FILE
        if path.exists():
            try:
                doc = load_campaign(folder)      # its points from the record; campaign.json's are a snapshot
            except ValueError as exc:            # not JSON, not a campaign: load_campaign's words name the file
                raise SweepError(str(exc)) from None
            except OSError as exc:
                raise SweepError(f"{path}: not a readable campaign ({exc})") from None
            try:
                old = Plan.from_doc(doc)
            except (ValueError, KeyError, TypeError) as exc:
                raise SweepError(f"{path}: not a readable campaign ({exc})") from None
            if plan is not None and (plan.axes, plan.options) != (old.axes, old.options):
                raise SweepError(f"{folder} holds a campaign with other axes or options "
                                 f"({describe(old)}); give another --out, or --resume to continue that one")
            return cls(folder, old, doc)
        if plan is None:
            raise SweepError(f"--resume: no campaign in {folder} (no campaign.json)")
        doc = {"format": CAMPAIGN_FORMAT, "format_version": FORMAT_VERSION, "name": folder.name,
               "mmrig_version": __version__, "created": now_iso(), "axes": plan.axes, "options": plan.options,
               "points": {p.name: {"values": p.values(), "state": "pending", "runs": 0} for p in plan.points()},
               "sessions": []}
        return cls(folder, plan, doc)

    def lock(self) -> None:
        """The campaign folder is this process's until `unlock`: an flock on FOLDER/LOCK_FILE (made as every file of
        ours, never through a link); SweepError naming the other sweep's pid if one holds it (two sweeps into one
        folder both ran every point)."""
        output_folder(self.folder)
        fd = appending(self.folder / LOCK_FILE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise SweepError(f"{self.folder} is in use by another mmrig sweep (pid {holder}): wait for it to end, "
                             "or give another --out") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.lock_fd = fd

    def unlock(self) -> None:
        if self.lock_fd is not None:
            os.close(self.lock_fd)         # the flock goes with it; the file stays (removing it would race)
            self.lock_fd = None

    def complete(self, p: Point) -> bool:
        """The point's CSV and JSON are on disk, the JSON is this format and names the point, and its
        csv_sha256 matches the CSV (a write cut short or another run's file is not complete)."""
        csv, js = run_paths(self.stem(p))
        if not (csv.is_file() and js.is_file()):
            return False
        try:
            meta = read_sidecar(js)
            if meta.get("csv_sha256") is None or meta.get("name") != p.name:
                return False
            check_csv_hash(csv, meta)
        except SchemaError:
            return False
        return True

    def todo(self) -> list[Point]:
        return [p for p in self.plan.points() if not self.complete(p) and self.plan.refusal(p) is None]

    def record(self, p: Point, got: dict[str, Any], attempts: int = 1) -> dict[str, Any]:
        """One point's result from `run_point` (wherever it ran, `attempts` times: a point Dask ran again after
        its worker died counts each start): its files written here (the CSV, then the sidecar with the
        campaign's identity added; the CSV's hash is the worker's), its line appended to points.jsonl."""
        entry = self.doc["points"].setdefault(p.name, {"values": p.values(), "state": "pending", "runs": 0})
        entry["runs"] = int(entry.get("runs", 0)) + max(1, int(attempts))
        for k in ("worker", "mmrig_version", "started", "ended", "wall_s"):
            entry[k] = got.get(k)
        if got.get("error"):
            entry.update(state="failed", error=got["error"], valid=False)
            self.append(p.name, entry)
            self.maybe_save()
            return entry
        stem = self.stem(p)
        csv, js = run_paths(stem)
        # not fsynced: complete() checks the pair's hash at every start, so a pair a crash cut short runs again
        atomic_write(csv, got["csv"], fsync=False)
        sidecar = json.loads(got["json"])
        sidecar.setdefault("config", {})["out"] = str(stem)
        sidecar["campaign"] = {"name": self.doc["name"], "point": p.name, "values": p.values(),
                               "worker": got.get("worker")}
        write_sidecar(js, sidecar, fsync=False)
        summary = sidecar.get("summary") or {}
        entry.update(state="done", error=None, valid=bool(sidecar.get("valid")),
                     invalid_reason=sidecar.get("invalid_reason"),
                     files={"csv": str(csv.relative_to(self.folder)), "json": str(js.relative_to(self.folder))},
                     baud=(sidecar.get("config") or {}).get("baud"),
                     skipped=((sidecar.get("counters") or {}).get("scheduler") or {}).get("generator_skipped"),
                     virtual_s=(sidecar.get("bench") or {}).get("virtual_s"),
                     summary={k: summary.get(k) for k in ("events", "outcomes", "on_time_share", "n", "mean_us",
                                                           "p50_us", "p99_us", "max_us", "unmeasurable")})
        self.append(p.name, entry)
        self.maybe_save()
        return entry

    def mark_existing(self) -> list[str]:
        """Points found complete on disk (a resumed campaign) are 'done'; one whose files went missing or do not
        match is 'pending' again; a point the scheduler refuses is 'refused'. Reads only; returns the names
        whose state changed (the record gets a line for each when the campaign begins)."""
        changed = []
        for p in self.plan.points():
            e = self.doc["points"].setdefault(p.name, {"values": p.values(), "state": "pending", "runs": 0})
            before = e.get("state")
            refused = self.plan.refusal(p)
            if refused is not None:
                e.update(state="refused", error=refused, valid=None)
            elif self.complete(p):
                if e.get("state") != "done":
                    e["state"] = "done"
            elif e.get("state") == "done":
                e["state"] = "pending"       # its files went missing or do not match: it runs again
            if e.get("state") != before:
                changed.append(p.name)
        return changed


def describe(plan: Plan) -> str:
    a = plan.axes
    parts = [f"distance {','.join(map(str, a['distance']))}", f"rate {','.join(a['rate'])}"]
    if a["baud"]:
        parts.append(f"baud {','.join(map(str, a['baud']))}")
    parts += [f"dispatch {','.join(a['dispatch'])}", f"load {','.join(a['load'])}", f"count {plan.count}",
              "paced" if plan.paced else "lockstep"]
    if plan.profiler_kind != "avr":
        parts.append(f"profiler {plan.profiler_kind}")
    if plan.generation != "free":
        parts.append(f"ms rates as {plan.generation} series")
    return ", ".join(parts)


def point_line(i: int, n: int, p: Point, entry: dict[str, Any]) -> str:
    if entry.get("state") == "failed":
        return f"[{i}/{n}] {p.name}: FAILED: {entry.get('error')}"
    s = entry.get("summary") or {}
    o = s.get("outcomes") or {}
    share = s.get("on_time_share")
    on_time = f"{100 * share:.1f} %" if share is not None else "-"
    counts = "/".join(str(o.get(k, 0)) for k in ("ok", "late", "early", "missed", "lost"))
    state = "valid" if entry.get("valid") else f"INVALID: {entry.get('invalid_reason')}"
    return (f"[{i}/{n}] {p.name}: {s.get('events')} events, on time {on_time} "
            f"(ok/late/early/missed/lost {counts}), {state}, on {entry.get('worker')}")


# ---- running -------------------------------------------------------------------------------------
@dataclass
class Outcome:
    ran: list[str]
    skipped: list[str]
    invalid: list[str]
    failed: list[str]
    interrupted: bool = False
    cluster: dict[str, Any] | None = None
    cluster_lost: str | None = None     # why the campaign ended early: no worker left, or the scheduler gone

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return EXIT_INTERRUPTED
        if self.cluster_lost:
            return EXIT_CLUSTER_LOST
        return 3 if (self.invalid or self.failed) else 0


def run_campaign(camp: Campaign, run_point: RunPoint, *, workers: int | None = None, cluster: str | None = None,
                 log: Callable[[str], None] = lambda _t: None,
                 stop_requested: Callable[[], bool] = lambda: False,
                 lost_after_s: float = LOST_AFTER_S) -> Outcome:
    """Runs the campaign's points that are not complete. `run_point(fields, stem, paced=, profiler_kind=)` runs one
    (mmrig.sweep.task.run_point). Lockstep: Dask tasks of a few points each (a local cluster of `workers` processes, default the CPU
    count, or the scheduler at `cluster`); paced: one at a time here. The cluster is reached first: SweepError
    if it cannot be (nothing written, not even campaign.json). A cluster left with no worker, or whose scheduler
    stops answering, for `lost_after_s` ends the campaign (Outcome.cluster_lost, exit 4; the points done kept).
    A signal raises KeyboardInterrupt wherever the main thread is, but code there (a Dask wait) may swallow it:
    once `stop_requested()` says so, the campaign also ends after the next point (lockstep: once the points that
    came in are written, within a tenth of a second while it waits for Dask). Once the cluster answers the folder
    is the campaign's alone (`Campaign.lock`: SweepError if another sweep holds it), and its points are read
    again under the lock."""
    changed = camp.mark_existing()
    todo = camp.todo()
    all_points = camp.plan.points()
    refused = [p for p in all_points if camp.doc["points"][p.name].get("state") == "refused"]
    skipped = [p.name for p in all_points if p not in todo and p not in refused]
    if cluster and todo and not camp.plan.paced and (warning := unsecured_warning(cluster)):
        log(f"mmrig sweep: {warning}")
    try:
        conn = connect(workers, cluster) if todo and not camp.plan.paced else None
    except ClusterUnreachable as exc:
        raise SweepError(str(exc)) from None
    try:
        camp.lock()
    except BaseException:
        if conn is not None:
            conn.close()
        raise
    if todo:     # another sweep may have finished points while this one waited for its lock
        changed = sorted({*changed, *camp.mark_existing()})
        todo = camp.todo()
        skipped = [p.name for p in all_points if p not in todo and p not in refused]
    out = Outcome([], skipped, [], [])
    try:
        session: dict[str, Any] = {"started": now_iso(), "ended": None, "host": socket.gethostname(),
                                   "points_to_run": len(todo), "skipped_complete": len(skipped),
                                   "refused": len(refused)}
        if conn is not None:
            session["cluster"] = out.cluster = camp.doc["cluster"] = conn.desc
        elif todo:
            session["cluster"] = out.cluster = camp.doc["cluster"] = {
                "kind": "none", "note": "paced points run one at a time in the client"}
        camp.doc.setdefault("sessions", []).append(session)
        camp.doc["started"] = camp.doc.get("started") or session["started"]
        camp.doc["status"] = "running"
        camp.save()
        camp.open_store()
        for name in changed:
            camp.append(name, camp.doc["points"][name])
        if skipped:
            log(f"mmrig sweep: {len(skipped)} of {len(all_points)} points already complete, skipped")
        for p in refused:
            log(f"mmrig sweep: {p.name}: refused, not run: {camp.doc['points'][p.name]['error']}")
        done_i = len(skipped) + len(refused)

        def finished(p: Point, got: dict[str, Any], attempts: int = 1) -> None:
            nonlocal done_i
            entry = camp.record(p, got, attempts)
            done_i += 1
            if got.get("mmrig_version") not in (None, __version__):
                log(f"mmrig sweep: WARNING: {p.name} ran on mmrig {got['mmrig_version']} ({got.get('worker')}), "
                    f"this is {__version__}: install the same version on every worker")
            out.ran.append(p.name)
            if entry["state"] == "failed":
                out.failed.append(p.name)
            elif not entry.get("valid"):
                out.invalid.append(p.name)
            log(point_line(done_i, len(all_points), p, entry))

        try:
            if not todo:
                pass
            elif camp.plan.paced:
                for p in todo:
                    finished(p, run_point(camp.plan.run_fields(p), p.name, paced=True,
                                          profiler_kind=camp.plan.profiler_kind))
                    if stop_requested():
                        raise KeyboardInterrupt("stop requested")
            else:
                assert conn is not None
                run_on_cluster(todo, run_point, conn, name=camp.doc["name"], run_fields=camp.plan.run_fields,
                               profiler_kind=camp.plan.profiler_kind, finished=finished, log=log,
                               stop_requested=stop_requested, lost_after_s=lost_after_s)
        except KeyboardInterrupt:
            out.interrupted = True
        except ClusterLost as exc:
            out.cluster_lost = str(exc)
            session["cluster_lost"] = str(exc)
    finally:
        if conn is not None:
            conn.close()
    try:
        camp.close_store()
    finally:
        session["ended"] = now_iso()
        camp.doc["ended"] = session["ended"]
        points = camp.doc["points"]
        states = [points[p.name].get("state") for p in all_points]
        camp.doc["status"] = ("interrupted" if out.interrupted else
                              "complete" if all(s in ("done", "refused") for s in states) else "incomplete")
        camp.doc["totals"] = {
            "points": len(all_points), "done": states.count("done"), "failed": states.count("failed"),
            "refused": states.count("refused"),
            "invalid": sum(1 for p in all_points if points[p.name].get("state") == "done"
                           and not points[p.name].get("valid")),
            "virtual_s": round(sum(float(points[p.name].get("virtual_s") or 0) for p in all_points), 6)}
        try:
            camp.save()
        finally:
            camp.unlock()
    # every invalid point counts, also those of an earlier session
    out.invalid = sorted({*out.invalid, *(n for n, e in camp.doc["points"].items()
                                          if e.get("state") == "done" and not e.get("valid"))})
    return out
