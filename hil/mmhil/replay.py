"""A recorded run computed again on the bench (`mmrig replay RUN`): the same images, the PC's bytes from the run's
record of its inputs (`NAME.inputs`, mmanalysis.inputrecord) put on the nodes' lines at the cycles they entered
them, no PC in the loop (the bench's script, unpaced), and what the nodes said compared with the run's CSV, event
by event.

What is compared is what the nodes alone decide, in virtual time: each event's RESULT (the profiler's extended
timecode and counts: the latency) and, in mixed mode, its ACK (the executor's tick and phase), or the executor's
refusal of a missed one (its ERROR's tick). Where the bench is
exact they are identical; a difference names the first event that differs and what may explain it (an image
whose hash is not the record's, a record that lost reads, the bench's own injections: normal mode's calibration
probes are the bench's, not the PC's bytes, and are not in the record).
"""

from __future__ import annotations

import io
import json
import math
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import mmproto as mp
from mmanalysis.csvsafe import write_frame
from mmanalysis.inputrecord import InputRecord, read as read_record
from mmanalysis.safefiles import atomic_write, move_into, output_problem
from mmanalysis.schema import FAULT_REASONS
from mmsched.verdict.environment import sha256

from .bench import Bench, BenchError, default_images
from .linemodel import LineModel

TICK_S = 1_137_778 / 16e6
MARGIN_S = 1.0          # after the last byte: the last events' answers, and the node's own last frames


class ReplayError(RuntimeError):
    """A run that cannot be replayed (no record, an incomplete one, a bench that would not run): one line."""


def replay_paths(keep: Path, name: str) -> dict[str, Path]:
    """Every file a replay of the run NAME writes into --keep KEEP, by what it is: the one list of them."""
    return {key: keep / f"{name}.{suffix}" for key, suffix in (
        ("trace", "replay.trace"), ("exectrace", "replay.exectrace"), ("perfetto", "replay.perfetto-trace"),
        ("vcd", "replay.vcd"), ("around_exectrace", "around.exectrace"), ("around_perfetto", "around.perfetto-trace"),
        ("around_vcd", "around.vcd"), ("vs_sim_csv", "vs-sim.csv"), ("vs_sim_png", "vs-sim.png"))}


# Injected commands a replay cannot put where the run had them, and why (docs/replay.md): the differences they
# cause are notes, not differences of the firmware.
NOT_REPRODUCED = {
    ("garbage", "in"): "a replay's bench holds every byte of the record on the line's queue from the start, so "
                       "the burst goes on the line behind all of them, not behind the few the run had queued then",
}


def not_reproduced(text: str) -> str | None:
    """Why a replay cannot reproduce the command TEXT where the run had it (None: it can)."""
    w = text.split()
    return NOT_REPRODUCED.get((w[0], w[2])) if len(w) >= 3 else None


@dataclass
class Outputs:
    """What each node said in the replay: its frames, each with the cycle its last byte reached the host, and
    the cycle its first byte did (`starts`, in the same order)."""

    frames: dict[str, list[tuple[int, mp.Message]]] = field(default_factory=dict)
    starts: dict[str, list[int]] = field(default_factory=dict)

    def tick_starts(self, char_cycles: int) -> dict[int, int]:
        """Each profiler tick's start as a global cycle, from its TIMECODE frame: the frame's first byte is
        complete one character after the tick began (pf_core.c: the tick's interrupt starts it)."""
        return {m.timecode: first - char_cycles for (_, m), first in zip(self.frames.get("profiler", []),
                                                                      self.starts.get("profiler", []))
                if isinstance(m, mp.Timecode)}

    def of(self, node: str, kind: type) -> list[tuple[int, Any]]:
        return [(c, m) for c, m in self.frames.get(node, []) if isinstance(m, kind)]


