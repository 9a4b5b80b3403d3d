"""`mmrig sweep`: a small lockstep grid through a two-worker local Dask cluster (every point's
files in the campaign folder, the campaign's sidecar, the figure), resuming (only the point whose files went
missing or do not match runs again), bad input (one line, exit 2), and the grid's parts one by one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmhil.bench import ensure_built
from mmrig.cli import main
from mmrig.sweep.campaign import (NOMINAL_TICK_MS, Campaign, Plan, SweepError, canonical_rate,
                           parse_distances, parse_rates, rate_fields)
from mmanalysis.sweepplots import min_safe_distance

GRID = ["sweep", "--distance", "1..2", "--dispatch", "isr", "--count", "30", "--workers", "2", "-q"]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> tuple[Path, int]:
    ensure_built()
    out = tmp_path_factory.mktemp("sweep") / "camp"
    return out, main([*GRID, "--out", str(out)])


def doc(folder: Path) -> dict:
    return json.loads((folder / "campaign.json").read_text())


def test_grid_on_a_two_worker_cluster(campaign) -> None:
    out, code = campaign
    assert code == 0
    d = doc(out)
    assert d["format"] == "mmrig-campaign" and d["status"] == "complete"
    assert d["axes"]["distance"] == [1, 2] and d["options"]["count"] == 30 and not d["options"]["paced"]
    assert d["cluster"]["kind"] == "local" and d["cluster"]["workers"] == 2
    assert d["started"] and d["ended"] and d["mmrig_version"]
    assert set(d["points"]) == {"d1-rtick-isr-idle", "d2-rtick-isr-idle"}
    for name, e in d["points"].items():
        assert e["state"] == "done" and e["valid"] and e["runs"] == 1, e
        assert e["summary"]["events"] == 30 and e["summary"]["on_time_share"] == 1.0, e
        for suffix in (".csv", ".json"):
            assert (out / "points" / f"{name}{suffix}").is_file()
        side = json.loads((out / "points" / f"{name}.json").read_text())
        assert side["campaign"]["point"] == name and side["config"]["distance"] == e["values"]["distance"]
        assert side["config"]["out"] == str(out / "points" / name)
    assert d["totals"]["virtual_s"] > 4
    for fmt in ("png", "svg"):
        assert (out / "figures" / f"on_time.{fmt}").stat().st_size > 1000
    # the points are normal runs: the analysis reads the folder (CSV hash checked)
    from mmanalysis.reader import read_runs

    assert len(read_runs(out / "points").meta) == 2


def test_the_report_of_a_campaigns_points_shows_its_figure(campaign, tmp_path) -> None:
    from mmanalysis.report import report

    out, code = campaign
    paths = report(out / "points", tmp_path / "rep")
    assert (tmp_path / "rep" / "figures" / "on-time-camp.png").stat().st_size > 1000
    assert "![On-time share against distance, campaign camp.](figures/on-time-camp.png)" in paths["md"].read_text()


def test_resume_runs_only_what_is_missing(campaign, capsys) -> None:
    out, code = campaign
    assert code == 0
    (out / "points" / "d2-rtick-isr-idle.csv").unlink()
    capsys.readouterr()
    assert main([*GRID, "--out", str(out)]) == 0
    assert "1 run now, 1 already complete" in capsys.readouterr().out
    d = doc(out)
    assert d["points"]["d2-rtick-isr-idle"]["runs"] == 2
    assert d["points"]["d1-rtick-isr-idle"]["runs"] == 1
    assert len(d["sessions"]) == 2 and d["status"] == "complete"
    # a CSV that does not match its sidecar's hash (cut short) is not complete either; --resume alone continues
    csv = out / "points" / "d1-rtick-isr-idle.csv"
    csv.write_text(csv.read_text()[:200])
    assert main(["sweep", "--resume", "--out", str(out), "--workers", "2", "-q"]) == 0
    d = doc(out)
    assert d["points"]["d1-rtick-isr-idle"]["runs"] == 2 and d["points"]["d2-rtick-isr-idle"]["runs"] == 2
    # nothing left to do: nothing runs
    assert main([*GRID, "--out", str(out)]) == 0
    assert doc(out)["points"]["d1-rtick-isr-idle"]["runs"] == 2
    # other axes in the same folder: refused
    assert main(["sweep", "--distance", "1..3", "--count", "30", "--out", str(out)]) == 2


@pytest.mark.parametrize("argv, words", [
    (["--distance", "0..2"], "--distance: '0..2': distances are 1..255"),
    (["--distance", "3..1"], "empty range"),
    (["--distance", "x"], "not a whole number"),
    (["--distance", "1", "--dispatch", "isr,fast"], "--dispatch: unknown value 'fast'"),
    (["--distance", "1", "--rate", "soon"], "--rate: 'soon'"),
    (["--distance", "1", "--load", "cpu"], "use --paced"),
    (["--distance", "1", "--load", "gpu", "--paced"], "--load: unknown value 'gpu'"),
    (["--distance", "1", "--count", "0"], "--count must be at least 1"),
    (["--distance", "1", "--mode", "normal"], "add --paced"),
    (["--distance", "1", "--workers", "0"], "--workers must be at least 1"),
    (["--distance", "1", "--paced", "--workers", "2"], "no --workers or --cluster with --paced"),
    (["--distance", "1", "--baud", "fast"], "--baud must be a rate in hundreds of baud, not 'fast'"),
    (["--distance", "1", "--baud", "9600,115250"], "--baud must be a rate in hundreds of baud"),
    (["--distance", "1", "--rate", ""], "--rate: empty value in ''"),
    (["--distance", "1", "--baud", ""], "--baud: empty value in ''"),
    (["--distance", "1", "--dispatch", ""], "--dispatch: empty value in ''"),
    (["--distance", "1", "--load", ""], "--load: empty value in ''"),
    (["--distance", ""], "--distance: empty value in ''"),
    ([], "--distance is required"),
    (["--resume"], "--resume: no campaign"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, words) -> None:
    assert main(["sweep", *argv, "--out", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("mmrig sweep: ") and words in err, err
    assert not (tmp_path / "c" / "points").exists()


def test_cluster_that_cannot_be_reached(tmp_path, capsys, monkeypatch) -> None:
    from mmrig.sweep import cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 2.0)    # a refused port: Dask retries it until then
    assert main(["sweep", "--distance", "1", "--count", "5", "--cluster", "tcp://127.0.0.1:1",
                 "--out", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("mmrig sweep: --cluster: cannot reach"), err
    # nothing written: the folder is not locked to these axes
    assert not (tmp_path / "c").exists()
    assert main(["sweep", "--distance", "2", "--count", "5", "--cluster", "tcp://127.0.0.1:1",
                 "--out", str(tmp_path / "c")]) == 2
    assert "other axes" not in capsys.readouterr().err


def test_axes_and_names() -> None:
    assert parse_distances("1..4") == [1, 2, 3, 4] and parse_distances("4,1,2..3") == [1, 2, 3, 4]
    assert parse_rates("tick,2ticks,50ms") == ["tick", "2ticks", "50ms"]
    assert [canonical_rate(r) for r in ("1tick", "2tick", "50", "50.0ms")] == ["tick", "2ticks", "50ms", "50ms"]
    assert rate_fields("tick") == {"rate_ms": None, "generation": "aligned"}
    assert rate_fields("2ticks")["generation"] == "aligned"
    assert round(rate_fields("2ticks")["rate_ms"] / NOMINAL_TICK_MS) == 2
    assert rate_fields("50ms") == {"rate_ms": 50.0, "generation": "free"}
    with pytest.raises(SweepError):
        parse_distances("0")
    # --generation periodic: an ms rate is the executor's series at that interval; ticks stay tick-aligned
    periodic = Plan(distance=[1], rate=["tick", "1ms"], generation="periodic")
    assert [periodic.run_fields(p)["generation"] for p in periodic.points()] == ["aligned", "periodic"]
    assert Plan.from_doc({"axes": periodic.axes, "options": periodic.options}).generation == "periodic"
    with pytest.raises(SweepError, match="mixed mode only"):
        Plan(distance=[1], rate=["1ms"], mode="verification", generation="periodic")
    with pytest.raises(SweepError, match="free or periodic"):
        Plan(distance=[1], generation="aligned")
    plan = Plan(distance=[1, 2], rate=["tick", "50ms"], dispatch=["isr", "task"], baud=[9600])
    names = [p.name for p in plan.points()]
    assert len(names) == len(set(names)) == 8 and "d2-r50ms-b9600-task-idle" in names
    fields = plan.run_fields(plan.points()[0])
    from mmsched.model.config import RunConfig

    RunConfig(**fields)                 # every point's fields make a RunConfig
    assert plan.run_fields(plan.points()[0])["load"] == "idle"   # the condition's name, as mmrig run --load


def test_a_campaign_with_the_papers_8051_profiler(tmp_path) -> None:
    """The bench's profiler is a campaign option; every point runs on the 8051 and says so."""
    from mmhil.bench import HAS_8051

    if not HAS_8051:
        pytest.skip("ucsim's 8051 core is not built here (tools/ucsim.sh)")
    out = tmp_path / "camp8051"
    assert main(["sweep", "--distance", "2", "--count", "10", "--workers", "1", "--profiler-kind", "8051", "-q",
                 "--out", str(out)]) == 0
    d = doc(out)
    assert d["options"]["profiler_kind"] == "8051" and Plan.from_doc(d).profiler_kind == "8051"
    side = json.loads((out / "points" / "d2-rtick-isr-idle.json").read_text())
    assert side["target"]["profiler_kind"] == "8051" and side["nodes"]["profiler"]["cpu_hz"] == 11_059_200
    assert side["summary"]["outcomes"]["ok"] == 10 and side["summary"]["p50_us"] > 5.0   # the poll's delay


