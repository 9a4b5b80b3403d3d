"""`mmrig gui` (`make gui`): the desktop app."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def cmd_gui(args: argparse.Namespace) -> int:
    try:
        from mmrig.gui import main as gui_main   # the only place the command line touches Qt
    except ImportError as exc:
        print(f"mmrig gui: PySide6 / pyqtgraph missing ({exc}); run tools/setup.sh", file=sys.stderr)
        return 2
    return gui_main([], str(args.settings) if args.settings else None)


def add_parser(sub: argparse._SubParsersAction) -> None:
    gui = sub.add_parser("gui", help="the PySide6 desktop app (virtual bench or serial ports)")
    gui.add_argument("--settings", type=Path, default=None, help="an INI file for the settings (default: QSettings)")
    gui.set_defaults(func=cmd_gui)