@dataclass
class Comparison:
    events: int = 0
    compared: int = 0                  # events with something the nodes decide (a RESULT or an ACK)
    identical: int = 0
    differences: list[dict[str, Any]] = field(default_factory=list)
    extra: list[tuple[int, int, int]] = field(default_factory=list)   # RESULTs of the replay no event had
    notes: list[str] = field(default_factory=list)
    excused: int = 0                   # differences a fault the replay cannot reproduce explains (noted)
    latencies: "LatencyComparison | None" = None    # with the PC's moments: each event's latency against the run

    @property
    def extra_results(self) -> int:
        return len(self.extra)

    @property
    def exact(self) -> bool:
        return not self.differences and not self.extra


def script_text(record: InputRecord) -> str:
    """The bench's --script of a record: `@CYCLE NODE baud=BAUD HEX ...` (hil/bench/uart_script.c)."""
    return "".join(f"@{r.cycle} {r.node} baud={r.baud} {' '.join(f'{b:02x}' for b in r.data)}\n" for r in record.reads)


def read_outputs(trace: Path) -> Outputs:
    """The nodes' frames from the bench's --trace: its `O CYCLE NODE HEX` lines, decoded per node."""
    decoders = {n: mp.StreamDecoder() for n in ("profiler", "executor")}
    out = Outputs({n: [] for n in decoders}, {n: [] for n in decoders})
    first: dict[str, int | None] = {n: None for n in decoders}
    for line in trace.read_text().splitlines():
        parts = line.split()
        if len(parts) != 4 or parts[0] != "O" or parts[2] not in decoders:
            continue
        cycle, node = int(parts[1]), parts[2]
        for b in bytes.fromhex(parts[3]):
            if first[node] is None and b != 0:
                first[node] = cycle
            for got in decoders[node].feed(bytes([b])):
                if got.message is not None:
                    out.frames[node].append((cycle, got.message))
                    out.starts[node].append(first[node] if first[node] is not None else cycle)
            if b == 0:
                first[node] = None
    return out


def compare(rows: list[dict[str, Any]], out: Outputs, tc_offset: int) -> Comparison:
    """Each event of the run against the replay's RESULTs and ACKs (see the module)."""
    c = Comparison(events=len(rows))
    results = out.of("profiler", mp.Result)
    fire = {m.tag: m for _, m in results if m.flags & mp.RESULT_FLAG_FIRE}
    edges = {(m.event_id, m.timecode, m.counts): m for _, m in results if not m.flags & mp.RESULT_FLAG_FIRE}
    acks: dict[int, list[mp.Ack]] = {}
    for _, m in out.of("executor", mp.Ack):
        acks.setdefault(m.tag, []).append(m)
    refusals: dict[int, list[mp.Error]] = {}
    for _, m in out.of("executor", mp.Error):
        if m.ref_type == mp.Schedule.TYPE:
            refusals.setdefault(m.ref_tag, []).append(m)
    used: set[tuple[int, int, int]] = set()
    for row in rows:
        what: list[str] = []
        checked = False
        if _present(row.get("result_tc")):
            checked = True
            tc, counts = int(row["result_tc"]), int(row["result_counts"])
            if row["mode"] == "normal":
                m = fire.get(int(row["tag"]))
                if m is None or (m.timecode, m.counts) != (tc, counts):
                    what.append(f"RESULT of tag {row['tag']}: run ({tc}, {counts}), replay "
                                + ("none" if m is None else f"({m.timecode}, {m.counts})"))
            else:
                key = (int(row["event_id"]), tc, counts)
                if key in edges:
                    used.add(key)
                else:
                    what.append(f"RESULT (id {key[0]}, tick {tc}, counts {counts}) not in the replay")
        if row["mode"] != "normal" and _present(row.get("ack_tc")) and _present(row.get("ack_phase")):
            checked = True
            mine = acks.get(int(row["tag"]), [])
            want = (int(row["ack_tc"]) - tc_offset, float(row["ack_phase"]))
            if not any((a.timecode, round(a.phase / 65536, 6)) == want for a in mine):
                what.append(f"ACK of tag {row['tag']}: run tick {want[0]} phase {want[1]}, replay "
                            + (", ".join(f"{a.timecode} {round(a.phase / 65536, 6)}" for a in mine) or "none"))
        elif row["mode"] != "normal" and row["outcome"] == "missed" and _present(row.get("ack_tc")):
            # refused by the executor (its ERROR: the reason and the tick it was refused in)
            checked = True
            mine = refusals.get(int(row["tag"]), [])
            if not any(e.timecode == int(row["ack_tc"]) - tc_offset for e in mine):
                what.append(f"refusal of tag {row['tag']} ({row.get('reason')}): run tick {int(row['ack_tc']) - tc_offset}"
                            ", replay " + (", ".join(str(e.timecode) for e in mine) or "none"))
        if checked:
            c.compared += 1
            if what:
                c.differences.append({"event": int(row["event"]), "tick": int(row["scheduled_tc"]),
                                      "what": "; ".join(what)})
            else:
                c.identical += 1
    if rows and rows[0]["mode"] != "normal":
        c.extra = sorted(set(edges) - used, key=lambda k: (k[1], k[2]))
    return c


