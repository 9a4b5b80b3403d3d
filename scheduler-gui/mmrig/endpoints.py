"""Where a run goes: the one choice every entry point makes (the command line, the demo, the sweep's points,
the GUI, the pytest plugin, the fault campaign, the soak). The scheduler core runs against an
`mmsched.link.endpoint.Endpoint` and never knows which; this module is the only place that builds one.

- boards: two serial ports or pyserial URLs (`mmsched.link.endpoint.Boards`; normal mode needs no executor);
- the paced bench (`mmhil.BenchEndpoint`): virtual time on wall time, the PC's own timing measured;
- the lockstep bench (`mmhil.LockstepEndpoint`): virtual time granted by the run, the outcome independent of
  the host (not normal mode).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmsched.link.endpoint import Boards, Endpoint

PACED, LOCKSTEP, BOARDS = "paced", "lockstep", "boards"


@dataclass(frozen=True)
class Target:
    """A run's target as an entry point's options say it: `where` is PACED, LOCKSTEP or BOARDS; the ports for
    boards; the bench's own options (its profiler kind, crystals, Arduino mode, the bound of validity by cause,
    other images) for a bench."""

    where: str = PACED
    profiler: str | None = None
    executor: str | None = None
    reset_on_open: bool = True
    baud: int = 9600
    profiler_kind: str | None = None
    ppm_profiler: int = 0
    ppm_executor: int = 0
    arduino: bool = False
    lag_bound_us: float | None = None
    profiler_elf: Path | None = None
    executor_elf: Path | None = None
    # which host side of the bench's lines the run's links open: "socket" (RUN_DIR/NODE.sock: no kernel hop between
    # the PC's write and the bench's reader) or "pty" (RUN_DIR/NODE.tty, what other programs open: its hop included;
    # docs/bench.md, "The line sockets")
    bench_port: str = "socket"
    # the USB-serial adapter the bench puts on both lines (mmhil.linemodel's grammar: ideal, ftdi[:latency=MS],
    # cdc-16u2); a bench option: boards have the adapters they have
    line_model: str = "ideal"
    # boards: the FTDI ports' latency timer for the run, put back after it (None: left as it is)
    latency_timer_ms: int | None = None

    @classmethod
    def of(cls, profiler: str | None = None, executor: str | None = None, lockstep: bool = False,
           **options: Any) -> "Target":
        """Boards where a profiler port is given, else the lockstep or the paced bench."""
        where = BOARDS if profiler is not None else LOCKSTEP if lockstep else PACED
        return cls(where, profiler, executor, **options)


def choose_endpoint(t: Target) -> Endpoint:
    """The endpoint for target `t` (not opened yet: the run opens it)."""
    if t.where == BOARDS:
        assert t.profiler is not None
        return Boards(t.profiler, t.executor, baud=t.baud, reset_on_open=t.reset_on_open,
                      latency_timer_ms=t.latency_timer_ms)
    from mmhil.endpoint import BenchEndpoint, LockstepEndpoint   # the bench: only when it is the target
    from mmhil.linemodel import LineModel

    bench: dict[str, Any] = dict(profiler_kind=t.profiler_kind, ppm_profiler=t.ppm_profiler,
                                 ppm_executor=t.ppm_executor, arduino=t.arduino, profiler_elf=t.profiler_elf,
                                 executor_elf=t.executor_elf, line=t.bench_port,
                                 line_model=LineModel.parse(t.line_model))
    if t.where == LOCKSTEP:
        return LockstepEndpoint(**bench)
    return BenchEndpoint(lag_bound_us=t.lag_bound_us, **bench)


def bench_images(t: Target) -> dict[str, Any] | None:
    """The images a bench target runs, for the sidecar's environment (None on boards: the run reads the
    nodes' HELLOs instead)."""
    if t.where == BOARDS:
        return None
    from mmhil.bench import default_images

    images = default_images(t.profiler_kind or "avr")
    if t.profiler_elf is not None:
        images["profiler"] = Path(t.profiler_elf)
    if t.executor_elf is not None:
        images["executor"] = Path(t.executor_elf)
    return images


__all__ = ["BOARDS", "LOCKSTEP", "PACED", "Target", "bench_images", "choose_endpoint"]
