"""The environment a reader needs to trust a run's figure (the sidecar's `environment` section, and the
header of `mmrig run --hist`), as EVL latmus records it in its histogram file: which firmware ran (the
SHA-256 of the images the bench loaded, and what each node said in HELLO), its clocks and tick, the host
(kernel, CPU, load) and the software (mmrig, git, Python), and whether it was the bench or boards.

Headless and Qt-free. The core does not know where the images are (only the entry point that chose the
bench does): `collect()` takes them as `images` ({"profiler": path, "executor": path, "bench": path}); a
node with no image given (boards, or a caller that passed none) is recorded by its HELLO alone, with why.
Every probe is best effort: what cannot be read is None, never an exception.
"""

from __future__ import annotations

import hashlib
import os
import platform
import functools
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

from mmproto import fw_version_text

from .. import __version__

CHECKOUT = Path(__file__).resolve().parents[2]     # scheduler-gui/mmsched -> the checkout, if this is one


def sha256(path: str | os.PathLike[str]) -> str | None:
    """The file's SHA-256, or None if it cannot be read; computed once per file version (every run of a GUI
    or a test session hashes the same images)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _sha256(os.fspath(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=64)
def _sha256(path: str, mtime_ns: int, size: int) -> str | None:
    try:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 16), b""):
                h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None


def cpu_model(cpuinfo: str = "/proc/cpuinfo") -> str | None:
    """The CPU's model name (x86 `model name`, or the `Hardware` / `Processor` / `cpu model` lines of ARM
    and MIPS kernels)."""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        return platform.processor() or None
    for key in ("model name", "hardware", "processor", "cpu model"):
        for line in text.splitlines():
            k, _, v = line.partition(":")
            if k.strip().lower() == key and v.strip() and not v.strip().isdigit():
                return v.strip()
    return platform.processor() or None


def cpu_governor(sysfs: str = "/sys") -> str | None:
    try:
        return Path(sysfs, "devices/system/cpu/cpu0/cpufreq/scaling_governor").read_text().strip() or None
    except OSError:
        return None


def git_describe(root: Path = CHECKOUT) -> str | None:
    """`git describe --always --dirty --tags` of the checkout this package runs from (None outside one)."""
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty", "--tags"],
                              capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def host() -> dict[str, Any]:
    u = platform.uname()
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {"system": u.system, "kernel": u.release, "kernel_version": u.version, "machine": u.machine,
            "node": u.node, "cpu_model": cpu_model(), "cpu_count": os.cpu_count(),
            "cpus_allowed": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "cpu_governor": cpu_governor(), "loadavg": load}


def software() -> dict[str, Any]:
    return {"mmrig": __version__, "git": git_describe(), "python": platform.python_version(),
            "python_implementation": platform.python_implementation(), "executable": sys.executable}


def clock(hello: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A node's clocks and tick as its HELLO said them, and the tick in us."""
    if not hello:
        return None
    timer_hz, tick = hello.get("timer_hz"), hello.get("tick_counts")
    return {"cpu_hz": hello.get("cpu_hz"), "timer_hz": timer_hz, "tick_counts": tick,
            "tick_us": round(tick * 1e6 / timer_hz, 3) if timer_hz and tick else None, "baud": hello.get("baud")}


def firmware(images: Mapping[str, Any] | None, hellos: Mapping[str, Any]) -> dict[str, Any]:
    """Per node (and the bench program, if given): the image path and its SHA-256, and the HELLO's version."""
    out: dict[str, Any] = {}
    images = dict(images or {})
    for name in sorted(set(images) | {"profiler", "executor"}):
        hello = hellos.get(name)
        path = images.get(name)
        entry: dict[str, Any] = {"image": str(path) if path else None, "sha256": sha256(path) if path else None}
        if name != "bench":
            ver = hello.get("fw_version") if hello else None
            entry["fw_version"] = fw_version_text(ver) if isinstance(ver, int) else None
        if entry["sha256"] is None:
            entry["why"] = (f"image {path} not readable" if path else
                            "no image path given by the entry point (mmrig run gives the bench's; boards are "
                            "flashed separately)"
                            + ("" if hello or name == "bench" else "; the node said no HELLO"))
        out[name] = entry
    return out


def collect(hellos: Mapping[str, Any], identity: Mapping[str, Any],
            images: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The sidecar's `environment` section (docs/data-format.md)."""
    kind = identity.get("kind")
    return {"target": {"kind": kind, "paced": identity.get("paced"), "lockstep": bool(identity.get("lockstep"))},
            "firmware": firmware(images, hellos),
            "clocks": {name: clock(hellos.get(name)) for name in ("profiler", "executor")},
            "host": host(), "software": software()}


__all__ = ["collect", "cpu_model", "git_describe", "host", "sha256", "software"]
