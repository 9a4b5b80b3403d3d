"""Named PC load conditions: the names, the stress-ng command of each (no process), the network
condition kept on a loopback of its own, one short real run under --load cpu, the load ending with a run killed
with SIGKILL, and a paced run in phases killed in its second phase, whose journal says where its phases began."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from mmsched.model import load as L
from mmsched.model.config import RunConfig

MMRIG = [sys.executable, "-m", "mmrig"]
TMP = Path("/tmp/mmrig-load.X")
TAIL = ["--timeout", "10s", "--quiet"]


def test_condition_names_and_the_old_bool() -> None:
    assert L.CONDITIONS == ("idle", "cpu", "memory", "disk", "network", "heavy", "all")
    for name in L.CONDITIONS:
        assert L.condition(name) == name and RunConfig(load=name).load == name
    # the format before named loads: config.load was a bool
    assert L.condition(True) == "heavy" and L.condition(False) == "idle" and L.condition(None) == "idle"
    assert RunConfig(load=True).load == "heavy" and RunConfig(load=False).load == "idle"
    assert RunConfig().load == "idle"
    for bad in ("gpu", "CPU", "", 1, "true"):
        with pytest.raises(ValueError, match="--load must be one of idle, cpu, memory, disk, network, heavy, all"):
            L.condition(bad)


def test_stress_ng_argv_per_condition() -> None:
    cmd = {c: L.stress_command(c, 9.2, TMP, cpus=3) for c in L.CONDITIONS}
    assert cmd["idle"] == []
    assert cmd["cpu"] == ["stress-ng", "--cpu", "3", "--cpu-method", "matrixprod", *TAIL]
    assert cmd["memory"] == ["stress-ng", "--vm", "1", "--vm-bytes", "256M", *TAIL]
    assert cmd["disk"] == ["stress-ng", "--hdd", "1", "--hdd-bytes", "64M", "--temp-path", str(TMP), *TAIL]
    netns = ["unshare", "--net", "--map-root-user", "sh", "-c", 'ip link set lo up && exec "$0" "$@"']
    assert cmd["network"] == [*netns, "stress-ng", "--sock", "1", "--sock-if", "lo", "--udp", "1", "--udp-if", "lo",
                              *TAIL]
    # heavy: the paper's mix (cpu + memory + disk in one stress-ng), on the host: no namespace needed
    assert cmd["heavy"] == ["stress-ng", "--cpu", "3", "--cpu-method", "matrixprod", "--vm", "1", "--vm-bytes", "256M",
                            "--hdd", "1", "--hdd-bytes", "64M", "--temp-path", str(TMP), *TAIL]
    # all: heavy plus the network stressors, in the namespace
    assert cmd["all"] == [*netns, "stress-ng", "--cpu", "3", "--cpu-method", "matrixprod", "--vm", "1", "--vm-bytes",
                          "256M", "--hdd", "1", "--hdd-bytes", "64M", "--temp-path", str(TMP), "--sock", "1",
                          "--sock-if", "lo", "--udp", "1", "--udp-if", "lo", *TAIL]
    assert L.stress_command("cpu", 0.2, TMP)[2] == str(os.cpu_count() or 2)   # default: every CPU
    assert L.stress_command("cpu", 0.2, TMP)[-3:-1] == ["--timeout", "1s"]     # at least a second


def test_network_condition_sees_only_its_own_loopback() -> None:
    """The namespace the network stressors run in has one interface, lo, up: nothing reaches the host's network."""
    if L.unavailable("network"):
        pytest.skip(L.unavailable("network"))
    p = subprocess.run([*L.NETNS_PREFIX, "ip", "-o", "link"], capture_output=True, text=True, timeout=20)
    assert p.returncode == 0, p.stderr
    links = [line.split(":")[1].strip() for line in p.stdout.splitlines()]
    assert links == ["lo"] and "UP" in p.stdout