def test_campaign_reopened_with_its_own_plan(tmp_path) -> None:
    plan = Plan(distance=[1, 3], count=5)
    camp = Campaign.open(tmp_path / "c", plan)
    camp.save()
    again = Campaign.open(tmp_path / "c", None)
    assert again.plan == plan and [p.name for p in again.todo()] == ["d1-rtick-isr-idle", "d3-rtick-isr-idle"]


def test_a_folder_that_is_not_a_readable_campaign_is_one_sweep_error(tmp_path) -> None:
    """Campaign.open reads the folder as every reader does (mmanalysis.sweepplots.load_campaign), its words."""
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "campaign.json").write_text('{"format": "something-else"}')
    with pytest.raises(SweepError, match="is not an mmrig campaign .format 'something-else'."):
        Campaign.open(tmp_path / "c", None)
    (tmp_path / "c" / "campaign.json").write_text('{"format": "mmrig-')
    with pytest.raises(SweepError, match="campaign.json: not a readable campaign"):
        Campaign.open(tmp_path / "c", None)
    (tmp_path / "c" / "campaign.json").write_text('{"format": "mmrig-campaign"}')
    with pytest.raises(SweepError, match="campaign.json: not a readable campaign"):
        Campaign.open(tmp_path / "c", None)


def test_a_points_files_follow_the_umask_as_every_run_file(tmp_path) -> None:
    """A point's CSV and sidecar are run files: 0666 less the umask (0644 under 022), not a temporary file's
    0600, so a lab reading the campaign folder can read them."""
    import hashlib
    import os
    import stat

    camp = Campaign.open(tmp_path / "c", Plan(distance=[1], count=5))
    camp.lock()                 # as run_campaign does first: the campaign folder made, the store's files in it
    camp.open_store()
    p = camp.plan.points()[0]
    data = b"seq\n1\n"
    got = {"csv": data, "json": json.dumps({"name": p.name, "csv_sha256": hashlib.sha256(data).hexdigest()}),
           "worker": "here"}
    old = os.umask(0o022)
    try:
        camp.record(p, got)
    finally:
        os.umask(old)
        camp.close_store()
        camp.unlock()
    for suffix in (".csv", ".json"):
        path = tmp_path / "c" / "points" / f"{p.name}{suffix}"
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path


