"""mmsched: the scheduler's headless core.

Serial sessions, the timecode tracker, the schedule generator, normal-mode firing, result matching, validity
by cause, the experiment runner and the run's files (docs/architecture.md lists the modules). It runs against
an endpoint (`mmsched.link.endpoint`) and never knows whether boards or the bench are behind it; it imports neither
Qt nor the bench (`mmhil`) nor the application layer (`mmrig`) above it (tests/test_layers.py).
"""

__version__ = "0.1.0"