def lost_results(c: Comparison, rows: list[dict[str, Any]], timeout_ticks: int) -> None:
    """The replay's RESULTs that belong to events the run ended lost to a fault of the rig (a stuck timecode
    wire, a reset): a run keeps no RESULT of a lost event, so they match no row, yet the replay made them as the
    run did. Each such RESULT (the event's id, within its timeout of its tick) is taken off `extra`, in a note."""
    claimed: dict[str, int] = {}
    for row in rows:
        if row["outcome"] != "lost" or row.get("reason") not in FAULT_REASONS or _present(row.get("result_tc")):
            continue
        for key in c.extra:
            if key[0] == int(row["event_id"]) and abs(key[1] - int(row["scheduled_tc"])) <= timeout_ticks:
                c.extra.remove(key)
                claimed[str(row["reason"])] = claimed.get(str(row["reason"]), 0) + 1
                break
    if claimed:
        n = sum(claimed.values())
        c.notes.append(f"{n} RESULT{'s' if n != 1 else ''} of the replay belong{'s' if n == 1 else ''} to events the run ended lost to a "
                       f"fault of the rig ({', '.join(f'{k} {v}' for k, v in sorted(claimed.items()))}): a run keeps "
                       "no RESULT of a lost event; not differences")


def excuse_faults(c: Comparison, commands: list[tuple[int, str]], starts: dict[int, int]) -> None:
    """Differences and extra RESULTs from the tick of the first injected command the replay cannot reproduce
    (NOT_REPRODUCED) on are notes that name it and why, not differences: the firmware is not what differs."""
    bad = [(cycle, text, why) for cycle, text in commands if (why := not_reproduced(text)) is not None]
    if not bad or not starts:
        return
    cycle, text, why = bad[0]
    tick = max((t for t, at in starts.items() if at <= cycle), default=min(starts))
    later = [d for d in c.differences if d.get("tick", tick) >= tick]
    extra = [k for k in c.extra if k[1] >= tick]
    c.differences = [d for d in c.differences if d not in later]
    c.extra = [k for k in c.extra if k not in extra]
    c.excused = len(later) + len(extra)
    what = ", ".join(x for x in (f"{len(later)} difference{'s' if len(later) != 1 else ''}" if later else "",
                                 f"{len(extra)} extra RESULT{'s' if len(extra) != 1 else ''}" if extra else "") if x)
    c.notes.append(f"not reproduced: `{text}` at cycle {cycle:,} (tick {tick}): {why}; from that tick on "
                   + (f"{what} not counted" + (f" (first: event {later[0]['event']}: {later[0]['what']})"
                                               if later else "") if what else "nothing differed")
                   + (f"; {len(bad) - 1} more such command{'s' if len(bad) > 2 else ''}" if len(bad) > 1 else ""))


def _present(v: Any) -> bool:
    return v is not None and v != "" and not (isinstance(v, float) and math.isnan(v))


