"""`mmrig sweep` on a cluster that misbehaves: a `dask scheduler` and `dask worker` processes started here (as on
machines of their own), every worker killed mid-campaign (the campaign ends with exit 4 within seconds, the
points done kept, no bench of a killed worker left, nor its run folder), the scheduler killed (the same), a
point Dask ran again after its worker died (its runs count both), the same points on a local cluster and on
the separate processes (the same files), points several to a task (each recorded once, none lost to a
stop) in a point host that ends with its worker, and the points' record (points.jsonl: append-only, a torn last line
dropped, read by pandas in one call)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mmhil.bench import ensure_built
from mmrig.sweep.campaign import EXIT_CLUSTER_LOST, POINTS_FILE, Campaign, Plan, PointStore, run_campaign
from mmrig.sweep.cluster import CHUNK_MAX, TASK_S, chunk_size, scheduler_lost
from mmrig.sweep.task import ATTEMPT_TOPIC, run_point

DASK = Path(sys.executable).with_name("dask")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """`dask scheduler` + N `dask worker` processes (each with its nanny), each a process group of its own."""

    def __init__(self, tmp: Path, workers: int = 2) -> None:
        self.address = f"tcp://127.0.0.1:{free_port()}"
        self.tmp = tmp
        self.scheduler = self._start(["scheduler", "--host", "127.0.0.1", "--port", self.address.rsplit(":", 1)[1],
                                      "--no-dashboard"], "scheduler")
        self.workers = [self._start(["worker", self.address, "--nthreads", "1", "--no-dashboard",
                                     "--local-directory", str(tmp / f"w{i}")], f"worker{i}")
                        for i in range(workers)]
        self.wait_workers(workers)

    def _start(self, args: list[str], name: str) -> subprocess.Popen:
        log = open(self.tmp / f"{name}.log", "wb")
        return subprocess.Popen([str(DASK), *args], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_workers(self, n: int, timeout: float = 60) -> None:
        from distributed import Client

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with Client(self.address, timeout="2s") as c:
                    if len(c.scheduler_info()["workers"]) >= n:
                        return
            except (OSError, TimeoutError):
                pass
            time.sleep(0.3)
        raise AssertionError(f"the cluster at {self.address} has not {n} workers after {timeout} s")

    def worker_pids(self) -> set[int]:
        """Every process of the worker groups (nanny, worker) and their descendants (point hosts, in sessions of
        their own; their benches)."""
        pids, parent = set(), {}
        for p in Path("/proc").iterdir():
            if p.name.isdigit():
                try:
                    stat = (p / "stat").read_text()
                    parent[int(p.name)] = int(stat[stat.rfind(")") + 2:].split()[1])
                    if os.getpgid(int(p.name)) in {w.pid for w in self.workers}:
                        pids.add(int(p.name))
                except (OSError, ValueError):
                    pass
        grew = True
        while grew:
            more = {pid for pid, pp in parent.items() if pp in pids and pid not in pids}
            pids |= more
            grew = bool(more)
        return pids

    @staticmethod
    def kill(proc: subprocess.Popen) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)     # the nanny and its worker: the whole `dask worker`
        except ProcessLookupError:
            pass
        proc.wait()

    def close(self) -> None:
        for p in [*self.workers, self.scheduler]:
            self.kill(p)


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    yield c
    c.close()


def benches_of(parents: set[int]) -> dict[int, str]:
    """{pid: --run-dir} of the mmbench processes whose parent is one of PARENTS."""
    out = {}
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            stat = (p / "stat").read_text()
            args = (p / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat[stat.rfind(")") + 2:].split()[1])
        if stat[stat.find("(") + 1:stat.rfind(")")] == "mmbench" and ppid in parents:
            run_dir = args[args.index(b"--run-dir") + 1].decode() if b"--run-dir" in args else ""
            out[int(p.name)] = run_dir
    return out


@pytest.mark.alone
def test_every_worker_killed_ends_the_campaign_within_seconds_with_the_points_done_kept(cluster, tmp_path) -> None:
    """Both `dask worker`s SIGKILLed while their points run: exit 4 within 30 s (10 s without a worker, the
    default), the points done on disk and in points.jsonl, the campaign 'incomplete'; the killed workers'
    benches end (their parent is gone) and their /tmp/mmbench.* folders go with them."""
    ensure_built()
    # points of 400 events (28 s of virtual time, seconds of wall time each): the kill lands mid-point
    camp = Campaign.open(tmp_path / "camp", Plan(distance=[1, 2, 3, 4, 5, 6], count=400))
    lines: list[str] = []
    benches: dict[int, str] = {}
    killed_at: list[float] = []

    def killer() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:            # the first point done, and both workers running a bench
            benches.update(benches_of(cluster.worker_pids()))
            if any(line.startswith("[1/") for line in lines) and len(benches_of(cluster.worker_pids())) >= 2:
                break
            time.sleep(0.1)
        benches.update(benches_of(cluster.worker_pids()))
        for w in cluster.workers:
            cluster.kill(w)
        killed_at.append(time.monotonic())

    t = threading.Thread(target=killer, daemon=True)
    t.start()
    out = run_campaign(camp, run_point, cluster=cluster.address, log=lines.append)
    ended = time.monotonic()
    t.join(5)
    assert killed_at, "\n".join(lines)
    assert out.exit_code == EXIT_CLUSTER_LOST and "no Dask worker left for 10 s" in (out.cluster_lost or ""), out
    assert ended - killed_at[0] < 30, ended - killed_at[0]
    done = [n for n, e in camp.doc["points"].items() if e["state"] == "done"]
    assert 1 <= len(done) < 6 and camp.doc["status"] == "incomplete", camp.doc["totals"]
    assert camp.doc["sessions"][-1]["cluster_lost"] == out.cluster_lost
    for name in done:
        assert camp.complete(next(p for p in camp.plan.points() if p.name == name))
    from mmanalysis.sweepplots import points_table

    table = points_table(tmp_path / "camp")
    assert sorted(table.loc[table.state == "done", "name"]) == sorted(done)
    # the killed workers' benches: gone within seconds, and their run folders
    assert benches, "no bench seen on the workers"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (any(Path(f"/proc/{pid}").exists() for pid in benches)
                                           or any(d and Path(d).exists() for d in benches.values())):
        time.sleep(0.2)
    left = [pid for pid in benches if Path(f"/proc/{pid}").exists()
            and "mmbench" in Path(f"/proc/{pid}/stat").read_text()]
    assert not left, f"benches of killed workers still alive: {left}"
    assert not [d for d in benches.values() if d and Path(d).exists()], benches


@pytest.mark.alone
def test_the_scheduler_gone_ends_the_campaign_within_seconds(cluster, tmp_path) -> None:
    ensure_built()
    camp = Campaign.open(tmp_path / "camp", Plan(distance=[1, 2, 3, 4, 5, 6], count=400))
    lines: list[str] = []
    killed_at: list[float] = []

    def killer() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(line.startswith("[1/") for line in lines):
            time.sleep(0.1)
        cluster.kill(cluster.scheduler)
        killed_at.append(time.monotonic())

    threading.Thread(target=killer, daemon=True).start()
    out = run_campaign(camp, run_point, cluster=cluster.address, log=lines.append, lost_after_s=5)
    assert killed_at and out.exit_code == EXIT_CLUSTER_LOST, (out, lines)
    assert any(w in (out.cluster_lost or "") for w in ("has not answered for 5 s", "no Dask worker", "was lost")), out
    assert time.monotonic() - killed_at[0] < 30
    assert camp.doc["totals"]["done"] >= 1


@pytest.mark.alone
def test_the_same_points_on_a_local_cluster_and_on_separate_dask_processes(cluster, tmp_path) -> None:
    """Lockstep points are host-independent: the same CSVs, byte for byte, whichever cluster ran them (and the
    same sidecars but for where and when they ran)."""
    ensure_built()
    plan = dict(distance=[1, 2], rate=["tick", "50ms"], count=10)
    local = Campaign.open(tmp_path / "local", Plan(**plan))
    remote = Campaign.open(tmp_path / "remote", Plan(**plan))
    assert run_campaign(local, run_point, workers=2).exit_code == 0
    assert run_campaign(remote, run_point, cluster=cluster.address).exit_code == 0
    assert remote.doc["cluster"]["kind"] == "remote" and local.doc["cluster"]["kind"] == "local"
    names = sorted(p.name for p in local.plan.points())
    assert sorted(f.stem for f in (tmp_path / "remote" / "points").glob("*.csv")) == names
    for name in names:
        a = (tmp_path / "local" / "points" / f"{name}.csv").read_bytes()
        b = (tmp_path / "remote" / "points" / f"{name}.csv").read_bytes()
        assert a == b, name
        assert remote.doc["points"][name]["runs"] == 1


@pytest.mark.alone
def test_a_point_dask_ran_again_counts_both_runs(tmp_path) -> None:
    """A worker SIGKILLed during a point: its point host ends at once, its nanny starts a new worker and Dask runs
    the point again; the point's `runs` says 2 (each start of a point is an event the client counts)."""
    marks = tmp_path / "marks"
    marks.mkdir()

    def slow_point(fields, stem, *, paced, profiler_kind="avr"):      # runs in the worker's point host
        (marks / f"{stem}.{os.getppid()}").write_text(str(os.getpid()))
        time.sleep(4)
        return {"error": "stand-in: no run", "worker": str(os.getppid())}

    camp = Campaign.open(tmp_path / "camp", Plan(distance=[1], count=5))
    killed: list[int] = []
    orphans: list[int] = []

    def killer() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            got = list(marks.glob("d1-*"))
            if got:
                time.sleep(1.0)                      # the start event on its way to the client
                pid = int(got[0].suffix[1:])
                os.kill(pid, signal.SIGKILL)              # the worker alone, not its point host
                killed.append(pid)
                host = int(got[0].read_text())
                deadline = time.monotonic() + 2           # the host sleeps 4 s: it ends because its worker did
                while Path(f"/proc/{host}").exists() and b"zombie" not in Path(f"/proc/{host}/status").read_bytes().lower():
                    if time.monotonic() > deadline:
                        orphans.append(host)
                        return
                    time.sleep(0.05)
                return
            time.sleep(0.05)

    threading.Thread(target=killer, daemon=True).start()
    out = run_campaign(camp, slow_point, workers=1)
    assert killed and out.failed == ["d1-rtick-isr-idle"], out
    assert not orphans, f"the killed worker's point host outlived it: {orphans}"
    assert len(list(marks.glob("d1-*"))) == 2
    e = camp.doc["points"]["d1-rtick-isr-idle"]
    assert e["runs"] == 2 and e["worker"] != str(killed[0]), e


