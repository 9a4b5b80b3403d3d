"""Where the bench program and the firmware images are: in an mmrig checkout (built there by make), or in
the installed package itself (`pip install .` ships the images and the bench's C sources as package data,
hil/mmhil/_build.py; the bench program is then built on first use into a cache directory).

Looked for, in this order:
1. $MMRIG_ROOT, a checkout;
2. the checkout this package is imported from (an editable install, or running from the source tree);
3. the current directory and its parents (a package installed with `pip install .`, used inside a checkout);
4. the package's own data (`mmhil/data/`: profiler.elf, executor.elf, bench/), the bench program built
   from it into $MMRIG_CACHE (default $XDG_CACHE_HOME/mmrig or ~/.cache/mmrig).
A checkout is a directory with hil/bench/Makefile and profiler-fw/Makefile.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
PACKAGE_DATA = PACKAGE / "data"          # filled by the wheel build (_build.py), absent in the source tree


class CheckoutNotFound(RuntimeError):
    pass


@dataclass(frozen=True)
class Layout:
    source: str              # "checkout", "package" (the installed package's data) or "none"
    bench_dir: Path          # the bench's sources (its Makefile): make builds bench_bin there
    bench_bin: Path
    fixture_elf: Path        # the bench's test fixture image (tests only)
    profiler_elf: Path
    executor_elf: Path
    root: Path | None = None  # the checkout, if any
    # the 8051 profiler image (Bench(profiler_kind="8051"), docs/bench.md "The 8051 profiler"): the very
    # .ihx one would burn; the bench runs it only where build/ucsim was built (ucsim_built)
    profiler_ihx: Path | None = None


def is_checkout(d: Path) -> bool:
    return (d / "hil/bench/Makefile").is_file() and (d / "profiler-fw/Makefile").is_file()


def find_root() -> Path:
    env = os.environ.get("MMRIG_ROOT")
    if env:
        if not is_checkout(Path(env)):
            raise CheckoutNotFound(f"MMRIG_ROOT={env} is not an mmrig checkout (no hil/bench/Makefile there)")
        return Path(env).resolve()
    here = PACKAGE.parents[1]
    if is_checkout(here):
        return here
    cwd = Path.cwd().resolve()
    for d in (cwd, *cwd.parents):
        if is_checkout(d):
            return d
    raise CheckoutNotFound(
        "the virtual bench needs an mmrig checkout (its bench program and firmware images are built there) or "
        "an mmrig installed with its bench data (pip install . from a checkout after `make build`): run from "
        "inside the checkout or set MMRIG_ROOT to it")


def checkout_layout(root: Path) -> Layout:
    bench = root / "hil/bench"
    return Layout("checkout", bench, bench / "build/mmbench", bench / "build/fixture.elf",
                  root / "profiler-fw/build/avr/profiler.elf", root / "executor/build/avr/executor.elf", root,
                  root / "profiler-fw/build/mcs51/profiler.ihx")


def ucsim_built(layout: Layout) -> bool:
    """ucsim's 8051 core is there (tools/ucsim.sh wrote build/ucsim/VERSION last): the bench program built in
    this checkout then has the 8051 profiler (hil/bench/Makefile). The installed package never has it."""
    return layout.root is not None and (layout.root / "build/ucsim/VERSION").is_file()


def has_package_data() -> bool:
    return (PACKAGE_DATA / "bench/Makefile").is_file()


def cache_dir() -> Path:
    env = os.environ.get("MMRIG_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "mmrig"


def sources_digest(d: Path) -> str:
    """A short digest of the bench's shipped sources: a cache directory per version of them."""
    h = hashlib.sha256()
    for f in sorted(p for p in d.rglob("*") if p.is_file()):
        h.update(f.relative_to(d).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:12]


def package_layout() -> Layout:
    built = cache_dir() / f"bench-{sources_digest(PACKAGE_DATA / 'bench')}"
    return Layout("package", built, built / "build/mmbench", built / "build/fixture.elf",
                  PACKAGE_DATA / "profiler.elf", PACKAGE_DATA / "executor.elf")


def locate() -> Layout:
    """Never raises: with nothing found the layout's source is "none" (and `find_root()` says why)."""
    try:
        return checkout_layout(find_root())
    except CheckoutNotFound:
        pass
    if has_package_data() and not os.environ.get("MMRIG_ROOT"):
        return package_layout()
    layout = checkout_layout(PACKAGE.parents[1])
    return Layout("none", layout.bench_dir, layout.bench_bin, layout.fixture_elf, layout.profiler_elf,
                  layout.executor_elf)
