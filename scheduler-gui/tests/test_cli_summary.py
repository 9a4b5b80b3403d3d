"""`mmrig run`'s printed summary fits an 80-column terminal (the one-row table is 139 columns wide) and says its
figures once: in --help and the docs, not under every run (a 183-character footnote, even with -q)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mmrig.cli.summary import narrow_summary, summary_text

S = {"n": 600000, "mean_us": 14431.25, "variance_us2": 983_912_345.0, "min_us": 10.1875, "p50_us": 15.0,
     "p99_us": 19000.5, "p999_us": 38000.0, "max_us": 99999.938,
     "outcomes": {"ok": 599990, "late": 12, "early": 4237, "missed": 1, "lost": 0}}


def test_within_80_columns_a_table_of_the_first_figures_and_the_rest_in_words() -> None:
    text = narrow_summary("normal-khz", S, 80)
    lines = text.splitlines()
    assert max(len(ln) for ln in lines) <= 79, text
    assert lines[0].split() == ["run", "n", "mean_us", "variance", "min_us", "p99_us", "max_us"]
    assert lines[1].split() == ["normal-khz", "600000", "14431.250", "983,900,000", "us²", "10.188", "19000.500",
                                "99999.938"]
    words = " ".join(lines[2:])
    assert "ok/late/early/missed/lost 599990/12/4237/1/0" in words and "left out 2" in words    # 599990 + 12 - n
    assert "p50/p99.9 15.000/38000.000 us" in words


def test_a_long_name_has_a_line_of_its_own() -> None:
    lines = narrow_summary("a-name-longer-than-its-column", S, 80).splitlines()
    assert lines[1] == "a-name-longer-than-its-column" and lines[2].split()[0] == "600000"
    assert max(len(ln) for ln in lines) <= 79


@pytest.mark.parametrize("columns, wide", [(80, False), (132, False), (139, False), (160, True), (200, True)])
def test_the_whole_row_only_where_the_terminal_is_wider_than_it(columns: int, wide: bool) -> None:
    text = summary_text("r", S, columns)
    assert ("p99.9_us" in text) is wide and max(len(ln) for ln in text.splitlines()) < columns


def test_a_run_prints_no_footnote_and_help_says_it_once(tmp_path: Path) -> None:
    from mmhil.bench import ensure_built
    ensure_built()
    done = subprocess.run([sys.executable, "-m", "mmrig", "run", "--unpaced", "-q", "-l", "5"], capture_output=True,
                          text=True, timeout=120, env={**__import__("os").environ, "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    assert "n, mean, variance" not in done.stdout and "measurable: no byte" not in done.stdout
    assert max(len(ln) for ln in done.stdout.splitlines()) <= 79
    assert "5/0/0/0/0" in done.stdout
    helped = subprocess.run([sys.executable, "-m", "mmrig", "run", "--help"], capture_output=True, text=True,
                            timeout=60)
    assert "the summary's n, mean and variance are of the measured events" in helped.stdout
