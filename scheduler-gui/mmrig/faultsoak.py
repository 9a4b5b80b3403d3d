"""The fault soak (`make soak-faults`): one long lockstep mixed run with the fault classes of `make faults`
(mmrig.faultcampaign.CLASSES) injected one after another at random moments, for a given wall time. Where the
campaign checks one fault per run, this checks that a rig that has been through many keeps its promises:

1. every injected fault is named in the data: a fault of one of its kinds (`FaultClass.reasons`, or the
   counters' and line kinds it shows as) in the sidecar's `faults`, seen between its start and RECOVERY_TICKS
   after its end, whenever the bench says it did something (bytes spoiled, a node reset, a port hung up, a
   wire stuck); a delay is named where it struck an event (`injected_delay`, held to by check 2): one that
   held only frames still in time harms nothing and needs no name;
2. every event is accounted for: the accounting invariant holds, every event ended, and no event is blamed
   on the system under test (lost only with a fault's reason; in mixed mode only `ok` otherwise);
3. events away from every fault are on time (due before a fault began, made RECOVERY_TICKS after it ended;
   the first event after one is spared: its frame is the first the node decodes after the fault);
4. no file is lost: the run's CSV and sidecar are there and agree (the sidecar's `csv_sha256`);
5. no bench is left over: the bench's process has ended and its run folder is gone.

    python -m mmrig.faultsoak [--minutes 30] [--seed 1] [--gap-ticks 40..160] [--out build/soak-faults]

Exit status: 0 when every check passed, 1 when one failed (each named on a line), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmanalysis.safefiles import atomic_write
from mmsched.model.config import RunConfig
from mmsched.link.endpoint import Endpoint
from mmsched.model.result import RunResult
from mmsched.run.runner import Runner

from mmrig.endpoints import Target, choose_endpoint
from mmrig.faultcampaign import CLASSES, LINE, RECOVERY_TICKS, FaultClass, bench_totals

# what a fault of a class may also show as: the line's and the counters' kinds, whatever the class
ALSO_NAMED = frozenset({"link_errors", "node_errors"}) | LINE
# the bench status counter that says a class did something (None: it always does: resets, hang-ups, cuts, pins)
EFFECT = {"drop": "fault_dropped", "corrupt": "fault_corrupted", "duplicate": "fault_duplicated",
          "garbage": "garbage_bytes", "delay": "fault_delayed"}


@dataclass
class Injection:
    """One fault injected: its class, and when, on the run's clock (`*_at`, what events are stamped with; `*_s`
    from the run's start, what faults are). Ticks would not do: a profiler reset starts its count again."""

    fault: str
    start_tick: int
    start_at: float
    start_s: float
    stop_at: float | None = None
    stop_s: float | None = None
    effect: int | None = None          # the bench's count of what it did (EFFECT), None: the class always acts
    before: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Soak:
    """The soak's state while its run goes: the next fault's moment, the injection running, those done."""

    endpoint: Endpoint
    runner: Runner
    rng: random.Random
    gap: tuple[int, int]
    wall_end: float
    tick_s: float = 1_137_778 / 16_000_000      # the nominal tick; the run's own once it is set up
    next_at: float | None = None
    current: tuple[FaultClass, Injection] | None = None
    done: list[Injection] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def observe(self, kind: str, obj: Any) -> None:
        if kind != "timecode":
            return
        tick = int(obj)
        if time.monotonic() > self.wall_end and self.current is None:
            self.runner.stop_requested.set()         # the events in flight end as usual
            return
        if self.runner.state is not None:
            self.tick_s = self.runner.state.timebase.tick_s
        now = self.runner.now()
        if self.next_at is None:
            self.next_at = now + (RECOVERY_TICKS + self.rng.randint(*self.gap)) * self.tick_s
        if self.current is not None:
            fc, inj = self.current
            if self.runner.now() >= inj.start_at + max(fc.ticks, 1) * self.tick_s:
                self.end(fc, inj, tick)
        elif now >= self.next_at and not self.runner.stop_requested.is_set():
            self.begin(self.rng.choice(CLASSES), tick)

    def control(self, cmd: str) -> None:
        bench = getattr(self.endpoint, "bench", None)
        assert bench is not None
        reply = bench.control(cmd)
        if not reply.get("ok"):
            self.problems.append(f"the bench refused {cmd!r}: {reply.get('error')}")

    def status(self) -> dict[str, Any]:
        bench = getattr(self.endpoint, "bench", None)
        assert bench is not None
        return bench.status()

    def begin(self, fc: FaultClass, tick: int) -> None:
        now = self.runner.now()
        inj = Injection(fc.name, tick, now, self.runner.rel(now), before=self.status())
        for cmd in fc.start:
            self.control(cmd)
        self.current = (fc, inj)

    def end(self, fc: FaultClass, inj: Injection, tick: int) -> None:
        for cmd in fc.stop:
            self.control(cmd)
        now = self.runner.now()
        inj.stop_at, inj.stop_s = now, self.runner.rel(now)
        counter = EFFECT.get(fc.name)
        if counter is not None:
            after = self.status()
            inj.effect = sum(sum(bench_totals(after, n, counter)) - sum(bench_totals(inj.before, n, counter))
                             for n in ("profiler", "executor"))
        inj.before = {}
        self.done.append(inj)
        self.current = None
        self.next_at = now + (RECOVERY_TICKS + self.rng.randint(*self.gap)) * self.tick_s


