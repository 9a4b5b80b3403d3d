"""Nothing lost, nothing misattributed: the bench's run directory, the control channel's
file names, its clients and its JSON replies (the test fixture image in both slots)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mmhil.bench import BENCH_BIN, EXECUTOR_ELF, FIXTURE_ELF, PROFILER_ELF, Bench, BenchError, exchange

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import fixture_bench  # noqa: E402


def raw(bench: Bench, line: str, timeout: float = 5.0) -> bytes:
    """One command on a fresh connection; the reply line as bytes (not parsed, not checked)."""
    return exchange(bench.control_path, line, timeout)


def run_bench_once(run_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BENCH_BIN), "--profiler", str(FIXTURE_ELF), "--executor", str(FIXTURE_ELF),
                           "--run-dir", str(run_dir), "--unpaced", "--until", "0.001"],
                          capture_output=True, text=True, timeout=20)


# ---- 1. run directory ----------------------------------------------------------------------------

def test_run_dir_is_created_private(tmp_path: Path) -> None:
    d = tmp_path / "new"
    r = run_bench_once(d)
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(d.stat().st_mode) == 0o700


def test_run_dir_writable_by_others_or_not_ours_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    r = run_bench_once(shared)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "writable by group or others" in r.stderr
    assert not (shared / "control.sock").exists()
    if os.getuid() == 0:     # as root the directory can be given to someone else
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 65534, 65534)
        r = run_bench_once(theirs)
        assert r.returncode == 2 and "owned by uid 65534" in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("option", ["--vcd", "--trace", "--exec-trace"])
def test_a_file_of_the_run_replaces_a_planted_link_never_writing_through_it(tmp_path: Path, option: str) -> None:
    """--vcd, --trace, --exec-trace name a file in a folder others may write to (a shared 1777 one): a link
    planted under that name (as root: owned by nobody, as the attacker's) is replaced by the bench's own file,
    and the file it pointed to is left as it was."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = shared / "lab.out"
    out.symlink_to(victim)
    if os.getuid() == 0:
        os.lchown(out, 65534, 65534)
    r = subprocess.run([str(BENCH_BIN), "--profiler", str(PROFILER_ELF), "--executor", str(EXECUTOR_ELF),
                        "--run-dir", str(tmp_path / "run"), "--unpaced", "--until", "0.01", option, str(out)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "precious\n"
    assert not out.is_symlink() and out.stat().st_size > 0
    assert [p.name for p in shared.iterdir()] == ["lab.out"]        # no temporary file left beside it


def test_the_ready_file_is_written_whole_under_a_name_of_its_own(tmp_path: Path) -> None:
    """ready is made as every file of the bench is: a new temporary file renamed over it (never the fixed
    ready.tmp a link could be planted under), gone again when the bench ends."""
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (run / "ready.tmp").symlink_to(victim)
    r = run_bench_once(run)
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "precious\n"
    assert not (run / "ready").exists()
    assert sorted(p.name for p in run.iterdir() if p.name.endswith(".tmp")) == ["ready.tmp"]


def bad_run_dirs(tmp_path: Path) -> list[Path]:
    """Run folders that are not the user's own: a link to one of ours, one anybody can write to, and (as root,
    who can give it away) one of another user's."""
    ours = tmp_path / "ours"
    ours.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(ours)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    dirs = [link, shared]
    if os.getuid() == 0:
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 65534, 65534)
        dirs.append(theirs)
    return dirs


def test_bench_refuses_a_run_dir_not_the_users_own_before_writing_into_it_in_mmbenchs_words(
        tmp_path: Path) -> None:
    for run_dir in bad_run_dirs(tmp_path):
        with pytest.raises(BenchError) as exc:
            Bench(profiler_elf=FIXTURE_ELF, executor_elf=FIXTURE_ELF, run_dir=run_dir, paced=False).start()
        theirs = run_bench_once(run_dir)       # mmbench's own check of the same folder: the same rule, same words
        assert theirs.returncode == 2
        assert str(exc.value) == theirs.stderr.strip().removeprefix("mmbench: "), run_dir
        assert list(run_dir.iterdir()) == [], f"{run_dir}: written into before it was refused"


def test_bench_log_and_final_status_never_written_through_a_link_in_the_run_dir(tmp_path: Path) -> None:
    """A run folder of the user's own that holds links under bench.log and final_status.json (left there, or
    planted before it was made private): the links go, the files they point to stay as they were."""
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    for name in ("bench.log", "final_status.json"):
        (run_dir / name).symlink_to(victim)
    with Bench(profiler_elf=FIXTURE_ELF, executor_elf=FIXTURE_ELF, run_dir=run_dir, paced=False) as bench:
        bench.status()
    assert victim.read_text() == "precious\n"
    assert bench.final_status is not None and "virtual_s" in bench.final_status
    for name in ("bench.log", "final_status.json"):
        assert not (run_dir / name).is_symlink() and (run_dir / name).stat().st_size > 0


# ---- 2. vcd on FILE ------------------------------------------------------------------------------

def test_vcd_file_only_a_plain_name_in_the_run_dir_never_through_a_symlink(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    with fixture_bench(tmp_path, paced=False) as bench:
        run = Path(bench.run_dir)
        (run / "planted.vcd").symlink_to(victim)
        for bad in (str(tmp_path / "elsewhere.vcd"), "../up.vcd", "..", "a/b.vcd"):
            reply = json.loads(raw(bench, f"vcd on {bad}"))
            assert reply["ok"] is False and "plain file name" in reply["error"], bad
        reply = json.loads(raw(bench, "vcd on planted.vcd"))
        assert reply["ok"] is False and "symlink" in reply["error"]
        assert victim.read_text() == "precious\n"
        reply = bench.vcd(True, Path("good.vcd"))
        assert reply["vcd"] == str(run / "good.vcd")
        bench.vcd(False)
        assert stat.S_IMODE((run / "good.vcd").stat().st_mode) == 0o600
        assert (run / "good.vcd").read_text().startswith("$comment")
    assert not (tmp_path / "elsewhere.vcd").exists() and not (tmp_path / "up.vcd").exists()


# ---- 4. JSON escaping ----------------------------------------------------------------------------

def test_words_and_paths_are_escaped_in_json(tmp_path: Path) -> None:
    run_dir = tmp_path / 'run "quoted" \\ dir'
    with Bench(profiler_elf=FIXTURE_ELF, executor_elf=FIXTURE_ELF, run_dir=run_dir, paced=False) as bench:
        reply = json.loads(raw(bench, 'reset a"b\\'))
        assert reply["ok"] is False and 'a"b\\' in reply["error"]
        reply = json.loads(raw(bench, 'nosuch\x01"cmd'))
        assert reply["ok"] is False and 'nosuch\x01"cmd' in reply["error"]
        bench.vcd(True, Path('w"x.vcd'))
        st = json.loads(raw(bench, "status"))
        assert st["run_dir"] == str(run_dir)
        assert st["vcd"] == str(run_dir / 'w"x.vcd')
        assert st["nodes"]["profiler"]["tty"] == str(run_dir / "profiler.tty")
        ready = json.loads((run_dir / "ready").read_text())
        assert ready["control"] == str(run_dir / "control.sock")


# ---- 3. control clients never stall the simulation -----------------------------------------------

def test_a_client_that_stops_reading_gets_no_more_of_the_benchs_time_and_loses_nothing(tmp_path: Path) -> None:
    """A client sends status commands and never reads the replies (a flood): once 256 KiB of replies wait for
    it the bench serves it no more commands, so its own writes block (backpressure) and it costs the bench
    nothing; meanwhile the simulation and the other clients go on; when it reads at last, every reply is there,
    one per command served, none cut. (Before, the bench served the flood until 16 MiB of replies piled up
    and then dropped the client: a paced bench's lag went from 6 to 63-90 ms on the way.)"""
    with fixture_bench(tmp_path, paced=False) as bench:
        hog = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        hog.connect(str(bench.control_path))
        hog.setblocking(False)
        sent = 0
        blocked_since = None
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30:
            try:
                sent += hog.send(b"status\n" * 50) // len(b"status\n")
                blocked_since = None
            except BlockingIOError:
                blocked_since = blocked_since or time.monotonic()
                if time.monotonic() - blocked_since > 0.5:      # its writes stay blocked: it is no longer served
                    break
                time.sleep(0.001)
        try:
            v0 = json.loads(raw(bench, "status", timeout=5.0))["virtual_s"]   # another client is served
            time.sleep(0.2)
            st = json.loads(raw(bench, "status", timeout=5.0))
            assert st["virtual_s"] > v0                                         # still simulating
            assert st["control"]["dropped_clients"] == 0 and st["control"]["deferred"] > 0
            # what it owes the hog is bounded by the backlog, not by the 16 MiB a client may be owed
            assert 0 < st["control"]["out_buffered"] < (256 << 10) + 64 * 1024, st["control"]
            hog.setblocking(True)
            hog.shutdown(socket.SHUT_WR)                # reads everything now: served to the end, nothing cut
            hog.settimeout(30)
            data = b""
            while chunk := hog.recv(1 << 16):
                data += chunk
        finally:
            hog.close()
        replies = data.split(b"\n")
        assert replies[-1] == b""                                           # whole lines only
        assert all(json.loads(r)["ok"] for r in replies[:-1])
        assert len(replies) - 1 == sent                                     # one reply per command sent


def test_a_full_table_drops_the_longest_idle_client_else_refuses(tmp_path: Path) -> None:
    with fixture_bench(tmp_path, paced=False) as bench:
        idle = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(8)]
        for s in idle:
            s.connect(str(bench.control_path))
        time.sleep(1.2)
        assert json.loads(raw(bench, "status"))["ok"] is True      # an idle client made room
        # the eight are now all busy: each has just sent a command
        busy = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(8)]
        for s in busy:
            s.settimeout(5)
            s.connect(str(bench.control_path))
            s.sendall(b"status\n")
            data = b""
            while not data.endswith(b"\n"):
                data += s.recv(65536)
            assert json.loads(data)["ok"] is True
        # each of the eight asks again, all at once, and the ninth comes right after: none has been idle a second
        # then, unless this process was held off that long (a loaded host), when the rule makes room instead
        t0 = time.monotonic()
        for s in busy:
            s.sendall(b"status\n")
        for s in busy:
            data = b""
            while not data.endswith(b"\n"):
                data += s.recv(65536)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:   # the ninth: refused, then closed
            s.settimeout(5)
            s.connect(str(bench.control_path))
            held_off = time.monotonic() - t0 > 0.9
            data = b""
            try:
                while chunk := s.recv(65536):
                    data += chunk
            except TimeoutError:
                assert held_off, "the ninth was neither refused nor made room for"
                s.settimeout(30)
                s.sendall(b"status\n")                                 # it took an idle one's place
                while not data.endswith(b"\n"):
                    data += s.recv(65536)
                assert json.loads(data)["ok"] is True
                return
        reply = json.loads(data)
        assert reply["ok"] is False and "too many control clients" in reply["error"]
        for s in busy:
            s.close()
        time.sleep(0.05)
        st = bench.status()["control"]
        assert st["evicted_clients"] >= 8 and st["refused_clients"] == 1
        for s in idle:
            s.close()


def test_the_grant_connection_survives_being_evicted_while_idle(tmp_path: Path) -> None:
    """Bench.grant's persistent connection, idle past 1 s when eight other clients fill the table, is
    evicted by the eighth; the next grant opens it again (in the place of an idle one)."""
    with fixture_bench(tmp_path, lockstep=True) as bench:
        bench.grant(16_000, frame=False)
        time.sleep(1.1)
        others = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(8)]
        for s in others:
            s.connect(str(bench.control_path))
        time.sleep(1.1)      # the others idle too: the grant's new connection takes the place of one
        try:
            assert bench.grant(32_000, frame=False)["cycle"] == 32_000
            assert bench.status()["control"]["evicted_clients"] >= 1
        finally:
            for s in others:
                s.close()
