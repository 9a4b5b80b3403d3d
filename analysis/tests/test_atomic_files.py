"""Crash-safe run files: atomic writes, the CSV first, the sidecar last with the CSV's SHA-256."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from mmanalysis import read_run, read_runs, safefiles, synth
from mmanalysis.reader import find_runs
from mmanalysis.schema import SchemaError

export = pytest.importorskip("mmsched.verdict.export")
from mmsched.model.event import Event  # noqa: E402


def events(n: int = 5, offset_us: float = 0.0) -> list[Event]:
    out = []
    for i in range(n):
        e = Event(event=i, tag=4096 + i, event_id=i, mode="mixed", distance=2, scheduled_tc=100 + i,
                  created_tc=98 + i, created_phase=0.25, sent_s=0.01 * i, ack_tc=99 + i, ack_phase=-3.5,
                  slack_ticks=1.5, fired_tc=100 + i, result_tc=100 + i, result_counts=700 + i,
                  latency_counts=700 + i, latency_us=43.75 + i + offset_us)
        e.finish("ok", None)
        out.append(e)
    return out


def sidecar(name: str = "run") -> dict:
    rows = synth.synthetic_events("mixed", 2, False, 5, 0)
    return synth.sidecar(name, rows)


def test_pair_carries_the_csv_hash_and_reads(tmp_path):
    side = sidecar()
    c, j = export.write_run(tmp_path / "run", events(), side)
    meta = json.loads(j.read_text())
    assert meta["csv_sha256"] == hashlib.sha256(c.read_bytes()).hexdigest()
    assert "csv_sha256" not in side  # the caller's dict is left alone
    rs = read_run(c)
    assert list(rs.df["latency_us"]) == [43.75 + i for i in range(5)]
    assert list(rs.df["ack_phase"]) == [-3.5] * 5  # a negative number is written as a number, read back the same
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv", "run.json"]  # no temp file left


def test_csv_edited_after_the_pair_is_caught(tmp_path):
    c, _ = export.write_run(tmp_path / "run", events(), sidecar())
    c.write_text(c.read_text().replace("43.75", "43.5"))
    with pytest.raises(SchemaError) as exc:
        read_run(c)
    assert "run.csv does not match its sidecar (csv_sha256)" in str(exc.value)
    assert exc.value.file == str(c)
    with pytest.raises(SchemaError, match="run.csv does not match its sidecar"):
        read_runs(tmp_path)


def test_csv_of_another_run_is_caught(tmp_path):
    export.write_run(tmp_path / "a", events(), sidecar("a"))
    export.write_run(tmp_path / "b", events(offset_us=1.0), sidecar("b"))
    os.replace(tmp_path / "b.csv", tmp_path / "a.csv")  # a torn pair: b's CSV beside a's sidecar
    with pytest.raises(SchemaError, match="a.csv does not match its sidecar"):
        read_run(tmp_path / "a.csv")


def test_cut_short_between_csv_and_sidecar_is_caught(tmp_path, monkeypatch):
    export.write_run(tmp_path / "run", events(), sidecar())
    real = export.write_sidecar

    def crash(path, side):
        raise KeyboardInterrupt("power cut")
    monkeypatch.setattr(export, "write_sidecar", crash)
    with pytest.raises(KeyboardInterrupt):
        export.write_run(tmp_path / "run", events(7, offset_us=5.0), sidecar())  # new CSV, old sidecar
    monkeypatch.setattr(export, "write_sidecar", real)
    with pytest.raises(SchemaError, match="run.csv does not match its sidecar"):
        read_run(tmp_path / "run.csv")


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    c, _ = export.write_run(tmp_path / "run", events(), sidecar())
    before = c.read_bytes()

    def broken(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(safefiles.os, "rename", broken)   # the one writer of a run's files
    with pytest.raises(OSError):
        export.write_run(tmp_path / "run", events(9), sidecar())
    monkeypatch.undo()
    assert c.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv", "run.json"]
    assert len(read_run(c).df) == 5


def test_leftover_temp_file_is_not_a_run(tmp_path):
    c, j = export.write_run(tmp_path / "run", events(), sidecar())
    # what a crash mid-write leaves: the writer's temp files (".NAME.csv.XXXX.tmp" beside the target)
    (tmp_path / ".run.csv.k3j2x9.tmp").write_bytes(c.read_bytes()[:40])
    (tmp_path / ".run.json.p0q1r2.tmp").write_bytes(j.read_bytes()[:10])
    (tmp_path / ".new.csv.a1b2c3.tmp").write_bytes(c.read_bytes())
    assert find_runs(tmp_path) == [c]
    rs = read_runs(tmp_path)
    assert rs.runs == ["run"] and len(rs.df) == 5


def test_older_run_without_the_hash_still_reads(tmp_path):
    c, j = export.write_run(tmp_path / "run", events(), sidecar())
    meta = json.loads(j.read_text())
    del meta["csv_sha256"]
    j.write_text(json.dumps(meta))
    c.write_text(c.read_text().replace("43.75", "43.5"))  # unchecked without the key
    assert read_run(c).df["latency_us"].iloc[0] == 43.5


def test_hash_of_the_wrong_type_names_the_sidecar(tmp_path):
    c, j = export.write_run(tmp_path / "run", events(), sidecar())
    meta = json.loads(j.read_text())
    meta["csv_sha256"] = 12
    j.write_text(json.dumps(meta))
    with pytest.raises(SchemaError, match="csv_sha256 must be a hex string") as exc:
        read_run(c)
    assert exc.value.file == str(j)