def test_chunk_size_follows_the_points_time_and_leaves_points_for_every_worker() -> None:
    """One point a task until a point's time is known; then about TASK_S of points, at most CHUNK_MAX, and no
    more than a quarter of each worker's share of the points left (the last ones spread over the workers)."""
    assert chunk_size(None, 10_000, 2) == 1
    assert chunk_size(0.1, 10_000, 2) == CHUNK_MAX == 32
    assert chunk_size(TASK_S / 5, 10_000, 2) == 5
    assert chunk_size(2 * TASK_S, 10_000, 2) == 1
    assert chunk_size(0.01, 40, 2) == 5 and chunk_size(0.01, 7, 2) == 1 and chunk_size(0.0, 10_000, 1) == 32


def quick_point():
    """A stand-in for run_point: no run, a hundredth of a second (a closure, so that Dask sends it by value to
    workers that cannot import this module)."""
    def point(fields, stem, *, paced, profiler_kind="avr"):
        time.sleep(0.01)
        return {"error": "stand-in: no run", "worker": "here", "wall_s": 0.01}
    return point


def _tasks(address: str) -> dict[str, list[str]]:
    """{task key: the points it began, in order}, from the attempt events the workers logged to the scheduler."""
    from distributed import Client

    with Client(address, timeout="10s") as c:
        events = c.get_events(ATTEMPT_TOPIC)
    out: dict[str, list[str]] = {}
    for _t, msg in events:
        out.setdefault(msg["key"], []).append(msg["point"])
    return out


