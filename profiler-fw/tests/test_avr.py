"""AVR profiler image in simavr (the bench's one-node mode): timecode, capture, FIRE, overflow, garbage.

One bench run (module fixture) drives everything; each test checks one property of its trace.
Paths come from the environment set by `make test-avr` (MMBENCH, PF_AVR_ELF).
"""
import os
import random
import subprocess
import tempfile

import mmproto
from mmproto.messages import Baud  # (version 4: not exported by the package yet)
import pytest

BENCH = os.environ.get("MMBENCH", os.path.join(os.path.dirname(__file__), "..", "..", "hil", "bench", "build", "mmbench"))
ELF = os.environ.get("PF_AVR_ELF", os.path.join(os.path.dirname(__file__), "..", "build", "avr", "profiler.elf"))
TICK = 1137778
CPU = 16_000_000
BIT = 8 * (207 + 1)              # 9600 baud, U2X, UBRR0 = 207: 1664 cycles per bit
SIM_BYTE = 11 * BIT              # simavr 1.6 counts a parity bit even with parity off: 11 bits per byte
PACE = SIM_BYTE + 200            # RX bytes never faster than the simulated UART takes them
N_TICKS = 330
TIMED_EDGES = 150
FIRE_TICKS = list(range(250, 262))
# TIMECODE start: on a tick that finds the transmitter idle, the frame's first byte is written to UDR0
# (in simavr its start bit begins then) at most this many cycles after the port change (5 us). Measured:
# 7 cycles with the frame encoded ahead; 1522 .. 1752 cycles (97 us) when the foreground built it.
TC_START_MAX = 80

BURST_TICK = 300
BURST = 40
# HELLO.reset_cause after the bench starts the image: 0x01 (power-on). simavr 1.6's avr_init() resets the
# core and then sets MCUSR.PORF itself ("by default set to power-on reset"), as a real power-up does; a
# real Mega reset by its USB-serial DTR line shows 0x02 (external) instead.
SIM_POWER_ON_CAUSE = 0x01


