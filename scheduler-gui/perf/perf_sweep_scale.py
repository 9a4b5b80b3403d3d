#!/usr/bin/env python3
"""Benchmark: `mmrig sweep`'s client at scale. Usage: perf_sweep_scale.py [SYNTHETIC_POINTS [REAL_POINTS]]
(default 10000, and REAL_POINTS from the environment variable MMRIG_PERF_SWEEP_POINTS, else 400).

1. SYNTHETIC_POINTS point results, each the files of a real 10-event lockstep point (run once here), fed
   through the client's own code path (Campaign.record: the point's CSV and sidecar written, its line appended
   to points.jsonl, campaign.json's snapshot when due), with no cluster: the client's time per point, median
   and p99 and its total, the size of campaign.json and points.jsonl at the end, the client's peak memory; then
   the resume of that campaign stopped halfway (Campaign.open + the completeness check of every point).
2. A real sweep of REAL_POINTS lockstep points of 10 events (distance 1..100 x rate tick, 20ms, 21ms, ...) on a
   cluster of 2 local workers: a `dask scheduler` and a `dask worker --nworkers 2 --nthreads 1` started here, so
   that the `mmrig sweep --cluster` process is the client alone. The client is SIGINTed once points.jsonl holds
   half the points, then continued with `--resume`, as a user would. Reported: the client's CPU time per point
   (user + system of the process, its Dask thread included, over both sessions; each session's too), the total
   wall time, the client's peak RSS, and each worker's RSS before, at the SIGINT and after (read in the worker
   through Client.run: the worker's own and its point host's, the process its points run in).
   MMRIG_PERF_SWEEP_POINTS=10000 gives the 10,000-point campaign (about 16 minutes on 2 vCPUs).

Prints a table on stderr and a JSON list of {"name","unit","median","max","runs","note"} for tools/perf.py."""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mmhil.bench import ensure_built
from mmrig.sweep.campaign import Campaign, Plan
from mmrig.sweep.task import run_point

SYNTHETIC = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
REAL = int(sys.argv[2]) if len(sys.argv) > 2 else int(os.environ.get("MMRIG_PERF_SWEEP_POINTS", "400"))