def test_points_go_several_to_a_task_each_recorded_once_in_the_plans_order(cluster, tmp_path) -> None:
    """The first tasks carry one point each; once a point's time is known, several (consecutive points of the
    plan); every point is recorded once, with its own result and runs 1."""
    camp = Campaign.open(tmp_path / "camp", Plan(distance=list(range(1, 101)), count=5))
    out = run_campaign(camp, quick_point(), cluster=cluster.address)
    assert out.exit_code == 3 and len(out.failed) == 100
    names = [p.name for p in camp.plan.points()]
    for name in names:
        e = camp.doc["points"][name]
        assert e["runs"] == 1 and e["error"] == "stand-in: no run", e
    tasks = _tasks(cluster.address)
    sizes = [len(v) for v in tasks.values()]
    assert 1 < max(sizes) <= CHUNK_MAX and sum(sizes) == 100, sizes
    # the first tasks sent (the plan's first points, before any result came back) carry one point each; which of
    # them began first is the workers' business
    assert all([n] in tasks.values() for n in names[:4]), {k: v for k, v in tasks.items() if set(v) & set(names[:4])}
    for points in tasks.values():           # a task's points: consecutive in the plan
        i = names.index(points[0])
        assert points == names[i:i + len(points)]


def test_a_stop_keeps_every_point_of_the_tasks_that_came_in(cluster, tmp_path) -> None:
    """A stop request (a signal's handler) while tasks of several points come in: the campaign ends, and each task
    whose result came in has all its points written and recorded, none cut off after the first."""
    camp = Campaign.open(tmp_path / "camp", Plan(distance=list(range(1, 201)), count=5))
    lines: list[str] = []
    out = run_campaign(camp, quick_point(), cluster=cluster.address, log=lines.append,
                       stop_requested=lambda: sum(ln.startswith("[") for ln in lines) > 10)
    assert out.interrupted and out.exit_code == 130
    recorded = {n for n, e in camp.doc["points"].items() if e["state"] == "failed"}
    assert 10 < len(recorded) < 200, len(recorded)
    came_in = [points for points in _tasks(cluster.address).values() if recorded & set(points)]
    assert max(len(points) for points in came_in) > 1
    for points in came_in:
        assert set(points) <= recorded, points


