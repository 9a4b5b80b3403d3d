"""Heavy PC load for the paper's section 7.5, and keeping the virtual bench above it.

The load (documented command, recorded in the sidecar):

    stress-ng --cpu N --cpu-method matrixprod --vm 1 --vm-bytes 256M --hdd 1 --hdd-bytes 64M
              --temp-path TMPDIR --timeout Ts --quiet

N = the number of CPUs (every core busy with the scheduler's Python at the same nice level), one
memory worker (256 MB, touching pages continuously), one disk worker (write/read/unlink 64 MB files
in a temporary directory), like the paper's "many applications concurrently, as well as background
disk access". stress-ng runs in its own process group and is stopped with SIGTERM (then SIGKILL) to
that group when the run ends; --timeout is only a safety net.

The scheduler's own process is left at normal priority: it is what the load is for. (An endpoint that
simulates hardware keeps itself above the load: mmhil.endpoint.raise_priority, recorded in the sidecar
as load.bench_priority.)
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path


def stress_command(duration_s: float, temp_path: Path, cpus: int | None = None) -> list[str]:
    n = cpus or os.cpu_count() or 2
    return ["stress-ng", "--cpu", str(n), "--cpu-method", "matrixprod", "--vm", "1", "--vm-bytes", "256M",
            "--hdd", "1", "--hdd-bytes", "64M", "--temp-path", str(temp_path),
            "--timeout", f"{max(1, int(duration_s + 0.999))}s", "--quiet"]


@dataclass
class Load:
    duration_s: float
    command: list[str] = field(default_factory=list, init=False)
    process: subprocess.Popen | None = field(default=None, init=False)
    _tmp: Path | None = field(default=None, init=False)

    def start(self) -> "Load":
        if shutil.which("stress-ng") is None:
            raise RuntimeError("stress-ng is not installed (tools/setup.sh installs it: apt-get install stress-ng)")
        self._tmp = Path(tempfile.mkdtemp(prefix="mmrig-load."))
        self.command = stress_command(self.duration_s, self._tmp)
        self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
        return self

    def stop(self) -> None:
        p = self.process
        if p is not None and p.poll() is None:
            for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    p.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if p is not None:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # stragglers of the group
            except (ProcessLookupError, PermissionError):
                pass
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> "Load":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