def around_event(rows: list[dict[str, Any]], around: str) -> dict[str, Any]:
    """The row `--around` names: an event number, `worst` (the measured event with the largest latency) or
    `late` (the first late or missed). ValueError naming what is not there."""
    if around == "worst":
        measured = [r for r in rows if r["outcome"] in ("ok", "late") and _present(r.get("latency_us"))]
        if not measured:
            raise ValueError("--around worst: the run has no measured event")
        return max(measured, key=lambda r: r["latency_us"])
    if around == "late":
        row = next((r for r in rows if r["outcome"] in ("late", "missed")), None)
        if row is None:
            raise ValueError("--around late: no event of the run is late or missed")
        return row
    if not around.isdigit() or not 0 <= int(around) < len(rows):
        raise ValueError(f"--around {around}: an event number 0..{len(rows) - 1}, worst or late")
    return next(r for r in rows if int(r["event"]) == int(around))


def trace_window(record: InputRecord, bench_options: dict[str, Any], cycles: tuple[int, int],
                 paths: dict[str, Path], rows: Any) -> dict[str, Any]:
    """The replay again in lockstep, the executor traced and the wires' VCD on only for `cycles`: files that
    hold what is needed around the event, nothing else (moved out of the bench's private run folder into
    `paths`' around_* names, as every file of ours is placed)."""
    with tempfile.TemporaryDirectory(prefix="mmrig-replay-window-") as name:
        tmp = Path(name)
        script = tmp / "inputs.script"
        atomic_write(script, script_text(record).encode(), fsync=False)
        bench = Bench(lockstep=True, paced=False, script=script, run_dir=tmp / "run", **bench_options)
        exec_trace, vcd = paths["around_exectrace"], paths["around_vcd"]
        try:
            bench.start()
            bench.grant(cycles[0], frame=False)
            bench.exec_trace(True, "around.exectrace")
            bench.vcd(True, Path("around.vcd"))
            bench.grant(cycles[1], frame=False)
            got = bench.exec_trace(False)
            bench.vcd(False)
            if got is not None and got.is_file():
                move_into(got, exec_trace)
            vcd_in = tmp / "run" / "around.vcd"
            if vcd_in.is_file():
                move_into(vcd_in, vcd)
        except BenchError as exc:
            raise ReplayError(f"the bench would not trace the window: {exc}") from None
        finally:
            bench.close()
    return traced_files(exec_trace, vcd, rows, paths["around_perfetto"])


def tick_one_cycle(bench_options: dict[str, Any]) -> int:
    """The global cycle the profiler's tick 1 begins at on this bench (its port's first change after boot, from
    a short run with no input): a record on the profiler's time base starts there less one tick."""
    with tempfile.TemporaryDirectory(prefix="mmrig-replay-ticks-") as tmp:
        trace = Path(tmp) / "ticks.trace"
        bench = Bench(paced=False, trace=trace, until_s=0.5, **bench_options)
        try:
            bench.start()
            bench.wait(timeout=120.0)
        except BenchError as exc:
            raise ReplayError(f"the bench would not run: {exc}") from None
        finally:
            bench.close()
        lines = trace.read_text().splitlines()
    for line in lines:
        parts = line.split()
        if len(parts) == 4 and parts[0] == "W" and parts[2].startswith("timecode"):
            return int(parts[1])
    raise ReplayError("the profiler's timecode port never changed in the bench's first 0.5 s")


def on_bench_cycles(record: InputRecord, bench_options: dict[str, Any]) -> InputRecord:
    """A record on the profiler's time base (a board run's, `time` "profiler") as global cycles of this bench."""
    zero = tick_one_cycle(bench_options) - int(record.header.get("tick_counts") or 1_137_778)
    return InputRecord(record.header, [replace(r, cycle=zero + r.cycle) for r in record.reads])


