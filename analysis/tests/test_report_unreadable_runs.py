"""`mmrig report` over runs of which some cannot be read (a sidecar or CSV that is not UTF-8, a CSV that breaks the
format): each is one line naming the file (and for bytes that are not UTF-8 the byte offset), the other runs are
reported, and the exit code says a run was left out; never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mma_helpers import edit_line  # noqa: E402

from mmanalysis import SchemaError, read_run, read_runs, synth


def two_runs(folder: Path) -> tuple[Path, Path]:
    a, _ = synth.write_experiment(folder, "mixed-2ahead", count=30, seed=1)
    b, _ = synth.write_experiment(folder, "mixed-1ahead", count=30, seed=1)
    return a, b


def latin1_sidecar(csv_path: Path) -> int:
    """The run's sidecar with its name saved as Latin-1 (a hand edit in the wrong encoding); the byte's offset."""
    js = csv_path.with_suffix(".json")
    data = js.read_bytes().replace(b'"name": "mixed-1ahead"', b'"name": "M\xfcller"', 1)
    assert b"\xfc" in data
    js.write_bytes(data)
    return data.index(b"\xfc")


def latin1_csv(csv_path: Path) -> int:
    """A byte that is not UTF-8 in the CSV's last line (its sidecar without a hash: a run from before it)."""
    js = csv_path.with_suffix(".json")
    meta = json.loads(js.read_text())
    meta.pop("csv_sha256", None)
    js.write_text(json.dumps(meta))
    data = csv_path.read_bytes()
    at = data.rindex(b"mixed")
    csv_path.write_bytes(data[:at] + b"mi\xe9ed" + data[at + 5:])
    return at + 2


def report_cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mmanalysis", "report", *argv], capture_output=True, text=True,
                          timeout=120)


def test_sidecar_not_utf8_is_a_schema_error_with_the_byte_offset(tmp_path: Path) -> None:
    _, b = two_runs(tmp_path)
    at = latin1_sidecar(b)
    with pytest.raises(SchemaError) as exc:
        read_run(b)
    assert exc.value.file == str(b.with_suffix(".json")) and f"byte offset {at}" in str(exc.value)
    assert "0xfc" in str(exc.value) and "\n" not in str(exc.value)


def test_csv_not_utf8_is_a_schema_error_with_the_byte_offset(tmp_path: Path) -> None:
    a, _ = two_runs(tmp_path)
    at = latin1_csv(a)
    with pytest.raises(SchemaError) as exc:
        read_run(a)
    assert exc.value.file == str(a) and f"byte offset {at}" in str(exc.value) and "0xe9" in str(exc.value)
    assert exc.value.line == a.read_bytes()[:at].count(b"\n") + 1


@pytest.mark.parametrize("spoil", ["sidecar", "csv", "schema"])
def test_report_names_the_unreadable_run_and_reports_the_others(tmp_path: Path, spoil: str) -> None:
    runs = tmp_path / "runs"
    a, b = two_runs(runs)
    bad = b if spoil == "sidecar" else a
    if spoil == "sidecar":
        at = latin1_sidecar(b)
    elif spoil == "csv":
        at = latin1_csv(a)
    else:
        edit_line(a, 5, "outcome", "maybe")
        js = a.with_suffix(".json")
        js.write_text(json.dumps({k: v for k, v in json.loads(js.read_text()).items() if k != "csv_sha256"}))
    r = report_cli(str(runs), "--out", str(tmp_path / "rep"), "--no-figures")
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("report: left out: ") and bad.stem in lines[0], r.stderr
    if spoil != "schema":
        assert f"byte offset {at}" in lines[0], lines[0]
    good = a if bad is b else b
    md = (tmp_path / "rep" / "report.md").read_text()
    assert good.stem in md and "Runs not read" in md and bad.stem in md.split("Runs not read")[1]
    assert "runs read: 1" in r.stdout, r.stdout


def test_report_of_runs_none_readable_is_exit_2_one_line_each(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    a, b = two_runs(runs)
    latin1_sidecar(b)
    latin1_csv(a)
    r = report_cli(str(a), str(b), "--out", str(tmp_path / "rep"), "--no-figures")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 3 and all(x.startswith("report: ") for x in lines), lines
    assert "byte offset" in lines[0] and "byte offset" in lines[1] and "no run could be read" in lines[2], lines
    assert not (tmp_path / "rep" / "report.md").exists()


def test_summary_of_a_run_not_utf8_is_one_line_exit_2(tmp_path: Path) -> None:
    _, b = two_runs(tmp_path)
    at = latin1_sidecar(b)
    r = subprocess.run([sys.executable, "-m", "mmanalysis", "summary", str(b)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr and f"byte offset {at}" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_read_runs_of_a_folder_raises_schema_error_for_a_sidecar_not_utf8(tmp_path: Path) -> None:
    _, b = two_runs(tmp_path)
    latin1_sidecar(b)
    with pytest.raises(SchemaError, match="not UTF-8"):
        read_runs(tmp_path)
