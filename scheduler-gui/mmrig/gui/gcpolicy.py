"""Python's cyclic garbage collection in the GUI thread only, while the app runs.

pyqtgraph's plot items own QMenus (the view's and the plot's context menus) that Python alone holds, in
reference cycles. The collector runs in whichever thread happens to allocate when a generation fills up: once
it was the GUI worker's thread reading the run process's pipe, which then destroyed a QMenu off the GUI thread;
the destructor waited for the GIL while the GUI thread, holding it, waited for the Qt mutex the destructor held
(a window hung for good in a loaded test run). pyqtgraph's GarbageCollector disables the automatic collector
and collects on a timer of the GUI thread instead; `gui_thread_gc()` starts one, `stop()` gives the automatic
collector back (tests open and close windows in a process that runs other tests too)."""

from __future__ import annotations

import gc

from pyqtgraph.util.garbage_collector import GarbageCollector

INTERVAL_S = 0.5


class GuiThreadGc:
    def __init__(self) -> None:
        self.collector = GarbageCollector(interval=INTERVAL_S)

    def stop(self) -> None:
        self.collector.timer.stop()
        gc.collect()            # (in the GUI thread: whatever the timer had not collected yet)
        gc.enable()


def gui_thread_gc() -> GuiThreadGc:
    return GuiThreadGc()
