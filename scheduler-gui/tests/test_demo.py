"""The demo's words, retries and exit status, without a bench: runs stand in for the bench's (synthetic rows
in the on-disk format, sidecars saying what the case needs)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mmanalysis import synth
from mmanalysis.paper import BENCH_CONSTANT
from mmsched import cli, demo
from mmsched.result import RunResult


def fake_run(out: Path, mode: str, distance: int, *, valid: bool = True, generation: str = "aligned",
             missed_share: float = 0.0, constant: bool = False, kind: str = "synthetic", n: int = 40) -> RunResult:
    """A run on disk (OUT.csv + OUT.json) and its RunResult, as the runner returns one."""
    rows = synth.synthetic_events(mode, distance, False, n, seed=1)
    rows["outcome"], rows["reason"] = "ok", ""
    if constant:
        rows["latency_us"], rows["latency_counts"] = 1.375, 22
    k = int(round(missed_share * n))
    if k:
        rows.loc[rows.index[-k:], ["outcome", "reason"]] = ["missed", "past_due"]
        rows.loc[rows.index[-k:], "latency_us"] = np.nan
    meta = synth.sidecar(out.name, rows, valid=valid)
    meta["config"]["generation"] = generation
    meta["target"]["kind"] = kind
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


def test_loaded_experiment_is_retried_at_most_once(tmp_path, monkeypatch):
    calls: dict[str, int] = {}

    def run(cfg, endpoint, log=None):                     # every attempt invalid by bench lag alone
        calls[cfg.name] = calls.get(cfg.name, 0) + 1
        return fake_run(Path(cfg.out), cfg.mode, cfg.distance, valid=False)
    monkeypatch.setattr(demo, "run", run)
    monkeypatch.setattr(demo, "BenchEndpoint", lambda paced: None)
    rows = demo.run_demo(count=10, out_dir=tmp_path, log=None, attempts=4,
                         only=("exp4-mixed-2ahead", "exp5-mixed-2ahead-load"))
    assert calls == {"exp4-mixed-2ahead": 4, "exp5-mixed-2ahead-load": demo.LOADED_ATTEMPTS}
    assert [len(r.set_aside) for r in rows] == [3, demo.LOADED_ATTEMPTS - 1]
    assert (tmp_path / "exp5-mixed-2ahead-load.attempt1.csv").exists()
    assert demo.no_valid_run(rows) == ["exp4-mixed-2ahead", "exp5-mixed-2ahead-load"]


@pytest.mark.parametrize("valid, code", [(True, 0), (False, demo.NO_VALID_RUN)])
def test_demo_exit_status(tmp_path, monkeypatch, capsys, valid, code):
    ex = next(e for e in demo.EXPERIMENTS if e.name == "exp4-mixed-2ahead")
    row = demo.DemoRow(ex, fake_run(tmp_path / ex.name, "mixed", 2, valid=valid))
    monkeypatch.setattr(demo, "run_demo", lambda **kw: [row])
    assert cli.main(["demo", "--count", "5", "--out-dir", str(tmp_path)]) == code
    err = capsys.readouterr().err
    assert (f"no valid run of exp4-mixed-2ahead (exit status {code};" in err) == (not valid)


def test_demo_help_documents_the_exit_status(capsys):
    with pytest.raises(SystemExit):
        cli.main(["demo", "--help"])
    out = capsys.readouterr().out
    assert f"  {demo.NO_VALID_RUN}  an experiment has no valid run" in out
