"""Option types and options that several subcommands share (each subcommand's module owns the rest)."""

from __future__ import annotations

import argparse
import math
import re

from mmanalysis.schema import NOMINAL_TICK_S
from mmhil.linemodel import LineModel, LineModelError
from mmproto import PROFILER_KINDS


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, not {text}")
    return value


TIME_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def seconds_with_unit(text: str, default_unit: str) -> float:
    """A time as cyclictest and latmus users write it: a number with a unit (us, ms, s, m or min, h), or a plain
    number in `default_unit`; ArgumentTypeError for anything else or a time not above 0."""
    t = text.strip().lower()
    unit = next((u for u in sorted(TIME_UNITS, key=len, reverse=True) if t.endswith(u)), None)
    number = t[:-len(unit)] if unit else t
    try:
        value = float(number) * TIME_UNITS[unit or default_unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a time: {text!r} (a number, or one with us, ms, s, m or h)") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, not {text}")
    return value


TICK_MS = NOMINAL_TICK_S * 1000.0
TICKS = re.compile(r"([0-9]*\.?[0-9]+)?\s*ticks?")


def interval_ms(text: str, default_unit: str) -> float | None:
    """An interval between events in ms: 'tick' or '1tick' (None: one a tick), N ticks ('2ticks': N x 71.111 ms),
    a time with its unit (500us, 1ms, 71.111ms, 0.5s), or a plain number in `default_unit` (us for -i as cyclictest
    takes it, ms for --rate as the GUI's slider shows it); ArgumentTypeError for anything else or an interval not
    above 0."""
    t = text.strip().lower()
    if (m := TICKS.fullmatch(t)) is not None:
        n = float(m.group(1) or 1)
        if not math.isfinite(n) or n <= 0:
            raise argparse.ArgumentTypeError(f"must be > 0, not {text}")
        return None if n == 1 else round(n * TICK_MS, 9)
    try:
        return round(seconds_with_unit(text, default_unit) * 1000.0, 9)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc}, or ticks (1tick, 2ticks)") from None


def parse_interval(text: str) -> float | None:
    """-i/--interval, cyclictest's: a plain number is microseconds (-i 1000 is 1 ms), or with a unit (1ms, 500us,
    71.111ms, 1tick, 2ticks); in ms (None: one a tick)."""
    return interval_ms(text, "us")


def parse_rate(text: str) -> float | None:
    """--rate, the GUI slider's: a plain number is milliseconds, or with a unit as -i takes it; in ms (None: one a
    tick)."""
    return interval_ms(text, "ms")


def duration_s(text: str) -> float:
    """--duration: seconds, or with a unit (90s, 10m, 1h), as cyclictest's -D takes it."""
    return seconds_with_unit(text, "s")


def percent(text: str) -> float:
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"must be 0..100, not {text}")
    return value


def ppm(text: str) -> int:
    """A crystal offset: a whole number of ppm, -10000..10000 (the bench's range)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of ppm") from None
    if not -10000 <= v <= 10000:   # the bench's range (PPM_MAX in hil/bench/cosim.h)
        raise argparse.ArgumentTypeError(f"{v} ppm: the bench takes -10000..10000")
    return v


def add_profiler_kind_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profiler-kind", choices=PROFILER_KINDS, default="avr",
                   help="the bench's profiler: avr (the ATmega2560 image, input capture; default) or 8051 (the "
                        "paper's 87C51 image on ucsim's core, its event input polled; docs/bench.md)")


def line_model(text: str) -> str:
    """--line MODEL[:k=v]: the bench's USB-serial adapter model (mmhil.linemodel), as the bench takes it."""
    try:
        return LineModel.parse(text).spec
    except LineModelError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def latency_timer_ms(text: str) -> int:
    """--latency-timer MS: a whole number of ms the FTDI chip takes (1..255)."""
    if not text.strip().isdigit() or not 1 <= int(text) <= 255:
        raise argparse.ArgumentTypeError(f"not a whole number of ms from 1 to 255: {text!r}")
    return int(text)


def add_line_model_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--line", type=line_model, default="ideal", metavar="MODEL[:k=v]",
                   help="the bench: the USB-serial adapter on both lines, in virtual time: ideal (none, the default), "
                        "ftdi (latency timer 16 ms, ftdi:latency=MS for 1..255; 62 data bytes a packet; 1 ms USB "
                        "frames) or cdc-16u2 (the Mega's ATmega16U2: a flush every 4.096 ms or past 96 bytes); "
                        "docs/usb-serial.md")


def add_ppm_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("bench crystals (docs/bench.md, 'Crystal offsets')")
    g.add_argument("--ppm-profiler", type=ppm, default=0, metavar="N",
                   help="the bench's profiler clock N ppm fast (negative: slow), as a real crystal is; default 0")
    g.add_argument("--ppm-executor", type=ppm, default=0, metavar="N", help="the same for the executor")
