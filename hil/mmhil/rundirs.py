"""The benches' own run folders (/tmp/mmbench.XXXXXXXX, made by Bench.start or by mmbench itself): who they belong
to, and the removal of those whose bench and owner are gone.

A bench ends with its parent (mmbench --parent-fd, hil/bench/parent.c) and then removes the folder its parent
made for it; a folder whose bench never came up (or was itself killed) is removed by Bench.close, which a process
that was killed never ran. So each folder says whose it is: `owner.pid` (the
process that made it for its bench, written by Bench.start at once) and `ready` (the bench's own pid, written by
mmbench once it is up, removed when it ends). A later Bench.start with a folder of its own calls
`sweep_stale_run_dirs`: a folder of this user whose owner is not alive and whose bench is not a live mmbench is
removed. A folder with neither record is left alone: nothing shows it is a bench's that is gone."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

PREFIX = "mmbench."
OWNER_FILE = "owner.pid"
# A folder younger than this is left alone whatever it holds: one being set up (made, its records not yet
# written; a record being renamed into place) is not a dead bench's.
STALE_AFTER_S = 5.0


def record_owner(folder: Path) -> None:
    """FOLDER was made by this process for its bench: say so before anything else is in it."""
    from mmanalysis.safefiles import atomic_write     # light: imported by Bench.start's side only

    atomic_write(Path(folder) / OWNER_FILE, f"{os.getpid()}\n".encode(), fsync=False)


def _proc_state(pid: int) -> tuple[str, str] | None:
    """(comm, state letter) of PID from /proc, or None when there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    except OSError:
        return ("?", "?")               # there, but not ours to read: taken as alive
    comm = text[text.find("(") + 1:text.rfind(")")]
    return comm, text[text.rfind(")") + 1:].split()[0]


def _alive(pid: int | None, comm: str | None = None) -> bool:
    """PID is a running process (a zombie has ended), of command name COMM when given."""
    if pid is None or pid <= 0:
        return False
    st = _proc_state(pid)
    if st is None:
        if Path("/proc/self/stat").exists():
            return False
        try:                            # no /proc: ask the kernel whether the pid exists at all
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return comm is None
    return st[1] not in ("Z", "X") and (comm is None or st[0] in (comm, "?"))


def _owner_pid(folder: Path) -> int | None:
    try:
        return int((folder / OWNER_FILE).read_text().strip())
    except (OSError, ValueError):
        return None


def _bench_pid(folder: Path) -> int | None:
    try:
        pid = json.loads((folder / "ready").read_text()).get("pid")
    except (OSError, ValueError, AttributeError):
        return None
    return pid if isinstance(pid, int) else None


def stale(folder: Path, now: float | None = None) -> bool:
    """FOLDER is a bench's run folder of this user whose owner and bench are both gone (see the module)."""
    try:
        st = folder.lstat()
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        return False                    # a symlink, a file, another user's: never ours to remove
    if (time.time() if now is None else now) - st.st_mtime < STALE_AFTER_S:
        return False
    owner, bench = _owner_pid(folder), _bench_pid(folder)
    if owner is None and bench is None:
        return False
    return not _alive(owner) and not _alive(bench, "mmbench")


def sweep_stale_run_dirs(where: Path | str | None = None) -> list[Path]:
    """Removes the mmbench.* folders in WHERE (default: the temporary directory, where Bench and mmbench make
    them) whose bench and owner are gone; returns those it removed. Never raises: a folder it cannot remove
    stays."""
    removed = []
    for folder in sorted(Path(where or tempfile.gettempdir()).glob(PREFIX + "*")):
        if stale(folder):
            shutil.rmtree(folder, ignore_errors=True)     # (fd-based: a symlink inside is removed, not followed)
            if not folder.exists():
                removed.append(folder)
    return removed
