"""The .hist file in cyclictest's format (mmanalysis.histfile): read back the way tools that read cyclictest's files
read them (the '#' lines skipped, the bins as two numbers, the trailer by its keys), it gives the sidecar's
histogram; the overflows named by event number, as many as there are bins and the rest counted."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from mmanalysis.histfile import hist_text
from mmanalysis.histogram import latency_histogram
from mmanalysis.latstats import summarize_rows


@dataclass
class Ev:
    event: int
    outcome: str
    latency_us: float | None
    measurable: bool = True
    scheduled_tc: int = 0
    sent_s: float | None = None


def read_cyclictest(text: str) -> dict:
    """A cyclictest histogram file as such tools read it: bins from the non-'#' lines; the trailer's keys."""
    bins, keys = [], {}
    for line in text.splitlines():
        if not line.startswith("#"):
            a, b = line.split()
            bins.append((a, int(b)))
        elif ":" in line:
            key, _, value = line[2:].partition(":")
            keys[key] = value.split()
    return {**keys, "the bins": bins}


def sidecar(rows: list[Ev], bin_us: float, bins: int = 1000) -> dict:
    return {"name": "x", "histogram": latency_histogram(rows, bin_us, bins), "summary": summarize_rows(rows),
            "config": {"count": len(rows)}}


def test_the_bins_and_the_trailer_are_the_sidecars_histogram_and_summary() -> None:
    rows = [Ev(0, "ok", 3.2), Ev(1, "ok", 3.9), Ev(2, "late", 1500.0), Ev(3, "early", -2.0), Ev(4, "ok", 12.0),
            Ev(5, "missed", None), Ev(6, "ok", 2000.0, measurable=False), Ev(7, "late", 1000.0)]
    side = sidecar(rows, 1.0)
    text = hist_text(side)
    lines = text.splitlines()
    got = read_cyclictest(text)
    assert [int(a) for a, _ in got["the bins"]] == list(range(1000)) and got["the bins"][3] == ("000003", 2)
    assert [c for _, c in got["the bins"]] == side["histogram"]["counts"]
    assert got["Total"] == ["000000003"] and got["Histogram Overflows"] == ["00002"]
    # min 3.2, mean (3.2 + 3.9 + 1500 + 12 + 1000) / 5 = 503.82, max 1500: whole us, cut
    assert (got["Min Latencies"], got["Avg Latencies"], got["Max Latencies"]) == (["00003"], ["00503"], ["01500"])
    assert lines[-2:] == ["# Histogram Overflow at cycle number:", "# Thread 0: 00002 00007"]
    head = lines[:lines.index("# Histogram")]
    assert head and all(ln.startswith("# ") for ln in head) and lines.index("# Histogram") == len(head)


def test_more_overflows_than_bins_are_named_up_to_the_bins_and_the_rest_counted() -> None:
    rows = [Ev(i, "ok", 50.0 + i) for i in range(30)]          # 10 bins of 5 us: 0..50 us; all 30 past them
    text = hist_text(sidecar(rows, 5.0, bins=10))
    got = read_cyclictest(text)
    assert [a for a, _ in got["the bins"]][:3] == ["000000", "000005", "000010"]
    assert got["Histogram Overflows"] == ["00030"]
    assert text.splitlines()[-1] == "# Thread 0: " + " ".join(f"{i:05d}" for i in range(10)) + " # 00020 others"


def test_a_width_that_is_not_whole_us_writes_each_start_with_its_decimals() -> None:
    text = hist_text(sidecar([Ev(0, "ok", 1.375)], 0.5, bins=4))
    assert [a for a, _ in read_cyclictest(text)["the bins"]] == ["000000.000", "000000.500", "000001.000", "000001.500"]
    assert read_cyclictest(text)["the bins"][2] == ("000001.000", 1)


def test_a_run_without_event_numbers_counts_its_overflows_as_others() -> None:
    """A run on the profiler's histogram alone: its cells have no event rows to name."""
    side = sidecar([Ev(0, "ok", 5.0)], 1.0)
    side["histogram"] = {**side["histogram"], "overflow": 4}
    del side["histogram"]["overflow_events"]
    assert hist_text(side).splitlines()[-1] == "# Thread 0: # 00004 others"


@pytest.mark.parametrize("rows", [[], [Ev(0, "missed", None)]])
def test_nothing_measured_is_zeros_in_the_trailer(rows: list[Ev]) -> None:
    got = read_cyclictest(hist_text(sidecar(rows, 1.0)))
    assert got["Total"] == ["000000000"] and got["Max Latencies"] == ["00000"] and got["Thread 0"] == []