@dataclass
class LatencyComparison:
    """A board run (or its stand-in) against the simulator with the same schedule and PC moments: per event, the
    run's latency, the simulator's and their difference (us)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    unmatched: int = 0                  # events the run measured and the simulator has no RESULT for

    def summary(self) -> dict[str, Any]:
        d = [r["diff_us"] for r in self.rows]
        worst = sorted(self.rows, key=lambda r: -abs(r["diff_us"]))[:5]
        return {"events": len(d), "unmatched": self.unmatched, "identical": sum(x == 0 for x in d),
                "mean_diff_us": round(sum(d) / len(d), 4) if d else None,
                "max_abs_diff_us": round(max(map(abs, d)), 4) if d else None,
                "differ_most": [{"event": r["event"], "diff_us": r["diff_us"]} for r in worst if r["diff_us"]]}


def compare_latencies(rows: list[dict[str, Any]], out: Outputs, timer_hz: int, tick_counts: int) -> LatencyComparison:
    results = out.of("profiler", mp.Result)
    fire = {m.tag: m for _, m in results if m.flags & mp.RESULT_FLAG_FIRE}
    edges = {(m.event_id, m.timecode): m for _, m in results if not m.flags & mp.RESULT_FLAG_FIRE}
    lc = LatencyComparison()
    for row in rows:
        if not _present(row.get("latency_counts")):
            continue
        m = fire.get(int(row["tag"])) if row["mode"] == "normal" else edges.get((int(row["event_id"]),
                                                                                 int(row["result_tc"])))
        if m is None:
            lc.unmatched += 1
            continue
        sim = ((m.timecode - int(row["scheduled_tc"])) * tick_counts + m.counts - int(row.get("due_counts") or 0))
        sim_us = round(sim * 1e6 / timer_hz, 4)
        run_us = round(int(row["latency_counts"]) * 1e6 / timer_hz, 4)
        lc.rows.append({"event": int(row["event"]), "run_us": run_us, "sim_us": sim_us,
                        "diff_us": round(sim_us - run_us, 4)})
    return lc


def write_latency_comparison(lc: LatencyComparison, csv: Path, png: Path) -> dict[str, int]:
    """CSV, NAME.vs-sim.csv (event, run_us, sim_us, diff_us), and PNG, NAME.vs-sim.png (both latencies and their
    difference per event), written as every file of ours is; each file's size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    df = pd.DataFrame(lc.rows, columns=["event", "run_us", "sim_us", "diff_us"])
    write_frame(df, csv, index=False)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    top.plot(df["event"], df["run_us"], ".", ms=4, label="the run (board, or its stand-in)")
    top.plot(df["event"], df["sim_us"], "x", ms=4, label="the simulator, same schedule and PC moments")
    top.set_ylabel("latency (us)")
    top.legend(fontsize=8)
    bottom.plot(df["event"], df["diff_us"], ".", ms=4, color="C3")
    bottom.axhline(0, color="grey", lw=0.8)
    bottom.set_ylabel("simulator - run (us)")
    bottom.set_xlabel("event")
    s = lc.summary()
    fig.suptitle(f"run against simulator: {s['events']} events, {s['identical']} with the same latency, mean difference "
                 f"{s['mean_diff_us']} us, largest {s['max_abs_diff_us']} us", fontsize=10)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write(png, buf.getvalue())
    return {csv.name: csv.stat().st_size, png.name: png.stat().st_size}