def grid(n: int) -> Plan:
    """A plan of at least n points: distances 1..255 x rates 1ms, 2ms, ... (lockstep, 10 events)."""
    rates = [f"{i}ms" for i in range(1, n // 255 + 2)]
    return Plan(distance=list(range(1, 256)), rate=rates, count=10)


def synthetic(tmp: Path) -> dict:
    one = run_point(Plan(distance=[2], count=10).run_fields(Plan(distance=[2], count=10).points()[0]),
                    "d2-rtick-isr-idle")
    assert not one.get("error"), one
    plan = grid(SYNTHETIC)
    points = plan.points()[:SYNTHETIC]
    camp = Campaign.open(tmp / "syn", plan)
    camp.save()
    camp.open_store()
    per: list[float] = []
    half = len(points) // 2
    t_all = time.perf_counter()
    for i, p in enumerate(points):
        side = json.loads(one["json"])
        side["name"] = p.name
        got = {**one, "json": json.dumps(side).encode()}
        t0 = time.perf_counter()
        camp.record(p, got)
        per.append(time.perf_counter() - t0)
        if i + 1 == half:
            camp.store.sync()
            resume_folder = tmp / "syn"
    total = time.perf_counter() - t_all
    camp.close_store()
    t0 = time.perf_counter()
    camp.save()
    final_save = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sizes = {f: (tmp / "syn" / f).stat().st_size / 1e6 for f in ("campaign.json", "points.jsonl")}
    # resume halfway: a second folder holding the first half only (the store's lines and the files)
    import shutil

    half_dir = tmp / "half"
    (half_dir / "points").mkdir(parents=True)
    shutil.copy(tmp / "syn" / "campaign.json", half_dir / "campaign.json")
    lines = (resume_folder / "points.jsonl").read_text().splitlines()[:half]
    (half_dir / "points.jsonl").write_text("\n".join(lines) + "\n")
    for p in points[:half]:
        for suf in (".csv", ".json"):
            shutil.copy(tmp / "syn" / "points" / f"{p.name}{suf}", half_dir / "points" / f"{p.name}{suf}")
    t0 = time.perf_counter()
    again = Campaign.open(half_dir, None)
    again.mark_existing()
    todo = again.todo()
    resume_s = time.perf_counter() - t0
    assert len(todo) == len(plan.points()) - half, (len(todo), half)
    per.sort()
    return {"n": len(points), "median_ms": 1000 * statistics.median(per), "p99_ms": 1000 * per[int(0.99 * len(per))],
            "max_ms": 1000 * per[-1], "total_s": total, "final_save_s": final_save, "rss_mb": rss_mb,
            "resume_s": resume_s, "resume_points": len(plan.points()), **{f"{k}_mb": v for k, v in sizes.items()}}


def vmrss_mb() -> float:
    """This worker's resident memory now with its point host's (mmrig.sweep.pointhost: the process its points run
    in), in MB: run in each worker through Client.run."""
    import psutil

    from mmrig.sweep import pointhost

    total = 0
    for pid in [os.getpid(), *pointhost.host_pids()]:
        try:
            total += psutil.Process(pid).memory_info().rss
        except psutil.NoSuchProcess:          # a host that ended between the two calls
            pass
    return total / 2**20


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _client_session(args: list[str], folder: Path, stop_at: int | None) -> dict:
    """One `mmrig sweep` process; SIGINTed once points.jsonl has `stop_at` lines. Its CPU and peak RSS from
    wait4 (the process alone, all its threads)."""
    proc = subprocess.Popen([sys.executable, "-m", "mmrig", "sweep", *args, "--out", str(folder), "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    lines = folder / "points.jsonl"
    t0 = time.monotonic()
    samples: list[tuple[int, float]] = []     # (lines of points.jsonl, the client's CPU seconds so far)
    clk = os.sysconf("SC_CLK_TCK")
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)     # (not poll(): it would reap the rusage wait4 gives)
        if pid:
            break
        try:
            with open(lines, "rb") as f:
                n = sum(1 for _ in f)
            stat = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            samples.append((n, (int(stat[11]) + int(stat[12])) / clk))
        except (FileNotFoundError, ProcessLookupError, IndexError):
            n = 0
        if stop_at is not None and n >= stop_at:
            proc.send_signal(signal.SIGINT)
            _, status, ru = os.wait4(proc.pid, 0)
            break
        time.sleep(0.5)
    wall = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    # the steady rate: CPU per point between the samples at a tenth and at the end of the points it ran, without the
    # session's start (imports, the cluster reached, the completeness check) and end (figures)
    steady = None
    if len(samples) > 2 and samples[-1][0] > samples[0][0]:
        a = next((x for x in samples if x[0] - samples[0][0] >= 0.1 * (samples[-1][0] - samples[0][0])), samples[0])
        b = next(x for x in samples if x[0] == samples[-1][0])      # the last point in (not the figures after it)
        if b[0] > a[0]:
            steady = 1000 * (b[1] - a[1]) / (b[0] - a[0])
    return {"exit": proc.returncode, "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024,
            "steady_ms": steady, "stderr": err[-2000:]}


def real(tmp: Path) -> dict:
    """REAL lockstep points on `dask scheduler` + `dask worker --nworkers 2`, SIGINT at half, then --resume."""
    from distributed import Client

    rates = ["tick"] + [f"{20 + i}ms" for i in range(max(0, -(-REAL // 100) - 1))]
    distances = min(100, REAL)
    n = distances * len(rates)
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m"]
    logs = open(tmp / "cluster.log", "wb")
    sched = subprocess.Popen([*dask, "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
                              "--no-dashboard"], stdout=logs, stderr=subprocess.STDOUT)
    workers = subprocess.Popen([*dask, "distributed.cli.dask_worker", address, "--nworkers", "2", "--nthreads", "1",
                                "--no-dashboard", "--local-directory", str(tmp / "dask")],
                               stdout=logs, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        with Client(address, timeout="30s") as c:
            while len(c.scheduler_info()["workers"]) < 2:
                if time.monotonic() > deadline:
                    raise RuntimeError("the 2 dask workers did not come up in 90 s")
                time.sleep(0.3)
            rss_before = sorted(c.run(vmrss_mb).values())
        folder = tmp / "real"
        axes = ["--distance", f"1..{distances}", "--rate", ",".join(rates), "--count", "10", "--cluster", address]
        t0 = time.monotonic()
        first = _client_session(axes, folder, stop_at=n // 2)
        assert first["exit"] == 130, first
        done_first = len({json.loads(x)["name"] for x in (folder / "points.jsonl").read_text().splitlines()
                          if json.loads(x).get("state") == "done"})
        with Client(address, timeout="30s") as c:
            rss_half = sorted(c.run(vmrss_mb).values())
        second = _client_session(["--resume", "--cluster", address], folder, stop_at=None)
        wall = time.monotonic() - t0
        # 3: some points are invalid (at 20 ms and a large distance the ids run out: a result, not a failure)
        assert second["exit"] in (0, 3), second
        last = {}
        for x in (folder / "points.jsonl").read_text().splitlines():
            rec = json.loads(x)
            last[rec["name"]] = rec["state"]
        assert len(last) == n and set(last.values()) == {"done"}, (len(last), n, set(last.values()))
        with Client(address, timeout="30s") as c:
            rss_after = sorted(c.run(vmrss_mb).values())
    finally:
        for proc in (workers, sched):
            proc.send_signal(signal.SIGTERM)
        for proc in (workers, sched):
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    cpu = first["cpu_s"] + second["cpu_s"]
    return {"n": n, "wall_s": wall, "cpu_ms": 1000 * cpu / n, "first_n": done_first,
            "first_cpu_ms": 1000 * first["cpu_s"] / max(1, done_first),
            "second_cpu_ms": 1000 * second["cpu_s"] / max(1, n - done_first), "first_wall_s": first["wall_s"],
            "second_wall_s": second["wall_s"], "rss_mb": max(first["rss_mb"], second["rss_mb"]),
            "workers_before_mb": rss_before, "workers_half_mb": rss_half, "workers_after_mb": rss_after,
            "steady_ms": [first["steady_ms"], second["steady_ms"]]}


def main() -> int:
    ensure_built()
    with tempfile.TemporaryDirectory(prefix="perf-sweep-scale-") as tmp:
        s = synthetic(Path(tmp))
        r = real(Path(tmp)) if REAL else None
    print(f"client bookkeeping, {s['n']} synthetic points of 10 events (Campaign.record, no cluster):\n"
          f"  per point: median {s['median_ms']:.2f} ms, p99 {s['p99_ms']:.2f} ms, max {s['max_ms']:.0f} ms "
          f"(campaign.json snapshots included); total {s['total_s']:.1f} s\n"
          f"  at the end: campaign.json {s['campaign.json_mb']:.1f} MB (one save {s['final_save_s']:.2f} s), "
          f"points.jsonl {s['points.jsonl_mb']:.1f} MB; client peak RSS {s['rss_mb']:.0f} MB\n"
          f"  resume after half: {s['resume_s']:.1f} s to open and check {s['resume_points']} points", file=sys.stderr)
    if r:
        print(f"real lockstep sweep, {r['n']} points of 10 events, `dask scheduler` + 2 local `dask worker`s, "
              f"SIGINT after {r['first_n']} points then --resume: wall {r['wall_s']:.1f} s "
              f"({r['first_wall_s']:.1f} + {r['second_wall_s']:.1f}); client CPU {r['cpu_ms']:.2f} ms a point "
              f"(first session {r['first_cpu_ms']:.2f}, resumed {r['second_cpu_ms']:.2f}; steady, without each session's "
              f"start and end: {' and '.join(f'{x:.2f}' for x in r['steady_ms'] if x is not None)}); client peak RSS "
              f"{r['rss_mb']:.0f} MB; workers' RSS {', '.join(f'{x:.0f}' for x in r['workers_before_mb'])} MB before, "
              f"{', '.join(f'{x:.0f}' for x in r['workers_half_mb'])} MB at the SIGINT, "
              f"{', '.join(f'{x:.0f}' for x in r['workers_after_mb'])} MB after", file=sys.stderr)
    rows = [{"name": f"sweep client time per point ({s['n']} synthetic 10-event points)", "unit": "ms",
             "median": s["median_ms"], "max": s["p99_ms"], "runs": s["n"],
             "note": f"max is p99; total {s['total_s']:.1f} s; campaign.json {s['campaign.json_mb']:.1f} MB, "
                     f"points.jsonl {s['points.jsonl_mb']:.1f} MB; peak RSS {s['rss_mb']:.0f} MB"},
            {"name": f"sweep resume of a {s['resume_points']}-point campaign stopped halfway", "unit": "s",
             "median": s["resume_s"], "max": s["resume_s"], "runs": 1, "note": "open + completeness check"}]
    if r:
        workers = (f"workers' RSS {'/'.join(f'{x:.0f}' for x in r['workers_before_mb'])} MB before, "
                   f"{'/'.join(f'{x:.0f}' for x in r['workers_half_mb'])} MB at the SIGINT, "
                   f"{'/'.join(f'{x:.0f}' for x in r['workers_after_mb'])} MB after")
        rows += [{"name": f"sweep client CPU per point ({r['n']} real 10-event points, 2 local workers, SIGINT + resume)",
                  "unit": "ms", "median": r["cpu_ms"], "max": max(r["first_cpu_ms"], r["second_cpu_ms"]), "runs": r["n"],
                  "note": f"median is over both sessions, max the worse session (first {r['first_cpu_ms']:.2f}, "
                          f"resumed {r['second_cpu_ms']:.2f}; steady {'/'.join(f'{x:.2f}' for x in r['steady_ms'] if x is not None)}); "
                          f"client peak RSS {r['rss_mb']:.0f} MB; {workers}"},
                 {"name": f"sweep of {r['n']} real 10-event points, 2 local workers, SIGINT + resume", "unit": "s",
                  "median": r["wall_s"], "max": r["wall_s"], "runs": 1,
                  "note": f"{1000 * r['wall_s'] / r['n']:.0f} ms a point, cluster start excluded; {workers}"},
                 {"name": f"sweep worker RSS after {r['n']} real points", "unit": "MB",
                  "median": statistics.median(r["workers_after_mb"]), "max": max(r["workers_after_mb"]), "runs": 2,
                  "note": f"before: {'/'.join(f'{x:.0f}' for x in r['workers_before_mb'])} MB, at the SIGINT: "
                          f"{'/'.join(f'{x:.0f}' for x in r['workers_half_mb'])} MB"}]
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