def test_the_workers_keep_no_profile_of_the_points_they_ran(cluster, tmp_path) -> None:
    """Dask's statistical profiler kept a tree of the running task's stacks every second, the last 1000 twice
    over: ~450 MB a worker over a 10,000-point campaign (docs/campaigns.md, "Large campaigns"). The campaign
    turns it off on every worker of the cluster: after it, no worker samples or holds a profile."""
    from distributed import Client

    def busy_point(fields, stem, *, paced, profiler_kind="avr"):
        deadline = time.monotonic() + 1.5           # the profiler samples a running task every 10 ms
        while time.monotonic() < deadline:
            sum(range(1000))
        return {"error": "stand-in: no run", "worker": str(os.getpid())}

    def profile_state(dask_worker):
        return {"sampling": [n for n in ("profile", "profile-cycle") if n in dask_worker.periodic_callbacks],
                "kept": len(dask_worker.profile_history) + len(dask_worker.profile_keys_history),
                "recent": dask_worker.profile_recent["count"]}

    camp = Campaign.open(tmp_path / "camp", Plan(distance=[1, 2, 3, 4], count=5))
    assert run_campaign(camp, busy_point, cluster=cluster.address).exit_code == 3      # every point a stand-in
    with Client(cluster.address, timeout="10s") as c:
        time.sleep(1.5)                                 # a profile cycle (1 s) after the last point
        states = c.run(profile_state)
    assert len(states) == 2
    for w, st in states.items():
        assert st == {"sampling": [], "kept": 0, "recent": 0}, (w, st)


def test_the_points_record_is_append_only_and_survives_a_torn_line(tmp_path) -> None:
    """points.jsonl gets one line per change; a line a crash cut short is cut off when the store opens again;
    pandas reads the record in one call; campaign.json's own points are a snapshot of it."""
    from mmanalysis.sweepplots import load_campaign, points_table

    calls: list[str] = []

    def fake(fields, stem, *, paced, profiler_kind="avr"):
        calls.append(stem)
        return {"error": "stand-in", "worker": "here"}

    camp = Campaign.open(tmp_path / "c", Plan(distance=[1, 2, 3], count=5, paced=True))
    assert run_campaign(camp, fake).exit_code == 3
    path = tmp_path / "c" / POINTS_FILE
    lines = path.read_text().splitlines()
    assert [json.loads(x)["name"] for x in lines] == calls and all(json.loads(x)["runs"] == 1 for x in lines)
    doc = json.loads((tmp_path / "c" / "campaign.json").read_text())
    assert doc["format_version"] == 2 and doc["points_file"] == POINTS_FILE
    with open(path, "ab") as f:
        f.write(b'{"name": "d1-rtick-isr-idle", "state": "do')           # a crash mid-line
    assert set(load_campaign(tmp_path / "c")["points"]) == {p.name for p in camp.plan.points()}
    table = points_table(tmp_path / "c")
    assert len(table) == 3 and set(table.state) == {"failed"} and (table.runs == 1).all()
    again = Campaign.open(tmp_path / "c", None)
    assert run_campaign(again, fake).exit_code == 3
    text = path.read_text()
    assert text.endswith("\n") and '"do\n' not in text and '"state": "do' not in text
    table = points_table(tmp_path / "c")
    assert len(table) == 3 and (table.runs == 2).all()
    # a store opened on a file whose last line was cut: cut back to the last whole line
    store = PointStore(tmp_path / "x.jsonl")
    (tmp_path / "x.jsonl").write_bytes(b'{"name": "a"}\n{"name": "b", "st')
    store.open()
    store.append({"name": "c"})
    store.close()
    assert (tmp_path / "x.jsonl").read_bytes() == b'{"name": "a"}\n{"name":"c"}\n'


