"""`mmrig sweep -i` as `mmrig run -i`, cyclictest's unit: a plain number is us (it was --rate's alias, ms: `-i 1000`
swept 1000 ms where `mmrig run -i 1000` runs 1 ms); --rate keeps ms."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mmrig.cli.sweep import intervals_as_rates
from mmrig.sweep.campaign import parse_rates


def test_a_plain_number_is_us_ticks_stay_ticks() -> None:
    assert intervals_as_rates("1000,50000,500us,71.111ms,tick,2ticks") == "1ms,50ms,0.5ms,71.111ms,tick,2ticks"
    assert parse_rates(intervals_as_rates("1000,1ms")) == ["1ms"]
    with pytest.raises(ValueError, match="-i: 'soon'"):
        intervals_as_rates("1ms,soon")


def test_a_bad_interval_is_one_line_exit_2_and_nothing_written(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mmrig", "sweep", "-d", "1", "-i", "soon", "-o", str(tmp_path / "c")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith("mmrig sweep: -i: 'soon'"), done.stderr
    assert len(done.stderr.splitlines()) == 1 and not (tmp_path / "c").exists()
