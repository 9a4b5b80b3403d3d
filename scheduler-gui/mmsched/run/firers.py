"""Normal mode's firing thread, the one a run asks for (RunConfig.firing): the native one (nativefirer.py, the
default) or the Python one (firing.py); the Python one, and why, where the native one cannot be had."""

from __future__ import annotations

from typing import Callable

from mmproto import Link, LinkError, Written

from ..model.config import RunConfig
from ..model.event import Event
from .firing import Firer
from .nativefirer import NativeFirer


def start(cfg: RunConfig, link: Link, min_gap_s: float, interval_s: float, on_written: Callable[[Event, Written], None],
          on_error: Callable[[Event, BaseException], None], nice: int | None = None
          ) -> tuple[Firer | NativeFirer, str | None]:
    """The run's firing thread on the profiler's `link`, started, and why it is not the one asked for (None). Its
    writes come no sooner than `min_gap_s` after the one before (the line's RESULT time: firing.py); each FIRE on
    the line goes to `on_written`, a failed one to `on_error`. `nice`: the thread's (None: as it inherits; the run
    passes the process's own, not its loop's: loopnice.py)."""
    why = None
    if cfg.firing == "native":
        try:
            return NativeFirer(link, on_written, cfg.accuracy, on_error=on_error, min_gap_s=min_gap_s,
                               priority=cfg.priority, mlockall=cfg.mlockall, interval_s=interval_s,
                               nice=nice).start(), None
        except (OSError, LinkError) as exc:
            why = str(exc.strerror if isinstance(exc, OSError) and exc.strerror else exc)
    firer = Firer(lambda ev, wire: on_written(ev, link.write_frame(wire)), cfg.accuracy, on_error=on_error,
                  min_gap_s=min_gap_s, priority=cfg.priority, mlockall=cfg.mlockall, interval_s=interval_s, nice=nice)
    return firer.start(), why
