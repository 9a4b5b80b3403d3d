"""mmsched: the scheduler's headless core and the `mmrig` command line.

Built so far: the command line with the protocol tools (`mmrig proto ...`). The serial sessions,
schedule generator, result matching and experiment runner are the scheduler-core issue; the PySide6
app is the GUI issue. Nothing in this package imports Qt.
"""

__version__ = "0.1.0"
