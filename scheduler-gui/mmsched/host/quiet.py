"""The Python interpreter kept out of the firing thread's way while a run makes its events.

Normal mode's firing thread (firing.py) shares the interpreter with the run's own thread, which at a kilohertz
handles a frame every millisecond. Two of CPython's habits made it late by milliseconds:

- full garbage collections: a collection of the oldest generation walks every object the run holds (about
  five per event) with every thread stopped; measured with gc.callbacks in a 20,000-event run at 1 kHz, 108 ms
  and 70 ms, and every event due meanwhile went out late (p99 40 ms, against 1.4-3 ms without). The young
  generations are still collected (they free the short-lived cycles quickly and cheaply); what exists when the
  run starts is moved out of the collector's way (gc.freeze), and the oldest generation is not collected until
  the run ends. The run's objects are freed as ever when it ends;
- what the freeze moves must be alive: garbage cycles not yet collected when a run starts (the run before's, in
  a process that runs many) were frozen with the rest, went back to the oldest generation when the run ended and
  were frozen again by the next run, whose start came before that generation was due: never collected. A process
  running 10-event lockstep runs back to back grew by 66 KB a run (300 runs: 40 -> 60 MB RSS, ~270 objects a run
  found only by a full collection; the pty and the line-socket path alike). So a run starts with a full collection
  (a few ms before its first event, not among them) and freezes only what lives;
- the interpreter lock's switch interval: a thread that wants the lock gets it after at most
  sys.getswitchinterval() of another thread's Python work, 5 ms by default; here 0.5 ms.

Both are put back as they were when the run's events end (the GUI's and a script's process go on).
"""

from __future__ import annotations

import gc
import sys
from contextlib import contextmanager
from typing import Iterator

SWITCH_INTERVAL_S = 0.0005
NEVER = 1 << 30          # a threshold the oldest generation's count does not reach in a run


@contextmanager
def quiet_interpreter() -> Iterator[None]:
    thresholds, switch = gc.get_threshold(), sys.getswitchinterval()
    gc.collect()
    gc.freeze()
    gc.set_threshold(thresholds[0], thresholds[1], NEVER)
    sys.setswitchinterval(min(switch, SWITCH_INTERVAL_S))
    try:
        yield
    finally:
        sys.setswitchinterval(switch)
        gc.set_threshold(*thresholds)
        gc.unfreeze()
