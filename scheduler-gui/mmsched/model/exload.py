"""The executor's load for a run: what the executor is given to do besides firing events, so its
timing has something to degrade against. Three parts, each off by default:

  cpu          a CPU-bound task below every other task (below the dispatch priority): the core never sleeps
  periodic     a task above the timecode task, released every PERIOD by a hardware timer, that computes
               for EXEC each time: task dispatch waits for it, ISR dispatch does not
  rx           NOP frames a second the scheduler sends the executor, which decodes and drops them:
               receive interrupts and serial-task work, on the line the SCHEDULE frames share

On the command line and in the GUI one text: `none`, or parts joined by commas, for instance
`cpu,periodic=10ms/2ms,rx=20` (times in us unless they end in ms). The MODE frame carries cpu and periodic
(protocol version 3); the runner sends the rx frames.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from mmproto import LOAD_PERIOD_MIN_US, load_error

PERIOD_US = (LOAD_PERIOD_MIN_US, 65535)   # MODE's u16, from a release every ms
RX_MAX_PER_S = 50.0           # a NOP is 7 bytes on the line: 50/s is 36 % of 9600 baud, leaving the rest to SCHEDULEs


@dataclass(frozen=True)
class ExecutorLoad:
    cpu: bool = False
    period_us: int = 0        # the periodic task's period (0: no periodic task)
    exec_us: int = 0          # what it computes each period
    rx_per_s: float = 0.0     # NOP frames a second to the executor

    def __post_init__(self) -> None:
        if self.period_us or self.exec_us:          # 0 and 0: no periodic task
            check_periodic(self.period_us, self.exec_us)
        why = load_error(int(self.cpu), self.period_us, self.exec_us)    # the executor's own rule (SPEC.md)
        if why is not None:
            raise ValueError(f"--executor-load: the executor would refuse it: {why}")
        if not (math.isfinite(self.rx_per_s) and 0 <= self.rx_per_s <= RX_MAX_PER_S):
            raise ValueError(f"--executor-load: rx must be 0..{RX_MAX_PER_S:g} frames/s, not {self.rx_per_s}")

    @property
    def none(self) -> bool:
        return not (self.cpu or self.period_us or self.rx_per_s)

    def __str__(self) -> str:
        parts = (["cpu"] if self.cpu else []) + \
                ([f"periodic={self.period_us}/{self.exec_us}"] if self.period_us else []) + \
                ([f"rx={self.rx_per_s:g}"] if self.rx_per_s else [])
        return ",".join(parts) or "none"

    @classmethod
    def parse(cls, text: str) -> "ExecutorLoad":
        """`none` or `cpu,periodic=PERIOD/EXEC,rx=N` in any order; ValueError naming --executor-load."""
        text = text.strip()
        if text in ("", "none"):
            return cls()
        cpu, period, exec_, rx = False, 0, 0, 0.0
        for part in text.split(","):
            key, _, value = part.strip().partition("=")
            if key == "cpu" and not value:
                cpu = True
            elif key == "periodic" and "/" in value:
                a, b = value.split("/", 1)
                period, exec_ = _us(a), _us(b)
                check_periodic(period, exec_)   # periodic=0/0 typed is a mistake, not "no periodic task"
            elif key == "rx" and value:
                try:
                    rx = float(value)
                except ValueError:
                    raise ValueError(f"--executor-load: rx must be a number of frames/s, not {value!r}") from None
            else:
                raise ValueError(f"--executor-load: {part.strip()!r} is not cpu, periodic=PERIOD/EXEC or rx=N "
                                 f"(e.g. cpu,periodic=10ms/2ms,rx=20)")
        return cls(cpu, period, exec_, rx)


def check_periodic(period_us: object, exec_us: object) -> None:
    """A periodic task's period and execution time, as the executor takes them; ValueError naming --executor-load."""
    lo, hi = PERIOD_US
    if not (isinstance(period_us, int) and lo <= period_us <= hi):
        raise ValueError(f"--executor-load: periodic period must be {lo}..{hi} us, not {period_us}")
    if not (isinstance(exec_us, int) and 1 <= exec_us <= period_us // 2):
        raise ValueError(f"--executor-load: periodic execution time must be 1..{period_us // 2} us "
                         f"(at most half the period), not {exec_us}")


def _us(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(us|ms)?\s*", text)
    if not m:
        raise ValueError(f"--executor-load: {text.strip()!r} is not a time (N us, or N ms)")
    value = float(m.group(1)) * (1000 if m.group(2) == "ms" else 1)
    if value != int(value):
        raise ValueError(f"--executor-load: {text.strip()!r} is not a whole number of microseconds")
    return int(value)
