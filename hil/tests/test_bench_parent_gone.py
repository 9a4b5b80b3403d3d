"""A bench never outlives the process that started it, whatever ended that process (SIGKILL included), nor
leaves its run folder behind for good: it watches a pipe only its parent holds (`--parent-fd`), ends cleanly at
EOF, and a later Bench.start removes the /tmp/mmbench.* folders of benches that are gone. A bench started from
a thread that then ended keeps running: only the process's end counts."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mmhil import rundirs
from mmhil.bench import BENCH_BIN, EXECUTOR_ELF, PROFILER_ELF, Bench

GONE_WITHIN_S = 30.0    # generous: a noisy host, a paced bench at SCHED_FIFO; nothing here times the bench


def gone(pid: int) -> bool:
    """The process has ended (a zombie too: reparented to a PID 1 that does not reap, it has still ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return True


def wait_gone(pid: int, timeout: float = GONE_WITHIN_S) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.1)
    return gone(pid)


def bench_child(parent: int, timeout: float = 60.0) -> int:
    """The pid of PARENT's mmbench child (started by any of its threads), once its bench is ready."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for kids in Path(f"/proc/{parent}/task").glob("*/children"):
            try:
                pids = [int(p) for p in kids.read_text().split()]
            except OSError:
                continue
            for pid in pids:
                try:
                    is_bench = Path(f"/proc/{pid}/comm").read_text().strip() == "mmbench"
                    if is_bench and (run_dir_of(pid) / "ready").exists():
                        return pid
                except OSError:
                    continue
        time.sleep(0.1)
    raise AssertionError(f"no ready bench under pid {parent} within {timeout} s")


def run_dir_of(pid: int) -> Path:
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return Path(argv[argv.index(b"--run-dir") + 1].decode())


def backdate(folder: Path, seconds: float = 600.0) -> None:
    """As if the folder had been left long ago (the sweep leaves a folder alone for its first seconds)."""
    t = time.time() - seconds
    os.utime(folder, (t, t))


@pytest.mark.paced
@pytest.mark.parametrize("where", [["--unpaced"], []], ids=["lockstep", "paced"])
def test_sigkill_of_mmrig_run_ends_its_bench_and_the_bench_removes_the_folder(tmp_path: Path,
                                                                              where: list[str]) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "mmrig", "run", *where, "--count", "20000", "-q",
                             "-o", str(tmp_path / "r")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        pid = bench_child(proc.pid)
        folder = run_dir_of(pid)
        time.sleep(1.0)                       # the run is under way
        proc.kill()
        proc.wait(30)
        assert wait_gone(pid), f"bench {pid} still running {GONE_WITHIN_S} s after its mmrig run was killed"
    finally:
        proc.kill()
        proc.wait(30)
    # the folder its killed parent made for it (owner.pid names that parent): the bench removes it as it ends
    # (parent.c), since the parent's Bench.close never ran and no later Bench may come on that machine
    deadline = time.monotonic() + GONE_WITHIN_S
    while folder.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not folder.exists()


def start_mmbench(tmp_path: Path, *extra: str,
                  close_write_end_first: bool = False) -> tuple[subprocess.Popen[bytes], int | None, Path]:
    """mmbench started by hand with --parent-fd: the read end of a pipe whose write end only this test holds."""
    r, w = os.pipe()
    if close_write_end_first:                 # the parent gone before the bench even looked
        os.close(w)
        w = None  # type: ignore[assignment]
    log = tmp_path / "bench.log"
    with open(log, "wb") as f:
        proc = subprocess.Popen([str(BENCH_BIN), "--profiler", str(PROFILER_ELF), "--executor", str(EXECUTOR_ELF),
                                 "--parent-fd", str(r), *extra], stdout=subprocess.DEVNULL, stderr=f, pass_fds=(r,))
    os.close(r)
    return proc, w, log


def own_run_dir(log: Path, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> Path:
    """The run folder a bench started without --run-dir made for itself (its log's ready line names it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        m = re.search(r"ready: (\S+)/profiler\.tty", log.read_text(errors="replace"))
        if m:
            return Path(m.group(1))
        time.sleep(0.05)
    raise AssertionError(f"bench not ready: {log.read_text(errors='replace')[-2000:]}")


@pytest.mark.parametrize("mode", [["--lockstep"], [], ["--unpaced"]], ids=["lockstep", "paced", "unpaced"])
def test_mmbench_ends_cleanly_when_its_parent_fd_reads_eof(tmp_path: Path, mode: list[str]) -> None:
    proc, w, log = start_mmbench(tmp_path, *mode)
    try:
        folder = own_run_dir(log, proc)
        assert proc.poll() is None
        os.close(w)                           # what the parent's death does to the pipe
        assert proc.wait(GONE_WITHIN_S) == 0, log.read_text(errors="replace")[-2000:]
    finally:
        proc.kill()
        proc.wait()
    assert "parent" in log.read_text(errors="replace")
    assert not folder.exists()                # its own mkdtemp folder removed, as at any clean end


def test_mmbench_whose_parent_was_gone_before_it_started_ends_by_itself(tmp_path: Path) -> None:
    proc, _, log = start_mmbench(tmp_path, "--lockstep", close_write_end_first=True)
    try:
        assert proc.wait(GONE_WITHIN_S) == 0, log.read_text(errors="replace")[-2000:]
    finally:
        proc.kill()
        proc.wait()


def test_mmbench_sigterm_ends_cleanly_and_removes_its_own_folder(tmp_path: Path) -> None:
    proc, w, log = start_mmbench(tmp_path, "--lockstep")
    try:
        folder = own_run_dir(log, proc)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(GONE_WITHIN_S) == 0, log.read_text(errors="replace")[-2000:]
    finally:
        proc.kill()
        proc.wait()
        os.close(w)
    assert not folder.exists()


def test_mmbench_refuses_a_parent_fd_that_is_not_open(tmp_path: Path) -> None:
    r = subprocess.run([str(BENCH_BIN), "--profiler", str(PROFILER_ELF), "--executor", str(EXECUTOR_ELF),
                        "--lockstep", "--parent-fd", "999", "--run-dir", str(tmp_path / "run")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--parent-fd" in r.stderr.strip().splitlines()[-1], r.stderr


def test_bench_started_from_a_thread_that_ended_keeps_running() -> None:
    got: list[Bench] = []
    t = threading.Thread(target=lambda: got.append(Bench(lockstep=True).start()))
    t.start()
    t.join()
    bench = got[0]
    try:
        time.sleep(1.0)                       # a bench tied to the thread (PDEATHSIG) would be ending now
        assert bench.alive() and bench.status()["ok"]
    finally:
        bench.close()
    assert bench.process is not None and bench.process.returncode == 0


def test_sweep_removes_only_folders_of_benches_that_are_gone(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])         # a pid that has ended (reused only after a wrap-around)
    dead.wait()
    folders = {}

    def folder(name: str, **files: str) -> Path:
        d = tmp_path / f"mmbench.{name}"
        d.mkdir(mode=0o700)
        for fname, text in files.items():
            (d / fname.replace("_", ".")).write_text(text)
        backdate(d)
        folders[name] = d
        return d

    folder("owner_gone", owner_pid=f"{dead.pid}\n", bench_log="x")
    folder("bench_gone", ready=f'{{"pid":{dead.pid},"profiler":"x"}}\n')
    folder("ready_pid_not_a_bench", ready=f'{{"pid":{os.getpid()},"profiler":"x"}}\n')   # a reused pid
    folder("owner_alive", owner_pid=f"{os.getpid()}\n")
    folder("no_record", bench_log="x")                       # not shown to be a bench's: left alone
    young = folder("young", owner_pid=f"{dead.pid}\n")
    os.utime(young)                                          # just made: may be a bench setting up
    if os.getuid() == 0:                                     # (only root can make a folder another user owns)
        os.chown(folder("other_user", owner_pid=f"{dead.pid}\n"), 65534, 65534)
    (tmp_path / "mmbench.link").symlink_to(folders["owner_gone"])

    removed = rundirs.sweep_stale_run_dirs(tmp_path)
    assert sorted(p.name for p in removed) == ["mmbench.bench_gone", "mmbench.owner_gone",
                                               "mmbench.ready_pid_not_a_bench"]
    for name, d in folders.items():
        assert d.exists() == (name in ("owner_alive", "no_record", "young", "other_user")), name
    assert (tmp_path / "mmbench.link").is_symlink()          # never followed, never removed


def test_bench_records_its_owner_in_its_folder(tmp_path: Path) -> None:
    with Bench(lockstep=True) as bench:
        assert bench.run_dir is not None
        assert (bench.run_dir / "owner.pid").read_text().strip() == str(os.getpid())
        assert bench.run_dir.name.startswith("mmbench.")
    assert rundirs.STALE_AFTER_S <= 10
