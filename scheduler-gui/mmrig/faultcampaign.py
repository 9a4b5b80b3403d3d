"""The fault campaign (`make faults`): every mode x every fault class on the virtual bench, each a
whole run with a fault injected through the bench's control channel, checked for what an instrument owes its
user when its own parts fail:

1. the run completes (no hang), makes every event it was asked for (a run with no events, or fewer, is never a
   pass: a fault that stopped the run is a finding) and its accounting invariant holds;
2. no event is blamed on the system under test: an event ends ok (or late, in normal mode, where the PC is
   what is measured) or lost with a reason that names a fault of the class injected (`FaultClass.reasons`);
3. the run is invalid with a reason of the class, or else nothing it measured was touched (a fault on a node
   the mode does not use);
4. the counters agree with what was injected: a node (or the scheduler's decoder) counts at least one bad
   frame when the bench spoiled bytes it received, and no more than two per spoiled byte (a byte corrupted
   into a delimiter splits one frame into two bad ones), and a node's counters must have been read at all;
   a reset is seen as exactly one reset; a delay held back at least one frame, and named it;
5. events outside the fault's window are on time: those due before it began, and those created once the rig
   had RECOVERY_TICKS to recover after it ended, except the first event after it (its frame is the first the
   node decodes after garbage, which a burst with no delimiter at its end spoils).

The fault starts `at_tick` ticks after the run's events began (normal mode calibrates for a few seconds
before: a fault then would touch no event).

Checks 2 and 5 judge the measurable events only: an event a host stall displaced a byte of (paced normal runs on a busy host)
keeps its outcome but is marked not measurable, and the rig stands behind neither its outcome nor its figure;
the campaign counts them (`unmeasurable`), and a run with too many of them is invalid for bench lag.

Mixed and verification runs are lockstep (the outcome never depends on this host's speed, so a failure is a
fault of the rig's logic, reproducible by its seed); normal runs are paced (lockstep refuses normal mode).

    python -m mmrig.faultcampaign [--quick] [--count N] [--modes mixed,...] [--classes reset-executor,...]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmanalysis.safefiles import atomic_write
from mmsched.model.config import RunConfig
from mmsched.model.result import RunResult
from mmsched.run.runner import Runner

from mmrig.endpoints import Target, choose_endpoint

RECOVERY_TICKS = 12        # a node set up again and the offset learned: 3 ticks of resync, retries, margin
BYTE_KINDS = ("rx_bad_crc", "rx_bad_cobs", "rx_too_long", "rx_too_short", "rx_bad_message")
DECODER_KINDS = ("bad_crc", "bad_cobs", "too_long", "too_short", "unknown_type", "bad_length")


@dataclass(frozen=True)
class FaultClass:
    name: str
    start: tuple[str, ...]              # bench control commands at the fault's start
    stop: tuple[str, ...] = ()          # ... and at its end
    ticks: int = 0                      # how long it lasts (0: a moment)
    reasons: frozenset[str] = frozenset()   # what a touched event may end lost with
    nodes: tuple[str, ...] = ("profiler", "executor")   # the nodes it hits (normal mode uses the profiler only)
    byte_fault: str | None = None       # the bench status counter of spoiled bytes, if it spoils bytes
    resets: str | None = None           # the node it resets
    delays: bool = False                # it holds the PC's bytes back (named `injected_delay`)


LINE = frozenset({"seq_gap", "no_answer"})


def _both_ways(kind: str, rate: float) -> tuple[str, ...]:
    return tuple(f"fault {n} {d} {kind} {rate}" for n in ("profiler", "executor") for d in ("in", "out"))


CLASSES: tuple[FaultClass, ...] = (
    FaultClass("drop", _both_ways("drop", 0.01), ("fault clear",), 40, LINE, byte_fault="fault_dropped"),
    FaultClass("corrupt", _both_ways("corrupt", 0.01), ("fault clear",), 40, LINE, byte_fault="fault_corrupted"),
    FaultClass("garbage", tuple(f"garbage {n} {d} 48" for n in ("profiler", "executor") for d in ("in", "out")),
               (), 1, LINE, byte_fault="garbage_bytes"),
    FaultClass("duplicate", _both_ways("dup", 0.01), ("fault clear",), 40, LINE, byte_fault="fault_duplicated"),
    FaultClass("delay", tuple(f"fault {n} in delay 0.1 40000" for n in ("profiler", "executor")), ("fault clear",),
               20, frozenset({"injected_delay"}) | LINE, delays=True),
    FaultClass("cut", ("cut executor.uart 1.0", "cut profiler.uart 1.0"), (), 15, LINE),
    FaultClass("reset-executor", ("reset executor",), (), 0, frozenset({"node_reset"}), nodes=("executor",),
               resets="executor"),
    FaultClass("reset-profiler", ("reset profiler",), (), 0, frozenset({"node_reset"}), nodes=("profiler",),
               resets="profiler"),
    FaultClass("hangup-executor", ("hangup executor 0.5",), (), 8, frozenset({"link_fault"}), nodes=("executor",)),
    FaultClass("hangup-profiler", ("hangup profiler 0.5",), (), 8, frozenset({"link_fault"}), nodes=("profiler",)),
    FaultClass("stuck-pin", ("stuck timecode 0 1 0.5",), (), 8, frozenset({"timecode_fault", "node_reset"}),
               nodes=("executor",)),
)
MODES = ("mixed", "verification", "normal")
QUICK = {"modes": ("mixed",), "classes": ("drop", "corrupt", "delay", "cut", "reset-executor", "reset-profiler")}


@dataclass
class Outcome:
    mode: str
    fault: str
    ok: bool = True
    problems: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)

    def fail(self, why: str) -> None:
        self.ok = False
        self.problems.append(why)


def bench_totals(status: dict[str, Any], node: str, counter: str) -> tuple[int, int]:
    """(into the node, out of it) of a per-direction bench counter."""
    v = status["nodes"][node]["uart"].get(counter, [0, 0])
    return int(v[0]), int(v[1])


def run_one(mode: str, fc: FaultClass, count: int, at_tick: int, seed: int, out_dir: Path) -> Outcome:
    result = Outcome(mode, fc.name)
    endpoint = choose_endpoint(Target.of(lockstep=mode != "normal"))   # normal mode: paced
    cfg = RunConfig(mode=mode, distance=2, count=count, seed=seed, out=out_dir / f"{mode}-{fc.name}")
    runner = Runner(cfg, endpoint)
    marks: dict[str, Any] = {}

    def inject(kind: str, obj: Any) -> None:
        if kind == "phase" and obj == "running":
            marks["running"] = True
        if kind != "timecode" or "running" not in marks:
            return
        marks.setdefault("first", obj)
        t = obj - marks["first"]
        bench = endpoint.bench
        assert bench is not None
        if t >= at_tick and "start" not in marks:
            marks["before"] = bench.status()
            for cmd in fc.start:
                reply = bench.control(cmd)
                if not reply.get("ok"):
                    result.fail(f"bench refused {cmd!r}: {reply.get('error')}")
            marks["start"] = obj
        if "start" in marks and t >= at_tick + max(fc.ticks, 1) and "stop" not in marks:
            for cmd in fc.stop:
                bench.control(cmd)
            marks["stop"] = obj
            marks["after"] = bench.status()

    runner.observer = inject
    t0 = time.monotonic()
    res = runner.run()
    result.figures["wall_s"] = round(time.monotonic() - t0, 2)
    return check(result, fc, count, cfg, res, marks)


def check(result: Outcome, fc: FaultClass, count: int, cfg: RunConfig, res: RunResult,
          marks: dict[str, Any]) -> Outcome:
    """The campaign's checks (the module's text) of one run with its fault marks: `start`/`stop` (the ticks
    it began and ended), `before`/`after` (the bench's status around it)."""
    mode = result.mode
    sc = res.sidecar
    if "start" not in marks:
        result.fail("the fault was never injected (the run ended before its tick)")
        return result
    outcomes = Counter((e.outcome, e.reason) for e in res.events if e.measurable)
    result.figures.update(events=len(res.events), unmeasurable=sum(not e.measurable for e in res.events),
                          outcomes={f"{o}/{r}" if r else o: n for (o, r), n in outcomes.items()},
                          invalid=[r["code"] for r in sc["invalid_reasons"]], faults=len(sc.get("faults", [])))
    # 1. every event made, and the invariant
    if len(res.events) < count:
        result.fail(f"the run made {len(res.events)} of {count} events ({', '.join(result.figures['invalid'])})")
    if not sc["invariant"]["ok"]:
        result.fail(f"invariant: {sc['invariant']['error']}")
    # 2. nothing blamed on the system under test
    measured_ok = {"ok", "late"} if mode == "normal" else {"ok"}
    allowed_lost = fc.reasons
    for (o, r), n in outcomes.items():
        if o == "lost" and r not in allowed_lost:
            result.fail(f"{n} events lost with {r}, not a reason of {fc.name} ({sorted(allowed_lost)})")
        elif o not in measured_ok and o != "lost":
            result.fail(f"{n} events {o}/{r}: blamed on the system under test")
    # 3. invalid, with the fault named, when the mode uses a node it hit
    uses = {"normal": {"profiler"}}.get(mode, {"profiler", "executor"})
    touched = any(o == "lost" for o, _ in outcomes)
    codes = set(result.figures["invalid"])
    named = codes & (fc.reasons | {"link_errors", "node_errors", "timecode_fault", "link_fault", "node_reset",
                                   "no_answer"})
    if touched and not named:
        result.fail(f"events were lost but the run's reasons {sorted(codes)} do not name the fault")
    if not set(fc.nodes) & uses and (touched or named):
        result.fail(f"a fault on {fc.nodes} touched a {mode} run, which does not use them: {sorted(codes)}")
    # 4. counters agree with what was injected
    before, after = marks.get("before"), marks.get("after")
    if fc.byte_fault and before is not None and after is not None:
        for node in sorted(uses):
            i0, o0 = bench_totals(before, node, fc.byte_fault)
            i1, o1 = bench_totals(after, node, fc.byte_fault)
            spoiled_in, spoiled_out = i1 - i0, o1 - o0
            node_counts = sc["counters"].get(node)
            if node_counts is None:
                result.fail(f"the {node}'s counters were not read: nothing to check the injected bytes against")
                node_counts = {}
            got_in = sum(int(node_counts.get(k, 0)) for k in BYTE_KINDS)
            dec = sc["counters"]["scheduler"].get(f"{node}_decoder", {})
            got_out = sum(int(dec.get(k, 0)) for k in DECODER_KINDS) + int(dec.get("seq_lost", 0))
            result.figures[f"{node}_spoiled_in_out"] = [spoiled_in, spoiled_out]
            result.figures[f"{node}_counted_in_out"] = [got_in, got_out]
            if got_in > 2 * spoiled_in + 2 or (spoiled_in == 0 and got_in > 0) or (spoiled_in > 0 and got_in == 0):
                result.fail(f"{node} counted {got_in} bad frames in for {spoiled_in} spoiled bytes")
            if got_out > 2 * spoiled_out + 2 or (spoiled_out == 0 and got_out > 0) or (spoiled_out > 0 and got_out == 0):
                result.fail(f"scheduler counted {got_out} bad or lost {node} frames for {spoiled_out} spoiled bytes")
    if fc.delays:
        held = [f for f in sc.get("faults", []) if f["kind"] == "injected_delay"]
        result.figures["held_events"] = sum(f["events"] for f in held)
        delayed = sum(bench_totals(marks["after"], n, "fault_delayed")[0] - bench_totals(marks["before"], n,
                      "fault_delayed")[0] for n in sorted(uses)) if before is not None and after is not None else 0
        if delayed and not held and any(o != "ok" for o, _ in outcomes):
            result.fail(f"the bench delayed {delayed} bytes, events did not end ok, and no injected_delay names it")
    if fc.resets and fc.resets in uses:
        resets = [f for f in sc.get("faults", []) if f["kind"] == "node_reset" and f["node"] == fc.resets]
        if not resets:
            result.fail(f"the {fc.resets}'s reset is not among the run's faults")
    # 5. on time outside the fault's window
    # a fault whose end the run did not reach lasted to the run's end
    start, stop = marks["start"], marks.get("stop", math.inf)
    first_after = min((e.event for e in res.events if e.created_tc >= start), default=None)
    for e in res.events:
        outside = (e.scheduled_tc + cfg.timeout_ticks < start - 1 or e.created_tc > stop + RECOVERY_TICKS) and \
            e.event != first_after
        if outside and e.measurable and e.outcome not in measured_ok:
            result.fail(f"event {e.event} (tick {e.scheduled_tc}, fault at {start}..{marks.get('stop', 'the end')}) ended "
                        f"{e.outcome}/{e.reason} outside the fault's window")
            break
    return result


def table(results: list[Outcome]) -> str:
    lines = ["| mode | fault | events | outcomes (measurable) | not measurable | invalid reasons | checks |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        oc = ", ".join(f"{k} {v}" for k, v in sorted(r.figures.get("outcomes", {}).items()))
        lines.append(f"| {r.mode} | {r.fault} | {r.figures.get('events', 0)} | {oc} | {r.figures.get('unmeasurable', 0)} | "
                     f"{', '.join(r.figures.get('invalid', [])) or '-'} | {'pass' if r.ok else 'FAIL: ' + '; '.join(r.problems)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mmrig.faultcampaign", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help=f"the short version make test runs: {QUICK}")
    ap.add_argument("--count", type=int, default=60, help="events per run (default 60)")
    ap.add_argument("--modes", default=None, help="comma-separated modes (default: all)")
    ap.add_argument("--classes", default=None, help="comma-separated fault classes (default: all)")
    ap.add_argument("--out", type=Path, default=Path("build/faults"), help="where the runs and results.json go")
    args = ap.parse_args(argv)
    modes = tuple(args.modes.split(",")) if args.modes else (QUICK["modes"] if args.quick else MODES)
    names = tuple(args.classes.split(",")) if args.classes else (QUICK["classes"] if args.quick else
                                                                 tuple(c.name for c in CLASSES))
    unknown = [n for n in names if n not in {c.name for c in CLASSES}] + [m for m in modes if m not in MODES]
    if unknown:
        print(f"faultcampaign: unknown mode or fault class: {', '.join(unknown)}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    results = []
    for mode in modes:
        for fc in CLASSES:
            if fc.name not in names:
                continue
            for old in args.out.glob(f"{mode}-{fc.name}.*"):
                old.unlink()
            r = run_one(mode, fc, args.count, at_tick=15, seed=18, out_dir=args.out)
            print(f"{mode:12s} {fc.name:15s} {'pass' if r.ok else 'FAIL'}  {r.figures.get('outcomes')}  "
                  f"{r.figures.get('invalid')}  {r.figures.get('wall_s')} s", flush=True)
            results.append(r)
    print()
    print(table(results))
    atomic_write(args.out / "results.json", json.dumps([r.__dict__ for r in results], indent=1).encode())
    failed = [r for r in results if not r.ok]
    print(f"\nfault campaign: {len(results) - len(failed)} of {len(results)} passed; runs in {args.out}/")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
