"""The executor image (build/avr/executor.elf) in simavr: boot, modes, scheduling, both dispatch paths,
refusals, garbage, verification mode. One deterministic campaign (about 265 ticks, 19 s of simulated
time) is run once per module; each test checks one aspect of its record.

Latency is measured in CPU cycles from the cycle the bench changed PORTK (the profiler's tick edge)
to the cycle the executor's PORTC write executed, and reported in microseconds (16 cycles = 1 us).
"""

from __future__ import annotations

import random
import statistics
import sys
from pathlib import Path

import pytest
from cobs import cobs

import mmproto as mp  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent))
from simrun import CPB, TICK, Frame, SimRun, run_sim  # noqa: E402

# the MODE frames these tests send, by their protocol names
MIXED_ISR = mp.Mode(mode=mp.ExecutorMode.MIXED, dispatch=mp.Dispatch.ISR, distance=0, period=0, random_ids=0)
MIXED_TASK = mp.Mode(mode=mp.ExecutorMode.MIXED, dispatch=mp.Dispatch.TASK, distance=0, period=0, random_ids=0)
VERIFY_2_RANDOM = mp.Mode(mode=mp.ExecutorMode.VERIFICATION, dispatch=mp.Dispatch.ISR, distance=2, period=2,
                          random_ids=1)
IDLE_ISR = mp.Mode(mode=mp.ExecutorMode.IDLE, dispatch=mp.Dispatch.ISR, distance=0, period=0, random_ids=0)

START_TC = 200          # the 8-bit wrap comes at tick 56
N_EVENTS = 110          # per dispatch path
ISR_TICKS = range(1, 1 + N_EVENTS)            # SCHEDULE sent during these ticks, for tick + 2
TASK_TICKS = range(114, 114 + N_EVENTS)
T_REFUSE = 227
T_GARBAGE = 228
T_LATE_EVENT = 240
T_QUERY = 241
T_VERIFY = 242          # verification mode from here ...
T_IDLE = 262            # ... to here
END_TICKS = 265

# The executor's dispatch latency targets (us): the ISR path's mean and max, the task path's mean and max
ISR_MEAN_US, ISR_MAX_US = 3.0, 10.0
TASK_MEAN_US, TASK_MAX_US = 40.0, 100.0


def ext(tick: int) -> int:
    return START_TC + tick


class Campaign:
    def __init__(self) -> None:
        self.script: list[tuple[int, bytes]] = []
        self.items: list[tuple[str, object]] = []   # what each script entry was
        self.seq = 0
        self.events: list[dict] = []                # expected dispatches

    def send(self, cycle: int, what: str, payload: object, wire: bytes) -> None:
        self.script.append((cycle, wire))
        self.items.append((what, payload))

    def msg(self, cycle: int, m: mp.Message, what: str = "") -> None:
        self.send(cycle, what or type(m).__name__, m, m.wire(self.seq & 0xFF))
        self.seq += 1