def checked_record(csv_path: Path, sidecar: dict[str, Any], pc_moments: bool) -> tuple[Path, InputRecord, list[str]]:
    """The run's record of its inputs (NAME.inputs; NAME.pc.inputs with `pc_moments` and for every board run), its
    path and the notes a reader needs (no SHA-256 to check it by, an image that is not the run's). Refused in one
    line (ReplayError, InputRecordError) when the run has none, when it is not what the sidecar says was written
    (its size, SHA-256 and reads), or when the bench's record lost reads (it cannot be replayed exactly)."""
    board = (sidecar.get("target") or {}).get("kind") == "boards"
    section = sidecar.get("pc_inputs" if pc_moments or board else "inputs")
    if not section or not section.get("file"):
        if pc_moments or board:
            raise ReplayError(f"{csv_path}: the run has no record of its PC's moments (NAME.pc.inputs: runs on a "
                              "wall clock write one)")
        raise ReplayError(f"{csv_path}: the run has no record of its inputs (a paced bench run writes NAME.inputs; "
                          "boards and lockstep runs keep none: a lockstep run is made again by running it again)")
    rec_path = csv_path.with_name(Path(str(section["file"])).name)
    record = read_record(rec_path, section)         # its size, SHA-256 and reads as the sidecar says
    notes = [] if section.get("sha256") else [f"{rec_path.name}: the sidecar holds no SHA-256 of it (a run older "
                                             "than the field): only its reads are checked"]
    at_pc = record.header.get("time") == "profiler"
    if not section.get("complete", at_pc):     # (a PC-moments record before the field kept every write)
        lost = (f"{section.get('dropped')} of the PC's first writes dropped: its links keep their last 65,536"
                if at_pc else f"{section.get('dropped')} reads dropped by the bench, {section.get('missing')} "
                              "without their bytes")
        raise ReplayError(f"{rec_path}: the record is incomplete ({lost}): it cannot be replayed exactly")
    images = default_images((record.header.get("target") or {}).get("profiler_kind") or "avr")
    for name, want in (record.header.get("images") or {}).items():
        path = images.get(name)
        got = sha256(path) if path else None
        if want and got != want:
            notes.append(f"the {name} image is not the run's ({path}: sha256 {str(got)[:12]}, the run's {want[:12]}): "
                         "a difference may be the image's")
    return rec_path, record, notes


def check_outputs(paths: dict[str, Path]) -> None:
    """ReplayError naming the first of PATHS no file can be made at (its folder, a FIFO or a device at its name):
    said before the bench runs, not after the replay."""
    for path in paths.values():
        if (problem := output_problem(path)) is not None:
            raise ReplayError(f"cannot write {path}: {problem}")


