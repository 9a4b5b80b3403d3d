"""ISR dispatch under provoked collisions: the quiet window before an ISR-dispatched edge.

The ISR dispatch path is fast (about 1.4 us) unless the timecode edge lands while interrupts are
disabled: a context switch (about 20 us with interrupts off), the receive interrupt that wakes the
serial task and switches to it (about 30 us), the kernel tick. This campaign aims serial traffic at the
edges on purpose, over 320 ticks with one ISR-dispatched event each (a SCHEDULE for three ticks later,
sent every tick):

- ticks 0 mod 4: the SCHEDULE alone, its last byte reaching the executor's USART 30 us before to 9 us
  after the edge (the receive interrupt and the switch to the serial task straddle it);
- ticks 2 mod 4: a flood, the previous SCHEDULE twice more (refused as duplicates, each answered with an
  ERROR) back to back with this tick's, ending 40 us before to 79 us after the edge;
- odd ticks: a QUERY for STATUS early in the tick, whose long reply keeps the transmit interrupt busy
  across the edge, and the SCHEDULE ending 80 us..2.5 ms before the edge (the serial task decoding,
  acknowledging and blocking again);
- all along, the status LED task blinks (its vTaskDelay wake-ups drift across the tick).

Without the quiet window (port/avr/board.c) this campaign measured ISR dispatch mean 4.98 us, max
32.94 us, p99 31.94 us (n=320, 97 events over 2 us); with it: mean 1.47 us, max 6.38 us, p99 5.38 us
(310 of 320 in [1, 2) us; the rest met the quiet receive handler). Since the receive handler counts lost
bytes (protocol version 2: UCSR0A read before UDR0, COUNTERS.rx_ring_overflow/rx_hw_overrun): mean
1.49 us, max 6.81 us, p99 5.81 us (308 of 320 in [1, 2) us). Asserts max <= 10 us over all 320
events, every event acknowledged and fired, none early, none missed, none extra, and prints the
distribution (percentiles and a 1 us histogram).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import pytest

import mmproto as mp
sys.path.insert(0, str(Path(__file__).resolve().parent))
from simrun import TICK, run_sim  # noqa: E402

# the MODE frames these tests send, by their protocol names
MIXED_ISR = mp.Mode(mode=mp.ExecutorMode.MIXED, dispatch=mp.Dispatch.ISR, distance=0, period=0, random_ids=0)

START_TC = 10
N = 320
END_TICKS = N + 6
US = 16  # cycles per microsecond
# simavr's UART model hands received bytes to the firmware one per 11 bit times (the spacing it also
# uses to transmit; see test_executor_sim._delivered), while the bench injects them at 10: the last
# byte of an n-byte frame injected from an idle line at cycle c reaches the USART at c + n * SPACING.
SPACING = -(-11 * 16_000_000 // 9600)


def edge(tick: int) -> int:
    return tick * TICK  # the bench changes the port at k * TICK (its stimulus)


def build():
    script: list[tuple[int, bytes]] = [(int(0.3 * TICK), MIXED_ISR.wire(0))]
    events = []
    seq = 1
    prev = None
    for j in range(1, N + 1):
        tag, eid, tc = 3000 + j, j % 8, START_TC + j + 3
        burst = []
        if j % 2:
            # a QUERY for STATUS early in the tick; this tick's SCHEDULE lands 80 us..2.5 ms before the
            # edge (the serial task decoding, acknowledging and blocking again around it)
            q = mp.Query(what=mp.Status.TYPE).wire(seq & 0xFF)
            seq += 1
            script.append((edge(j + 1) - 25_000 * US - len(q) * SPACING, q))
            delta = 80 + (j * 37) % 2420
        elif j % 4 == 0:
            # the SCHEDULE alone, from an idle line, its last byte 30 us before to 9 us after the edge:
            # the receive interrupt and the switch to the serial task straddle the edge
            delta = (j // 4) % 40 - 30
        else:
            # a flood: the previous SCHEDULE twice more (refused as duplicates, each answered with an
            # ERROR), back to back with this tick's SCHEDULE, the last byte 40 us before to 79 us after
            for _ in range(2):
                burst.append(mp.Schedule(*prev).wire(seq & 0xFF))
                seq += 1
            delta = (j // 4) % 120 - 40
        burst.append(mp.Schedule(tag=tag, event_id=eid, timecode=tc).wire(seq & 0xFF))
        seq += 1
        n = sum(len(w) for w in burst)
        start = edge(j + 1) - delta * US - n * SPACING  # the bench paces a burst back to back
        script += [(start, w) for w in burst]
        events.append((tag, eid, tc))
        prev = (tag, eid, tc)
    return script, events


@pytest.fixture(scope="module")
def stress():
    script, events = build()
    return events, run_sim(script, cycles=END_TICKS * TICK, start_tc=START_TC)


def test_isr_dispatch_max_under_provoked_collisions(stress, capsys):
    events, run = stress
    changes = run.port_c[1:]
    assert run.end_state in (2, 3)
    assert len(changes) == len(events), "one event edge per scheduled event, no more, no fewer"
    lat = []
    for (tag, eid, tc), (cyc, val) in zip(events, changes):
        start = edge(tc - START_TC)
        assert val & 7 == eid
        assert cyc >= start, f"event {tag} early"
        assert cyc < start + TICK, f"event {tag} a tick late"
        lat.append((cyc - start) / US)
    acks = {f.msg.tag for f in run.of(mp.Ack)}
    assert acks == {t for t, _, _ in events}
    dups = [f.msg for f in run.of(mp.Error)]
    assert len(dups) == 2 * (N // 4) and all(e.code == mp.ErrorCode.DUPLICATE for e in dups)
    assert len(run.of(mp.Status)) == 1 + (N + 1) // 2  # the MODE reply and one per QUERY
    fired = {f.msg.tag for f in run.of(mp.Fired)}
    assert fired == acks
    lat_sorted = sorted(lat)
    pct = {p: lat_sorted[min(len(lat) - 1, int(p / 100 * len(lat)))] for p in (50, 90, 99)}
    hist: dict[int, int] = {}
    for x in lat:
        hist[int(x)] = hist.get(int(x), 0) + 1
    with capsys.disabled():
        print(f"\n  ISR dispatch under provoked collisions: mean {statistics.mean(lat):.2f} us, "
              f"max {max(lat):.2f} us, min {min(lat):.2f} us, p50 {pct[50]:.2f}, p90 {pct[90]:.2f}, "
              f"p99 {pct[99]:.2f}, n={len(lat)}")
        print("  histogram (1 us bins): " + ", ".join(f"[{k},{k + 1}): {v}" for k, v in sorted(hist.items())))
    assert len(lat) >= 300
    assert max(lat) <= 10.0
