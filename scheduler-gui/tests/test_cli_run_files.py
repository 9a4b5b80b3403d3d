"""Every file `mmrig run` writes, in a folder others may write to (a shared 1777 one): a name already taken --
by a link another user planted to a file of ours, a dangling one included -- is refused without --force, up
front, one line naming it, exit 2; with --force the run's own file replaces the link, and the file it pointed to
is never written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

MMRIG = [sys.executable, "-m", "mmrig"]
NOBODY = 65534

# file kind -> (the options that make the run write it, its name in the shared folder); OUT is "shared/lab"
KINDS = {
    "csv": ([], "lab.csv"),
    "json": ([], "lab.json"),
    "hist": (["--hist"], "lab.hist"),
    "hist FILE": (["--hist", "{shared}/latmus.txt"], "latmus.txt"),
    "junit": (["--junit", "{shared}/ci.xml"], "ci.xml"),
    "vcd": (["--trace"], "lab.vcd"),
    "exectrace": (["--trace"], "lab.exectrace"),
    "perfetto": (["--trace"], "lab.perfetto-trace"),
}


def plant(link: Path, target: Path) -> None:
    """The attack: LINK -> TARGET, as another user planted it (as root, the link is given to nobody)."""
    link.symlink_to(target)
    if os.getuid() == 0:
        os.lchown(link, NOBODY, NOBODY)


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o1777)
    return d


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    v = tmp_path / "mine" / "victim.txt"
    v.parent.mkdir()
    v.write_text("precious\n")
    return v


def options(kind: str, shared: Path) -> list[str]:
    return [a.replace("{shared}", str(shared)) for a in KINDS[kind][0]]


@pytest.mark.parametrize("dangling", [False, True], ids=["link to a file", "dangling link"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_taken_name_is_refused_up_front_naming_the_file(tmp_path: Path, shared: Path, victim: Path, kind: str,
                                                          dangling: bool) -> None:
    target = tmp_path / "mine" / "nowhere" if dangling else victim
    taken = shared / KINDS[kind][1]
    plant(taken, target)
    # MMRIG_ROOT names no checkout: a bench looked for before the refusal would fail with that instead
    proc = subprocess.run([*MMRIG, "run", "--unpaced", "-q", "-l", "5", "-o", str(shared / "lab"),
                           *options(kind, shared)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MMRIG_ROOT": str(tmp_path / "no-checkout")})
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mmrig run: ") and "Traceback" not in proc.stderr, proc.stderr
    assert f"{taken} exists; --force to overwrite" in lines[0]
    assert "checkout" not in proc.stderr                       # refused before any bench was looked for
    assert victim.read_text() == "precious\n" and not os.path.lexists(tmp_path / "mine" / "nowhere")
    assert sorted(p.name for p in shared.iterdir()) == [taken.name]     # nothing else written, the link left


def test_forced_every_planted_link_is_replaced_by_the_runs_own_file_and_no_victim_written(
        tmp_path: Path, shared: Path, victim: Path) -> None:
    from mmhil.bench import ensure_built
    ensure_built()
    kinds = [k for k in KINDS if k != "hist FILE"]          # --hist writes lab.hist here, not a FILE of its own
    for kind in kinds:
        plant(shared / KINDS[kind][1], victim)
    proc = subprocess.run([*MMRIG, "run", "--unpaced", "-q", "-l", "5", "-o", str(shared / "lab"), "--force",
                           "--hist", "--trace", "--junit", str(shared / "ci.xml")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert victim.read_text() == "precious\n"
    for kind in kinds:
        f = shared / KINDS[kind][1]
        assert not f.is_symlink() and f.is_file() and f.stat().st_size > 0, kind
    assert sorted(p.name for p in shared.iterdir() if p.name.endswith(".tmp")) == []