def replay(csv_path: Path, trace_dir: Path | None = None, traced: bool = False, around: str | None = None,
           window_ms: float = 71.111, pc_moments: bool = False, vcd: bool = False) -> tuple[Comparison, dict[str, Any]]:
    """Replays the run whose CSV is `csv_path` (its sidecar and record beside it); the comparison and the
    figures of the replay (wall seconds against the run's virtual seconds, the files written). `traced`: the
    executor's trace of the whole replay too (tasks, interrupts, pins: hil/bench/exectrace.h), as
    NAME.replay.exectrace and NAME.replay.perfetto-trace in `trace_dir`, and the wires' VCD. Everything that can
    stop it is refused (ReplayError, InputRecordError: one line) before the bench runs: a record that does not
    match what the sidecar says it wrote, a window wider than the replay, a file that cannot be made."""
    from mmanalysis import read_run

    run = read_run(csv_path)
    sidecar = next(iter(run.meta.values()))
    rec_path, record, notes = checked_record(csv_path, sidecar, pc_moments)
    by_pc = record.header.get("time") == "profiler"
    target = record.header.get("target") or {}
    kind = target.get("profiler_kind") or "avr"
    commands = [(int(c), str(t)) for c, t in record.header.get("commands") or []]
    ppm = target.get("ppm") or {}
    # the run's USB-serial line model too: the record holds the PC's writes, which the model hands on at USB frames
    bench_options = {"baud": 9600, "profiler_kind": kind, "ppm_profiler": int(ppm.get("profiler") or 0),
                     "ppm_executor": int(ppm.get("executor") or 0), "arduino": bool(target.get("arduino")),
                     "line_model": LineModel.from_params(target.get("line_model")).spec}
    rows = run.df.to_dict("records")
    config = sidecar.get("config") or {}
    until = record.last_cycle / 16e6 + MARGIN_S + int(config.get("timeout_ticks") or 14) * TICK_S
    if around is not None:
        around_event(rows, around)                  # an event that is not there: said before anything runs
        if not (math.isfinite(window_ms) and 0 < window_ms <= until * 1000):
            raise ReplayError(f"--window-ms {window_ms:g}: the window is 0 < MS <= the whole replay "
                              f"({until * 1000:.0f} ms); --trace traces all of it")
    paths = replay_paths(trace_dir, csv_path.stem) if trace_dir is not None else None
    if paths is not None:
        wanted = ["trace"] + (["exectrace", "perfetto"] if traced else []) + (["vcd"] if traced or vcd else []) \
            + (["around_exectrace", "around_perfetto", "around_vcd"] if around is not None else []) \
            + (["vs_sim_csv", "vs_sim_png"] if by_pc else [])
        check_outputs({key: paths[key] for key in wanted})
    if by_pc:
        record = on_bench_cycles(record, bench_options)
    with tempfile.TemporaryDirectory(prefix="mmrig-replay-") as tmp_name:
        tmp = Path(tmp_name)
        if paths is None:
            paths = replay_paths(tmp, csv_path.stem)
        script = tmp / "inputs.script"
        atomic_write(script, script_text(record).encode(), fsync=False)
        exec_trace = paths["exectrace"] if traced else None
        vcd_path = paths["vcd"] if traced or vcd else None
        bench = Bench(paced=False, script=script, trace=paths["trace"], until_s=round(until, 6),
                      exec_trace_file=exec_trace, vcd_file=vcd_path, **bench_options)
        if commands and not by_pc:
            bench.lockstep, bench.until_s = True, None   # the run's commands at their cycles, between grants
        t0 = time.monotonic()
        try:
            bench.start()
            if bench.lockstep:
                for cycle, text in commands:
                    bench.grant(cycle, frame=False)
                    bench.control(text)
                bench.grant(round(until * 16e6), frame=False)
            else:
                bench.wait(timeout=max(120.0, until * 4))
        except BenchError as exc:
            raise ReplayError(f"the bench would not run the replay: {exc}") from None
        finally:
            bench.close()
        wall = time.monotonic() - t0
        tc_offset = int(((sidecar.get("counters") or {}).get("scheduler") or {}).get("tc_offset", 0))
        outputs = read_outputs(paths["trace"])
        result = compare(rows, outputs, tc_offset)
        result.notes = notes
        starts = outputs.tick_starts(round(10 * 16e6 / int(config.get("baud") or 9600)))
        lost_results(result, rows, int(config.get("timeout_ticks") or 14))
        if not by_pc:
            excuse_faults(result, commands, starts)
        if by_pc:
            tb = sidecar.get("timebase") or {}
            lc = compare_latencies(rows, outputs, int(tb.get("timer_hz") or 16_000_000),
                                   int(tb.get("tick_counts") or 1_137_778))
            result.latencies = lc
            result.notes.append("the PC's moments placed by the run's tick fit (as a board run knows them), not the "
                                "bench's cycles: latencies compared, not identity")
        if commands:
            result.notes.append(f"{len(commands)} commands that changed the simulation issued again at their cycles "
                                f"({', '.join(sorted({t.split()[0] for _, t in commands}))})")
        figures: dict[str, Any] = {"wall_s": round(wall, 3), "virtual_s": round(until, 3),
                                   "run_wall_s": (sidecar.get("bench") or {}).get("wall_s"),
                                   "trace": str(paths["trace"]), "record_bytes": rec_path.stat().st_size,
                                   "reads": len(record.reads)}
        if by_pc and result.latencies is not None:
            figures["vs_sim"] = result.latencies.summary()
            if trace_dir is not None:
                figures.setdefault("files", {}).update(
                    write_latency_comparison(result.latencies, paths["vs_sim_csv"], paths["vs_sim_png"]))
        if exec_trace is not None:
            figures["files"] = traced_files(exec_trace, vcd_path, run.df, paths["perfetto"])
        elif vcd_path is not None and vcd_path.is_file():
            figures.setdefault("files", {})[vcd_path.name] = vcd_path.stat().st_size
        if around is not None:
            row = around_event(rows, around)
            tick = int(row["scheduled_tc"])
            if tick not in starts:
                raise ReplayError(f"--around: tick {tick} of event {row['event']} has no TIMECODE in the replay")
            moment = starts[tick] + int(row.get("due_counts") or 0)
            half = round(window_ms * 16e3)
            cycles = (max(0, moment - half), min(round(until * 16e6), moment + half))
            figures["around"] = {"event": int(row["event"]), "cycles": list(cycles), "window_ms": window_ms}
            figures.setdefault("files", {}).update(trace_window(record, bench_options, cycles, paths, run.df))
    return result, figures


