"""--executor-load: the text a user types, read into the load the MODE frame and the runner carry."""

from __future__ import annotations

import pytest

from mmsched.model.exload import ExecutorLoad


@pytest.mark.parametrize("text, load", [
    ("none", ExecutorLoad()),
    ("", ExecutorLoad()),
    ("cpu", ExecutorLoad(cpu=True)),
    ("periodic=10ms/2ms", ExecutorLoad(period_us=10000, exec_us=2000)),
    ("rx=20, cpu ,periodic=5000/150", ExecutorLoad(True, 5000, 150, 20.0)),
    ("periodic=1.5ms/750us", ExecutorLoad(period_us=1500, exec_us=750)),
])
def test_parse(text: str, load: ExecutorLoad) -> None:
    assert ExecutorLoad.parse(text) == load
    assert ExecutorLoad.parse(str(load)) == load          # the canonical text reads back


@pytest.mark.parametrize("text, why", [
    ("cpu,gpu", "'gpu' is not cpu"),
    ("periodic=10ms", "'periodic=10ms' is not"),
    ("periodic=500/100", "period must be 1000..65535 us, not 500"),
    ("periodic=100ms/2ms", "period must be 1000..65535 us, not 100000"),
    ("periodic=10ms/6ms", "at most half the period"),
    ("periodic=10ms/0", "execution time must be 1..5000"),
    ("periodic=0ms/0ms", "period must be 1000..65535 us, not 0"),
    ("periodic=0/0", "period must be 1000..65535 us, not 0"),
    ("cpu,periodic=0ms/0ms", "period must be 1000..65535 us, not 0"),
    ("periodic=10ms/1.5us", "not a whole number"),
    ("periodic=10s/1ms", "is not a time"),
    ("rx=fast", "rx must be a number"),
    ("rx=500", "rx must be 0..50"),
    ("rx=nan", "rx must be 0..50"),
])
def test_bad_text_names_the_option_and_the_part(text: str, why: str) -> None:
    with pytest.raises(ValueError, match="--executor-load") as exc:
        ExecutorLoad.parse(text)
    assert why in str(exc.value)
    assert "\n" not in str(exc.value)


def test_none_is_none() -> None:
    assert ExecutorLoad().none and not ExecutorLoad(cpu=True).none and str(ExecutorLoad()) == "none"
