"""Where the mmrig checkout is: the bench program and the firmware images are built there (make -C hil
all), not shipped in the Python package.

Looked for, in this order: $MMRIG_ROOT; the checkout this package is imported from (an editable
install, or running from the source tree); the current directory and its parents (a package installed
with `pip install .`, used from inside the checkout). A checkout is a directory with hil/bench/Makefile.
"""

from __future__ import annotations

import os
from pathlib import Path


class CheckoutNotFound(RuntimeError):
    pass


def is_checkout(d: Path) -> bool:
    return (d / "hil/bench/Makefile").is_file() and (d / "profiler-fw/Makefile").is_file()


def find_root() -> Path:
    env = os.environ.get("MMRIG_ROOT")
    if env:
        if not is_checkout(Path(env)):
            raise CheckoutNotFound(f"MMRIG_ROOT={env} is not an mmrig checkout (no hil/bench/Makefile there)")
        return Path(env).resolve()
    here = Path(__file__).resolve().parents[2]
    if is_checkout(here):
        return here
    cwd = Path.cwd().resolve()
    for d in (cwd, *cwd.parents):
        if is_checkout(d):
            return d
    raise CheckoutNotFound("the virtual bench needs an mmrig checkout (its bench program and firmware images "
                           "are built there): run from inside the checkout or set MMRIG_ROOT to it")


def root_or_here() -> Path:
    """The checkout if there is one, else the package's own parent (paths that then do not exist are
    reported by whoever needs them, with a clear message)."""
    try:
        return find_root()
    except CheckoutNotFound:
        return Path(__file__).resolve().parents[2]
