"""`mmrig run` as a CI gate: each exit code provoked once by a real run, the --json document, the
JUnit report (parsed with xml.etree), the histogram in the sidecar and the .hist file in cyclictest's format, the
environment in the sidecar; bad input gets one line and exit 2, never a traceback.

Runs are lockstep (`--unpaced`): deterministic and fast, whatever the host does."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

MMRIG = [sys.executable, "-m", "mmrig"]
ALL_GATES = ["--fail-on", "late,missed,early,lost", "--max-latency-us", "50", "--min-on-time", "99"]


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    from mmhil.bench import ensure_built
    ensure_built()


def mmrig(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*MMRIG, *args], capture_output=True, text=True, timeout=timeout)


def junit(path: Path) -> tuple[ET.Element, dict[str, ET.Element]]:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    return suites[0], {c.get("name"): c for c in suites[0].findall("testcase")}


def test_a_passing_run_exits_0_with_json_junit_hist_and_environment(tmp_path: Path) -> None:
    out = tmp_path / "pass"
    done = mmrig("run", "--unpaced", "--count", "20", *ALL_GATES, "-o", str(out), "--hist",
                 "--junit", str(tmp_path / "pass.xml"), "--json")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "\r" not in done.stderr and "\x1b[K" not in done.stderr    # stderr is no terminal: no progress line
    doc = json.loads(done.stdout)                                       # stdout is the JSON document alone
    assert doc["valid"] is True and doc["exit_code"] == 0 and doc["summary"]["n"] == 20
    assert [g["gate"] for g in doc["gates"]] == ["fail_on_late", "fail_on_missed", "fail_on_early", "fail_on_lost",
                                                 "max_latency_us", "min_on_time"]
    assert all(g["status"] == "pass" for g in doc["gates"])
    assert doc["files"] == {"csv": f"{out}.csv", "json": f"{out}.json", "hist": f"{out}.hist",
                            "junit": str(tmp_path / "pass.xml")}
    assert "PASS all 6 gates" in done.stderr                           # the words go to stderr with --json

    sidecar = json.loads(Path(f"{out}.json").read_text())
    h = sidecar["histogram"]
    assert h == doc["histogram"] and h["bin_us"] == 1.0 and h["bins"] == len(h["counts"]) == 1000
    assert sum(h["counts"]) + h["overflow"] + h["underflow"] == h["n"] == sidecar["summary"]["n"] == 20
    df = pd.read_csv(f"{out}.csv")
    worst = df.loc[df["latency_us"].idxmax()]
    assert h["worst"]["event"] == worst["event"] and h["worst"]["latency_us"] == worst["latency_us"]
    assert h["counts"][int(worst["latency_us"] // 1.0)] > 0

    from mmhil.bench import EXECUTOR_ELF, PROFILER_ELF
    env = sidecar["environment"]
    assert env["firmware"]["profiler"]["sha256"] == hashlib.sha256(PROFILER_ELF.read_bytes()).hexdigest()
    assert env["firmware"]["executor"]["sha256"] == hashlib.sha256(EXECUTOR_ELF.read_bytes()).hexdigest()
    assert len(env["firmware"]["bench"]["sha256"]) == 64
    assert env["clocks"]["profiler"]["timer_hz"] == 16_000_000 and env["clocks"]["profiler"]["tick_us"] > 71_000
    assert env["host"]["kernel"] == platform.release() and env["host"]["cpu_count"] >= 1
    assert env["target"] == {"kind": "bench", "paced": False, "lockstep": True}
    assert env["software"]["python"] == platform.python_version()

    # cyclictest's format: mmrig's '#' header (the environment), '# Histogram', a line per bin, cyclictest's trailer
    lines = Path(f"{out}.hist").read_text().splitlines()
    start = lines.index("# Histogram")
    header, body, trailer = lines[:start], lines[start + 1: start + 1 + h["bins"]], lines[start + 1 + h["bins"]:]
    assert all(ln.startswith("#") for ln in header) and not any(ln.startswith("#") for ln in body)
    text = "\n".join(header)
    for needle in ("sha256 " + env["firmware"]["profiler"]["sha256"], "# host: Linux", "timer 16000000 Hz",
                   "# target: bench (lockstep)", "# valid: yes", "# worst: ", "# format: cyclictest's -h"):
        assert needle in text, needle
    assert all(len(a) == 6 and len(b) >= 6 for a, b in (ln.split() for ln in body))     # %06d %06d
    bins = [(int(a), int(b)) for a, b in (ln.split() for ln in body)]
    assert [b for _, b in bins] == h["counts"] and [a for a, _ in bins[:3]] == [0, 1, 2]
    assert trailer == ["# Total: 000000020", "# Min Latencies: 00001", "# Avg Latencies: 00001",
                       "# Max Latencies: 00001", "# Histogram Overflows: 00000", "# Histogram Overflow at cycle number:",
                       "# Thread 0:"]                           # 20 events at 1.375 us: whole us, cut as cyclictest's

    suite, cases = junit(tmp_path / "pass.xml")
    assert suite.get("tests") == "7" and suite.get("failures") == "0" and suite.get("errors") == "0"
    assert list(cases) == ["valid", *[g["gate"] for g in doc["gates"]]]
    assert all(len(c) == 0 for c in cases.values())                     # no failure, error or skipped inside


def test_a_failed_gate_exits_1_naming_the_figure_the_threshold_and_the_files(tmp_path: Path) -> None:
    out = tmp_path / "slow"
    done = mmrig("run", "--unpaced", "--count", "10", "--max-latency-us", "0.001", "--fail-on", "missed",
                 "--histogram-us", "0.5", "-o", str(out), "--junit", str(tmp_path / "slow.xml"))
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    fails = [ln for ln in done.stdout.splitlines() if ln.startswith("FAIL")]
    assert len(fails) == 1, done.stdout                                 # one line per failed gate: only this one
    assert "max latency 1.375 us > 0.001 us (--max-latency-us)" in fails[0]
    assert f"{out}.csv" in fails[0] and f"{out}.json" in fails[0]
    sidecar = json.loads(Path(f"{out}.json").read_text())
    h = sidecar["histogram"]
    assert h["bin_us"] == 0.5 and sum(h["counts"]) + h["overflow"] == 10 and h["counts"][2] == 10   # 1.375 us
    suite, cases = junit(tmp_path / "slow.xml")
    assert suite.get("failures") == "1" and suite.get("tests") == "3"
    failure = cases["max_latency_us"].find("failure")
    assert failure is not None and f"{out}.csv" in failure.get("message") and "0.001" in failure.get("message")
    assert cases["fail_on_missed"].find("failure") is None and cases["valid"].find("failure") is None


def test_a_port_that_cannot_be_opened_exits_2_in_one_line(tmp_path: Path) -> None:
    done = mmrig("run", "--profiler", "/dev/does-not-exist-mmrig", "--executor", "/dev/does-not-exist-mmrig2",
                 "--max-latency-us", "10", "--junit", str(tmp_path / "err.xml"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and "Traceback" not in done.stderr
    assert done.stderr.startswith("mmrig run: ") and "/dev/does-not-exist-mmrig" in done.stderr
    suite, cases = junit(tmp_path / "err.xml")
    assert suite.get("errors") == "1" and cases["valid"].find("error") is not None
    assert cases["max_latency_us"].find("skipped") is not None


@pytest.mark.parametrize("bad", [
    ["--fail-on", "late,soon"], ["--max-latency-us", "-3"], ["--min-on-time", "120"], ["--histogram-us", "0"],
    ["--distance", "0"], ["--hist"], ["--mode", "normal", "--unpaced"], ["--out", "/proc/nope/x"],
])
def test_bad_input_is_one_line_and_exit_2(bad: list[str]) -> None:
    done = mmrig("run", "--count", "3", *bad, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("mmrig run: "), done.stderr      # argparse adds its usage line above, nothing else


def test_an_invalid_run_exits_3_even_when_a_gate_would_fail(tmp_path: Path) -> None:
    """Nodes that never say HELLO (pyserial's loop:// echoes what is sent): the run is written and invalid. The
    on-time gate would fail too: 3 wins over 1, and the gate is reported as not judged."""
    out = tmp_path / "silent"
    done = mmrig("run", "--profiler", "loop://", "--executor", "loop://", "--count", "3", "--min-on-time", "100",
                 "-o", str(out), "--junit", str(tmp_path / "silent.xml"))
    assert done.returncode == 3, done.stdout + done.stderr
    assert "INVALID RUN" in done.stdout and "no HELLO" in done.stdout and not any(
        ln.startswith("FAIL") for ln in done.stdout.splitlines())
    assert f"gates not judged: the run is invalid (files: {out}.csv, {out}.json)" in done.stdout
    sidecar = json.loads(Path(f"{out}.json").read_text())
    assert sidecar["valid"] is False and sidecar["histogram"]["n"] == 0 and sidecar["histogram"]["worst"] is None
    assert sidecar["environment"]["target"]["kind"] == "boards"
    assert sidecar["environment"]["firmware"]["profiler"]["sha256"] is None
    suite, cases = junit(tmp_path / "silent.xml")
    assert suite.get("failures") == "1" and suite.get("skipped") == "1"
    assert f"{out}.csv" in cases["valid"].find("failure").get("message")
    assert cases["min_on_time"].find("skipped") is not None