def test_unavailable_without_stress_ng(monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert L.unavailable("idle") is None
    for name in L.CONDITIONS[1:]:
        assert "stress-ng is not installed" in L.unavailable(name)


def test_short_run_under_cpu_load_records_the_condition_and_command(tmp_path: Path) -> None:
    from mmhil.bench import ensure_built
    if L.unavailable("cpu"):
        pytest.skip(L.unavailable("cpu"))
    ensure_built()
    out = tmp_path / "cpu"
    p = subprocess.run([*MMRIG, "run", "--unpaced", "-q", "--count", "4", "--load", "cpu", "-o", str(out)],
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["config"]["load"] == "cpu" and meta["load"]["condition"] == "cpu"
    cmd = meta["load"]["command"]
    assert cmd[:2] == ["stress-ng", "--cpu"] and "matrixprod" in cmd and "--vm" not in cmd
    assert meta["summary"]["outcomes"]["ok"] == 4


def test_old_flag_without_a_value_is_all() -> None:
    from mmrig.cli import build_parser
    parser = build_parser()
    args = parser.parse_args(["run", "--load", "-o", "x"])
    assert args.load == "heavy" and RunConfig(load=args.load).load == "heavy"
    assert parser.parse_args(["run"]).load == "idle"
    assert parser.parse_args(["run", "--load", "disk"]).load == "disk"


def test_a_load_that_cannot_start_ends_the_run_invalid_not_with_a_traceback(tmp_path, monkeypatch) -> None:
    # the entry points refuse it first (exit 2); a run started some other way (the demo, a script) ends with the
    # reason load_unavailable and its files, as the fresh machine without `ip` showed it must
    from mmhil import LockstepEndpoint
    from mmhil.bench import ensure_built
    from mmsched.model import load as L
    from mmsched.model.config import RunConfig
    from mmsched.run.runner import run

    ensure_built()
    monkeypatch.setattr(L, "unavailable", lambda name: "ip is not installed (util-linux / iproute2)")
    result = run(RunConfig(mode="mixed", count=4, load="network", out=tmp_path / "r"), LockstepEndpoint())
    assert not result.valid and result.reasons[0] == "load_unavailable"
    assert "ip is not installed" in result.sidecar["invalid_reason"] and (tmp_path / "r.csv").is_file()


KILLED_WITH_ITS_LOAD = """
import os, signal, sys, threading, time
from mmsched.model.load import Load
from mmsched.model.phasedload import PhasedLoad
from mmsched.model.phaseplan import PhasePlan
import time
if sys.argv[1] == "load":
    load = Load(600, "cpu").start()
    print(load.process.pid, flush=True)
else:        # in phases: the second phase's stress-ng is started by the switching thread, which has ended since
    t0 = time.monotonic()
    load = PhasedLoad(PhasePlan.parse("idle:0.2s,cpu:600s"), time.monotonic, t0, 600).start()
    while load.current is None or load.current.process is None:
        time.sleep(0.05)
    time.sleep(0.5)
    print(load.current.process.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)     # the run's process killed: no stop(), no finally
"""


def group_alive(pgid: int) -> bool:
    """A process of group PGID still runs (a zombie, ended but not yet reaped by whoever adopted it, does not)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


@pytest.mark.parametrize("how", ["load", "phases"])
def test_the_load_ends_with_the_runs_process_even_when_it_is_killed(how: str) -> None:
    """A run killed with SIGKILL (a long run in its fifth hour, the OOM killer) can stop nothing itself: its stress-ng
    must not load the machine on for the rest of its --timeout (hours, for a long run)."""
    if L.unavailable("cpu"):
        pytest.skip(L.unavailable("cpu"))
    p = subprocess.run([sys.executable, "-c", KILLED_WITH_ITS_LOAD, how], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert p.returncode == -9, p.stderr
    pgid = int(p.stdout.split()[0])
    deadline = time.monotonic() + 10
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = group_alive(pgid)
    if alive:
        os.killpg(pgid, 9)
    assert not alive, "stress-ng outlived the run's process"


@pytest.mark.paced
def test_a_run_in_phases_killed_in_its_second_phase_says_where_its_phases_began(tmp_path: Path) -> None:
    """A real paced run in phases killed with SIGKILL a moment into its second phase (a long run dying in its fifth
    hour): its journal's sidecar has both phases' starts, as they happened (the first's end too, the second's
    none), and `mmrig report` of the journal has a row per phase, the run marked incomplete."""
    from mmhil.bench import ensure_built
    if L.unavailable("cpu"):
        pytest.skip(L.unavailable("cpu"))
    ensure_built()
    out = tmp_path / "ph"
    meta_path, rows_path = tmp_path / "ph.partial.json", tmp_path / "ph.partial.csv"
    run = subprocess.Popen([*MMRIG, "run", "--mode", "normal", "--phases", "idle:3s,load=cpu:120s", "-o", str(out)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline, phases = time.monotonic() + 180, []
        while time.monotonic() < deadline and run.poll() is None:
            try:
                phases = json.loads(meta_path.read_text()).get("phases") or []
            except (OSError, ValueError):        # not written yet (the journal is opened after set-up)
                phases = []
            if len(phases) == 2 and phases[1]["start_s"] is not None:
                break
            time.sleep(0.1)
        assert len(phases) == 2 and phases[1]["start_s"] is not None, \
            run.stderr.read() if run.poll() is not None else phases
        time.sleep(2.0)                          # rows of the second phase in the journal
    finally:
        run.kill()                               # SIGKILL: no stop(), no finally, no files written at the end
        stderr = run.communicate(timeout=60)[1]
    assert run.returncode == -9, stderr
    assert not out.with_suffix(".csv").exists() and not out.with_suffix(".json").exists()
    meta = json.loads(meta_path.read_text())
    assert meta["incomplete"] is True and meta["config"]["phases_text"] == "idle:3s,load=cpu:120s"
    idle, cpu = meta["phases"]
    assert (idle["name"], idle["command"], cpu["name"]) == ("idle", None, "cpu")
    assert cpu["command"][:2] == ["stress-ng", "--cpu"] and cpu["error"] is None
    assert idle["start_s"] == pytest.approx(0.0, abs=0.05) and idle["end_s"] == pytest.approx(3.0, abs=0.5)
    assert idle["end_s"] <= cpu["start_s"] < idle["end_s"] + 1.0 and cpu["end_s"] is None   # killed in it
    assert f"phase 2/2 cpu from {cpu['start_s']:.3f} s" in stderr

    rows = pd.read_csv(rows_path)
    assert (rows["sent_s"] >= cpu["start_s"]).any()
    r = subprocess.run([*MMRIG, "report", str(rows_path), "--out", str(tmp_path / "rep"), "--no-figures",
                        "--no-trace"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "invalid: incomplete" in md.split("## Runs left out")[1]
    table = md.split("## Runs in phases, incomplete (never a result)")[1].split("\n## ")[0]
    name = meta["name"]
    lines = {line.split(" | ")[1]: line.split(" | ") for line in table.splitlines() if line.startswith(f"| {name} |")}
    assert list(lines) == ["idle", "cpu", "whole"], table
    assert lines["cpu"][3] == f"{cpu['start_s']:.3f}" and lines["cpu"][4] == "-" and lines["whole"][4] == "-"
    assert int(lines["idle"][5]) > 0 and int(lines["cpu"][5]) > 0
    assert int(lines["idle"][5]) + int(lines["cpu"][5]) + int(lines["cpu"][6]) <= int(lines["whole"][5]) == len(rows)
    assert f"{name}: ended in phase cpu" in table
