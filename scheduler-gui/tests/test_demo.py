"""The demo's words, retries and exit status, without a bench: runs stand in for the bench's (synthetic rows
in the on-disk format, sidecars saying what the case needs)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import mmhil.bench

from mmanalysis import synth
from mmanalysis.paper import BENCH_CONSTANT
from mmrig import cli, demo
from mmsched.verdict.export import write_run
from mmsched.model.result import RunResult
from mmsched.verdict.stats import summarize

sys.path.insert(0, str(Path(__file__).parent))
from fake_events import finished  # noqa: E402


def fake_run(out: Path, mode: str, distance: int, *, valid: bool = True, generation: str = "aligned",
             missed_share: float = 0.0, constant: bool = False, kind: str = "synthetic", n: int = 40,
             profiler_kind: str | None = None, latency_us: float | None = None) -> RunResult:
    """A run on disk (OUT.csv + OUT.json) and its RunResult, as the runner returns one."""
    rows = synth.synthetic_events(mode, distance, False, n, seed=1)
    rows["outcome"], rows["reason"] = "ok", ""
    if constant:
        rows["latency_us"], rows["latency_counts"] = 1.375, 22
    if latency_us is not None:
        rows["latency_us"], rows["latency_counts"] = latency_us, round(latency_us * 16)
    k = int(round(missed_share * n))
    if k:
        rows.loc[rows.index[-k:], ["outcome", "reason"]] = ["missed", "past_due"]
        rows.loc[rows.index[-k:], "latency_us"] = np.nan
    meta = synth.sidecar(out.name, rows, valid=valid)
    meta["config"]["generation"] = generation
    meta["target"]["kind"] = kind
    if profiler_kind is not None:
        meta["target"]["profiler_kind"] = profiler_kind
    meta["summary"]["events"] = n
    meta["summary"]["on_time_share"] = (n - k) / n
    meta["invariant"] = {"ok": True, "error": None}
    if not valid:
        meta["invalid_reasons"] = [{"code": "bench_lag", "detail": "bench lag bound exceeded"}]
        meta["invalid_reason"] = "bench lag bound exceeded (test)"
    csv, js = synth.write_run(out, rows, meta)
    return RunResult([], meta, csv, js)


def test_verdicts_say_what_each_row_shows(tmp_path):
    by = {ex.name: ex for ex in demo.EXPERIMENTS}
    rows = [demo.DemoRow(by["exp3-mixed-1ahead"], fake_run(tmp_path / "a", "mixed", 1, generation="aligned")),
            demo.DemoRow(by["exp3b-mixed-1ahead-free"],
                         fake_run(tmp_path / "b", "mixed", 1, generation="free", missed_share=0.35)),
            demo.DemoRow(by["exp4-mixed-2ahead"], fake_run(tmp_path / "c", "mixed", 2, constant=True, kind="bench"))]
    text = demo.verdicts(rows)
    lines = text.splitlines()
    assert "not the paper's method" in lines[1] and "leaves a whole tick" in lines[1]
    assert "65% on time: reproduces the paper's 'about half'" in lines[2] and "14 missed of 40 events" in lines[2]
    assert "see (*)" in lines[3] and lines[-1] == f"  (*) {BENCH_CONSTANT}"
    assert "better" not in text
    tab = demo.table(rows)
    assert "var us²" in tab and "over the measured events only" in tab and "about half on time" in tab


def test_notes_say_what_each_executor_design_shows_from_the_pairs_figures(tmp_path):
    """Task dispatch (the paper's design) beside ISR dispatch (ours), same experiment and executor load: one
    sentence per pair, with both runs' own figures and their difference; an invalid run is not compared."""
    task = fake_run(tmp_path / "t", "verification", 1, latency_us=37.0)
    isr = fake_run(tmp_path / "i", "verification", 1, latency_us=1.5)
    lines = demo.designs({"exp1-verification": task, "exp1i-verification-isr": isr})
    assert len(lines) == 1
    assert "exp1-verification (task dispatch, the paper's design) mean 37.000 us" in lines[0]
    assert "exp1i-verification-isr (ISR dispatch, ours) mean 1.500 us" in lines[0] and "+35.500 us" in lines[0]
    bad = fake_run(tmp_path / "b", "mixed", 2, valid=False)
    lines = demo.designs({"exp4-mixed-2ahead": bad, "exp4i-mixed-2ahead-isr": isr})
    assert lines == ["exp4-mixed-2ahead against exp4i-mixed-2ahead-isr: not compared, a run of the two is not valid"]


def test_loaded_experiment_is_retried_at_most_once(tmp_path, monkeypatch):
    calls: dict[str, int] = {}

    def run(cfg, target, log=None):                       # every attempt invalid by bench lag alone
        calls[cfg.name] = calls.get(cfg.name, 0) + 1
        return fake_run(Path(cfg.out), cfg.mode, cfg.distance, valid=False)
    monkeypatch.setattr(demo, "run", run)
    rows = demo.run_demo(count=10, out_dir=tmp_path, log=None, attempts=4,
                         only=("exp4-mixed-2ahead", "exp5-mixed-2ahead-load"))
    assert calls == {"exp4-mixed-2ahead": 4, "exp5-mixed-2ahead-load": demo.LOADED_ATTEMPTS}
    assert [len(r.set_aside) for r in rows] == [3, demo.LOADED_ATTEMPTS - 1]
    assert (tmp_path / "exp5-mixed-2ahead-load.attempt1.csv").exists()
    assert demo.no_valid_run(rows) == ["exp4-mixed-2ahead", "exp5-mixed-2ahead-load"]


def test_demo_retries_a_run_invalid_by_bench_lag_and_keeps_the_invalid_one(tmp_path: Path, monkeypatch) -> None:
    # the demo's retry policy alone (the runner is replaced; the quick demo test drives the real one):
    # a lag-invalid run is set aside under its own name and run again; other invalid runs are not retried
    reasons = iter(["bench lag bound exceeded: max 9000.0 us > 5000.0 us", None])

    def fake_run(cfg, target, log=None):
        why = next(reasons)
        evs = finished(2)
        code = "bench_lag" if why and why.startswith("bench lag") else "invariant"
        side = {"name": cfg.name, "valid": why is None, "invalid_reason": why, "summary": summarize(evs),
                "invalid_reasons": [{"code": code, "text": why}] if why else [], "invariant": {"ok": True, "error": None}}
        c, j = write_run(cfg.out, evs, side)
        return RunResult(evs, side, c, j)

    monkeypatch.setattr(demo, "run", fake_run)
    rows = demo.run_demo(count=2, out_dir=tmp_path, log=None, only=("exp4-mixed-2ahead",))
    assert len(rows) == 1 and rows[0].attempt == 2 and rows[0].result.valid
    kept = tmp_path / "exp4-mixed-2ahead.attempt1.json"
    assert [p.name for p in rows[0].set_aside] == ["exp4-mixed-2ahead.attempt1.csv"] and kept.exists()
    meta = json.loads(kept.read_text())
    assert meta["name"] == "exp4-mixed-2ahead.attempt1" and meta["valid"] is False
    assert json.loads((tmp_path / "exp4-mixed-2ahead.json").read_text())["valid"] is True
    assert "|   2 |" in demo.table(rows) and "attempt1.csv" in demo.notes(rows)

    reasons = iter(["accounting invariant violated: x", None])
    rows = demo.run_demo(count=2, out_dir=tmp_path, log=None, only=("exp4-mixed-2ahead",))
    assert rows[0].attempt == 1 and not rows[0].result.valid and not list(tmp_path.glob("*.attempt*"))


@pytest.mark.parametrize("kind", ["avr", "8051"])
@pytest.mark.parametrize("valid, code", [(True, 0), (False, demo.NO_VALID_RUN)])
def test_demo_exit_status(tmp_path, monkeypatch, capsys, valid, code, kind):
    ex = next(e for e in demo.EXPERIMENTS if e.name == "exp4-mixed-2ahead")
    row = demo.DemoRow(ex, fake_run(tmp_path / ex.name, "mixed", 2, valid=valid, profiler_kind=kind))
    monkeypatch.setattr(demo, "run_demo", lambda **kw: [row])
    monkeypatch.setattr(mmhil.bench, "HAS_8051", True)
    assert cli.main(["demo", "--count", "5", "--out-dir", str(tmp_path), "--profiler-kind", kind]) == code
    err = capsys.readouterr().err
    assert (f"no valid run of exp4-mixed-2ahead (exit status {code};" in err) == (not valid)


def test_demo_help_documents_the_exit_status(capsys):
    with pytest.raises(SystemExit):
        cli.main(["demo", "--help"])
    out = capsys.readouterr().out
    assert f"  {demo.NO_VALID_RUN}  an experiment has no valid run" in out


def eighty51_rows(out: Path) -> list[demo.DemoRow]:
    by = {ex.name: ex for ex in demo.EXPERIMENTS}
    return [demo.DemoRow(by["exp1-verification"], fake_run(out / "exp1-verification", "verification", 1,
                                                              profiler_kind="8051", latency_us=70.0)),
            demo.DemoRow(by["exp4-mixed-2ahead"], fake_run(out / "exp4-mixed-2ahead", "mixed", 2,
                                                             profiler_kind="8051", latency_us=70.5))]


def test_8051_demo_sets_its_figures_beside_the_avr_ones_and_the_paper(tmp_path, monkeypatch, capsys):
    # the AVR demo's run of experiment 1 in results/ (an old sidecar: no profiler_kind, so avr), none of 4
    fake_run(tmp_path / "exp1-verification", "verification", 1, constant=True, kind="bench")
    rows = eighty51_rows(tmp_path / "8051")
    calls = {}

    def run_demo(**kw):
        calls.update(kw)
        return rows
    monkeypatch.setattr(demo, "run_demo", run_demo)
    monkeypatch.setattr(mmhil.bench, "HAS_8051", True)
    # --profiler: the same as --profiler-kind, on the demo only (it has no board ports)
    assert cli.main(["demo", "--profiler", "8051", "--out-dir", str(tmp_path / "8051")]) == 0
    assert calls["profiler_kind"] == "8051" and calls["out_dir"] == tmp_path / "8051"
    out = capsys.readouterr().out
    assert "with the 8051 profiler (the paper's 87C51 image, polled input)" in out
    beside = out.split("With the 8051 profiler beside the AVR profiler")[1]
    line1 = next(x for x in beside.splitlines() if x.startswith("| 1 executor alone"))
    assert "70.000" in line1 and "1.375" in line1 and "39.1 us, var 4,809 us²" in line1
    line4 = next(x for x in beside.splitlines() if x.startswith("| 4 mixed 2 ahead"))
    assert "70.500" in line4 and line4.count(" - |") == 4 and "43.0 us" in line4     # no AVR run of 4
    assert "no valid AVR run in" in beside and "exp4-mixed-2ahead; make them with `mmrig demo`" in beside
    assert "1 executor alone (verification): +68.625 us (8051 70.000, AVR 1.375), 176% of the paper's mean; " \
           "the paper 39.1 us" in beside
    assert "4 mixed 2 ahead: - (no AVR run (`mmrig demo`)); the paper 43.0 us" in beside
    by = {ex.name: ex for ex in demo.EXPERIMENTS}
    normal = demo.DemoRow(by["exp2-normal"], fake_run(tmp_path / "n8051", "normal", 1, profiler_kind="8051",
                                                      latency_us=1165.0))
    avr = {"exp2-normal": demo.Figures(40, 290.0, 35140.0, 2187.0, 0.98, True, "avr", None)}
    assert "+875.000 us (8051 1165.000, AVR 290.000); the paper 14,465 us\n" in demo.polling_added([normal], avr)


def test_an_8051_run_is_never_read_as_the_avr_figures(tmp_path):
    fake_run(tmp_path / "exp1-verification", "verification", 1, profiler_kind="8051", latency_us=70.0)
    fake_run(tmp_path / "exp4-mixed-2ahead", "mixed", 2, valid=False, profiler_kind="avr")
    assert demo.avr_figures(tmp_path) == {}
    assert demo.results_dir("8051") == demo.RESULTS / "8051" and demo.results_dir("avr") == demo.RESULTS


def test_8051_demo_without_the_8051_core_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(mmhil.bench, "HAS_8051", False)
    monkeypatch.setattr(demo, "run_demo", lambda **kw: pytest.fail("no run without the 8051 core"))
    assert cli.main(["demo", "--profiler-kind", "8051", "--out-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs ucsim's core" in err[0]


@pytest.mark.skipif(not mmhil.bench.HAS_8051, reason="the bench program has no 8051 core here (build/ucsim: "
                    "tools/ucsim.sh, docs/bench.md 'The 8051 profiler')")
@pytest.mark.paced
def test_quick_8051_demo_on_the_bench(tmp_path, capsys):
    # the real thing, short: 2 experiments of the quick demo with the 8051 profiler, beside (no) AVR runs
    rows = demo.run_demo(count=8, out_dir=tmp_path / "8051", log=None, profiler_kind="8051",
                         only=("exp1-verification", "exp4-mixed-2ahead"))
    for row in rows:
        meta = json.loads(row.result.json_path.read_text())
        assert meta["target"]["profiler_kind"] == "8051" and row.result.json_path.parent == tmp_path / "8051"
        # invalid only by the host: its stalls (bench_lag), or a run loop a loaded host held back so long that an
        # executor frame read late was judged a timecode fault (a fault of the rig, never of the executor)
        assert row.result.valid or {r["code"] for r in meta["invalid_reasons"]} <= {"bench_lag", "timecode_fault"}, \
            meta["invalid_reason"]
        if row.result.valid:    # polled: tens of us, where the AVR's input capture gives the executor's 1.375 us
            assert 2.0 < row.result.summary["mean_us"] < 700.0
    text = demo.beside_table(rows, demo.avr_figures(tmp_path), tmp_path)
    assert "make them with `mmrig demo`" in text
