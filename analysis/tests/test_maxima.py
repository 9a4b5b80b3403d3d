"""The worst case over time (mmanalysis.maxima): each measured event in the interval of its moment, count, max and
p99 per interval, the summary's own figures when the run is one interval; events folded in one at a time in any
order give what the whole run gives."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import pytest

from mmanalysis.latstats import summarize_rows
from mmanalysis.maxima import IntervalMaxima, maxima_of_rows, moment_s

TICK_COUNTS, TIMER_HZ = 1_137_778, 16_000_000
TICK_S = TICK_COUNTS / TIMER_HZ


@dataclass
class Row:
    event: int
    scheduled_tc: int
    outcome: str
    latency_us: float | None
    measurable: bool = True
    due_counts: int = 0


def test_an_event_lies_in_the_interval_of_its_moment() -> None:
    acc = IntervalMaxima(every_s=10.0)
    for t, lat, ev in ((0.0, 5.0, 0), (9.999, 7.0, 1), (10.0, 3.0, 2), (35.0, 1.0, 3)):
        acc.add(t, lat, ev)
    sec = acc.section()
    assert sec["every_s"] == 10.0 and sec["n"] == 4
    assert [(i["start_s"], i["end_s"], i["count"], i["max_us"], i["max_event"]) for i in sec["intervals"]] == [
        (0.0, 10.0, 2, 7.0, 1), (10.0, 20.0, 1, 3.0, 2), (20.0, 30.0, 0, None, None), (30.0, 40.0, 1, 1.0, 3)]
    assert sec["intervals"][2]["p99_us"] is None          # an interval without a measured event: no figures


def test_p99_is_the_summarys_percentile_and_the_first_of_equal_maxima_is_named() -> None:
    values = [float(v) for v in range(1, 201)]
    acc = IntervalMaxima(every_s=300.0)
    for i, v in enumerate(values):
        acc.add(1.0, v, i)
    acc.add(2.0, 200.0, 500)                            # a later event as bad as the worst: the first stays named
    (iv,) = acc.section()["intervals"]
    assert iv["p99_us"] == round(float(np.quantile(values + [200.0], 0.99)), 3) and iv["max_event"] == 199


def test_folding_events_in_any_order_gives_the_same_section() -> None:
    rng = random.Random(4)
    events = [(rng.uniform(0, 3600), rng.expovariate(0.2), i) for i in range(3000)]
    a, b = IntervalMaxima(300.0), IntervalMaxima(300.0)
    for e in events:
        a.add(*e)
    for e in sorted(events, key=lambda e: -e[1]):
        b.add(*e)
    assert a.section() == b.section() and len(a.section()["intervals"]) == 12


@pytest.mark.parametrize("every", [0, -1.0, float("nan"), float("inf")])
def test_an_interval_that_is_no_time_is_refused(every: float) -> None:
    with pytest.raises(ValueError, match="> 0 seconds"):
        IntervalMaxima(every)


def test_rows_count_what_the_summary_counts_at_their_moment() -> None:
    rows = [Row(0, 10, "ok", 2.0), Row(1, 11, "late", 1500.0), Row(2, 12, "early", -3.0), Row(3, 13, "missed", None),
            Row(4, 14, "ok", 99.0, measurable=False), Row(5, 10 + 15, "ok", 4.0, due_counts=TIMER_HZ // 2),
            Row(6, 40, "lost", None)]
    sec = maxima_of_rows(rows, 1.0, TICK_S, TIMER_HZ)
    assert sec["clock"] == "first tick" and sec["first_tc"] == 10 and sec["t0_run_s"] is None
    assert sec["n"] == summarize_rows(rows)["n"] == 3
    # event 5: 15 ticks (1.0667 s) and half a second after tick 10 began: the interval [1, 2)
    assert moment_s(25, TIMER_HZ // 2, 10, TICK_S, TIMER_HZ) == pytest.approx(15 * TICK_S + 0.5)
    assert [(i["count"], i["max_event"]) for i in sec["intervals"]] == [(2, 1), (1, 5)]


def test_on_the_runs_clock_the_intervals_shift_and_stretch_with_it() -> None:
    rows = [Row(i, 100 + i, "ok", float(i)) for i in range(50)]      # 50 ticks: 3.56 s, 4.02 s on this clock
    sec = maxima_of_rows(rows, 1.0, TICK_S, TIMER_HZ, t0_run_s=0.5, run_tick_s=TICK_S * 1.01)
    assert sec["clock"] == "run" and sec["t0_run_s"] == 0.5 and sec["run_tick_s"] == pytest.approx(TICK_S * 1.01)
    times = [0.5 + i * TICK_S * 1.01 for i in range(50)]
    assert [i["count"] for i in sec["intervals"]] == [sum(1 for t in times if k <= t < k + 1) for k in range(5)]


def test_a_run_of_one_interval_has_the_summarys_max_and_p99() -> None:
    rng = random.Random(7)
    rows = [Row(i, 5 + i, "ok", rng.gauss(40, 5)) for i in range(300)]
    sec = maxima_of_rows(rows, 300.0, TICK_S, TIMER_HZ)
    s = summarize_rows(rows)
    (iv,) = sec["intervals"]
    assert iv["count"] == s["n"] and iv["max_us"] == round(s["max_us"], 3) and iv["p99_us"] == round(s["p99_us"], 3)


def test_no_measured_event_is_no_interval() -> None:
    assert maxima_of_rows([Row(0, 3, "missed", None)], 300.0, TICK_S, TIMER_HZ)["intervals"] == []
    assert maxima_of_rows([], 300.0, TICK_S, TIMER_HZ)["first_tc"] is None
