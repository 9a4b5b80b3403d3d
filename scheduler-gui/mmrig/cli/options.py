"""Option types and options that several subcommands share (each subcommand's module owns the rest)."""

from __future__ import annotations

import argparse
import math

from mmproto import PROFILER_KINDS


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, not {text}")
    return value


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


def add_ppm_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("bench crystals (docs/bench.md, 'Crystal offsets')")
    g.add_argument("--ppm-profiler", type=ppm, default=0, metavar="N",
                   help="the bench's profiler clock N ppm fast (negative: slow), as a real crystal is; default 0")
    g.add_argument("--ppm-executor", type=ppm, default=0, metavar="N", help="the same for the executor")