def build() -> Campaign:
    c = Campaign()
    rng = random.Random(4)
    c.msg(int(0.3 * TICK), MIXED_ISR, "mode_mixed_isr")
    tag = 1000
    for path, ticks in (("isr", ISR_TICKS), ("task", TASK_TICKS)):
        if path == "task":
            c.msg(int(112.3 * TICK), MIXED_TASK, "mode_mixed_task")
        for j in ticks:
            # The SCHEDULE goes out at a varying phase of the tick, so serial traffic (receive and
            # transmit interrupts, task switches) lands at every distance from the dispatch edges.
            at = j * TICK + int(rng.uniform(0.02, 0.6) * TICK)
            ev = dict(tag=tag, id=rng.randrange(8), tc=ext(j + 2), path=path, sent_tick=j)
            c.events.append(ev)
            c.msg(at, mp.Schedule(tag=tag, event_id=ev["id"], timecode=ev["tc"]), "schedule")
            tag += 1
    r = T_REFUSE * TICK
    c.msg(r + int(0.05 * TICK), mp.Schedule(tag=5000, event_id=1, timecode=ext(T_REFUSE)), "past_due")
    c.events.append(dict(tag=5001, id=6, tc=ext(T_LATE_EVENT), path="task", sent_tick=T_REFUSE))
    c.msg(r + int(0.3 * TICK), mp.Schedule(tag=5001, event_id=6, timecode=ext(T_LATE_EVENT)), "schedule")
    c.msg(r + int(0.55 * TICK), mp.Schedule(tag=5001, event_id=2, timecode=ext(T_LATE_EVENT + 1)), "duplicate")
    c.msg(r + int(0.8 * TICK), mp.Schedule(tag=5002, event_id=9, timecode=ext(T_LATE_EVENT + 2)), "bad_id")
    g = T_GARBAGE * TICK
    junk = bytes(rng.randrange(1, 256) for _ in range(25)) + b"\x00"  # one bad frame
    c.send(g + int(0.05 * TICK), "junk", None, junk)
    payload = mp.Schedule(tag=5003, event_id=3, timecode=ext(T_LATE_EVENT + 3)).payload(c.seq & 0xFF)
    crc = mp.crc16(payload) ^ 0x0100
    c.send(g + int(0.4 * TICK), "bad_crc", None, cobs.encode(payload + crc.to_bytes(2, "little")) + b"\x00")
    c.seq += 1
    q = T_QUERY * TICK
    c.msg(q + int(0.05 * TICK), mp.Query(what=mp.Counters.TYPE), "query_counters")
    c.msg(q + int(0.4 * TICK), mp.Query(what=mp.Status.TYPE), "query_status")
    c.msg(T_VERIFY * TICK + int(0.3 * TICK), VERIFY_2_RANDOM, "mode_verify")
    c.msg(T_IDLE * TICK + int(0.3 * TICK), IDLE_ISR, "mode_idle")
    c.msg(T_IDLE * TICK + int(0.6 * TICK), mp.Query(what=mp.Status.TYPE), "query_status_end")
    return c


@pytest.fixture(scope="module")
def sim():
    c = build()
    run = run_sim(c.script, cycles=END_TICKS * TICK, start_tc=START_TC)
    # the cycle each script entry's last byte was put on the executor's RX line
    bytes_rx = iter(run.rx)
    arrival = []
    for _, wire in c.script:
        last = None
        for b in wire:
            cyc, val = next(bytes_rx)
            assert val == b
            last = cyc
        arrival.append(last)
    return c, run, arrival


def tick_start(run: SimRun, tc: int) -> int:
    for cyc, val in run.port_k:
        if cyc > 0 and (START_TC + round(cyc / TICK)) == tc:
            assert val == tc & 0xFF
            return cyc
    raise AssertionError(f"no tick {tc}")


def tick_of(cycle: int) -> int:
    """Extended timecode in force at a cycle (first change at cycle TICK)."""
    return START_TC + cycle // TICK


def replies(run: SimRun, after: int, cls, n: int = 1) -> list[Frame]:
    got = [f for f in run.frames if f.cycle > after and isinstance(f.msg, cls)]
    return got[:n]


# ---- tests -------------------------------------------------------------------------------------

def test_runs_to_the_end(sim):
    _, run, _ = sim
    assert run.end_state in (2, 3), "CPU stopped or crashed"  # cpu_Running / cpu_Sleeping
    assert run.end_cycle >= END_TICKS * TICK
    assert run.decoder.counters.bad_crc == 0 and run.decoder.counters.bad_cobs == 0
    assert run.decoder.counters.seq_lost == 0


def test_hello_at_boot(sim):
    _, run, _ = sim
    assert run.tx[0][1] == 0x00, "a lone delimiter first"
    first = run.frames[0]
    assert first.seq == 0
    assert len(run.of(mp.Hello)) == 1, "no reset (watchdog) during the campaign"
    h = first.msg
    assert isinstance(h, mp.Hello)
    assert (h.proto_version, h.node_kind, h.fw_version) == (mp.PROTO_VERSION, 2, 0x0600)
    assert (h.cpu_hz, h.timer_hz, h.tick_counts, h.baud) == (16_000_000, 250_000, 17778, 9600)
    # simavr 1.6 starts the core with MCUSR = PORF (0x01), as the silicon does after power-on; the
    # executor reports it as it is (port/avr/board.c, board_read_reset_cause)
    assert h.reset_cause == mp.ResetCause.POWER_ON
    assert first.cycle < TICK // 2  # 28 bytes at 9600 baud


