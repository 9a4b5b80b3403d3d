"""What `mmrig sweep` asks of the Dask workers that run its points (docs/campaigns.md, "Large campaigns").

Dask's statistical profiler (on by default in every worker: a sample of the running task's stack every 10 ms, one
tree a second) keeps the last 1000 of those per-second trees twice over (`profile_history` and
`profile_keys_history`, `distributed.admin.low-level-log-length`). A sweep point's run goes through hundreds of
distinct lines of the scheduler and bench code, so each tree is large: measured on the 2-vCPU VM (2026-11-28),
a worker's heap grew by 21 MB over 60 points (390 s) and `dask worker` processes went from 135 to 584 MB RSS over
a 10,000-point campaign, all of it these trees (tracemalloc: distributed/profile.py, via Worker.trigger_profile);
with the profiler off the same worker stays flat and runs its points faster (nothing walks its deep stack
100 times a second). The worker keeps nothing of a point once its task is released.

`NoProfiler` turns it off in every worker of the cluster, those that join later too (a nanny's restarted worker):
the client registers it when it connects. The cost: the Dask dashboard's profile page of those workers stays
empty (their task stream and everything else are as before)."""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

PLUGIN_NAME = "mmrig-sweep-no-profiler"
PROFILER_CALLBACKS = ("profile", "profile-cycle")     # Worker.periodic_callbacks that sample and keep the trees


def profiler_off(worker: Any) -> None:
    """Stops WORKER's statistical profiler and drops the trees it kept. Best effort: a distributed without these
    attributes keeps its profiler (the campaign runs the same, its workers grow as before)."""
    from distributed import profile

    callbacks = getattr(worker, "periodic_callbacks", {})
    for name in PROFILER_CALLBACKS:
        pc = callbacks.pop(name, None)
        if pc is not None:
            pc.stop()
    for history in ("profile_history", "profile_keys_history", "profile_keys"):
        kept = getattr(worker, history, None)
        if kept is not None:
            kept.clear()
    if hasattr(worker, "profile_recent"):
        worker.profile_recent = profile.create()


class NoProfiler(WorkerPlugin):
    """Dask's statistical profiler off in the worker (module docstring: it kept ~450 MB per worker per campaign)."""

    name = PLUGIN_NAME
    idempotent = True      # registered again by every session on the same cluster: nothing to do twice

    def setup(self, worker: Any) -> None:
        profiler_off(worker)


def register(client: Any) -> bool:
    """NoProfiler on every worker of CLIENT's cluster, now and later; False if this distributed cannot."""
    try:
        client.register_plugin(NoProfiler(), name=PLUGIN_NAME)
    except Exception:  # noqa: BLE001 - an older distributed (register_worker_plugin) or a cluster refusing it
        try:
            client.register_worker_plugin(NoProfiler(), name=PLUGIN_NAME)
        except Exception:  # noqa: BLE001 - the campaign runs all the same, its workers grow as they did
            return False
    return True
