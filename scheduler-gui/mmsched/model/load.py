"""PC load during a run, by named condition (the paper's section 7.5; the idle / memory / disk / network of Liu
et al., "Implementing Hybrid Operating Systems with Two-Level Hardware Interrupts").

`mmrig run --load NAME` (RunConfig.load) names one condition; each is one stress-ng command, recorded in the
sidecar (load.condition, load.command):

    idle     nothing added
    cpu      stress-ng --cpu N --cpu-method matrixprod
    memory   stress-ng --vm 1 --vm-bytes 256M
    disk     stress-ng --hdd 1 --hdd-bytes 64M --temp-path TMPDIR
    network  stress-ng --sock 1 --sock-if lo --udp 1 --udp-if lo, in a network namespace of its own
    heavy    cpu + memory + disk in one stress-ng: the paper's section 7.5 heavy load, what `--load` alone runs
             (no namespace needed, so it runs wherever stress-ng does: containers and CI included)
    all      heavy + network in one stress-ng

each followed by --timeout Ts --quiet. N = the number of CPUs (every core busy, at the scheduler's own nice
level); one memory worker touching 256 MB continuously; one disk worker writing/reading/unlinking 64 MB files
in a temporary directory (removed afterwards); TCP (--sock) and UDP (--udp) traffic over the loopback.

Loopback only: stress-ng 0.15's --sock-if / --udp-if pick the client's address but its servers bind 0.0.0.0
(seen with `ss -ltnup`: ports 5000/tcp and 7000/udp open on every interface). So a condition with network
stressors runs stress-ng in a new network namespace (`unshare --net --map-root-user`, unprivileged user
namespaces, on by default on Debian 12) whose only interface is its own `lo`, brought up by `ip link set lo up`
before stress-ng is exec'd: nothing it sends or listens on can reach the host's or another machine's network.
Where such a namespace cannot be made, those conditions are refused (never run on the host's interfaces).

stress-ng runs in its own process group and is stopped with SIGTERM (then SIGKILL) to that group when the run
ends; --timeout is only a safety net. The scheduler's own process is left at normal priority: it is what the
load is for. (An endpoint that simulates hardware keeps itself above the load: mmhil.endpoint.raise_priority,
recorded in the sidecar as load.bench_priority.)
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from mmanalysis.schema import LOAD_CONDITIONS

CONDITIONS = LOAD_CONDITIONS           # defined once, in mmanalysis.schema
NETWORK_CONDITIONS = ("network", "all")
CONDITION_WORDS = {
    "idle": "nothing added",
    "cpu": "every core busy (matrix products)",
    "memory": "a worker touching 256 MB continuously",
    "disk": "a worker writing, reading, unlinking 64 MB files",
    "network": "TCP and UDP traffic on the loopback (own network namespace)",
    "heavy": "cpu + memory + disk at once (the paper's heavy load)",
    "all": "cpu + memory + disk + network at once",
}
# how `ip` brings the namespace's loopback up before stress-ng replaces the shell ("$0" "$@": stress-ng's argv)
NETNS_PREFIX = ["unshare", "--net", "--map-root-user", "sh", "-c", 'ip link set lo up && exec "$0" "$@"']


def condition(value: object) -> str:
    """A load condition's name from what RunConfig.load / a sidecar's config.load may hold: a name of
    CONDITIONS, or a bool (the format before named loads: True -> "heavy", what it ran; False -> "idle"), or
    None (idle)."""
    if value is None or value is False:
        return "idle"
    if value is True:
        return "heavy"
    if isinstance(value, str) and value in CONDITIONS:
        return value
    raise ValueError(f"--load must be one of {', '.join(CONDITIONS)}, not {value!r}")


def stressors(name: str, temp_path: Path, cpus: int | None = None) -> list[str]:
    """The stress-ng options of condition NAME (empty for idle)."""
    name = condition(name)
    n = cpus or os.cpu_count() or 2
    parts = {
        "cpu": ["--cpu", str(n), "--cpu-method", "matrixprod"],
        "memory": ["--vm", "1", "--vm-bytes", "256M"],
        "disk": ["--hdd", "1", "--hdd-bytes", "64M", "--temp-path", str(temp_path)],
        "network": ["--sock", "1", "--sock-if", "lo", "--udp", "1", "--udp-if", "lo"],
    }
    if name == "idle":
        return []
    if name in ("heavy", "all"):
        return [a for k in ("cpu", "memory", "disk", "network")[:3 if name == "heavy" else 4] for a in parts[k]]
    return parts[name]


def stress_command(name: str, duration_s: float, temp_path: Path, cpus: int | None = None) -> list[str]:
    """The whole argv of condition NAME ([] for idle): stress-ng, behind NETNS_PREFIX when it has network
    stressors."""
    opts = stressors(name, temp_path, cpus)
    if not opts:
        return []
    argv = ["stress-ng", *opts, "--timeout", f"{max(1, int(duration_s + 0.999))}s", "--quiet"]
    return [*NETNS_PREFIX, *argv] if condition(name) in NETWORK_CONDITIONS else argv


@functools.lru_cache(maxsize=None)
def _netns_problem() -> str | None:
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (util-linux / iproute2)"
    try:
        p = subprocess.run([*NETNS_PREFIX, "true"], stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot make a network namespace for the loopback-only network load: {exc}"
    if p.returncode != 0:
        why = (p.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
        return ("cannot make a network namespace for the loopback-only network load (unprivileged user "
                f"namespaces off?): {why}")
    return None


def unavailable(name: str) -> str | None:
    """Why condition NAME cannot run on this machine (one line), or None."""
    name = condition(name)
    if name == "idle":
        return None
    if shutil.which("stress-ng") is None:
        return "stress-ng is not installed (tools/setup.sh installs it: apt-get install stress-ng)"
    return _netns_problem() if name in NETWORK_CONDITIONS else None


# stress-ng gets SIGTERM when the thread that started it ends (PR_SET_PDEATHSIG through util-linux's setpriv, kept
# across exec): a run killed with SIGKILL or by the OOM killer cannot stop its load, which then ran on for its
# whole --timeout (a long run's hours). A run killed within a millisecond of starting its load died before setpriv
# had asked (seen in the test), so a shell between them goes on only if its parent is still the run's process.
# stress-ng's own workers follow their parent. The thread that starts a load lives until the load is stopped (the
# run's own thread; phasedload.py's switching thread waits for stop()). Not kept into the network conditions'
# namespace: unshare's new credentials clear it there.
def dies_with(parent_pid: int, argv: list[str]) -> list[str]:
    """ARGV run so that it gets SIGTERM when the thread of PARENT_PID that starts it ends."""
    return ["setpriv", "--pdeathsig", "TERM", "--", "sh", "-c", '[ "$PPID" = "$0" ] && exec "$@"', str(parent_pid),
            *argv]


@dataclass
class Load:
    duration_s: float
    name: str = "heavy"
    command: list[str] = field(default_factory=list, init=False)
    process: subprocess.Popen | None = field(default=None, init=False)
    _tmp: Path | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.name = condition(self.name)

    def start(self) -> "Load":
        if self.name == "idle":
            return self
        problem = unavailable(self.name)
        if problem:
            raise RuntimeError(problem)
        self._tmp = Path(tempfile.mkdtemp(prefix="mmrig-load."))
        self.command = stress_command(self.name, self.duration_s, self._tmp)
        self.process = subprocess.Popen(dies_with(os.getpid(), self.command), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
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