def test_mode_answers_status(sim):
    c, run, arrival = sim
    for i, (what, m) in enumerate(c.items):
        if what.startswith("mode_"):
            st = replies(run, arrival[i], mp.Status)[0].msg
            assert (st.mode, st.dispatch) == (m.mode, m.dispatch), what
            assert st.timecode == tick_of(arrival[i])
            assert st.capacity == 16


def _delivered(run: SimRun, arrival: list[int], script) -> list[int]:
    """Cycle at which the executor's USART had each script entry's last byte. simavr's UART model
    hands received bytes to the firmware one per 11 bit times (the spacing it also uses when
    transmitting, measured here from the TX record), later than the 10 bit times the bench paces
    them at; model its receive queue: d_k = max(injected_k, d_(k-1)) + spacing."""
    spacing = min(b[0] - a[0] for a, b in zip(run.tx, run.tx[1:]))
    out, d, k = [], 0, 0
    for (_, wire), last in zip(script, arrival):
        for _ in wire:
            inj = run.rx[k][0]
            d = max(inj, d) + spacing
            k += 1
        out.append(d)
    return out


def test_acks_carry_timecode_and_phase(sim):
    c, run, arrival = sim
    delivered = _delivered(run, arrival, c.script)
    acks = {f.msg.tag: f for f in run.of(mp.Ack)}
    n = 0
    accepted: list[int] = []  # timecodes of the events accepted so far
    for i, (what, m) in enumerate(c.items):
        if what != "schedule":
            continue
        f = acks[m.tag]
        a = f.msg
        still_pending = sum(1 for tc in accepted if tc > tick_of(delivered[i]))
        accepted.append(m.timecode)
        assert (a.event_id, a.pending) == (m.event_id, still_pending + 1)
        assert a.timecode == tick_of(delivered[i]), "executor's timecode at receipt"
        # phase: how far into the tick the frame was decoded (4 us timer resolution, plus the
        # serial task's decoding; within two character times of the modelled delivery)
        expect = (delivered[i] - (tick_of(delivered[i]) - START_TC) * TICK) / TICK
        got = a.phase / 65536
        assert 0 <= got - expect < 2 * CPB / TICK, (m.tag, expect, got)
        assert f.cycle > delivered[i]
        n += 1
    assert n == 2 * N_EVENTS + 1


def _dispatches(c: Campaign, run: SimRun):
    """(event, latency cycles) for every expected event; asserts nothing early, nothing extra."""
    by_tick: dict[int, list[tuple[int, int]]] = {}
    for cyc, val in run.port_c[1:]:  # [0] is the port's initialisation
        by_tick.setdefault(tick_of(cyc), []).append((cyc, val))
    expected: dict[int, list[dict]] = {}
    for ev in c.events:
        expected.setdefault(ev["tc"], []).append(ev)
    verify_ticks = {t for t in by_tick if ext(T_VERIFY) < t <= ext(T_IDLE)}
    assert set(by_tick) - verify_ticks == set(expected), "output in a tick with no event: early or spurious"
    out = []
    for tc, evs in expected.items():
        changes = by_tick[tc]
        assert len(changes) == len(evs)
        start = tick_start(run, tc)
        for ev, (cyc, val) in zip(evs, changes):
            assert val & 0x07 == ev["id"]
            assert cyc >= start, "early"
            out.append((ev, cyc - start))
    # the strobe (bit 3) toggles on every event, so equal ids are distinct edges
    vals = [v for _, v in run.port_c]
    assert all(((a ^ b) & 0x08) for a, b in zip(vals[1:], vals[2:]))
    return out


