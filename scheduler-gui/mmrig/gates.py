"""`mmrig run` as a CI gate: thresholds on a run's summary, and the exit codes (README, "Exit codes").

Gates (each judged on the sidecar's `summary`, i.e. over the run's figures as `mmanalysis.latstats` defines
them):
- `--fail-on late,missed,early,lost`: one gate per outcome named; it fails if any event ended so;
- `--max-latency-us N`: fails if the largest measured latency (ok and late rows that are measurable) is
  above N us, and also if nothing was measured (a latency gate with no latency must not pass);
- `--min-on-time PCT`: fails if fewer than PCT % of all events were on time (`ok`).

Exit codes, and the order when several apply (the first that applies wins):
  2  usage or rig error: bad options, a port that cannot be opened, a bench that cannot start (no run);
  3  the run is invalid (kept on disk, never a result): its gates are not judged, since its figures
     are not a measurement;
  1  a gate failed;
  0  the run is valid and every gate passed (or none was given).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

EXIT_PASS, EXIT_GATE, EXIT_ERROR, EXIT_INVALID = 0, 1, 2, 3
EXIT_BREAK = 102        # EVL latmus's for an abort past its threshold (-A): mmrig run --break-us
EXIT_CODES = {EXIT_PASS: "pass: the run is valid and every gate passed",
              EXIT_GATE: "a gate failed (--fail-on, --max-latency-us, --min-on-time)",
              EXIT_ERROR: "usage or rig error: no run (bad option, port, bench)",
              EXIT_INVALID: "invalid run: kept on disk, not a result (gates not judged)",
              EXIT_BREAK: "break: an event past --break-us (or late, or missed); the run written up to it"}
FAIL_ON = ("late", "missed", "early", "lost")


@dataclass(frozen=True)
class Gates:
    """The thresholds a run is judged by (all optional)."""

    fail_on: tuple[str, ...] = ()
    max_latency_us: float | None = None
    min_on_time_pct: float | None = None

    @property
    def empty(self) -> bool:
        return not self.fail_on and self.max_latency_us is None and self.min_on_time_pct is None

    def options(self) -> str:
        """The gates as the command line's options."""
        out = [f"--fail-on {','.join(self.fail_on)}"] if self.fail_on else []
        if self.max_latency_us is not None:
            out.append(f"--max-latency-us {self.max_latency_us:g}")
        if self.min_on_time_pct is not None:
            out.append(f"--min-on-time {self.min_on_time_pct:g}")
        return " ".join(out)


@dataclass(frozen=True)
class GateResult:
    """One gate's verdict: `status` is "pass", "fail" or "skipped" (the run was invalid)."""

    gate: str            # fail_on_late, ..., max_latency_us, min_on_time
    option: str          # the command-line option that set it
    figure: str          # what was compared, in words
    value: float | None
    threshold: float
    unit: str
    status: str
    text: str

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_fail_on(text: str) -> tuple[str, ...]:
    """'late,missed' -> ('late', 'missed'); ValueError naming what is wrong."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ValueError(f"--fail-on needs one or more of {','.join(FAIL_ON)}")
    bad = [n for n in names if n not in FAIL_ON]
    if bad:
        raise ValueError(f"--fail-on: unknown outcome {', '.join(bad)} (choose from {','.join(FAIL_ON)})")
    return tuple(dict.fromkeys(names))


def _fmt(v: float | None, unit: str) -> str:
    if v is None:
        return "none"
    return f"{v:.3f} {unit}".rstrip() if unit != "%" else f"{v:.2f} %"


def judge(gates: Gates, summary: Mapping[str, Any], valid: bool = True) -> list[GateResult]:
    """each gate's result on a run's summary; every gate "skipped" when the run is invalid."""
    out: list[GateResult] = []
    outcomes = summary.get("outcomes") or {}

    def add(gate: str, option: str, figure: str, value: float | None, threshold: float, unit: str, fails: bool,
            words: str) -> None:
        if not valid:
            status, text = "skipped", f"{figure}: not judged, the run is invalid"
        else:
            status, text = ("fail" if fails else "pass"), words
        out.append(GateResult(gate, option, figure, value, threshold, unit, status, text))

    for name in gates.fail_on:
        n = int(outcomes.get(name, 0))
        add(f"fail_on_{name}", f"--fail-on {name}", f"{name} events", n, 0, "events", n > 0,
            f"{name} events: {n} (--fail-on {name}: none allowed)")
    if gates.max_latency_us is not None:
        mx = summary.get("max_us")
        bound = gates.max_latency_us
        fails = mx is None or mx > bound
        words = (f"max latency: no event measured (--max-latency-us {bound:g})" if mx is None else
                 f"max latency {_fmt(mx, 'us')} {'>' if mx > bound else '<='} {bound:g} us (--max-latency-us)")
        add("max_latency_us", "--max-latency-us", "max latency", mx, bound, "us", fails, words)
    if gates.min_on_time_pct is not None:
        share = summary.get("on_time_share")
        pct = None if share is None else 100.0 * share
        bound = gates.min_on_time_pct
        fails = pct is None or pct < bound
        words = (f"on time: no event (--min-on-time {bound:g} %)" if pct is None else
                 f"on time {_fmt(pct, '%')} {'<' if pct < bound else '>='} {bound:g} % (--min-on-time)")
        add("min_on_time", "--min-on-time", "on-time share", pct, bound, "%", fails, words)
    return out


def exit_code(valid: bool, verdicts: Sequence[GateResult], broke: bool = False) -> int:
    """3 beats 102 beats 1: an invalid run's figures are not judged; a break is the run's own end."""
    if not valid:
        return EXIT_INVALID
    if broke:
        return EXIT_BREAK
    return EXIT_GATE if any(v.failed for v in verdicts) else EXIT_PASS


__all__ = ["EXIT_BREAK", "EXIT_CODES", "EXIT_ERROR", "EXIT_GATE", "EXIT_INVALID", "EXIT_PASS", "FAIL_ON", "Gates", "GateResult",
           "exit_code", "judge", "parse_fail_on"]
