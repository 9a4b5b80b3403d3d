"""The tiers stay honest (conftest.py): a test of the project's suites that starts a paced bench, itself or in a
process it starts, fails unless it carries the `paced` marker (the long tier, make check) or `paced_smoke`.

Each case runs pytest on a probe file put in tests/ (the check covers the project's suites only) that records a
paced bench's start the way mmhil.bench does (mmhil.pacedlog.note), so no bench runs here."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

PROBE = '''
import subprocess
import sys

import pytest

from mmhil import pacedlog


{marker}
def test_starts_one_in_a_child() -> None:
    subprocess.run([sys.executable, "-c", "from mmhil import pacedlog; pacedlog.note('Bench(paced, probe)')"],
                   check=True)


def test_starts_none() -> None:
    assert pacedlog.ENV
'''


def run_probe(marker: str) -> subprocess.CompletedProcess[str]:
    probe = HERE / f"test_tier_probe_{uuid.uuid4().hex}.py"
    probe.write_text(PROBE.format(marker=marker))
    try:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                               str(probe)], capture_output=True, text=True, timeout=120, cwd=HERE.parent)
    finally:
        probe.unlink()


def test_a_test_that_starts_a_paced_bench_unmarked_fails_naming_the_bench() -> None:
    done = run_probe("")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 passed, 1 error" in done.stdout, done.stdout      # (the call passed; its teardown failed it)
    assert "test_starts_one_in_a_child started 1 paced bench(es) without the `paced` marker" in done.stdout
    assert "Bench(paced, probe)" in done.stdout, done.stdout


@pytest.mark.parametrize("marker", ["@pytest.mark.paced", "@pytest.mark.paced_smoke"])
def test_a_marked_test_may_start_one(marker: str) -> None:
    done = run_probe(marker)
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout + done.stderr
