"""The main window's widgets, one concept a module: `leds` (the eight event LEDs), `timecode` (the timecode
display), `stats` (the statistics panel), `progress` (a run's progress and time left), `load` (the PC load
indicator), `controls` (a radio pair, an elided label), `latency_axis` (latency tick labels and axes), `plots`
(the live latency plots) and `warmup` (the start-up stall those plots mark, Qt-free).

Importing any of them sets pyqtgraph's look for every plot of the app: white, no antialiasing."""

from __future__ import annotations

import pyqtgraph as pg

pg.setConfigOptions(antialias=False, background="w", foreground="k")