def test_a_version_1_campaign_is_continued_with_its_points(tmp_path) -> None:
    """A folder of format version 1 (every point inside campaign.json, no points.jsonl) is read, its points
    that ran go into points.jsonl when it next runs, and only the rest run."""
    plan = Plan(distance=[1, 2], count=5, paced=True)
    camp = Campaign.open(tmp_path / "c", plan)
    camp.doc["points"]["d1-rtick-isr-idle"].update(state="failed", runs=1, error="old")
    camp.doc["format_version"] = 1
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "campaign.json").write_text(json.dumps(camp.doc))
    old = Campaign.open(tmp_path / "c", None)
    assert old.doc["points"]["d1-rtick-isr-idle"]["error"] == "old"
    calls: list[str] = []

    def fake(fields, stem, *, paced, profiler_kind="avr"):
        calls.append(stem)
        return {"error": "stand-in", "worker": "here"}

    run_campaign(old, fake)
    recs = [json.loads(x) for x in (tmp_path / "c" / POINTS_FILE).read_text().splitlines()]
    assert recs[0]["name"] == "d1-rtick-isr-idle" and recs[0]["error"] == "old"
    assert old.doc["points"]["d1-rtick-isr-idle"]["runs"] == 2 and calls == ["d1-rtick-isr-idle", "d2-rtick-isr-idle"]


def test_only_a_future_cancelled_for_the_lost_scheduler_is_the_cluster_lost() -> None:
    """Dask's own exception and reason, not words of its message: a task that raised or a future cancelled for
    another reason is a failed point."""
    from distributed.client import FutureCancelledError

    assert scheduler_lost(FutureCancelledError("k", "scheduler-connection-lost"))
    assert not scheduler_lost(FutureCancelledError("k", "lost dependencies"))
    assert not scheduler_lost(RuntimeError("scheduler-connection-lost"))


# What another local user does who found the sweep's port in /proc/net/tcp: connect without its credentials
# (plain, or with a certificate of its own) and run code on the scheduler. Prints REFUSED or RAN. With a uid it
# tries once as it is (which loads every module the attempt needs: the interpreter's own files are root's), then
# becomes that user and tries again.
INTRUDER = """
import os, sys
from distributed import Client
from distributed.security import Security
address, how, marker = sys.argv[1], sys.argv[2], sys.argv[3]

def attempt():
    kwargs = {"security": Security.temporary()} if how == "own-cert" else {}
    try:
        c = Client(address.replace("tls://", "tcp://") if how == "plain-tcp" else address, timeout="5s", **kwargs)
        uid = c.run_on_scheduler(lambda: __import__("pathlib").Path(marker).touch() or os.getuid())
        return f"RAN as uid {uid}"
    except Exception as exc:
        return f"REFUSED {type(exc).__name__}"

first = attempt()
if len(sys.argv) > 4:
    os.setgid(int(sys.argv[4]))
    os.setuid(int(sys.argv[4]))
    first = attempt() + f" as uid {os.getuid()}"
print(first)
"""


def intrude(address: str, how: str, marker: Path, uid: int | None = None) -> str:
    done = subprocess.run([sys.executable, "-c", INTRUDER, address, how, str(marker)]
                          + ([str(uid)] if uid is not None else []),
                          capture_output=True, text=True, timeout=90)
    return done.stdout.strip() or done.stderr.strip().splitlines()[-1]


@pytest.mark.alone
def test_the_local_cluster_is_the_users_alone_another_process_without_its_credentials_is_refused(
        tmp_path: Path) -> None:
    from mmrig.sweep.cluster import connect

    conn = connect(1, None)
    try:
        assert conn.address.startswith("tls://127.0.0.1:") and conn.desc["secured"], conn.desc
        workers = conn.client.scheduler_info()["workers"]
        assert workers and all(a.startswith("tls://") for a in workers), list(workers)
        assert conn.client.submit(sum, [40, 2]).result() == 42         # the sweep's own client is served
        marker = tmp_path / "intruder-was-here"
        for how in ("no-cert", "own-cert", "plain-tcp"):
            assert intrude(conn.address, how, marker).startswith("REFUSED"), how
        if os.getuid() == 0:                                            # another user of the machine, as it is
            got = intrude(conn.address, "no-cert", marker, uid=65534)
            assert got.startswith("REFUSED") and got.endswith("as uid 65534"), got
        assert not marker.exists()
    finally:
        conn.close()


def test_a_cluster_address_that_is_not_tls_is_warned_about() -> None:
    from mmrig.sweep.cluster import unsecured_warning

    assert "is not TLS" in unsecured_warning("tcp://10.0.0.5:8786")
    assert unsecured_warning("tls://10.0.0.5:8786") is None
