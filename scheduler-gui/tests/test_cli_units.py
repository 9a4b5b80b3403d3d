"""Times on mmrig run's command line as cyclictest and latmus users write them: -i as cyclictest's (a plain number is
us) or with a unit (1ms, 500us, 71.111ms, 1tick, 2ticks); --rate as the GUI's slider (a plain number is ms) with the
same units; -D with a unit (90s, 10m, 1h); anything else one line, exit 2."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from mmrig.cli.options import duration_s
from mmrig.cli.options import parse_interval
from mmrig.cli.run import parse_rate


def test_a_rate_takes_a_unit_and_a_plain_number_is_ms() -> None:
    assert [parse_rate(t) for t in ("1", "1ms", "1000us", "0.5s", "tick")] == [1.0, 1.0, 1.0, 500.0, None]


def test_an_interval_is_cyclictest_s_a_plain_number_is_us() -> None:
    assert [parse_interval(t) for t in ("1000", "1ms", "500us", "71.111ms", "0.5s")] == [1.0, 1.0, 0.5, 71.111, 500.0]


def test_an_interval_and_a_rate_take_ticks() -> None:
    for parse in (parse_interval, parse_rate):
        assert [parse(t) for t in ("tick", "1tick", "2ticks", "3 ticks")] == [None, None, 142.222222222, 213.333333333]
    with pytest.raises(argparse.ArgumentTypeError, match="must be > 0"):
        parse_interval("0ticks")


def test_a_duration_takes_a_unit_and_a_plain_number_is_seconds() -> None:
    assert [duration_s(t) for t in ("90", "90s", "10m", "10min", "1h", "1500ms")] == [90, 90, 600, 600, 3600, 1.5]


@pytest.mark.parametrize("option, value, words", [("-D", "1x", "not a time: '1x'"), ("-D", "0m", "must be > 0"),
                                                  ("-i", "0us", "must be > 0"), ("-i", "fast", "not a time"),
                                                  ("--rate", "0", "must be > 0"), ("--rate", "x", "not a time")])
def test_a_bad_time_is_one_line_and_exit_2(option: str, value: str, words: str, tmp_path) -> None:
    done = subprocess.run([sys.executable, "-m", "mmrig", "run", option, value, "-o", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr, done.stderr
    with pytest.raises(argparse.ArgumentTypeError):
        {"-D": duration_s, "-i": parse_interval, "--rate": parse_rate}[option](value)
