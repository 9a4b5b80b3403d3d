"""A run's events in a store that keeps the newest in memory and the older ones on disk (eventstore.py): the
whole run reads as a list, in order, whatever was retired; a retired event comes back as a copy; a scratch file
that cannot be written leaves them held; the scratch file has no name."""

from __future__ import annotations

import errno
import os
import pickle
import stat

import pytest

from mmanalysis.safefiles import scratch
from mmsched.model import eventstore
from mmsched.model.event import Event
from mmsched.model.eventbytes import Sent
from mmsched.model.eventstore import EventStore


def made(k: int) -> Event:
    e = Event(k, 100 + k, k, "mixed", 2, 1000 + k, 998 + k, 0.25, due_counts=7 * k, created_at=0.001 * k)
    e.bytes.sent = Sent("executor", 12 * k, 0.001 * k, size=12)
    e.finish("ok", None)
    e.latency_us = 50.0 + k
    return e


def test_a_store_reads_as_the_list_of_its_events_before_and_after_they_retire(tmp_path) -> None:
    store, events = EventStore(tmp_path), [made(k) for k in range(10)]
    for e in events:
        store.append(e)
    assert store.retire(3) == events[:3] and store.retire(4) == events[3:7] and store.retired == 7
    assert len(store) == 10 and list(store) == events               # (Event is a dataclass: equal by fields)
    assert store[0] == events[0] and store[-1] is events[-1] and store[8] is events[8]
    assert store[5:8] == events[5:8] and store.tail(2) == events[8:] and store.tail(99) == events[7:]
    assert store[2].bytes.sent == Sent("executor", 24, 0.002, size=12)
    with pytest.raises(IndexError):
        store[10]


def test_a_retired_event_comes_back_as_a_copy_and_held_says_it_is_gone(tmp_path) -> None:
    store = EventStore(tmp_path)
    for k in range(4):
        store.append(made(k))
    store.retire(2)
    store[0].latency_us = -1.0                 # a change to the copy is not the store's
    assert store[0].latency_us == 50.0
    assert store.held_at(0) is None and store.held_at(1) is None and store.held_at(2) is store[2]
    assert store.held_at(4) is None and store.held == [store[2], store[3]]


def test_a_scratch_file_that_cannot_be_written_leaves_the_events_held(tmp_path, monkeypatch) -> None:
    def full(folder):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(eventstore, "scratch", full)
    store = EventStore(tmp_path)
    for k in range(5):
        store.append(made(k))
    with pytest.raises(OSError):
        store.retire(3)
    assert store.retired == 0 and [e.event for e in store] == [0, 1, 2, 3, 4]


def test_the_scratch_file_has_no_name_and_is_its_owners_alone(tmp_path) -> None:
    with scratch(tmp_path) as f:
        f.write(b"events")
        f.seek(0)
        assert f.read() == b"events"
        assert list(tmp_path.iterdir()) == []                         # nothing to plant a link at or open
        assert stat.S_IMODE(os.fstat(f.fileno()).st_mode) == 0o600


def test_a_store_sent_to_another_process_takes_every_event_along(tmp_path) -> None:
    store, events = EventStore(tmp_path), [made(k) for k in range(6)]
    for e in events:
        store.append(e)
    store.retire(4)
    copy = pickle.loads(pickle.dumps(store))          # (the GUI's run process sends its RunResult so)
    assert list(copy) == events and copy.retired == 0 and len(copy) == 6


def test_a_tail_keeps_the_runs_length_and_its_last_events_and_says_the_rest_are_not_there(tmp_path) -> None:
    """What the GUI's run process sends of a long run: its length, its newest events (iterating and indexing
    them), an older one refused in one line; so across a process boundary too."""
    store, events = EventStore(tmp_path), [made(k) for k in range(10)]
    for e in events:
        store.append(e)
    store.retire(3)
    store.retire(3)
    for n in (5, 2):                                 # reaching into the retired chunks, and into the held only
        tail = store.tail_only(n)
        for t in (tail, pickle.loads(pickle.dumps(tail))):
            assert len(t) == 10 and list(t) == events[-n:] and t[9] == events[9] and t[10 - n] == events[10 - n]
            assert not t.whole and store.whole
            with pytest.raises(IndexError, match="not sent from the run's process"):
                t[9 - n]


def test_a_store_equals_the_list_of_its_events_and_says_what_it_holds(tmp_path) -> None:
    store = EventStore(tmp_path)
    assert store == [] and repr(store) == "EventStore([])"       # (a HIL script's `run.events == []`)
    events = [made(k) for k in range(10)]
    for e in events:
        store.append(e)
    store.retire(5)
    assert store == events and store != events[:9] and store != [made(k) for k in range(1, 11)]
    assert repr(store) == "EventStore(<10 events, 5 retired to its scratch file>)"


def test_an_event_pickles_whole_with_every_part_of_its_bytes(tmp_path) -> None:
    """Every field and every part of its bytes comes back (frozen parts frozen), as the slotted dataclasses' own
    pickling gave them (model/slotpickle.py, which is faster); copies as well."""
    import copy
    import dataclasses

    from mmsched.model.eventbytes import Basis, EventBytes, Fed

    e = made(3)
    e.bytes = EventBytes(sent=Sent("profiler", 27, 1.5, 2, 9, 1.6), basis=Basis(99, 1.0, 1.01), created_at=0.9,
                         fed=Fed(1.2, 1.1))
    e.stall_us, e.fault = 12.5, "timecode_fault"
    back = pickle.loads(pickle.dumps(e))
    assert back == e and back is not e and back.bytes.basis == e.bytes.basis and back.bytes.fed == e.bytes.fed
    assert all(getattr(back, f.name) == getattr(e, f.name) for f in dataclasses.fields(e))
    assert copy.deepcopy(e) == e and copy.copy(e) == e
    with pytest.raises(dataclasses.FrozenInstanceError):
        back.bytes.sent.offset = 1                  # a frozen part stays frozen
