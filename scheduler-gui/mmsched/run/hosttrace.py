"""The PC's own scheduler trace for a run's span (`mmrig run --trace-host`, docs/explain.md): the kernel's scheduling,
interrupt, softirq and workqueue events on every CPU, on CLOCK_MONOTONIC (the run's own clock), recorded by
trace-cmd into a tracefs instance of its own and read back later with `trace-cmd report` (mmanalysis.explain).

trace-cmd, not a reader of our own: the ring buffer's binary layout is the kernel's and trace-cmd's to keep.
Bounded: `-m KB` keeps at most about KB per CPU in the file (trace-cmd switches between two halves), so the file
holds the last few seconds of each CPU, not the whole run (the sidecar's `host_trace.bound_s`; docs/explain.md has
the measured rate). `/proc/stat`'s steal time is sampled at the start and the end: the hypervisor's share, which a
guest's trace cannot show but as silence.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmanalysis.safefiles import move_into

TRACEFS = Path("/sys/kernel/tracing")
EVENTS = ("sched:sched_switch", "sched:sched_wakeup", "sched:sched_waking", "irq:irq_handler_entry",
          "irq:irq_handler_exit", "irq:softirq_entry", "irq:softirq_exit", "workqueue:workqueue_execute_start",
          "workqueue:workqueue_execute_end")
# per CPU, before trace-cmd compresses the file: a 1 kHz normal run on the 2-vCPU VM beside others' paced benches
# wrote 5 to 10 MB a second on a CPU of these events (16 MB kept 1 to 3 s: docs/explain.md), so 64 MB keeps the
# last ~6 to 12 s of each CPU; the file is about a fifth of that
DEFAULT_BUFFER_KB = 65536
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 120.0


class HostTraceError(Exception):
    """The host trace cannot be recorded or was lost: one line, for the entry point to print."""


def host_path(out: Path | str) -> Path:
    """NAME.host.dat beside the run's NAME.csv."""
    from ..verdict.export import run_stem

    stem = run_stem(out)
    return stem.with_name(stem.name + ".host.dat")


def refusal(tracefs: Path = TRACEFS) -> str | None:
    """Why the host trace cannot be recorded here (None: it can). As root, a tracefs not mounted is mounted."""
    if shutil.which("trace-cmd") is None:
        return "trace-cmd is not installed (Debian: apt-get install trace-cmd; tools/setup.sh --system)"
    if not (tracefs / "instances").is_dir() and os.geteuid() == 0:
        subprocess.run(["mount", "-t", "tracefs", "nodev", str(tracefs)], capture_output=True, timeout=10)
    if not (tracefs / "instances").is_dir():
        return f"no tracefs at {tracefs} (as root: mount -t tracefs nodev {tracefs})"
    if not os.access(tracefs / "instances", os.W_OK):
        return f"{tracefs} is not writable by this user: run as root, or let the user write the tracefs"
    return None


def steal_s() -> dict[str, float]:
    """Each CPU's steal time so far (/proc/stat, the 8th number of a `cpuN` line), in seconds."""
    hz = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    for line in Path("/proc/stat").read_text().splitlines():
        parts = line.split()
        if parts and parts[0].startswith("cpu") and len(parts) > 8:
            out[parts[0]] = int(parts[8]) / hz
    return out


def trace_cmd_version() -> str | None:
    done = subprocess.run(["trace-cmd", "--version"], capture_output=True, text=True, timeout=10)
    for line in (done.stdout + done.stderr).splitlines():
        if line.startswith("trace-cmd version"):
            return line.split()[2]
    return None


@dataclass
class HostTrace:
    """One recording: started before the run's first event, stopped after its last; `stop` puts the file at `dest`
    and returns the sidecar's `host_trace`."""

    dest: Path
    buffer_kb: int = DEFAULT_BUFFER_KB
    tracefs: Path = TRACEFS
    instance: str = field(default_factory=lambda: f"mmrig-{os.getpid()}")
    _proc: subprocess.Popen[bytes] | None = field(default=None, init=False)
    _dir: Path | None = field(default=None, init=False)
    _start: dict[str, Any] = field(default_factory=dict, init=False)

    @property
    def _tmp_file(self) -> Path:
        assert self._dir is not None
        return self._dir / "host.dat"

    def start(self) -> None:
        """trace-cmd record into a tracefs instance of its own (the top buffer, which others may use, is left
        alone), returning once the instance traces. -d: no function tracer, and trace-cmd then leaves
        /proc/sys/kernel/ftrace_enabled alone (read-only in a container); -k: no reset of the instance's filter
        files at the end (EPERM in a container), the instance is removed whole instead."""
        self._dir = Path(tempfile.mkdtemp(prefix="mmrig-hosttrace."))
        cmd = ["trace-cmd", "record", "-q", "-d", "-k", "-B", self.instance, "-C", "mono", "-m", str(self.buffer_kb),
               *(a for e in EVENTS for a in ("-e", e)), "-o", str(self._tmp_file)]
        self._start = {"command": cmd, "steal_s": steal_s(), "mono_s": time.monotonic()}
        self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=open(self._dir / "stderr", "wb"), cwd=self._dir, start_new_session=True)
        on = self.tracefs / "instances" / self.instance / "tracing_on"
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise HostTraceError(f"trace-cmd record ended at once: {self._stderr()}")
            try:
                if on.read_text().strip() == "1":
                    return
            except OSError:
                pass
            time.sleep(0.02)
        self.abort()
        raise HostTraceError(f"trace-cmd record did not start tracing within {START_TIMEOUT_S:g} s")

    def _stderr(self) -> str:
        try:
            text = (self._dir / "stderr").read_text(errors="replace").strip() if self._dir else ""
        except OSError:
            text = ""
        return " ".join(text.split()) or "no message"

    def _end_process(self) -> int | None:
        if self._proc is None:
            return None
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGINT)
            try:
                self._proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        return self._proc.returncode

    def _remove_instance(self) -> None:
        try:
            os.rmdir(self.tracefs / "instances" / self.instance)
        except OSError:
            pass

    def abort(self) -> None:
        """Ends the recording and throws it away (a run that was refused or failed)."""
        self._end_process()
        self._remove_instance()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)

    def stop(self) -> dict[str, Any]:
        """Ends the recording, moves the file to `dest` (mmanalysis.safefiles.move_into: never through a planted
        link) and returns the sidecar's `host_trace`."""
        end_mono = time.monotonic()
        steal_end = steal_s()
        code = self._end_process()
        self._remove_instance()
        try:
            if code != 0 or not self._tmp_file.exists():
                raise HostTraceError(f"trace-cmd record failed (exit {code}): {self._stderr()}")
            move_into(self._tmp_file, self.dest)
        finally:
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)
        data = self.dest.read_bytes()
        steal0 = self._start["steal_s"]
        return {"file": self.dest.name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                "tool": f"trace-cmd {trace_cmd_version() or '?'}", "clock": "mono (CLOCK_MONOTONIC)",
                "buffer_kb_per_cpu": self.buffer_kb, "events": list(EVENTS),
                "start_mono_s": round(self._start["mono_s"], 6), "end_mono_s": round(end_mono, 6),
                "steal_s": {cpu: round(steal_end.get(cpu, 0.0) - s, 3) for cpu, s in steal0.items()},
                "command": self._start["command"]}
