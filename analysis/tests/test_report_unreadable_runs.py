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


def one_line_exit_2(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and all(w in lines[0] for w in words), done.stderr


def test_a_run_that_is_not_there_is_no_such_file_not_a_missing_sidecar(tmp_path: Path) -> None:
    one_line_exit_2(report_cli(str(tmp_path / "missing.csv"), "--out", str(tmp_path / "r")),
                    "missing.csv: no such file")
    assert not (tmp_path / "r").exists()


def test_a_sidecar_nested_past_the_stack_is_one_line(tmp_path: Path) -> None:
    a, b = two_runs(tmp_path)
    b.with_suffix(".json").write_text("[" * 100_000)
    done = report_cli(str(a), str(b), "--no-figures", "--out", str(tmp_path / "r"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "report: left out: " in done.stderr and "nested too deep" in done.stderr, done.stderr
    with pytest.raises(SchemaError, match="nested too deep"):
        read_run(b)


def test_a_latency_past_the_floats_is_refused_even_without_the_csv_hash(tmp_path: Path) -> None:
    """1e999 reads as inf: a run with it had a mean of inf and read as valid."""
    a, _ = two_runs(tmp_path)
    meta = json.loads(a.with_suffix(".json").read_text())
    meta.pop("csv_sha256", None)
    a.with_suffix(".json").write_text(json.dumps(meta))
    lines = a.read_text().splitlines()
    header = lines[0].split(",")
    for i in range(1, len(lines)):
        cells = lines[i].split(",")
        if cells[header.index("outcome")] == "ok":
            cells[header.index("latency_us")] = "1e999"
            lines[i] = ",".join(cells)
            break
    a.write_text("\n".join(lines) + "\n")
    with pytest.raises(SchemaError, match=r"not a finite number: inf \(as read\)") as exc:
        read_run(a)
    assert exc.value.column == "latency_us"
    done = report_cli(str(a), "--no-figures", "--out", str(tmp_path / "r"))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "not a finite number" in done.stderr and "no run could be read" in done.stderr, done.stderr


@pytest.mark.parametrize("where", ["proc", "fifo", "link"])
def test_a_report_that_cannot_be_written_is_one_line(tmp_path: Path, where: str) -> None:
    import os

    a, _ = two_runs(tmp_path)
    out = tmp_path / "r"
    if where == "proc":
        out = Path("/proc/mmrig-report")                       # no file can be made there, not even by root
    elif where == "fifo":
        out.mkdir()
        os.mkfifo(out / "report.md")
    else:
        (tmp_path / "elsewhere").mkdir()
        out.symlink_to(tmp_path / "elsewhere")                   # a folder planted as a link
    done = report_cli(str(a), "--no-figures", "--out", str(out))
    one_line_exit_2(done, "report: cannot write the report in")
    assert not any((tmp_path / "elsewhere").iterdir()) if where == "link" else True
