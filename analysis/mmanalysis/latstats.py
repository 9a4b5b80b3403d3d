"""The latency statistics of mmrig, defined once (numpy only): the scheduler's run summary, the GUI's live
panel, the analysis tables and the report all call these.

Latency statistics are over the measured rows (`ok` and `late`, and measurable: no byte of theirs displaced by a host stall)
only; `early`, `missed` and `lost` are counted, never folded in (docs/data-format.md). In pandas,
`measured(df)` selects exactly those rows, so `measured(df).latency_us.mean()` is the mean every table
shows. Variance is the sample variance (ddof=1), undefined for fewer than two values, in us^2 everywhere
it is shown (`variance_text`; the paper's ms^2 figures are converted where they are compared).
Percentiles interpolate linearly (numpy's default).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping

import numpy as np

from .schema import MEASURED, OUTCOMES

QUANTILES = {"min": 0.0, "p50": 0.5, "p90": 0.9, "p99": 0.99, "p999": 0.999, "max": 1.0}
STAT_NAMES = ["n", "mean", "var", "std", *QUANTILES]


def latency_stats(values: np.ndarray) -> dict[str, float]:
    """n, mean, var (ddof=1), std and the QUANTILES of `values`; NaN where a figure is undefined."""
    values = np.asarray(values, dtype=float)
    n = len(values)
    if n == 0:
        return {"n": 0, "mean": np.nan, "var": np.nan, "std": np.nan, **{k: np.nan for k in QUANTILES}}
    mean = float(values.mean())
    var = float(((values - mean) ** 2).sum() / (n - 1)) if n > 1 else np.nan
    qs = np.quantile(values, list(QUANTILES.values()))
    return {"n": n, "mean": mean, "var": var, "std": float(np.sqrt(var)) if n > 1 else np.nan,
            **dict(zip(QUANTILES, map(float, qs)))}


def _or_none(v: float) -> float | None:
    return None if v is None or np.isnan(v) else float(v)


def run_summary(measured_us: np.ndarray, outcome_counts: Mapping[str, int], unmeasurable: int = 0) -> dict[str, Any]:
    """The summary a run's sidecar carries (docs/data-format.md, "summary"): latency figures in us of the
    measured events (ok or late, and measurable), outcome counts, the on-time share (ok / all events) and
    how many events were not measurable (a host stall displaced a byte they depend on: left out of the figures)."""
    st = latency_stats(measured_us)
    events = int(sum(outcome_counts.get(o, 0) for o in OUTCOMES))
    out: dict[str, Any] = {"n": int(st["n"])}
    out.update(mean_us=_or_none(st["mean"]), variance_us2=_or_none(st["var"]), min_us=_or_none(st["min"]),
               p50_us=_or_none(st["p50"]), p99_us=_or_none(st["p99"]), p999_us=_or_none(st["p999"]),
               max_us=_or_none(st["max"]))
    out["outcomes"] = {o: int(outcome_counts.get(o, 0)) for o in OUTCOMES}
    out["events"] = events
    out["on_time_share"] = (out["outcomes"]["ok"] / events) if events else None
    out["unmeasurable"] = int(unmeasurable)
    return out


def measured(df: Any) -> Any:
    """The rows of a run DataFrame (mmanalysis.read_run(s)) the latency figures are over: ok or late, and
    measurable. `measured(df).latency_us.mean()` is the mean of the run's summary, the demo and the report."""
    return df[df["outcome"].isin(MEASURED) & df["measurable"].astype(bool)]


def variance_text(var_us2: float | None) -> str:
    """A variance for people, in us^2 with 4 significant digits and thousands grouped: '599.6 us²',
    '983,900,000 us²', '0 us²'; '-' when undefined (fewer than two values)."""
    if var_us2 is None or (isinstance(var_us2, float) and np.isnan(var_us2)):
        return "-"
    if var_us2 == 0:
        return "0 us²"
    digits = 3 - int(np.floor(np.log10(abs(var_us2))))
    v = round(var_us2, digits)
    return (f"{v:,.{max(digits, 0)}f}" if digits > 0 else f"{v:,.0f}") + " us²"


def is_measured(row: Any) -> bool:
    """Whether a row (an event, a GUI row, a DataFrame tuple) counts in the latency figures: measured (ok,
    late) and measurable."""
    return row.outcome in MEASURED and bool(row.measurable)


def measured_latencies(rows: Iterable[Any]) -> np.ndarray:
    """The latencies every figure is taken over: rows measured (ok, late) and measurable, in order."""
    return np.fromiter((r.latency_us for r in rows if is_measured(r)), dtype=float)


def summarize_rows(rows: Iterable[Any]) -> dict[str, Any]:
    """run_summary of objects with `outcome`, `latency_us` and `measurable` attributes (events, GUI rows)."""
    counts: dict[str, int] = {}
    unmeasurable = 0

    def measured() -> Iterator[float]:     # one pass: a long run's rows are read back from disk (eventstore.py)
        nonlocal unmeasurable
        for r in rows:
            counts[r.outcome] = counts.get(r.outcome, 0) + 1
            unmeasurable += not r.measurable
            if is_measured(r):
                yield r.latency_us
    latencies = np.fromiter(measured(), dtype=float)
    return run_summary(latencies, counts, unmeasurable)
