"""The event generator (mmsched.model.generator): ids never reused while in flight, the in-flight cap, the order of
sequential ids."""

from __future__ import annotations

import pytest

from mmsched.model.generator import Generator


@pytest.mark.parametrize("random_ids", [False, True])
def test_generator_never_reuses_an_id_in_flight_and_caps(random_ids: bool) -> None:
    g = Generator(random_ids=random_ids, max_in_flight=5, seed=3)
    live: list[int] = []
    tags = set()
    for step in range(200):
        got = g.next()
        if len(live) >= 5:
            assert got is None
        else:
            assert got is not None
            tag, eid = got
            assert eid not in live and 0 <= eid < 8 and tag not in tags
            tags.add(tag)
            live.append(eid)
        if step % 3 == 0 and live:
            g.done(live.pop(0))
    assert g.skipped > 0
    with pytest.raises(AssertionError):
        Generator().done(3)


def test_sequential_ids_cycle_and_skip_busy_ones() -> None:
    g = Generator(max_in_flight=8)
    ids = [g.next()[1] for _ in range(3)]
    assert ids == [0, 1, 2]
    g.done(1)
    assert [g.next()[1] for _ in range(6)] == [3, 4, 5, 6, 7, 1]


def test_tags_wrap_around_the_calibration_probes_tags() -> None:
    # the probes' RESULTs are taken by the calibration: an event with a probe's tag lost its RESULT (65,280
    # events into a kilohertz run, five events ended lost/no_answer)
    from mmsched.model.generator import PROBE_TAGS
    g = Generator(max_in_flight=None, unique_ids=False, first_tag=0xFEFE)
    tags = []
    for _ in range(4):
        got = g.next()
        assert got is not None
        tags.append(got[0])
        g.done(got[1])
    assert tags == [0xFEFE, 0xFEFF, 0, 1] and not set(tags) & set(PROBE_TAGS)


def test_a_grid_generator_repeats_ids_and_has_no_cap() -> None:
    g = Generator(max_in_flight=None, unique_ids=False)
    got = [g.next() for _ in range(100)]                 # none ends: a hundred in flight
    assert all(x is not None for x in got) and g.skipped == 0 and g.in_flight == 100
    assert [eid for _, eid in got[:10]] == [0, 1, 2, 3, 4, 5, 6, 7, 0, 1]   # sequential, as ever
    assert len({tag for tag, _ in got}) == 100