def test_minimum_safe_distance() -> None:
    assert min_safe_distance([(1, 0.5, True), (2, 1.0, True), (3, 1.0, True)]) == 2
    assert min_safe_distance([(1, 1.0, True), (2, 0.9, True), (3, 1.0, True)]) == 3
    assert min_safe_distance([(1, 1.0, True), (2, 1.0, False)]) is None
    assert min_safe_distance([]) is None


@pytest.mark.long    # two sweeps, each with its local cluster: 14-15 s
def test_interrupted_half_way_continues_where_it_stopped(tmp_path) -> None:
    """Ctrl-C after the first point: exit 130, the point kept, the campaign 'interrupted', no bench or worker
    left behind; the same command again runs only the rest."""
    import signal
    import subprocess
    import sys

    ensure_built()
    out = tmp_path / "camp"
    # points of 600 events (43 s of virtual time, over a second of wall time each in lockstep): the Ctrl-C sent on
    # the first point's line reaches the sweep long before the last point ends, however slowly this test is woken
    cmd = [sys.executable, "-m", "mmrig", "sweep", "--distance", "1..3", "--count", "600", "--workers", "1",
           "--out", str(out)]
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    assert p.stderr is not None
    for line in p.stderr:
        if line.startswith("[1/3]"):
            p.send_signal(signal.SIGINT)
    assert p.wait(timeout=60) == 130
    d = doc(out)
    done = [n for n, e in d["points"].items() if e["state"] == "done"]
    assert d["status"] == "interrupted" and 1 <= len(done) < 3, d["totals"]
    assert main(["sweep", "--resume", "--out", str(out), "--workers", "1", "-q"]) == 0
    d = doc(out)
    assert d["status"] == "complete" and all(e["runs"] == 1 for e in d["points"].values())
    assert d["sessions"][1]["skipped_complete"] == len(done)