def check(soak: Soak, res: RunResult, cfg: RunConfig, tick_s: float) -> list[str]:
    """The module's checks 1-4 over the run's result; returns the problems found."""
    sc = res.sidecar
    problems = list(soak.problems)
    faults = sc.get("faults", [])
    by_name = {c.name: c for c in CLASSES}
    for inj in soak.done:                                   # 1. every fault named
        if inj.effect == 0 or by_name[inj.fault].delays:
            continue                                        # the bench did nothing; a delay: see check 2
        kinds = by_name[inj.fault].reasons | ALSO_NAMED
        until = (inj.stop_s if inj.stop_s is not None else inj.start_s) + RECOVERY_TICKS * tick_s
        if not any(f["kind"] in kinds and inj.start_s - tick_s <= f["at_s"] <= until for f in faults):
            problems.append(f"{inj.fault} injected at tick {inj.start_tick} ({inj.start_s:.1f} s) is named by no "
                            f"fault of {sorted(kinds)} up to {until:.1f} s")
    if not sc["invariant"]["ok"]:                           # 2. every event accounted for
        problems.append(f"invariant: {sc['invariant']['error']}")
    if any(e.outcome is None for e in res.events):
        problems.append(f"{sum(e.outcome is None for e in res.events)} events never ended")
    for (o, r), n in Counter((e.outcome, e.reason) for e in res.events).items():
        if o == "lost" and r is None:
            problems.append(f"{n} events lost with no reason")
        elif o not in ("ok", "lost"):
            problems.append(f"{n} events {o}/{r}: blamed on the system under test")
    windows = [(i.start_at, i.stop_at if i.stop_at is not None else float("inf")) for i in soak.done]
    made = [(e, e.created_at if e.created_at is not None else float("-inf")) for e in res.events]
    firsts = {min((e.event for e, at in made if at >= a), default=-1) for a, _ in windows}
    for e, at in made:                                      # 3. on time away from the faults
        due = at + (e.scheduled_tc - e.created_tc - (e.created_phase or 0.0) + cfg.timeout_ticks) * tick_s
        near = any(not (due < a - tick_s or at > b + RECOVERY_TICKS * tick_s) for a, b in windows)
        if not near and e.event not in firsts and e.outcome != "ok":
            problems.append(f"event {e.event} (tick {e.scheduled_tc}, made at {e.sent_s} s) ended "
                            f"{e.outcome}/{e.reason} away from every fault")
            break
    for path in (res.csv_path, res.json_path):              # 4. no file lost
        if path is None or not Path(path).is_file():
            problems.append(f"the run's file {path} is missing")
    if res.csv_path is not None and Path(res.csv_path).is_file():
        digest = hashlib.sha256(Path(res.csv_path).read_bytes()).hexdigest()
        if digest != sc.get("csv_sha256", digest):
            problems.append("the CSV does not match its sidecar's csv_sha256")
    return problems


