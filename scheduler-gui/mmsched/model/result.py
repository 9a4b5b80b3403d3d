"""What one run gives back: its events, its sidecar and where both were written.

The figures a test asserts on are properties (the sidecar's summary, mmanalysis.latstats: latency over
the measured events, `ok` and `late`, that are measurable), and the result's repr is one line that
names the run's files, so a failed `assert result.p99_us < 5.0` tells where to look:

    assert r.on_time_share >= 0.99 and r.p99_us < 5.0, r
    AssertionError: RunResult(/.../test_x.csv (+ .json), mixed, valid, 50 events ok/late/early/missed/lost
                    50/0/0/0/0, on time 100.0 %, p50 1.375 us, p99 1.375 us, max 1.375 us)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from mmanalysis.latstats import measured_latencies
from mmanalysis.schema import OUTCOMES

from .event import Event
from .tcarrivals import TimecodeArrivals


@dataclass(repr=False)
class RunResult:
    events: Sequence[Event]                 # (a long run's: an EventStore, its older events read back from disk)
    sidecar: dict[str, Any]
    csv_path: Path | None
    json_path: Path | None
    # every TIMECODE frame the run took: (extended timecode, arrival on the run's clock), as the tick estimate
    # and its error (the sidecar's tick_estimate) rest on them
    timecodes: TimecodeArrivals = field(default_factory=TimecodeArrivals)

    @property
    def valid(self) -> bool:
        return bool(self.sidecar["valid"])

    @property
    def summary(self) -> dict[str, Any]:
        return self.sidecar["summary"]

    @property
    def executor_profile(self) -> dict[str, Any] | None:
        """A traced run's profile of the executor (RunConfig.trace; mmanalysis.exectrace.profile), else None."""
        return self.sidecar.get("executor_profile")

    @property
    def exec_trace(self) -> Path | None:
        """A traced run's executor trace (OUT.exectrace), if it was recorded."""
        files = (self.executor_profile or {}).get("files") or {}
        if self.json_path is None or "exectrace" not in files:
            return None
        return self.json_path.with_name(files["exectrace"])

    @property
    def reasons(self) -> list[str]:
        """The codes of the run's invalid reasons (mmanalysis.schema.INVALID_REASONS)."""
        return [r["code"] for r in self.sidecar.get("invalid_reasons") or []]

    # ---- the figures a test asserts on -----------------------------------------------------------
    @property
    def name(self) -> str:
        return str(self.sidecar.get("name") or (self.sidecar.get("config") or {}).get("name", "run"))

    @property
    def outcomes(self) -> dict[str, int]:
        """Events per outcome: ok, late, early, missed, lost (all five, zeros included)."""
        return {o: int(self.summary["outcomes"].get(o, 0)) for o in OUTCOMES}

    def count(self, outcome: str) -> int:
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome {outcome!r}: one of {', '.join(OUTCOMES)}")
        return self.outcomes[outcome]

    @property
    def on_time_share(self) -> float:
        """ok / all events (0.0 for a run with no events)."""
        share = self.summary.get("on_time_share")
        return float(share) if share is not None else 0.0

    @property
    def unmeasurable(self) -> int:
        """Events a host stall displaced a byte of past the bound (mmsched.verdict.validity): kept with their outcome, left
        out of the latency figures."""
        return int(self.summary.get("unmeasurable", 0))

    def _figure(self, key: str) -> float:
        v = self.summary.get(key)
        return float(v) if v is not None else float("nan")   # no measured event: NaN fails every comparison

    @property
    def mean_us(self) -> float:
        return self._figure("mean_us")

    @property
    def min_us(self) -> float:
        return self._figure("min_us")

    @property
    def p50_us(self) -> float:
        return self._figure("p50_us")

    @property
    def p99_us(self) -> float:
        return self._figure("p99_us")

    @property
    def p999_us(self) -> float:
        return self._figure("p999_us")

    @property
    def max_us(self) -> float:
        return self._figure("max_us")

    @property
    def latencies_us(self) -> np.ndarray:
        """The latencies the figures are taken over: measured events (ok, late) no stall met, in order."""
        return measured_latencies(self.events)

    def percentile(self, q: float) -> float:
        """The q-th percentile (0..100) of `latencies_us`, interpolated as the summary's are (NaN if none)."""
        if not 0 <= q <= 100:
            raise ValueError(f"percentile {q}: 0..100")
        lat = self.latencies_us
        return float(np.percentile(lat, q)) if lat.size else float("nan")

    @property
    def files(self) -> list[Path]:
        return [p for p in (self.csv_path, self.json_path) if p is not None]

    def __repr__(self) -> str:
        """One line, the files first (pytest shortens a long repr in its middle)."""
        o = self.outcomes
        mode = (self.sidecar.get("config") or {}).get("mode", "?")

        def us(v: float) -> str:
            return "-" if v != v else f"{v:.3f} us"
        if self.csv_path is not None:
            where = f"{self.csv_path}" + (" (+ .json)" if self.json_path is not None else "")
        else:
            where = f"{self.name!r} (not written)"
        state = "valid" if self.valid else f"INVALID ({', '.join(self.reasons) or '?'})"
        stall = f", {self.unmeasurable} not measurable" if self.unmeasurable else ""
        return (f"RunResult({where}, {mode}, {state}, {sum(o.values())} events ok/late/early/missed/lost "
                f"{'/'.join(str(o[k]) for k in OUTCOMES)}, on time {100 * self.on_time_share:.1f} %, "
                f"p50 {us(self.p50_us)}, p99 {us(self.p99_us)}, max {us(self.max_us)}{stall})")