def _stats(lat_cycles: list[int]) -> tuple[float, float, int]:
    us = [x / 16 for x in lat_cycles]
    return statistics.mean(us), max(us), len(us)


def _latencies(sim):
    c, run, _ = sim
    d = _dispatches(c, run)
    isr = [lat for ev, lat in d if ev["path"] == "isr"]
    task = [lat for ev, lat in d if ev["path"] == "task" and ev["tag"] < 5000]
    return _stats(isr), _stats(task), isr, task


def test_dispatch_latency_both_paths(sim, capsys):
    (mi, xi, ni), (mt, xt, nt), isr, task = _latencies(sim)
    with capsys.disabled():
        print(f"\n  ISR  dispatch: mean {mi:.2f} us, max {xi:.2f} us, min {min(isr) / 16:.2f} us, n={ni}")
        print(f"  task dispatch: mean {mt:.2f} us, max {xt:.2f} us, min {min(task) / 16:.2f} us, n={nt}")
    assert ni >= 100 and nt >= 100
    assert mi <= ISR_MEAN_US and xi <= ISR_MAX_US
    assert xt <= TASK_MAX_US


def test_task_dispatch_mean_meets_target(sim):
    """The task path's mean is <= 40 us. Measured 36.7 us (587 cycles, ~480 of them in the kernel's
    xTaskNotifyFromISR, context switch and return through xTaskNotifyWait; `python tests/cycleprof.py
    task` shows where)."""
    (_, _, _), (mt, _, _), _, _ = _latencies(sim)
    assert mt <= TASK_MEAN_US


def test_fired_reports_every_event(sim):
    c, run, _ = sim
    fired = {f.msg.tag: f.msg for f in run.of(mp.Fired)}
    for ev in c.events:
        f = fired[ev["tag"]]
        assert (f.event_id, f.timecode) == (ev["id"], ev["tc"])


def test_past_due_duplicate_bad_id_refused(sim):
    c, run, arrival = sim
    delivered = _delivered(run, arrival, c.script)
    errors = run.of(mp.Error)
    want = {"past_due": (mp.ErrorCode.PAST_DUE, 5000), "duplicate": (mp.ErrorCode.DUPLICATE, 5001),
            "bad_id": (mp.ErrorCode.BAD_VALUE, 5002)}
    for i, (what, m) in enumerate(c.items):
        if what in want:
            code, tag = want[what]
            e = [f.msg for f in errors if f.cycle > arrival[i] and f.msg.ref_tag == tag][0]
            assert (e.code, e.ref_type) == (code, 0x20), what
            assert e.timecode == tick_of(delivered[i])
    assert len(errors) == 3


def test_counters_count_refusals_and_garbage(sim):
    c, run, arrival = sim
    i = [w for w, _ in c.items].index("query_counters")
    k = replies(run, arrival[i], mp.Counters)[0].msg
    assert (k.node_a, k.node_b, k.node_c, k.node_d) == (1, 0, 1, 0)  # duplicate, full, past due, glitches
    dropped = k.rx_bad_crc + k.rx_bad_cobs + k.rx_too_long + k.rx_too_short
    assert dropped == 2, k                      # the junk frame and the corrupted SCHEDULE
    assert k.rx_bad_crc >= 1
    assert k.rx_bad_message == 0 and k.tx_dropped == 0
    assert k.rx_ring_overflow == 0 and k.rx_hw_overrun == 0  # nothing lost at 9600 baud
    sent_ok = sum(1 for w, _ in c.items[: i + 1] if w not in ("junk", "bad_crc"))
    assert k.rx_ok == sent_ok


def test_status_stack_marks(sim, capsys):
    c, run, arrival = sim
    i = [w for w, _ in c.items].index("query_status")
    st = replies(run, arrival[i], mp.Status)[0].msg
    with capsys.disabled():
        print(f"\n  stack high-water (bytes never used): timecode {st.stack_timecode}/256, "
              f"serial {st.stack_serial}/320, status {st.stack_status}/160; fired {st.fired}")
    assert 0 < st.stack_timecode < 256 and 0 < st.stack_serial < 320 and 0 < st.stack_status < 160
    assert st.fired == 2 * N_EVENTS + 1
    assert st.pending == 0