def frame(msg, seq):
    return msg.wire(seq)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    rng = random.Random(20081)
    d = tmp_path_factory.mktemp("avr")
    # Timed edges: ticks 2..240, random phase anywhere in the tick (boot and the first tick avoided:
    # tick 0 starts before the timer does). At most one edge per 2 ticks: RESULTs keep up at 9600.
    ticks = sorted(rng.sample(range(2, 240), TIMED_EDGES // 1 if TIMED_EDGES < 238 else 237))
    edges = []
    for k in ticks:
        edges.append((k, rng.randrange(0, TICK), rng.randrange(8)))
    # FIRE frames at known cycles (ticks 250..261), paced at the UART's speed.
    fires = []
    for j, k in enumerate(FIRE_TICKS):
        fires.append((k, rng.randrange(1000, TICK // 2), rng.randrange(8), 0x1000 + j))
    # Garbage then a QUERY(COUNTERS) and a QUERY(HELLO) late in the run.
    # bad COBS (code 5, 3 bytes), too short (1 decoded byte), too long (50 bytes), bad CRC (a QUERY
    # with its last CRC byte changed).
    q = bytearray(mmproto.Query(what=0x04).wire(9))
    q[-2] ^= 0x5A
    garbage = bytes([0x05, 0x11, 0x22, 0x33, 0x00, 0x02, 0x41, 0x00] + [0x41] * 50 + [0x00]) + bytes(q)
    return {"dir": d, "edges": edges, "fires": fires, "garbage": garbage, "rng": rng}


def run_bench(stim, out, max_cycles):
    """The profiler alone in the bench (docs/bench.md, one-node mode): the stimulus plays the
    executor's event lines (E) and the host's bytes (R), the trace records what the profiler did."""
    with tempfile.TemporaryDirectory(prefix="pf-bench.") as run_dir:
        # simavr's own UART timing: a byte handed to the receiver at its cycle raises RXC 11 bit
        # times later (test_fire_timestamps models exactly that)
        subprocess.run([BENCH, "--profiler", ELF, "--stimulus", str(stim), "--trace", str(out),
                        "--until-cycles", str(max_cycles), "--uart-timing", "simavr", "--run-dir", run_dir],
                       check=True, capture_output=True, timeout=120)


def read_trace(out, r_requests):
    """The bench trace's lines: A (cycle, PORTA), T (cycle, byte written to UDR0), E (requested, applied,
    id, level) and I as R (requested, handed to the receiver, byte), the requests' cycles given in order
    (None past them)."""
    A, U, E, R = [], [], [], []
    r_req = iter(r_requests)
    for l in open(out):
        p = l.split()
        if p[0] == "A":
            A.append((int(p[1]), int(p[2], 16)))
        elif p[0] == "T":
            U.append((int(p[1]), int(p[2], 16)))
        elif p[0] == "E":
            E.append((int(p[1]), int(p[2]), int(p[3], 16), int(p[4])))
        elif p[0] == "I":
            R.append((next(r_req, None), int(p[1]), int(p[3], 16)))
    return A, U, E, R


def build_and_run(run):
    """First pass needs the tick phase: ticks are exactly periodic, so read tick 1 from a short run."""
    d = run["dir"]
    probe = d / "probe.txt"
    open(d / "empty.txt", "w").close()
    run_bench(d / "empty.txt", probe, 30_000_000)
    a = [(int(l.split()[1]), int(l.split()[2], 16)) for l in open(probe) if l.startswith("A ")]
    t1 = [c for c, v in a if v == 1][0]
    return t1


@pytest.fixture(scope="module")
def trace(run):
    t1 = build_and_run(run)
    tick_start = lambda k: t1 + (k - 1) * TICK
    lines = []
    for k, ph, i in run["edges"]:
        lines.append(("E", tick_start(k) + ph, i))
    for k, ph, i, tag in run["fires"]:
        c = tick_start(k) + ph
        for n, b in enumerate(mmproto.Fire(event_id=i, tag=tag).wire(k & 0xFF)):
            lines.append(("R", c + n * PACE, b))
    # Overflow burst: BURST edges 3000 cycles apart at tick BURST_TICK.
    for n in range(BURST):
        lines.append(("E", tick_start(BURST_TICK) + 5000 + 3000 * n, n % 8))
    # A few edges after the burst: the first one stored carries the "lost before" flag.
    for n in range(3):
        lines.append(("E", tick_start(BURST_TICK + 12 + 2 * n) + 7777, 1))
    # Garbage at tick 318, then QUERY(COUNTERS) at tick 322 (after the burst's RESULTs drained).
    c = tick_start(318) + 10000
    for n, b in enumerate(run["garbage"]):
        lines.append(("R", c + n * PACE, b))
    c = tick_start(324) + 10000
    for n, b in enumerate(mmproto.Query(what=0x04).wire(200)):
        lines.append(("R", c + n * PACE, b))
    lines.sort(key=lambda x: x[1])
    stim = run["dir"] / "stim.txt"
    with open(stim, "w") as f:
        for k, c, v in lines:
            f.write(f"{k} {c} {v:x}\n")
    out = run["dir"] / "out.txt"
    max_cycles = t1 + (N_TICKS + 2) * TICK
    run_bench(stim, out, max_cycles)
    A, U, E, R = read_trace(out, [c for k, c, _ in lines if k == "R"])
    dec = mmproto.StreamDecoder()
    msgs = dec.feed(bytes(b for _, b in U))
    return {"A": A, "U": U, "E": E, "R": R, "msgs": msgs, "dec": dec, "t1": t1, "run": run}


def ticks_from_porta(tr):
    """(timecode low byte, cycle) for every PORTA change after the boot write."""
    return [(v, c) for c, v in tr["A"] if c >= tr["t1"]]


def tick_of(tr, cycle):
    ch = ticks_from_porta(tr)
    lo, hi = 0, len(ch) - 1
    assert cycle >= ch[0][1]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ch[mid][1] <= cycle:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1, ch[lo][1]  # extended timecode (tick 1 is the first change), its start cycle


def of(tr, cls):
    return [m for m in tr["msgs"] if isinstance(m.message, cls)]


def test_hello_first_and_contents(trace):
    assert trace["U"][0][1] == 0x00, "boot starts with one lone delimiter"
    first = trace["msgs"][0]
    assert isinstance(first.message, mmproto.Hello) and first.seq == 0
    h = first.message
    assert (h.proto_version, h.node_kind, h.cpu_hz, h.timer_hz, h.tick_counts, h.baud) == \
        (mmproto.PROTO_VERSION, 1, 16_000_000, 16_000_000, TICK, 9600)
    assert h.flags == 0x09  # hardware capture, histograms (version 6); not polled, not 8051
    assert h.proto_version == 6 and h.fw_version == 0x0200
    print(f"AVR HELLO after the bench's start: reset_cause 0x{h.reset_cause:02x}")
    assert len(h.body()) == 22 and h.reset_cause == SIM_POWER_ON_CAUSE
    # and no other HELLO: the watchdog (120 ms, fed once per tick) never fired in the healthy run
    assert len(of(trace, mmproto.Hello)) == 1


def test_tick_period_exact(trace):
    ch = ticks_from_porta(trace)
    assert len(ch) >= 300
    periods = {b[1] - a[1] for a, b in zip(ch, ch[1:])}
    assert periods == {TICK}, periods
    assert [v for v, _ in ch] == [(k + 1) & 0xFF for k in range(len(ch))]
    print(f"AVR tick period: {len(ch) - 1} ticks, every one {TICK} cycles; span {ch[-1][1] - ch[0][1]} cycles")


def test_one_timecode_per_tick(trace):
    tcs = [m.message.timecode for m in of(trace, mmproto.Timecode)]
    n = len(ticks_from_porta(trace))
    assert tcs == list(range(1, n + 1)) or tcs == list(range(1, n)), (tcs[:5], tcs[-5:], n)


def test_no_frame_lost_or_bad(trace):
    seqs = [m.seq for m in trace["msgs"]]
    assert all((b - a) % 256 == 1 for a, b in zip(seqs, seqs[1:]))
    assert all(m.lost_before == 0 for m in trace["msgs"])


def edge_results(trace):
    return [m.message for m in of(trace, mmproto.Result) if not m.message.flags & 1]


def test_edge_timestamps_within_one_cycle(trace):
    res = edge_results(trace)
    E = trace["E"]
    timed = len(trace["run"]["edges"])
    assert len(res) >= timed
    errs = []
    for n in range(timed):
        req, applied, i, level = E[n]
        r = res[n]
        assert r.tag == n and r.event_id == i and bool(r.flags & 4) == bool(level)
        tc, start = tick_of(trace, applied)
        got = (r.timecode - tc) * TICK + r.counts
        errs.append(got - (applied - start))
    assert len(errs) >= 100
    worst = max(abs(e) for e in errs)
    print(f"AVR edge timestamps: {len(errs)} edges, max |error| {worst} cycles, errors seen {sorted(set(errs))}")
    assert worst <= 1


# Two strobe edges closer than this many cycles are not separated by the capture ISR: the second moves
# the strobe before the ISR has read the first's id and level (interrupt response, the prologue's pushes,
# ICR5, PINC, PINL). Measured by test_close_edges (the shortest spacing at which every pair was timestamped
# in full, 85: 5.3 us); board.c quotes it.
CLOSE_EDGE_LIMIT = 85
CLOSE_SPACINGS = [2, 10, 25, 40, 60, 70, 75, 80, 85, 90, 100, 150, 300, 1000]


@pytest.fixture(scope="module")
def close_pairs(tmp_path_factory):
    """Pairs of edges d cycles apart (the second and third event the executor puts out in one tick are
    25 cycles apart), one pair every other tick, then a lone edge that reports any loss before it."""
    d = tmp_path_factory.mktemp("avr-close")
    open(d / "empty.txt", "w").close()
    run_bench(d / "empty.txt", d / "probe.txt", 30_000_000)
    t1 = [int(l.split()[1]) for l in open(d / "probe.txt") if l.startswith("A ") and int(l.split()[2], 16) == 1][0]
    lines, pairs = [], []
    for n, sp in enumerate(CLOSE_SPACINGS):
        k = 3 + 4 * n
        c = t1 + (k - 1) * TICK + 200_000
        lines += [(c, 2 * n % 8), (c + sp, (2 * n + 1) % 8), (t1 + (k + 1) * TICK + 300_000, 7)]
        pairs.append(sp)
    stim = d / "stim.txt"
    with open(stim, "w") as f:
        for c, i in lines:
            f.write(f"E {c} {i:x}\n")
        c = t1 + (3 + 4 * len(CLOSE_SPACINGS)) * TICK
        for j, b in enumerate(mmproto.Query(what=0x04).wire(7)):
            f.write(f"R {c + j * PACE} {b:x}\n")
    out = d / "out.txt"
    run_bench(stim, out, t1 + (6 + 4 * len(CLOSE_SPACINGS)) * TICK)
    A, U, E, _ = read_trace(out, [])
    msgs = mmproto.StreamDecoder().feed(bytes(b for _, b in U))
    return {"A": A, "E": E, "msgs": msgs, "t1": t1, "pairs": pairs}


def test_close_edges(close_pairs):
    """Every RESULT is a true measurement of the edge it names (id, level and time within one cycle of
    the edge that set them), or there is none: a pair the capture cannot separate is dropped whole,
    counted in spurious_edges and announced by the next RESULT's lost-before flag. Never an id of one
    edge with the time of another (once the pair became one RESULT with the second's id and
    the first's time, and the first event was never reported)."""
    tr = close_pairs
    res = [m.message for m in of(tr, mmproto.Result) if not m.message.flags & 1]
    E = tr["E"]
    by_edge = {}
    for r in res:
        tc, start = None, None
        # the edge this RESULT names: the applied edge whose time matches its stamp
        for req, applied, i, level in E:
            tc, start = tick_of(tr, applied)
            if (r.timecode - tc) * TICK + r.counts == applied - start:
                assert (r.event_id, bool(r.flags & 4)) == (i, bool(level)), (r, applied)
                by_edge[applied] = r
                break
        else:
            raise AssertionError(f"RESULT {r} matches no edge's time")
    resolved = []
    for n, sp in enumerate(tr["pairs"]):
        first, second, lone = E[3 * n], E[3 * n + 1], E[3 * n + 2]
        got = (first[1] in by_edge, second[1] in by_edge)
        assert got in ((True, True), (False, False)), (sp, got)
        assert lone[1] in by_edge
        assert bool(by_edge[lone[1]].flags & 2) == (got == (False, False)), sp  # lost-before, exactly then
        resolved.append((sp, got[0]))
    limit = min(sp for sp, ok in resolved if all(o for s, o in resolved if s >= sp))
    c = of(tr, mmproto.Counters)[-1].message
    dropped = sum(1 for _, ok in resolved if not ok)
    print(f"AVR close edges: pairs {resolved}; separated from {limit} cycles on; {dropped} pairs dropped, "
          f"spurious_edges {c.node_b}")
    assert c.node_b == dropped and c.node_a == 0
    assert limit <= CLOSE_EDGE_LIMIT and not dict(resolved)[25]


def test_fire_timestamps(trace):
    fires = [m.message for m in of(trace, mmproto.Result) if m.message.flags & 1]
    run = trace["run"]
    assert [(f.event_id, f.tag) for f in fires] == [(i, tag) for _, _, i, tag in run["fires"]]
    # First byte of each FIRE frame: the first R line of each group.
    firsts = []
    R = trace["R"]
    for k, ph, i, tag in run["fires"]:
        c0 = trace["t1"] + (k - 1) * TICK + ph
        firsts.append([a for req, a, b in R if req == c0][0])
    errs = []
    for f, a in zip(fires, firsts):
        tc, start = tick_of(trace, a)
        got = (f.timecode - tc) * TICK + f.counts
        errs.append(got - (a - start))
    # simavr raises RXC 11 bit times after the byte arrives (it counts a parity bit), the firmware
    # subtracts 10: the expected error is one bit time plus the RX ISR's entry latency.
    lat = [e - BIT for e in errs]
    print(f"AVR FIRE timestamps: errors {errs} cycles (minus one simavr bit time: {lat})")
    assert all(0 <= x <= 100 for x in lat)


def test_overflow_reported(trace):
    res = edge_results(trace)
    lost = [r for r in res if r.flags & 2]
    assert len(lost) >= 1
    ctr = of(trace, mmproto.Counters)
    assert ctr, "no COUNTERS reply"
    c = ctr[-1].message
    n_edges = len(trace["E"])
    assert c.node_a == n_edges - len(res) > 0  # every lost edge counted, none silent
    assert c.node_c == len(run_fires(trace))
    print(f"AVR overflow: {c.node_a} results lost and counted, {len(lost)} RESULT(s) flagged")


def run_fires(trace):
    return trace["run"]["fires"]


def test_garbage_counted_and_dropped(trace):
    c = of(trace, mmproto.Counters)[-1].message
    bad = c.rx_bad_crc + c.rx_bad_cobs + c.rx_too_long + c.rx_too_short + c.rx_bad_message
    # The garbage holds one bad-CRC frame, one too-short frame and one too-long run.
    assert (c.rx_bad_crc, c.rx_bad_cobs, c.rx_too_long, c.rx_too_short, c.rx_bad_message) == (1, 1, 1, 1, 0), c
    assert c.rx_ok == len(run_fires(trace)) + 1  # the FIREs and the QUERY itself
    # Protocol version 2: no receive ring on the AVR (always 0), and no USART data overrun: the stimulus
    # never hands the receiver a byte faster than simavr's UART takes it (PACE).
    assert (c.rx_ring_overflow, c.rx_hw_overrun) == (0, 0), c
    print(f"AVR garbage: {bad} bad frames counted, rx_ok {c.rx_ok}")


def frames_written(tr):
    """(cycle of the first byte written to UDR0, decoded frame) for every frame, the boot's lone
    delimiter left out."""
    out, cur = [], []
    for c, b in tr["U"]:
        cur.append((c, b))
        if b == 0:
            if len(cur) > 1:
                f = mmproto.StreamDecoder().feed(bytes(x for _, x in cur))
                assert len(f) == 1
                out.append((cur[0][0], f[0]))
            cur = []
    return out


def timecode_starts(tr):
    """{extended timecode: cycle its frame's first byte was written}, and the tick start cycles."""
    starts = {f.message.timecode: c for c, f in frames_written(tr) if isinstance(f.message, mmproto.Timecode)}
    return starts, [c for _, c in ticks_from_porta(tr)]


def test_timecode_starts_with_tick(trace):
    """The PC dates each tick by its TIMECODE frame's arrival, so the frame starts with the tick: on
    every tick that finds the line idle (no byte written in the two characters before it: simavr
    raises UDRE when a byte is done) and no event or host byte just before it (its RESULT takes the
    frame encoded ahead back), the first byte is written within TC_START_MAX cycles of the port change."""
    starts, ticks = timecode_starts(trace)
    writes = [c for c, _ in trace["U"]]
    stim = sorted([a for _, a, _, _ in trace["E"]] + [a for _, a, _ in trace["R"]])
    idle, delays = 0, []
    for k, c in enumerate(ticks, start=1):
        if k not in starts:
            continue
        if any(c - 2 * SIM_BYTE <= w < c for w in writes) or any(c - 32000 <= e < c for e in stim):
            continue
        idle += 1
        delays.append(starts[k] - c)
    assert idle >= 250, idle
    print(f"AVR TIMECODE start on {idle} idle ticks: {min(delays)} .. {max(delays)} cycles after the port change "
          f"({max(delays) / 16:.2f} us)")
    assert all(0 <= d <= TC_START_MAX for d in delays), sorted(set(delays))


def test_timecode_right_after_busy_frame(trace):
    """A tick that finds another frame on the line: its TIMECODE is the next frame, its first byte
    written as soon as the last one's delimiter is done (one simavr character after that delimiter was
    written, plus the UDRE ISR), with the next seq (test_no_frame_lost_or_bad)."""
    starts, ticks = timecode_starts(trace)
    writes = [c for c, _ in trace["U"]]
    gaps = []
    for k, c in enumerate(ticks, start=1):
        if k not in starts or not any(c - SIM_BYTE <= w < c for w in writes):
            continue
        i = writes.index(starts[k])
        assert trace["U"][i - 1][1] == 0      # the frame before it ended just then
        gaps.append(writes[i] - writes[i - 1])
    assert len(gaps) >= 20, len(gaps)
    print(f"AVR TIMECODE after a busy line: {len(gaps)} ticks, first byte {min(gaps)} .. {max(gaps)} cycles "
          f"after the delimiter before it was written (one character: {SIM_BYTE})")
    assert all(SIM_BYTE <= g <= SIM_BYTE + 200 for g in gaps), sorted(set(gaps))


# ---- Watchdog ------------------------------------------------------------------------------------
# Test-only images from the same sources (Makefile, build/avr-test; PF_TEST_HANG, never in profiler.elf):
# 1 = the main loop hangs at timecode 20 (interrupts on: the tick ISR keeps checking in), 2 = the tick
# stops at timecode 20 (its interrupt disabled; the main loop runs on). Either way nothing feeds the
# watchdog any more. simavr 1.6 models the timeout as the hardware does: avr_watchdog.c's timer, with
# WDE set and WDIE clear, resets the core, sets MCUSR.WDRF and restarts the watchdog at its shortest
# period (WDE stays set until WDRF is cleared); its period is 2048 << WDP cycles of a 128 kHz
# oscillator: WDTO_120MS (WDP = 3) = 16384 * 16 MHz / 128 kHz = 2048000 CPU cycles.
TEST_DIR = os.environ.get("PF_AVR_TEST_DIR", os.path.join(os.path.dirname(__file__), "..", "build", "avr-test"))
HANG_TC = 20
WDT_CYCLES = 2_048_000
FEED_LAG_MAX = 20_000     # the last feed comes this soon after its tick's port change (main loop wake-up)


@pytest.mark.parametrize("variant,last_fed_tc", [(1, HANG_TC - 1), (2, HANG_TC)])
def test_watchdog_reset_after_hang(variant, last_fed_tc, tmp_path):
    elf = os.path.join(TEST_DIR, f"profiler-hang{variant}.elf")
    stim = tmp_path / "empty.txt"
    stim.write_text("")
    out = tmp_path / "out.txt"
    subprocess.run([BENCH, "--profiler", elf, "--stimulus", str(stim), "--trace", str(out),
                    "--until-cycles", str(40_000_000), "--uart-timing", "simavr", "--run-dir", str(tmp_path)],
                   check=True, capture_output=True, timeout=120)
    A = [(int(l.split()[1]), int(l.split()[2], 16)) for l in open(out) if l.startswith("A ")]
    U = [(int(l.split()[1]), int(l.split()[2], 16)) for l in open(out) if l.startswith("T ")]
    msgs = mmproto.StreamDecoder().feed(bytes(b for _, b in U))
    hellos = [m for m in msgs if isinstance(m.message, mmproto.Hello)]
    assert len(hellos) == 2, [type(m.message).__name__ for m in msgs]
    # power-on (simavr sets PORF at start), then the watchdog reset: WDRF alone, seq 0 again
    assert [h.message.reset_cause for h in hellos] == [SIM_POWER_ON_CAUSE, mmproto.ResetCause.WATCHDOG]
    assert hellos[1].seq == 0
    i = msgs.index(hellos[1])
    before = [m.message.timecode for m in msgs[:i] if isinstance(m.message, mmproto.Timecode)]
    after = [m.message.timecode for m in msgs[i:] if isinstance(m.message, mmproto.Timecode)]
    assert before == list(range(1, HANG_TC + 1))      # the hang came at timecode 20 ...
    assert after[:3] == [1, 2, 3]                      # ... and the node started over
    # When: the port goes back to 0 at the reset, one watchdog period after the last feed, which came
    # right after the tick of timecode last_fed_tc (1: the main loop hung at the tick of 20, before
    # feeding; 2: the tick ISR of 20 still checked in, the main loop fed, then no tick came).
    fed_tick = [c for c, v in A if v == last_fed_tc][0]
    reset_at = [c for c, v in A if v == 0 and c > fed_tick][0]
    print(f"AVR watchdog, hang {variant}: reset {reset_at - fed_tick} cycles after the tick of timecode "
          f"{last_fed_tc} (period {WDT_CYCLES}); HELLO reset_cause 0x{hellos[1].message.reset_cause:02x}")
    assert WDT_CYCLES <= reset_at - fed_tick <= WDT_CYCLES + FEED_LAG_MAX


def test_shipped_image_has_no_test_hooks():
    """The hang variants exist only in build/avr-test: in profiler.elf (built without PF_TEST_HANG) the
    main loop's check-in and the tick ISR (__vector_47, TIMER5_COMPA) are each shorter than in the
    variant whose hang they hold: the test code is compiled out, not switched off at run time."""
    def sizes(elf):
        out = subprocess.run(["avr-nm", "-S", elf], capture_output=True, text=True, check=True).stdout
        return {p[3]: int(p[1], 16) for p in (l.split() for l in out.splitlines()) if len(p) == 4}
    shipped = sizes(ELF)
    hang1 = sizes(os.path.join(TEST_DIR, "profiler-hang1.elf"))
    hang2 = sizes(os.path.join(TEST_DIR, "profiler-hang2.elf"))
    assert shipped["board_watchdog_main"] < hang1["board_watchdog_main"]
    assert shipped["__vector_47"] < hang2["__vector_47"]
    assert shipped["board_watchdog_main"] == hang2["board_watchdog_main"]
    assert shipped["__vector_47"] == hang1["__vector_47"]


BAUD_AT = 6_000_000            # cycle of the BAUD request's first byte (after the boot HELLO, tick 1)
BIT_115200 = 8 * (16 + 1)      # UBRR0 16: 136 cycles per bit, 117647 baud (+2.1 %)


def test_baud_switch(tmp_path):
    """BAUD 115200 (SPEC.md 0x06): the frame on the line ends at 9600, then UBRR0 16 (the bytes'
    spacing in simavr: 11 of its bits, 1496 cycles), a lone delimiter, HELLO reporting 115200, and a
    QUERY(COUNTERS) sent at the new rate is answered at it. A rate the AVR cannot make (1.9 M: UBRR0 0
    makes 2 M, +5.3 %) is refused with ERROR BAD_VALUE at the old rate."""
    lines = []
    for n, b in enumerate(Baud(baud_hundreds=19000).wire(1)):
        lines.append(("R", BAUD_AT - 400_000 + n * PACE, b))
    for n, b in enumerate(Baud(baud_hundreds=1152).wire(2)):
        lines.append(("R", BAUD_AT + n * PACE, b))
    q_at = BAUD_AT + 1_500_000
    pace_new = 11 * BIT_115200 + 100
    for n, b in enumerate(mmproto.Query(what=0x04).wire(3)):
        lines.append(("R", q_at + n * pace_new, b))
    stim = tmp_path / "stim.txt"
    stim.write_text("".join(f"{k} {c} {v:x}\n" for k, c, v in lines))
    out = tmp_path / "out.txt"
    subprocess.run([BENCH, "--profiler", ELF, "--stimulus", str(stim), "--trace", str(out),
                    "--until-cycles", str(q_at + 2_000_000), "--uart-timing", "simavr",
                    "--run-dir", str(tmp_path)], check=True, capture_output=True, timeout=120)
    U = [(int(l.split()[1]), int(l.split()[2], 16)) for l in open(out) if l.startswith("T ")]
    dec = mmproto.StreamDecoder()
    # frames with the cycle of their last byte
    msgs = []
    for c, b in U:
        for m in dec.feed(bytes([b])):
            msgs.append((c, m))
    errors = [(c, m.message) for c, m in msgs if isinstance(m.message, mmproto.Error)]
    assert len(errors) == 1
    assert errors[0][1].code == mmproto.ErrorCode.BAD_VALUE
    assert errors[0][1].ref_type == Baud.TYPE
    hellos = [(c, m.message) for c, m in msgs if isinstance(m.message, mmproto.Hello)]
    assert [h.baud for _, h in hellos] == [9600, 115200]
    end_hello = hellos[1][0]
    idx = [i for i, (c, _) in enumerate(U) if c == end_hello][0]
    body = U[idx - (22 + 6) + 1: idx + 1]   # the HELLO on the wire: body + 6 bytes (SPEC.md section 2)
    # T is the UDR0 write: the first two bytes go in back to back (UDR0 and the shift register), then
    # one per character, the UDRE ISR's latency varying with the foreground
    per_byte = (body[-1][0] - body[1][0]) / (len(body) - 2)
    print(f"AVR BAUD: HELLO at {per_byte:.0f} cycles per byte after the switch (11 simavr bits at "
          f"UBRR0 16: {11 * BIT_115200})")
    assert abs(per_byte - 11 * BIT_115200) < 11 * BIT_115200 * 0.01
    start = idx - len(body) + 1
    assert U[start - 1][1] == 0x00 and U[start - 2][1] == 0x00, "a lone delimiter before the HELLO"
    old_gaps = [b[0] - a[0] for a, b in zip(U[:start - 1], U[1:start - 1]) if b[0] - a[0] < 2 * 11 * BIT]
    assert old_gaps and sorted(old_gaps)[len(old_gaps) // 2] == 11 * BIT, "before the switch: 9600"
    counters = [(c, m.message) for c, m in msgs if isinstance(m.message, mmproto.Counters)]
    assert len(counters) == 1 and counters[0][0] > q_at
    assert counters[0][1].rx_ok == 3 and counters[0][1].rx_bad_crc == 0


# ---- Histograms (protocol version 6) -------------------------------------------------------------
HIST_T = 5                      # the series' first moment: the start of tick 5
HIST_P = TICK // 4              # 284444 counts: a period that does not divide the tick
HIST_LAT = 100                  # each edge this many cycles after its moment: cell 100 >> 4 = 6


def test_hist_arm_and_final_report(tmp_path):
    """HIST_ARM (SPEC.md 0x13) in the image: answered by HIST_SUMMARY report 0; eight events, edges for the
    first six 100 cycles after their moments (no RESULT: no raw flag), none for the last two, whose windows
    close by the report at tick 11: then the final full report (one HIST_CELLS block, FINAL)."""
    d = tmp_path
    open(d / "empty.txt", "w").close()
    run_bench(d / "empty.txt", d / "probe.txt", 30_000_000)
    t1 = [int(l.split()[1]) for l in open(d / "probe.txt") if l.startswith("A ") and int(l.split()[2], 16) == 1][0]
    tick_start = lambda k: t1 + (k - 1) * TICK
    arm = mmproto.HistArm(timecode=HIST_T, first=0, period=HIST_P, count=8, late=16000, early=1600, event_id=3,
                          cell_shift=4, report_ticks=2, flags=0)
    lines = [("R", tick_start(2) + 10_000 + n * PACE, b) for n, b in enumerate(arm.wire(1))]
    for k in range(6):
        lines.append(("E", tick_start(HIST_T) + k * HIST_P + HIST_LAT, (3 + k) % 8))
    stim = d / "stim.txt"
    stim.write_text("".join(f"{k} {c} {v:x}\n" for k, c, v in sorted(lines, key=lambda x: x[1])))
    out = d / "out.txt"
    run_bench(stim, out, tick_start(14))
    A, U, E, R = read_trace(out, [c for k, c, _ in lines if k == "R"])
    msgs = [m.message for m in mmproto.StreamDecoder().feed(bytes(b for _, b in U))]
    assert msgs[0].flags & mmproto.HELLO_FLAG_HIST and msgs[0].proto_version == 6
    assert not [m for m in msgs if isinstance(m, mmproto.Result)], "no RESULT for binned edges"
    assert not [m for m in msgs if isinstance(m, mmproto.Error)]
    summ = [m for m in msgs if isinstance(m, mmproto.HistSummary)]
    cells = [m for m in msgs if isinstance(m, mmproto.HistCells)]
    ans = summ[0]
    assert (ans.report, ans.flags, ans.ok, ans.missed, ans.min, ans.blocks) == (0, 1, 0, 0, 0xFFFFFFFF, 0)
    final = summ[-1]
    print(f"AVR histogram: {len(summ)} summaries, {len(cells)} cell blocks; final {final}")
    assert final.flags == mmproto.HistSummary.FLAG_FINAL
    assert (final.ok, final.late, final.early, final.missed, final.stray) == (6, 0, 0, 2, 0)
    # the capture stamps the edge to the cycle (test_edge_timestamps_within_one_cycle): 100 or 101
    assert HIST_LAT <= final.min <= final.max <= HIST_LAT + 1 and final.blocks == 1
    last = [c for c in cells if c.report == final.report]
    assert len(last) == 1 and last[0].cell == 0 and last[0].counts[6] == 6 and sum(last[0].counts) == 6
    # the final report came at the report after the last window closed (tick 11), and nothing after it
    assert [s.report for s in summ] == list(range(len(summ)))
    assert msgs.index(final) == max(i for i, m in enumerate(msgs) if not isinstance(m, mmproto.Timecode))
