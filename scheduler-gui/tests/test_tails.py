"""A long stream of durations kept for its tails (mmsched.model.tails): the quantiles a list of every value gives,
nearest rank, to a tenth of a microsecond; the least, the largest and the count exact; its memory the bins the
values fall in, not their number."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mmsched.model.tails import BIN_S, Tails
from mmsched.run.usage import tails_us


def test_quantiles_are_the_lists_nearest_rank_to_a_tenth_of_a_microsecond() -> None:
    values = np.random.default_rng(3).exponential(30e-6, 20_000) + 2e-6
    t = Tails()
    for v in values:
        t.append(float(v))
    ordered = np.sort(values)
    for q in (0.5, 0.99, 0.999):
        exact = ordered[max(1, math.ceil(round(q * len(values), 6))) - 1]
        assert t.quantile(q) == pytest.approx(exact, abs=BIN_S / 2 + 1e-12)
    assert (t.n, t.min, t.max) == (20_000, values.min(), values.max())
    figures = tails_us(t)
    assert figures["max"] == round(values.max() * 1e6, 3) and figures["n"] == 20_000
    assert figures["p50"] <= figures["p99"] <= figures["p99.9"] <= figures["max"]


def test_its_memory_is_the_bins_not_the_values() -> None:
    t = Tails()
    for k in range(100_000):
        t.append(10e-6 + (k % 50) * 1e-7)
    assert t.n == 100_000 and len(t.counts) == 50


def test_none_have_no_tails() -> None:
    assert not Tails() and tails_us(Tails()) is None and math.isnan(Tails().quantile(0.5))
    one = Tails()
    one.append(3.3e-6)
    assert one.quantile(0.999) == pytest.approx(3.3e-6) and one.quantile(0.001) == pytest.approx(3.3e-6)