def bench_left_over(endpoint: Endpoint) -> str | None:
    """5. None when the bench's process has ended and its run folder is gone; else what is left."""
    bench = getattr(endpoint, "bench", None)
    if bench is None:
        return None
    deadline = time.monotonic() + 30
    while bench.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    if bench.alive():
        return f"the bench (pid {bench.pid}) is still running after the run"
    if bench.run_dir is not None and Path(bench.run_dir).exists():
        return f"the bench's run folder {bench.run_dir} is left"
    return None


def run_soak(minutes: float, seed: int, gap: tuple[int, int], out: Path) -> dict[str, Any]:
    endpoint = choose_endpoint(Target.of(lockstep=True))
    cfg = RunConfig(mode="mixed", distance=2, count=None, duration_s=7 * 24 * 3600.0, seed=seed, out=out / "faultsoak")
    for old in out.glob("faultsoak.*"):
        old.unlink()
    runner = Runner(cfg, endpoint)
    soak = Soak(endpoint, runner, random.Random(seed), gap, time.monotonic() + minutes * 60)
    runner.observer = soak.observe
    t0 = time.monotonic()
    res = runner.run()
    tb = res.sidecar["timebase"]
    problems = check(soak, res, cfg, tb["tick_counts"] / tb["timer_hz"])
    if (left := bench_left_over(endpoint)) is not None:
        problems.append(left)
    named = Counter(i.fault for i in soak.done)
    return {"wall_s": round(time.monotonic() - t0, 1), "events": len(res.events),
            "outcomes": dict(Counter(f"{e.outcome}/{e.reason}" if e.reason else e.outcome for e in res.events)),
            "injected": dict(sorted(named.items())), "injections": len(soak.done),
            "acted": sum(1 for i in soak.done if i.effect != 0),
            "faults_in_data": dict(Counter(f["kind"] for f in res.sidecar.get("faults", []))),
            "invalid": [r["code"] for r in res.sidecar["invalid_reasons"]], "problems": problems,
            "csv": str(res.csv_path)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mmrig.faultsoak", description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30.0, help="wall time of the run (default 30)")
    ap.add_argument("--seed", type=int, default=1, help="the faults' order and moments (default 1)")
    ap.add_argument("--gap-ticks", default="40..160", help="ticks between a fault's recovery and the next (A..B)")
    ap.add_argument("--out", type=Path, default=Path("build/soak-faults"))
    args = ap.parse_args(argv)
    try:
        a, b = (int(x) for x in args.gap_ticks.split(".."))
        if not 0 <= a <= b or args.minutes <= 0:
            raise ValueError
    except ValueError:
        print(f"faultsoak: --gap-ticks A..B with 0 <= A <= B and --minutes > 0, not {args.gap_ticks!r} / "
              f"{args.minutes}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    report = run_soak(args.minutes, args.seed, (a, b), args.out)
    atomic_write(args.out / "results.json", (json.dumps(report, indent=1) + "\n").encode())
    print(json.dumps({k: v for k, v in report.items() if k != "problems"}, indent=1))
    for p in report["problems"]:
        print(f"faultsoak: {p}", file=sys.stderr)
    print(f"fault soak: {report['injections']} faults injected ({report['acted']} acted), {report['events']} events, "
          f"{len(report['problems'])} problems; {args.out}/", flush=True)
    return 1 if report["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