def stand_in(src: Path, calls: list[str], failing: str | None = None, invalid_reason: str | None = None):
    """A stand-in for run_point (paced: in this process) giving a real point's files of the module's campaign
    under each stem asked for, noting the stems in CALLS; stems starting with FAILING fail (no files), and an
    INVALID_REASON makes the others invalid."""
    good = {"csv": (src / "points/d1-rtick-isr-idle.csv").read_bytes(),
            "json": (src / "points/d1-rtick-isr-idle.json").read_bytes(), "worker": "here"}

    def fake(fields, stem, *, paced, profiler_kind="avr"):
        calls.append(stem)
        if failing is not None and stem.startswith(failing):
            return {"error": "bench did not start", "worker": "here"}
        side = json.loads(good["json"])
        side.update(name=stem)
        if invalid_reason is not None:
            side.update(valid=False, invalid_reason=invalid_reason)
        return {**good, "json": json.dumps(side).encode()}

    return fake


def test_failed_and_invalid_points(campaign, tmp_path) -> None:
    """A point whose run failed (no files) is 'failed' and runs again next time; an invalid run is kept, not
    run again; either makes the exit status 3. (A stand-in for run_point, paced: in this process.)"""
    from mmrig.sweep.campaign import run_campaign

    calls: list[str] = []
    fake = stand_in(campaign[0], calls, failing="d1", invalid_reason="too many stalls")

    camp = Campaign.open(tmp_path / "c", Plan(distance=[1, 2], count=30, paced=True))
    out = run_campaign(camp, fake)
    assert out.exit_code == 3 and out.failed == ["d1-rtick-isr-idle"] and out.invalid == ["d2-rtick-isr-idle"]
    e = camp.doc["points"]
    assert e["d1-rtick-isr-idle"]["state"] == "failed" and e["d1-rtick-isr-idle"]["error"] == "bench did not start"
    assert e["d2-rtick-isr-idle"]["state"] == "done" and not e["d2-rtick-isr-idle"]["valid"]
    assert camp.doc["status"] == "incomplete"
    again = run_campaign(Campaign.open(tmp_path / "c", None), fake)
    assert calls == ["d1-rtick-isr-idle", "d2-rtick-isr-idle", "d1-rtick-isr-idle"]
    assert again.exit_code == 3 and again.invalid == ["d2-rtick-isr-idle"]


def test_a_point_the_line_cannot_carry_is_refused_never_run(campaign, tmp_path) -> None:
    """Normal mode's rate as an axis with the link rate: 1 ms at 115200 baud needs more RESULTs a second than the
    profiler's line carries. That point is refused with the line budget's reason, never handed to a worker,
    not run again on --resume, and breaks the highest clean rate's chain with its reason; the campaign is
    complete without it. (A stand-in for run_point, paced: in this process.)"""
    from mmanalysis.sweepplots import highest_clean_rates
    from mmrig.sweep.campaign import run_campaign

    calls: list[str] = []
    fake = stand_in(campaign[0], calls)
    plan = Plan(distance=[1], rate=["5ms", "1ms"], baud=[115200, 500000], mode="normal", count=30, paced=True)
    camp = Campaign.open(tmp_path / "c", plan)
    lines: list[str] = []
    out = run_campaign(camp, fake, log=lines.append)
    refused = "d1-r1ms-b115200-isr-idle"
    assert refused not in calls and len(calls) == 3
    e = camp.doc["points"][refused]
    assert e["state"] == "refused" and "--baud 250000" in e["error"] and refused not in out.failed
    assert any(line.startswith(f"mmrig sweep: {refused}: refused, not run: --rate 1 ms") for line in lines)
    assert camp.doc["status"] == "complete" and camp.doc["totals"]["refused"] == 1 and out.exit_code == 0
    chain = highest_clean_rates(camp.doc)[(115200, 1, "isr", "idle")]
    assert chain.rate == "5ms" and chain.next_rate == "1ms" and chain.why.startswith("refused, not run")
    run_campaign(Campaign.open(tmp_path / "c", None), fake)
    assert refused not in calls and len(calls) == 3               # nothing left to run, the refused point neither


