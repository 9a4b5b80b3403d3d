"""The PySide6 desktop app: a thin view over the headless scheduler core (mmsched). Only this
subpackage imports Qt; the core reports to it through Runner.observer and is stopped through
Runner.stop_requested, from a run process of its own (mmrig.child) unless normal mode's "fire from the
GUI process" is set. Start it with `mmrig gui` or `make gui`."""

from __future__ import annotations


def main(argv: list[str] | None = None, settings_path: str | None = None) -> int:
    from mmrig.gui.app import run_app

    return run_app(argv or [], settings_path)
