"""A paced bench run computed again from its record of its inputs (`NAME.inputs`, `mmrig replay`): the same
images, the PC's bytes put on the lines at the cycles they entered them, no PC in the loop. Every event's RESULT
and ACK must come out the same; a record whose moments are moved must not (the comparison can fail)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from mmanalysis import inputrecord
from mmhil import BenchEndpoint
from mmhil.bench import F_CPU, ensure_built
from mmhil.replay import ReplayError, checked_record, replay, script_text
from mmsched.model.config import RunConfig
from mmsched.run.runner import run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import RERECORD, recorded_run  # noqa: E402


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A paced mixed run, random ids (each SCHEDULE's moment on the host decides its ACK's phase)."""
    ensure_built()
    return recorded_run(tmp_path_factory.mktemp("replay"), "mixed")


def test_a_paced_run_replays_event_for_event(mixed_run: Path) -> None:
    c, fig = replay(mixed_run)
    assert c.events == 60 and c.compared == 60 and c.identical == 60 and c.exact, (RERECORD, c.differences[:3])
    assert fig["reads"] > 60 and fig["wall_s"] < fig["virtual_s"]


def test_the_command_says_so_and_exits_0(mixed_run: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mmrig", "replay", str(mixed_run)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, (RERECORD, done.stdout, done.stderr)
    assert "60 compared (RESULT, ACK or refusal), 60 identical, 0 differ" in done.stdout


def test_a_record_with_a_moment_moved_differs_from_the_run(mixed_run: Path, tmp_path: Path) -> None:
    """An executor read moved 3 ms later: the SCHEDULE it carries reaches the executor later, its ACK's phase
    differs, and the replay names that event first."""
    for name in ("csv", "json"):
        (tmp_path / f"mixed.{name}").write_bytes(mixed_run.with_suffix(f".{name}").read_bytes())
    record = inputrecord.read(mixed_run.with_suffix(".inputs"))
    k = len(record.reads) // 2
    while record.reads[k].node != "executor" or record.reads[k].data[1] != 0x20:   # a SCHEDULE's first read
        k += 1
    record.reads[k] = replace(record.reads[k], cycle=record.reads[k].cycle + 48_000)
    written = inputrecord.write(tmp_path / "mixed.inputs", record)
    # the sidecar vouches for the new record (else the replay refuses it as damaged, before simulating)
    meta = json.loads((tmp_path / "mixed.json").read_text())
    meta["inputs"].update(size=written.size, sha256=written.sha256, reads=written.reads)
    (tmp_path / "mixed.json").write_text(json.dumps(meta))
    c, _ = replay(tmp_path / "mixed.csv")
    assert not c.exact and c.differences and "ACK of tag" in c.differences[0]["what"], c.differences[:2]
    done = subprocess.run([sys.executable, "-m", "mmrig", "replay", str(tmp_path / "mixed.csv")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1 and "first difference: event" in done.stdout


def test_a_bad_record_is_one_line_naming_the_record_and_field(tmp_path: Path) -> None:
    p = tmp_path / "x.inputs"
    reads = [inputrecord.InputRead(12, "executor", 9600, bytes([2, 2, 4, 1])),
             inputrecord.InputRead(300, "executor", 9600, bytes([2, 2])),
             inputrecord.InputRead(301, "profiler", 500000, bytes(9))]
    inputrecord.write(p, inputrecord.InputRecord({"run": "x"}, reads))
    assert inputrecord.read(p).reads == reads                       # the rate written once a change: kept
    whole = p.read_bytes()
    body = len(whole) - whole.index(b"\n") - 1
    # a few bytes a frame, and its own bytes: (cycles, node, rate, length) 1+1+2+1 + 4, 2+1+1 + 2, 1+1+3+1 + 9
    assert body == 9 + 6 + 15
    p.write_bytes(whole[:-3])
    with pytest.raises(inputrecord.InputRecordError, match=r"x.inputs: record 3 .*BYTES: 9 announced, 6 left"):
        inputrecord.read(p)
    p.write_bytes(b"12 executor 9600 02\n")
    with pytest.raises(inputrecord.InputRecordError, match=r"x.inputs:1: not an mmrig input record"):
        inputrecord.read(p)


def test_the_bench_script_puts_each_read_at_its_cycle_at_its_rate() -> None:
    rec = inputrecord.InputRecord({}, [inputrecord.InputRead(39_689, "profiler", 9600, bytes([2, 2, 4, 1, 0])),
                                       inputrecord.InputRead(40_000, "executor", 115200, b"\x05")])
    assert script_text(rec) == "@39689 profiler baud=9600 02 02 04 01 00\n@40000 executor baud=115200 05\n"


@pytest.mark.paced
def test_a_break_stops_the_run_and_its_replay_traces_the_executor(tmp_path: Path) -> None:
    """`mmrig run --break-us`: task dispatch beside a 10 ms / 2 ms periodic load, whose job holds the timecode
    task off for up to 2 ms: the first event past 40 us stops generation, exit 102, and the printed command
    replays the run with the executor traced, the run identical event for event."""
    out = tmp_path / "brk"
    done = subprocess.run([sys.executable, "-m", "mmrig", "run", "--mode", "mixed", "--dispatch", "task",
                           "--executor-load", "cpu,periodic=10ms/2ms", "--break-us", "40", "--count", "300",
                           "--out", str(out)], capture_output=True, text=True, timeout=240)
    assert done.returncode == 102, done.stdout + done.stderr
    import json
    b = json.loads(out.with_suffix(".json").read_text())["break"]
    assert b["us"] == 40 and b["event"] is not None and (b["outcome"] == "late" or b["latency_us"] > 40), b
    line = next(x for x in done.stdout.splitlines() if x.startswith("replay it with the executor traced around it: "))
    cmd = line.split(": ", 1)[1].split()
    assert cmd[:2] == ["mmrig", "replay"] and cmd[cmd.index("--around") + 1] == str(b["event"])
    again = subprocess.run([sys.executable, "-m", "mmrig", *cmd[1:]], capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 differ" in again.stdout and "traced: brk.around.perfetto-trace" in again.stdout
    assert (tmp_path / "brk.around.perfetto-trace").stat().st_size > 10_000
    # the window (+-1 tick) holds the switch that made a late event late: its timecode edge's interrupt returns
    # into the load's periodic job, which holds the CPU longer than the break's 40 us before the timecode task runs
    # (up to its 2 ms: less when the edge came late in the job; which event breaks first depends on where the host
    # put the SCHEDULEs. An event that broke as missed, its SCHEDULE too late on a busy host, has no such switch)
    from mmanalysis import exectrace
    if b["outcome"] != "late":
        return
    segs = exectrace.timeline(exectrace.read(tmp_path / "brk.around.exectrace"))
    held = [(a, b2, c) for a, b2, c in zip(segs, segs[1:], segs[2:]) if a.kind == "isr" and "PCINT2" in str(a.name)
            and b2.name == "load_periodic" and c.name == "tc" and b2.end - b2.start > b["us"] * F_CPU // 1_000_000]
    assert held, "no timecode edge held off by the periodic job in the window"


def test_a_run_against_the_simulator_with_the_pcs_own_moments(mixed_run: Path, tmp_path: Path) -> None:
    """The stand-in for a board run: the PC's writes at its own moments, placed by the run's tick fit (as a board
    run knows them, NAME.pc.inputs), replayed on the bench: in mixed mode every event's latency is the run's (the
    executor fires at the tick's edge, whenever in the tick before its SCHEDULE came); the table and figure."""
    c, fig = replay(mixed_run, tmp_path, pc_moments=True)
    v = fig["vs_sim"]
    assert v["events"] == 60 and v["unmatched"] == 0 and v["identical"] == 60 and v["max_abs_diff_us"] == 0, v
    assert (tmp_path / "mixed.vs-sim.csv").read_text().startswith("event,run_us,sim_us,diff_us")
    assert (tmp_path / "mixed.vs-sim.png").stat().st_size > 10_000
    header = inputrecord.read(mixed_run.with_name("mixed.pc.inputs")).header
    assert header["time"] == "profiler" and header["fit"]["ticks"] > 50


def test_a_record_of_the_pcs_moments_that_lost_its_first_writes_is_refused(mixed_run: Path) -> None:
    """A run longer than its links keep writes for (mmproto.writelog.KEEP) lacks its first ones: its PC-moments
    record is not the run's, and a replay of it refuses in one line rather than run part of it as the whole."""
    sidecar = json.loads(mixed_run.with_suffix(".json").read_text())
    assert "complete" not in sidecar["pc_inputs"]        # (recorded before the field: every write was kept then)
    checked_record(mixed_run, sidecar, pc_moments=True)
    sidecar["pc_inputs"].update(complete=True, dropped=0)
    checked_record(mixed_run, sidecar, pc_moments=True)
    sidecar["pc_inputs"].update(complete=False, dropped=12)
    with pytest.raises(ReplayError, match="incomplete .12 of the PC's first writes dropped"):
        checked_record(mixed_run, sidecar, pc_moments=True)


@pytest.mark.paced
def test_a_normal_run_replays_with_the_benchs_own_commands_at_their_cycles(tmp_path: Path) -> None:
    """Normal mode's floor calibration puts probes into the profiler's receiver by the bench's `inject` (not the
    PC's bytes): the record keeps each such command with the cycle it took effect at, and the replay issues it
    there again (lockstep, between grants): every event identical."""
    out = tmp_path / "normal"
    result = run(RunConfig(mode="normal", count=40, out=out), BenchEndpoint())
    commands = inputrecord.read(out.with_suffix(".inputs")).header["commands"]
    assert result.sidecar["inputs"]["commands"] == len(commands) >= 1 and commands[0][1].startswith("inject profiler")
    c, _ = replay(out.with_suffix(".csv"))
    assert c.compared == 40 and c.identical == 40 and c.exact, c.differences[:3]
    assert any("issued again at their cycles (inject)" in n for n in c.notes)


@pytest.mark.paced
def test_the_executors_refusals_replay_too(tmp_path: Path) -> None:
    """The paper's 1-tick-ahead experiment, free-running: events created late in a tick are refused past_due by
    the executor; each refusal (its ERROR's tick) comes out the same in the replay, so every event is compared."""
    out = tmp_path / "free"
    result = run(RunConfig(mode="mixed", distance=1, generation="free", rate_ms=97.0, count=30, out=out),
                 BenchEndpoint())
    missed = result.summary["outcomes"]["missed"]
    c, _ = replay(out.with_suffix(".csv"))
    assert c.compared == 30 and c.identical == 30 and c.exact, c.differences[:3]
    assert missed > 0, "no event missed: the refusals were not exercised"


@pytest.mark.paced
def test_a_run_behind_a_usb_line_model_replays_behind_the_same(tmp_path: Path) -> None:
    """The record holds the PC's writes as it made them; the line model (here an FTDI at its 16 ms default) hands
    them to the nodes at USB frames and the nodes' bytes to the PC at its timer, so the replay's bench takes the
    run's model from the record: every event identical."""
    from mmhil.linemodel import LineModel

    out = tmp_path / "ftdi"
    result = run(RunConfig(mode="mixed", distance=1, count=30, out=out),
                 BenchEndpoint(line_model=LineModel.parse("ftdi")))
    assert inputrecord.read(out.with_suffix(".inputs")).header["target"]["line_model"] == \
        result.sidecar["target"]["line_model"] == LineModel.parse("ftdi").params()
    c, _ = replay(out.with_suffix(".csv"))
    assert c.compared == 30 and c.identical == 30 and c.exact, c.differences[:3]