def test_a_stop_noted_by_the_signal_handler_ends_the_campaign_after_the_point_running(campaign, tmp_path) -> None:
    """A Ctrl-C whose KeyboardInterrupt code in the main thread swallowed (a Dask wait, under load) still ends
    the campaign: the handler's note is looked at after every point. (A stand-in for run_point, paced.)"""
    from mmrig.sweep.campaign import run_campaign

    calls: list[str] = []
    fake = stand_in(campaign[0], calls)

    camp = Campaign.open(tmp_path / "c", Plan(distance=[1, 2, 3], count=30, paced=True))
    out = run_campaign(camp, fake, stop_requested=lambda: bool(calls))
    assert out.interrupted and calls == ["d1-rtick-isr-idle"] and camp.doc["status"] == "interrupted"


def test_a_signal_while_the_campaign_starts_is_an_interruption_not_a_traceback(tmp_path, capsys, monkeypatch) -> None:
    # SIGTERM between the handler's installation and the campaign's own handling (the GUI's Stop right after
    # Start did this): exit 130, one line; a new campaign has written nothing yet (the cluster comes first), one
    # already in the folder says interrupted, never "running"
    import mmrig.sweep.campaign

    def signalled(*a, **k):
        raise KeyboardInterrupt("SIGTERM")

    monkeypatch.setattr(mmrig.sweep.campaign, "run_campaign", signalled)
    ensure_built()
    assert main(["sweep", "--distance", "1", "--count", "5", "--out", str(tmp_path / "c")]) == 130
    assert "interrupted while starting" in capsys.readouterr().err
    assert not (tmp_path / "c" / "campaign.json").exists()
    camp = Campaign.open(tmp_path / "c", Plan(distance=[1], count=5))
    camp.doc["status"] = "running"
    camp.save()
    assert main(["sweep", "--distance", "1", "--count", "5", "--out", str(tmp_path / "c")]) == 130
    assert doc(tmp_path / "c")["status"] == "interrupted"


def test_highest_clean_rate_is_the_fastest_of_an_unbroken_run_of_clean_points() -> None:
    from mmanalysis.sweepplots import events_per_s, highest_clean_rates

    def point(rate: str, share: float = 1.0, valid: bool = True, skipped: int = 0, baud: int = 9600) -> dict:
        return {"values": {"distance": 2, "rate": rate, "baud": baud, "dispatch": "isr", "load": "idle"},
                "state": "done", "valid": valid, "invalid_reason": None if valid else "node_errors: x",
                "skipped": skipped, "summary": {"on_time_share": share, "outcomes": {"ok": 9, "lost": 1}}}

    doc = {"points": {"a": point("100ms"), "b": point("50ms"), "c": point("30ms", valid=False), "d": point("20ms"),
                      "e": point("tick", baud=115200), "f": point("10ms", baud=115200, skipped=3)}}
    got = highest_clean_rates(doc)
    slow = got[(9600, 2, "isr", "idle")]
    assert (slow.rate, slow.next_rate) == ("50ms", "30ms") and slow.per_s == 20.0 and slow.why.startswith("invalid")
    fast = got[(115200, 2, "isr", "idle")]
    assert fast.rate == "tick" and fast.next_rate == "10ms" and "not created" in fast.why
    assert abs(events_per_s("tick") - 14.0625) < 1e-9 and events_per_s("2ticks") == events_per_s("tick") / 2


def test_two_sweeps_into_one_folder_at_once_the_second_is_refused(tmp_path, capsys) -> None:
    """Without the folder's lock both would run every point. The one that holds the lock runs; another is one
    line, exit 2, naming it, and writes nothing."""
    import os

    from mmrig.sweep.campaign import LOCK_FILE

    folder = tmp_path / "c"
    held = Campaign.open(folder, Plan(distance=[1], rate=["tick"], dispatch=["isr"], load=["idle"], count=5))
    held.lock()
    try:
        assert main(["sweep", "--distance", "1", "--count", "5", "--paced", "--out", str(folder)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1] == (f"mmrig sweep: {folder} is in use by another mmrig sweep (pid {os.getpid()}): wait for "
                           "it to end, or give another --out"), err
        assert sorted(p.name for p in folder.iterdir()) == [LOCK_FILE]
    finally:
        held.unlock()


def test_a_campaign_folder_planted_as_a_link_is_refused(tmp_path, capsys) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "c").symlink_to(tmp_path / "elsewhere")
    assert main(["sweep", "--distance", "1", "--count", "5", "--paced", "--out", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "is a symbolic link, not a folder: refused" in err[-1], err
    assert list((tmp_path / "elsewhere").iterdir()) == []
