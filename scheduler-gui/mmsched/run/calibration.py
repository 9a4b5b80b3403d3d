"""Normal mode's calibrations before the run's events (docs/normal-mode.md): the profiler's floor (FIREs the
endpoint injects on a tick's edge), the clock servo's lock (disciplined mode: a few FIREs written at once) and
the tick length fitted from the TIMECODE arrivals. Each waits for its frames through the run's wait for a frame
(nodesetup.Wait), so what arrives meanwhile is handled as in the run. Given the run state (the floor, the servo,
the tick fit and the probes' tags are its), the endpoint (injects the floor's FIREs), the session, the tally and
the record of FIREs written (the servo's anchor may be a probe)."""

from __future__ import annotations

import mmproto as mp

from ..verdict.budget import Floor
from ..link.endpoint import Endpoint
from ..model.generator import PROBE_TAGS
from .nodesetup import SetupError, Wait
from .runstate import RunState
from ..link.session import Session
from ..model.tally import Tally
from ..model.eventbytes import Sent


FLOOR_PROBES = 5           # FIREs injected on a tick's edge (the floor calibration)
CLOCK_PROBES = 8           # disciplined: FIREs written at start to lock the servo


def calibrate(st: RunState, endpoint: Endpoint, session: Session, wait: Wait, tally: Tally,
              fires_sent: dict[float, Sent], discipline: bool) -> None:
    """All of normal mode's calibrations, in order (`discipline`: the clock servo's lock too)."""
    calibrate_floor(st, endpoint, session, wait, tally)
    fit_tick(st, wait, tally)
    if discipline:                     # after the fit: the servo takes the profiler's stamps at its rate
        calibrate_clock(st, session, wait, tally, fires_sent)


def probe_tag(st: RunState) -> int:
    tag = PROBE_TAGS[len(st.probe_tags)]      # tags no event of the run gets (generator.py)
    st.probe_tags.add(tag)
    return tag


def wait_probe(st: RunState, wait: Wait, tally: Tally, tag: int) -> mp.Result | None:
    try:
        return wait(mp.Result, "profiler", 2 * st.timebase.tick_s + 1.0, where=lambda m: m.tag == tag).message
    except SetupError:
        tally.count("probes_unanswered")
        return None


def calibrate_floor(st: RunState, endpoint: Endpoint, session: Session, wait: Wait, tally: Tally) -> None:
    """The rig's own part of every normal-mode latency, with no PC timing in it: FIREs the endpoint injects
    into the profiler with their first start bit on a tick's edge; the latency the profiler reports for them
    is its floor (stamping, interrupt entry)."""
    why = endpoint.injection_path()
    if why is not None:
        st.floor = Floor(why=why)
        return
    link = session.links["profiler"]
    samples = []
    for _ in range(FLOOR_PROBES):
        tag = probe_tag(st)
        endpoint.inject_on_edge(link.prepare(mp.Fire(event_id=0, tag=tag)))
        got = wait_probe(st, wait, tally, tag)
        if got is not None and got.counts < st.timebase.tick_counts // 2:   # stamped in the edge's tick
            samples.append(round(st.timebase.counts_to_us(got.counts), 3))
    st.floor = Floor(samples, "bench_inject", None if samples else "no injected FIRE was answered")
    st.servo.floor_s = (st.floor.us or 0.0) / 1e6


def calibrate_clock(st: RunState, session: Session, wait: Wait, tally: Tally, fires_sent: dict[float, Sent]) -> None:
    """Disciplined normal mode: a short exchange before the run locks the servo (servo.py); each FIRE of the
    run refines it from then on. Each probe is noted (`fires_sent`): the servo's anchor may be one of them."""
    link = session.links["profiler"]
    st.servo.clock = st.profiler_clock
    for _ in range(CLOCK_PROBES):
        tag = probe_tag(st)
        w = link.write_frame(link.prepare(mp.Fire(event_id=0, tag=tag)))
        fires_sent[w.began] = Sent("profiler", w.offset, w.began, w.gen, w.size, w.ended)
        got = wait_probe(st, wait, tally, tag)
        if got is not None:
            st.servo.add(w.began, st.timebase.seconds(got.timecode, got.counts))
    if not st.servo.ready:
        tally.count("discipline_unlocked_at_start")


def fit_tick(st: RunState, wait: Wait, tally: Tally) -> None:
    """Normal mode fires at its estimate of each tick's start, so it waits until the tick length is fitted from
    the TIMECODE arrivals (timecode.py): with HELLO's nominal length a profiler 0.5 % slow made FIREs go out
    milliseconds early. At most the fit's frames and a margin; a run whose profiler's timecodes do not fit (no
    real clock is 2 % off) goes on with the nominal length, counted."""
    for _ in range(st.tracker.fit_min_frames + 8):
        if st.tracker.fitted:
            return
        wait(mp.Timecode, "profiler", 3.0)
    if not st.tracker.fitted:
        tally.count("tick_not_fitted")
