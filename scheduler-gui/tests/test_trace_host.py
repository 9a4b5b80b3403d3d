"""`mmrig run --trace-host` (mmsched.run.hosttrace, mmrig.cli.tracehost): refused in one line (exit 2) where it cannot be
honoured, before any bench starts; where the file goes; what the host's steal sample reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmrig.cli import main
from mmrig.cli import tracehost
from mmsched.run import hosttrace


def refused(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("mmrig run: ")
    return err


def test_needs_out(capsys) -> None:
    assert "give --out OUT" in refused(capsys, ["run", "--mode", "normal", "--trace-host"])


def test_refused_in_lockstep(tmp_path, capsys) -> None:
    err = refused(capsys, ["run", "--unpaced", "--trace-host", "-o", str(tmp_path / "r")])
    assert "lockstep" in err


def test_refused_where_the_tracefs_cannot_be_written(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(tracehost, "refusal", lambda: "/sys/kernel/tracing is not writable by this user: run as root")
    err = refused(capsys, ["run", "--mode", "normal", "--trace-host", "-o", str(tmp_path / "r")])
    assert "--trace-host: /sys/kernel/tracing is not writable" in err
    assert not list(tmp_path.iterdir())          # nothing was started, nothing written


def test_the_bound_has_a_floor(tmp_path, capsys) -> None:
    err = refused(capsys, ["run", "--mode", "normal", "--trace-host", "--trace-host-kb", "8", "-o", str(tmp_path / "r")])
    assert "--trace-host-kb must be at least 64" in err


def test_refusal_words(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(hosttrace.shutil, "which", lambda name: None)
    assert "trace-cmd is not installed" in (hosttrace.refusal(tmp_path) or "")
    monkeypatch.setattr(hosttrace.shutil, "which", lambda name: "/usr/bin/trace-cmd")
    monkeypatch.setattr(hosttrace.os, "geteuid", lambda: 1000)
    assert f"no tracefs at {tmp_path}" in (hosttrace.refusal(tmp_path) or "")
    (tmp_path / "instances").mkdir()
    monkeypatch.setattr(hosttrace.os, "access", lambda path, mode: False)
    assert "not writable by this user" in (hosttrace.refusal(tmp_path) or "")


def test_the_file_beside_the_run() -> None:
    assert hosttrace.host_path(Path("/x/run1")) == Path("/x/run1.host.dat")
    assert hosttrace.host_path(Path("/x/run1.csv")) == Path("/x/run1.host.dat")


def test_steal_is_read_per_cpu() -> None:
    steal = hosttrace.steal_s()
    assert "cpu" in steal and all(v >= 0 for v in steal.values())


def test_the_run_help_names_the_options(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert "--trace-host " in out and "--trace-host-kb KB" in out and "OUT.host.dat" in out


def test_a_break_is_explained_when_the_run_traced_the_host(tmp_path, monkeypatch) -> None:
    from mmanalysis import explain
    from mmsched.model.result import RunResult

    asked: list[tuple[Path, int]] = []
    stand_in = explain.Explanation("r", 7, "late", 900.0, 70, [explain.Part("wakeup.own", "own", 900.0, 1.0)])
    monkeypatch.setattr(explain, "explain_run", lambda csv, which: asked.append((csv, which)) or [stand_in])
    csv = tmp_path / "r.csv"
    traced = RunResult([], {"break": {"us": 500.0, "event": 7}, "host_trace": {"file": "r.host.dat"}}, csv, None)
    assert tracehost.break_explanation(traced)[0].startswith("event 7 of r (late, 900.0 us")
    assert asked == [(csv, 7)]
    untraced = RunResult([], {"break": {"us": 500.0, "event": 7}}, csv, None)
    no_break = RunResult([], {"break": {"us": 500.0, "event": None}, "host_trace": {"file": "r.host.dat"}}, csv, None)
    assert tracehost.break_explanation(untraced) == [] and tracehost.break_explanation(no_break) == []


def test_a_taken_host_trace_name_is_refused_before_the_run(tmp_path, capsys) -> None:
    (tmp_path / "r.host.dat").write_bytes(b"an earlier run's")
    err = refused(capsys, ["run", "--mode", "normal", "--trace-host", "-o", str(tmp_path / "r")])
    assert "--trace-host:" in err and "r.host.dat exists; --force to overwrite" in err
