"""Where a run goes: the virtual bench (started and stopped here, paced or unpaced) or real boards
given by their serial ports / pyserial URLs. Also the bench's lag over the run's own window."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEFAULT_LAG_BOUND_US = 1000.0


def lag_window(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The bench's lag figures over the window between two `status` replies, from the difference of
    their histograms (bins: 1 us wide below 1 ms, 1 ms wide above): samples, p99.9, max (lower edge
    of the highest occupied bin, or the bench's max if that grew in the window) and the exceedances."""
    lb, la = before.get("lag", {}), after.get("lag", {})
    hb = {int(lo): n for lo, n in lb.get("histogram_us", [])}
    diff = sorted((int(lo), n - hb.get(int(lo), 0)) for lo, n in la.get("histogram_us", []))
    diff = [(lo, n) for lo, n in diff if n > 0]
    samples = sum(n for _, n in diff)
    exceeded = int(la.get("exceeded", 0)) - int(lb.get("exceeded", 0))
    p999 = None
    if samples:
        want, acc = 0.999 * samples, 0
        for lo, n in diff:
            acc += n
            if acc >= want:
                p999 = float(lo)
                break
    top = float(diff[-1][0]) if diff else 0.0
    max_us = float(la.get("max_us", 0.0)) if float(la.get("max_us", 0.0)) > float(lb.get("max_us", 0.0)) else top
    bound = float(la.get("bound_us", DEFAULT_LAG_BOUND_US))
    paced = bool(after.get("paced", True))
    return {"lag_bound_us": bound, "lag_max_us": max_us, "lag_p999_us": p999, "lag_samples": samples,
            "lag_exceeded": exceeded, "paced": paced, "valid": (not paced) or exceeded == 0,
            "virtual_s": after.get("virtual_s"), "wall_s": after.get("wall_s"),
            "host": after.get("host")}  # what the bench was granted: scheduling policy, mlock, ...


@dataclass
class Target:
    kind: str = "bench"               # "bench" or "boards"
    paced: bool = True
    profiler: str | None = None       # boards: URL / path
    executor: str | None = None
    lag_bound_us: float | None = None  # None: the runner picks it by mode
    bench: Any = field(default=None, init=False)

    def open(self) -> tuple[str, str | None]:
        """Starts the bench if this is one; returns (profiler url, executor url or None)."""
        if self.kind == "bench":
            from mmhil import Bench  # the bench lives in hil/ (mmhil)

            # Paced runs measure the PC against wall time, so the bench asks for real-time scheduling
            # (SCHED_FIFO 10, locked memory; it falls back to nice -10 and reports what it got).
            self.bench = Bench(paced=self.paced, lag_bound_us=self.lag_bound_us, realtime=self.paced).start()
            self.profiler, self.executor = self.bench.profiler_port, self.bench.executor_port
        if self.profiler is None:
            raise ValueError("no profiler port given")
        return self.profiler, self.executor

    def status(self) -> dict[str, Any] | None:
        if self.bench is None or not self.bench.alive():
            return None
        try:
            return self.bench.status()
        except Exception:  # noqa: BLE001 - a dead bench is reported by the sessions
            return None

    @property
    def pid(self) -> int | None:
        return self.bench.pid if self.bench is not None and self.bench.alive() else None

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "paced": self.paced if self.kind == "bench" else None,
                "profiler": self.profiler, "executor": self.executor,
                "bench_pid": self.bench.pid if self.bench is not None else None}

    def close(self) -> None:
        if self.bench is not None:
            self.bench.close()
