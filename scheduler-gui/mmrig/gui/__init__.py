"""The PySide6 desktop app: a thin view over the headless scheduler core (mmsched). Only this
subpackage imports Qt; the core reports to it through Runner.observer and is stopped through
Runner.stop_requested, from a run process of its own (mmrig.child) unless normal mode's "fire from the
GUI process" is set. Start it with `mmrig gui` or `make gui`.

The main window (`window`) is composed of `panels` (connection, run settings, live view, runs folder) and
`menus`, built from `widgets` (one concept a module); the event table's model is `model`, the one path from a
run to the view `feed`, the run's thread `worker`; the compare, executor profile and sweep windows are
`compare`, `profile` (with `gantt`) and `sweep`."""

from __future__ import annotations


def main(argv: list[str] | None = None, settings_path: str | None = None) -> int:
    from mmrig.gui.app import run_app

    return run_app(argv or [], settings_path)