def test_verification_mode(sim):
    c, run, arrival = sim
    lo, hi = T_VERIFY * TICK, T_IDLE * TICK + int(0.3 * TICK)
    local = [f.msg for f in run.of(mp.LocalEvent) if lo < f.cycle < hi]
    fired = {f.msg.tag: f.msg for f in run.of(mp.Fired) if lo < f.cycle}
    assert len(local) >= 8
    ids = set()
    r = 0xACE1
    for ev in local:
        # random ids: the executor's 16-bit LFSR (x^16 + x^14 + x^13 + x^11 + 1), seeded 0xACE1
        r = (r >> 1) ^ (0xB400 if r & 1 else 0)
        assert ev.event_id == r & 7
        ids.add(ev.event_id)
        if ev.timecode < ext(T_IDLE):        # the last ones may be cut by the switch to idle
            assert ev.tag in fired and fired[ev.tag].timecode == ev.timecode
            start = tick_start(run, ev.timecode)
            edge = [(cyc, v) for cyc, v in run.port_c if start <= cyc < start + TICK]
            assert len(edge) == 1 and edge[0][1] & 7 == ev.event_id
            assert edge[0][0] - start <= ISR_MAX_US * 16
    assert len(ids) > 1
    gaps = {b.timecode - a.timecode for a, b in zip(local, local[1:])}
    assert gaps == {2}, "period 2"
    st = replies(run, arrival[[w for w, _ in c.items].index("query_status_end")], mp.Status)[0].msg
    assert (st.mode, st.pending) == (0, 0)


def test_status_led_task_blinks(sim):
    _, run, _ = sim
    # the LED task runs on vTaskDelay, so this also shows the kernel tick (Timer0) keeps ticking
    toggles = [cyc for cyc, _ in run.led[1:]]
    assert len(toggles) > 20
    mixed = [b - a for a, b in zip(toggles, toggles[1:]) if 20 * TICK < a < 100 * TICK]
    # 120 ms half periods. A lost or extra kernel tick would show as 8 ms; the quiet window before each
    # ISR-dispatched edge (port/avr/board.c) may count one tick up to ~1 ms late, never drop it.
    assert mixed and all(abs(d - 120 * 16000) <= 2 * 16000 for d in mixed), "4 Hz in mixed mode"


