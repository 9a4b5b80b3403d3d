"""A display for the GUI tests: a private Xvfb (real X rendering through Qt's xcb plugin) started by the
tests themselves; if no Xvfb can be started, Qt's offscreen platform, said loudly. The screen is the smallest the
GUI is made for, 1280 x 800 (SCREEN): every window is tested to fit it (test_gui_fit.py)."""

from __future__ import annotations

import os
import signal
import shutil
import subprocess
import warnings

SCREEN = "1280x800x24"     # width x height x depth of the tests' X screen


def _die_with_parent() -> None:
    import ctypes
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG


def start_xvfb() -> subprocess.Popen | None:
    if shutil.which("Xvfb") is None:
        warnings.warn("Xvfb is not installed (tools/setup.sh installs xvfb): GUI tests fall back to "
                      "QT_QPA_PLATFORM=offscreen and the X screenshot is SKIPPED", stacklevel=2)
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        return None
    r, w = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", SCREEN, "-nolisten", "tcp"],
                            pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, preexec_fn=_die_with_parent)
    os.close(w)
    with os.fdopen(r) as f:
        num = f.readline().strip()
    if not num:
        proc.kill()
        warnings.warn("Xvfb did not start: GUI tests fall back to offscreen, X screenshot SKIPPED", stacklevel=2)
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        return None
    os.environ["DISPLAY"] = f":{num}"
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    return proc
