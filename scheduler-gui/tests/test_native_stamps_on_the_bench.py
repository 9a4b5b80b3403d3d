"""The native firing thread's stamps against the paced bench's own record of the same bytes: two clocks' worth of
evidence about one write must agree. Every FIRE the thread wrote is in the bench's record (found by its stream and
offset); the bench's reader never stamps a byte before the PC began writing it (the reader wakes inside the
writer's call at the earliest, through the line socket); stamps come in the order of the writes; and the hop from
the write's return to the stamp, the part of the path that is the rig's, is what validity judges the event by, so
every event marked measurable has it within the run's bound. How short the hop is on this host is `make perf`'s."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmhil import BenchEndpoint
from mmhil.bench import ensure_built
from mmsched.model.config import RunConfig
from mmsched.link.endpoint import Verdict
from mmsched.run.runner import Runner

# a paced run whose timing a neighbour's bench would starve: after the parallel phase, by itself
pytestmark = pytest.mark.alone


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    ensure_built()


@pytest.mark.paced
def test_the_native_threads_stamps_agree_with_the_benchs_record_of_its_bytes(tmp_path: Path) -> None:
    cfg = RunConfig(mode="normal", rate_ms=2, count=300, baud=500000, out=tmp_path / "native")
    endpoint = BenchEndpoint()
    kept: list[Verdict] = []
    real = endpoint.verdict
    endpoint.verdict = lambda: kept.append(real()) or kept[-1]          # type: ignore[method-assign]
    runner = Runner(cfg, endpoint)
    result = runner.run()
    assert result.sidecar["cpu"]["firing"] == "native", result.sidecar["cpu"]
    assert result.sidecar["target"]["profiler"].startswith("unix://")   # the line socket, not the pty
    record, bound_us = kept[0].record, kept[0].bound_us
    assert record is not None and bound_us is not None
    fires = [e for e in result.events if e.bytes.sent is not None and e.written_at is not None]
    assert len(fires) >= 290, len(fires)
    stamps = []
    for e in fires:
        sent = e.bytes.sent
        entry = record.entry("profiler", sent.gen, sent.offset)
        assert entry is not None, f"event {e.event}: its FIRE (stream {sent.gen}, byte {sent.offset}) is not in the record"
        assert entry.stamp >= sent.at, f"event {e.event}: stamped {(sent.at - entry.stamp) * 1e6:.1f} us before its write began"
        assert sent.ended is not None and sent.ended >= sent.at
        if e.measurable and e.outcome in ("ok", "late"):
            assert (entry.entered - sent.returned) * 1e6 <= bound_us, e
        stamps.append((sent.at, entry.stamp))
    assert [s for _, s in sorted(stamps)] == sorted(s for _, s in stamps)    # in the order of the writes
    # and the budget's write part is the call up to the bytes' entry at most
    assert all(e.write_us is None or e.write_us <= (e.write_ended_at - e.written_at) * 1e6 + 0.01 for e in fires)
