"""docs/usb-serial.md's table is what its command makes: tools/usbserial_figures.py's lockstep runs give the same
figures on every host, so the page's table is checked against a fresh one (a change to the model, the firmware or
the scheduler that moves a figure shows here, and the page is made again with --write)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.long
def test_the_pages_table_is_the_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("usbserial_figures", ROOT / "tools/usbserial_figures.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "usbserial_figures", tool)     # (its dataclass looks its module up there)
    spec.loader.exec_module(tool)
    page = (ROOT / "docs/usb-serial.md").read_text()
    written = page.split(tool.BEGIN, 1)[1].split(tool.END, 1)[0].strip()
    assert written == tool.table(tool.figures()).strip(), \
        "docs/usb-serial.md's table is stale: python tools/usbserial_figures.py --write docs/usb-serial.md"
    assert "docs/usb-serial.md" in (ROOT / "README.md").read_text()