def traced_files(exec_trace: Path, vcd: Path | None, rows: Any, perfetto: Path) -> dict[str, Any]:
    """The replay's executor trace as a Perfetto trace (with the run's events), and each file's size."""
    from mmanalysis import exectrace, perfettotrace

    files: dict[str, Any] = {}
    if exec_trace.is_file():
        try:
            perfettotrace.write(exectrace.read(exec_trace), perfetto,
                                rows[["event", "tag", "event_id", "scheduled_tc", "outcome", "reason", "latency_us"]])
        except (exectrace.ExecTraceError, OSError, KeyError) as exc:
            files["error"] = str(exc)
    for p in (exec_trace, perfetto, vcd):
        if p is not None and p.is_file():
            files[p.name] = p.stat().st_size
    return files


def report_lines(name: str, c: Comparison, fig: dict[str, Any]) -> list[str]:
    first = c.differences[0] if c.differences else None
    same = (f"{c.compared} compared (RESULT, ACK or refusal), {c.identical} identical, {len(c.differences)} differ"
            if c.latencies is None else f"{c.identical} of {c.compared} with the same RESULT and ACK to the cycle "
            "(the PC's moments are not the bench's cycles)")
    lines = [f"replay of {name}: {c.events} events, {same}"
             + (f", {c.extra_results} RESULTs no event had" if c.extra_results else "")
             + (f" ({c.excused} not counted: a fault the replay cannot reproduce, see the note)" if c.excused else ""),
             f"replay: {fig['reads']} reads ({fig['record_bytes']} bytes of record), {fig['virtual_s']:.1f} s of virtual "
             f"time in {fig['wall_s']:.1f} s wall" + (f" (the run took {fig['run_wall_s']:.1f} s)"
                                                     if fig.get("run_wall_s") else "")]
    if first and c.latencies is None:
        lines.append(f"first difference: event {first['event']}: {first['what']}")
    lines += [f"note: {n}" for n in c.notes]
    if fig.get("vs_sim"):
        v = fig["vs_sim"]
        lines.append(f"run against simulator (the PC's moments): {v['events']} events, {v['identical']} with the same "
                     f"latency, mean difference {v['mean_diff_us']} us, largest {v['max_abs_diff_us']} us"
                     + (f", {v['unmatched']} without a RESULT in the simulator" if v["unmatched"] else "")
                     + ("; differ most: " + ", ".join(f"event {d['event']} {d['diff_us']:+} us"
                                                      for d in v["differ_most"]) if v["differ_most"] else ""))
    if fig.get("around"):
        a = fig["around"]
        lines.append(f"around event {a['event']}: cycles {a['cycles'][0]:,} .. {a['cycles'][1]:,} "
                     f"(+-{a['window_ms']:g} ms of its moment)")
    for f, size in (fig.get("files") or {}).items():
        lines.append(f"traced: {f} ({size:,} bytes)" if f != "error" else f"trace: {size}")
    return lines


def as_json(name: str, c: Comparison, fig: dict[str, Any]) -> str:
    return json.dumps({"run": name, "events": c.events, "compared": c.compared, "identical": c.identical,
                       "differences": c.differences[:100], "extra_results": c.extra_results, "excused": c.excused,
                       "exact": c.exact,
                       "notes": c.notes, **fig})


__all__ = ["Comparison", "ReplayError", "as_json", "compare", "read_outputs", "replay", "replay_paths", "report_lines",
           "script_text"]