def test_skewed_edges_and_glitches():
    """Half-changed port values (low nibble 3 us before the high nibble) never fire an event early or
    twice; glitch values on the port are counted in COUNTERS.node_d and fire nothing."""
    script = [(int(0.3 * TICK), MIXED_ISR.wire(0))]
    events = []
    for j, tick in enumerate(range(1, 30)):
        ev = (2000 + j, j % 8, 60 + tick + 2)
        events.append(ev)
        script.append((tick * TICK + int(0.3 * TICK), mp.Schedule(*ev).wire(1 + j)))
    script.append((31 * TICK + int(0.5 * TICK), mp.Query(what=mp.Counters.TYPE).wire(40)))
    glitches = [(10 * TICK + TICK // 2, 0x99), (10 * TICK + TICK // 2 + 5000, 60 + 10)]
    run = run_sim(script, cycles=33 * TICK, start_tc=60, skew=48, glitches=glitches)
    changes = run.port_c[1:]
    assert len(changes) == len(events)
    late = 0
    for (tag, eid, tc), (cyc, val) in zip(events, changes):
        start = (tc - 60) * TICK
        # the port shows the new timecode once both nibbles changed
        complete = start + (48 if ((tc ^ (tc - 1)) & 0xF0) else 0)
        late += complete > start
        assert val & 7 == eid
        assert complete <= cyc <= complete + 10 * 16, "after the port is complete, within 10 us"
    assert late >= 2  # the high nibble changed (and lagged) on some ticks
    k = run.of(mp.Counters)[-1].msg
    assert k.node_d == 1
    assert len(run.of(mp.Fired)) == len(events)


# ---- watchdog, reset cause, lost input: the test image --------------------------------------------
# build/avr-test/executor-test.elf is built from the same sources with EX_TEST_HOOKS (make avr-test):
# DE AD BE EF + 'H' hangs the serial task, + 'S' stalls it 300 ms, + 'X' calls halt(); every watchdog
# check-in writes the task's bit to GPIOR2 and every feed 0x80 (the bench's "D" trace lines).
# What simavr 1.6 does on a watchdog timeout (found here): it resets the core and sets MCUSR.WDRF, so
# the executor's HELLO after it says WATCHDOG, as on the silicon. In one-node mode the reset also drops
# the bench's stimulus timers (docs/bench.md): after it the bench sends no more bytes or ticks, so these
# tests look only at what the executor sends after the reset.

from simrun import TEST_ELF, ELF  # noqa: E402

MAGIC = bytes([0xDE, 0xAD, 0xBE, 0xEF])
F = 16_000_000
FEED = 0x80


def _hellos(run: SimRun) -> list[Frame]:
    return run.of(mp.Hello)


def test_shipped_image_has_no_test_hooks():
    assert MAGIC in TEST_ELF.read_bytes()
    assert MAGIC not in ELF.read_bytes()


def test_watchdog_feed_intervals(capsys):
    """The watchdog (WDTO_1S) is fed only when all three tasks have checked in. Measured periods: the
    feeding interval is bounded by the status task's LED half period (496 ms idle, 248 ms verification,
    120 ms mixed) and by the 248 ms the timecode and serial tasks wait for work before they check in
    anyway (port/avr/main.c)."""
    out = []
    for mode in (None, mp.ExecutorMode.VERIFICATION, mp.ExecutorMode.MIXED):
        script = [] if mode is None else [
            (int(0.1 * F), mp.Mode(mode=mode, dispatch=mp.Dispatch.ISR, distance=2, period=1, random_ids=0).wire(0))]
        run = run_sim(script, cycles=4 * F, elf=TEST_ELF, ticks=mode is not None)
        assert len(_hellos(run)) == 1, "no reset"
        per = {}
        for bit in (1, 2, 4, FEED):
            cs = [c for c, v in run.marks if v == bit and c > 0.2 * F]
            per[bit] = max(b - a for a, b in zip(cs, cs[1:])) / F * 1000
        out.append((mode, per))
        assert per[FEED] <= 500, "fed at least every 500 ms: half the 1 s watchdog period"
    with capsys.disabled():
        for mode, per in out:
            name = "idle, no profiler" if mode is None else mode.name.lower()
            print(f"\n  {name}: longest check-in interval timecode {per[1]:.1f} ms, serial {per[2]:.1f} ms, "
                  f"status {per[4]:.1f} ms; longest feed interval {per[FEED]:.1f} ms")


def test_stuck_task_makes_a_watchdog_reset():
    run = run_sim([(F, MAGIC + b"H\x00")], cycles=int(3 * F), elf=TEST_ELF, ticks=False)
    h = _hellos(run)
    assert [f.msg.reset_cause for f in h] == [mp.ResetCause.POWER_ON, mp.ResetCause.WATCHDOG]
    assert h[1].seq == 0
    hang = run.rx[-1][0]  # the trigger's delimiter reached the USART: the serial task hangs at once
    feeds = [c for c, v in run.marks if v == FEED]
    last = max(c for c in feeds if c < hang)
    # the status task starves, so the LED's next change is the reset (its pin becomes an input)
    reset = [c for c, v in run.led if c > hang][0]
    assert not [c for c in feeds if hang < c < reset], "fed although a task was stuck"
    # one watchdog period (WDTO_1S) after the last feed
    assert 1.0 * F <= reset - last <= 1.1 * F, (reset - last) / F
    assert h[1].cycle - reset < 0.1 * F


def test_halt_ends_in_a_watchdog_reset():
    """halt() (failed assertion, stack overflow) enables the watchdog at 15 ms: the executor comes back
    with reset_cause WATCHDOG about 16 ms later."""
    run = run_sim([(int(0.5 * F), MAGIC + b"X\x00")], cycles=int(1.2 * F), elf=TEST_ELF, ticks=False)
    h = _hellos(run)
    assert [f.msg.reset_cause for f in h] == [mp.ResetCause.POWER_ON, mp.ResetCause.WATCHDOG]
    led_on = [c for c, v in run.led if c > 0.5 * F and v == 1][0]   # halt: LED on
    back = [c for c, v in run.led if c > led_on][0]                  # reset: the LED pin is an input again
    assert 14 * F // 1000 <= back - led_on <= 20 * F // 1000, (back - led_on) / F


def test_receive_ring_overflow_is_counted():
    """Bytes that come while the serial task does not drain the ring (stalled 300 ms by the test hook)
    are counted in COUNTERS.rx_ring_overflow: 150 bytes after the stall began, the ring holds 63."""
    junk = bytes([0x55]) * 150
    # all 150 (172 ms at simavr's 11-bit characters) arrive within the stall, the delimiter after them
    # is lost too; the QUERY comes after the stall, behind a delimiter that ends the junk's remains
    script = [(int(0.5 * F), MAGIC + b"S" + junk + b"\x00"),
              (int(0.9 * F), b"\x00" + mp.Query(what=mp.Counters.TYPE).wire(0))]
    run = run_sim(script, cycles=int(1.5 * F), elf=TEST_ELF)
    k = run.of(mp.Counters)[-1].msg
    assert k.rx_ring_overflow == 150 + 1 - 63
    assert k.rx_hw_overrun == 0  # the receive ISR kept reading UDR0
    assert k.rx_too_long == 1 and k.rx_ok == 1  # the junk's remains, then the QUERY


BIT_115200 = 8 * (16 + 1)   # UBRR0 16 with U2X: 136 cycles per bit, 117647 baud (+2.1 %)


def test_baud_switch_and_refusal():
    """BAUD (SPEC.md 0x06, version 4): 1.9 M is refused with ERROR BAD_VALUE at 9600; 115200 is taken:
    a lone delimiter and HELLO(baud 115200) at UBRR0 16 (simavr's 11-bit characters: 1496 cycles a
    byte), and a QUERY(STATUS) sent at the new rate is answered at it."""
    from mmproto.messages import Baud  # (version 4: not exported by the package yet)
    F = 16_000_000
    script = [(int(0.3 * F), Baud(baud_hundreds=19000).wire(0)),
              (int(0.5 * F), Baud(baud_hundreds=1152).wire(1))]
    q_at = int(0.8 * F)
    raw = [(q_at + n * (11 * BIT_115200 + 100), b) for n, b in enumerate(mp.Query(what=mp.Status.TYPE).wire(2))]
    run = run_sim(script, cycles=int(1.0 * F), raw=raw)
    errs = run.of(mp.Error)
    assert [(e.msg.code, e.msg.ref_type) for e in errs] == [(mp.ErrorCode.BAD_VALUE, Baud.TYPE)]
    hellos = run.of(mp.Hello)
    assert [h.msg.baud for h in hellos] == [9600, 115200]
    end = [i for i, (c, _) in enumerate(run.tx) if c == hellos[1].cycle][0]
    body = run.tx[end - (22 + 6) + 1:end + 1]
    assert run.tx[end - (22 + 6)][1] == 0x00, "a lone delimiter before the HELLO"
    per_byte = (body[-1][0] - body[1][0]) / (len(body) - 2)
    print(f"executor BAUD: HELLO at {per_byte:.0f} cycles per byte after the switch (11 bits at UBRR0 16: "
          f"{11 * BIT_115200})")
    assert abs(per_byte - 11 * BIT_115200) < 11 * BIT_115200 * 0.02
    st = run.of(mp.Status)
    assert st and st[-1].cycle > q_at
