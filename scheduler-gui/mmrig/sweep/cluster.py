"""The Dask cluster `mmrig sweep`'s lockstep points run on (docs/campaigns.md): reaching it (a local cluster of
processes, the user's alone: TLS with a temporary certificate that exists only in the memory of the sweep and its
workers, so another local user who finds its port cannot connect and run code as this user; or a running scheduler
at `--cluster`, secured as docs/campaigns.md says), sending it the points several to a task
(mmrig.sweep.task.run_points), taking each task's results as they come, and watching it meanwhile: a cluster
with no worker left, or a scheduler that stopped answering, for `lost_after_s` ends the campaign (ClusterLost).
Knows nothing of the campaign folder: mmrig.sweep.campaign hands in the points, their fields and what to do with
each result."""

from __future__ import annotations

import os
import queue
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from mmrig.sweep.task import ATTEMPT_TOPIC

RunPoint = Callable[..., dict]


class Point(Protocol):
    """What this module needs of a campaign's point (mmrig.sweep.campaign.Point): its name."""
    @property
    def name(self) -> str: ...


class ClusterLost(Exception):
    """The Dask cluster has no worker left, or its scheduler stopped answering: the campaign ends, exit 4."""


class ClusterUnreachable(Exception):
    """The cluster cannot be reached, or has no worker, before the campaign begins (one line; nothing written)."""


@dataclass
class Connection:
    """A Dask client and, for a local cluster, the cluster itself; `desc` goes into campaign.json."""
    client: Any
    local: Any
    desc: dict[str, Any]
    address: str
    attempts: dict[str, int] = field(default_factory=dict)   # point name -> starts seen (ATTEMPT_TOPIC)

    def close(self) -> None:
        """Best effort and bounded: a scheduler that is gone must not hang the end of the campaign. A local
        cluster's workers and nannies are told to log nothing first: one that heartbeats into the scheduler
        already closing logs the failure with its traceback (seen on a loaded machine, a refused campaign's end),
        words about our own closing, not a fault of the sweep."""
        if self.local is not None and self.client is not None:
            for nanny in (False, True):
                try:
                    self.client.run(_quiet_distributed, nanny=nanny, on_error="ignore")
                except Exception:  # noqa: BLE001 - a worker gone already says nothing anyway
                    pass
            _quiet_distributed()
        for thing in (self.client, self.local):
            if thing is None:
                continue
            try:
                thing.close(timeout=5)
            except Exception:  # noqa: BLE001 - closing what may be gone already
                pass


def _quiet_distributed() -> None:
    """distributed's loggers in this process at CRITICAL (the cluster is being closed on purpose)."""
    import logging

    logging.getLogger("distributed").setLevel(logging.CRITICAL)


# how long a --cluster scheduler has to answer the first connection (Dask retries a refused one until then)
CONNECT_TIMEOUT_S = 10.0


def connect(workers: int | None, cluster: str | None) -> Connection:
    """The Dask cluster the lockstep points run on: the scheduler at `cluster` (it must answer within
    CONNECT_TIMEOUT_S and have a worker) or a local cluster of `workers` processes. ClusterUnreachable if not: nothing has been written."""
    import logging

    from distributed import Client, LocalCluster

    if cluster:
        # Client() takes the TLS credentials of the Dask configuration (docs/campaigns.md) for a tls:// address
        try:
            client = Client(cluster, timeout=f"{CONNECT_TIMEOUT_S}s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise ClusterUnreachable(f"--cluster: cannot reach the Dask scheduler at {cluster}: "
                             f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
        n = _workers(client)
        if not n:
            client.close(timeout=5)
            raise ClusterUnreachable(f"--cluster: the Dask scheduler at {cluster} has no workers "
                             f"(start some: dask worker {cluster}; docs/campaigns.md)")
        conn = Connection(client, None, {"kind": "remote", "address": cluster, "workers": n,
                                         "secured": cluster.startswith("tls://")}, cluster)
    else:
        from distributed.security import Security

        n = workers or os.cpu_count() or 1
        # Plain TCP on 127.0.0.1 let any local user read the port from /proc/net/tcp, connect and run code as
        # the user who sweeps (client.run_on_scheduler). A self-signed key and certificate made now, held in
        # memory only (handed to the workers through their nannies' pipes, never written to disk), and mutual
        # TLS on every listener (scheduler, nannies, workers): a peer without them is refused at the handshake.
        security = Security.temporary()
        local = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                             dashboard_address=None, silence_logs=logging.ERROR, security=security)
        client = Client(local, security=security)
        conn = Connection(client, local, {"kind": "local", "address": local.scheduler_address, "workers": n,
                                          "threads_per_worker": 1, "secured": True}, local.scheduler_address)

    def attempt(event: Any) -> None:       # a point began (mmrig.sweep.task logs it): count its starts
        msg = event[1] if isinstance(event, (tuple, list)) and len(event) == 2 else event
        point = msg.get("point") if isinstance(msg, dict) else None
        if point is not None:
            conn.attempts[str(point)] = conn.attempts.get(str(point), 0) + 1

    try:
        client.subscribe_topic(ATTEMPT_TOPIC, attempt)
    except Exception:  # noqa: BLE001 - without it a re-run point shows runs 1, as before
        pass
    from mmrig.sweep.workers import register

    register(client)        # Dask's statistical profiler off in the workers: it kept ~450 MB each (sweep/workers.py)
    return conn


def unsecured_warning(cluster: str) -> str | None:
    """What to say before using the scheduler at CLUSTER when it is not TLS (None: it is)."""
    if cluster.startswith("tls://"):
        return None
    return (f"WARNING: {cluster} is not TLS: anyone who can reach that port can run code as the user of its workers "
            "(docs/campaigns.md, 'Securing a shared cluster')")


def _workers(client: Any, timeout: float = 5.0) -> int | None:
    """How many workers the scheduler has now, or None when it does not answer within `timeout` (gone)."""
    if client.status != "running":
        return None
    try:
        # n_workers=0: the count without every worker's description (the whole of it cost the client ~4 ms a call)
        info = client.sync(client.scheduler.identity, n_workers=0, callback_timeout=timeout)
    except Exception:  # noqa: BLE001 - OSError, a closed comm, a timeout: the scheduler does not answer
        return None
    n = info.get("n_workers")
    return int(n) if n is not None else len(info.get("workers") or {})


def scheduler_lost(exc: BaseException) -> bool:
    """EXC is what Dask gives a future it cancelled because the client lost its scheduler (not a task that
    failed): distributed's FutureCancelledError with reason "scheduler-connection-lost"."""
    try:
        from distributed.client import FutureCancelledError
    except ImportError:      # a distributed older than the class: the reason is at most in the message
        return "CancelledError" in type(exc).__name__ and "connection-lost" in str(exc)
    return isinstance(exc, FutureCancelledError) and exc.reason == "scheduler-connection-lost"


# How long the client blocks waiting for a point before it looks at a stop request and the cluster's health.
# It blocks on the points' done-callbacks rather than polling: a poll every 20 ms cost the client ~10 ms of CPU
# a second of wall time (measured 2026-11-28), 3 to 14 ms a point depending on the points' pace.
WAIT_S = 0.1
HEALTH_S = 1.0          # the scheduler asked for its workers this often while no point comes in ...
HEALTH_BUSY_S = 10.0    # ... and this often while points do (a point that came in says the cluster is there)
# Points go to the cluster several to a task (mmrig.sweep.task.run_points: each task costs the client a Dask
# round trip, ~5 ms of its CPU, which one point a task paid for every point): as many as take about TASK_S of a
# worker's time, at most CHUNK_MAX, and few enough that the points left still spread over every worker. The
# first tasks are one point each: the points' own time is not known before one comes back.
TASK_S = 5.0
CHUNK_MAX = 32


def chunk_size(point_s: float | None, left: int, workers: int) -> int:
    """How many points the next task runs: `point_s` a point's wall time on a worker (None: not known yet),
    `left` the points not yet submitted, `workers` the cluster's workers."""
    if point_s is None:
        return 1
    by_time = int(TASK_S / max(point_s, 1e-3))
    by_share = left // (4 * max(1, workers))
    return max(1, min(CHUNK_MAX, by_time, by_share))


def run_on_cluster(todo: list[Point], run_point: RunPoint, conn: Connection, *, name: str,
                   run_fields: Callable[[Point], dict[str, Any]], profiler_kind: str,
                   finished: Callable[..., None], log: Callable[[str], None], stop_requested: Callable[[], bool],
                   lost_after_s: float) -> None:
    """The lockstep points `todo` (each task's fields from `run_fields`) as Dask tasks of a few points each
    (`chunk_size`), 2 tasks per worker in flight (at least 4), `finished(point, result, attempts)` called for each
    point as its task comes in: each task's points' files written and its future released as it comes, so neither the client nor
    the cluster holds more than that. The cluster is watched while waiting: ClusterLost after `lost_after_s`
    with no worker or no answer."""
    from mmrig.sweep.task import run_points

    client = conn.client
    log(f"mmrig sweep: {len(todo)} lockstep points on {conn.desc['workers']} Dask worker"
        f"{'s' if conn.desc['workers'] != 1 else ''} ({conn.desc['kind']} cluster {conn.address})")
    pending = list(reversed(todo))                 # popped from the end: the points in the plan's order
    futures: dict[Any, list[Point]] = {}
    done: "queue.Queue[Any]" = queue.Queue()       # futures that finished (their done-callback put them here)
    n_workers = int(conn.desc["workers"])
    session_tag = f"{name}-{time.time_ns()}"
    point_s: float | None = None                   # a point's wall time on a worker, as the last task's said

    def top_up() -> None:
        while len(futures) < max(4, 2 * n_workers) and pending:
            k = chunk_size(point_s, len(pending), n_workers)
            chunk = [pending.pop() for _ in range(min(k, len(pending)))]
            items = [(run_fields(p), p.name) for p in chunk]
            f = client.submit(run_points, run_point, items, paced=False, profiler_kind=profiler_kind,
                              key=f"mmrig-sweep-{session_tag}-{chunk[0].name}", pure=False)
            futures[f] = chunk
            f.add_done_callback(done.put)

    checked = time.monotonic()
    healthy = checked                    # the last time the cluster had a worker and its scheduler answered
    try:
        top_up()
        while futures:
            if stop_requested():
                raise KeyboardInterrupt("stop requested")
            batch = []
            try:
                batch.append(done.get(timeout=WAIT_S))     # a signal interrupts the wait (KeyboardInterrupt)
                while True:
                    batch.append(done.get_nowait())
            except queue.Empty:
                pass
            for f in batch:
                chunk = futures.pop(f, None)
                if chunk is None:
                    continue
                try:
                    results = f.result()
                except Exception as exc:  # noqa: BLE001 - a task that raised: its points failed, the rest go on
                    if scheduler_lost(exc):
                        # Dask cancels what was in flight when it loses its scheduler, sometimes before the watch
                        # below notices: the points did not fail, the cluster went (exit 4, the points left to do)
                        left = len(chunk) + sum(len(c) for c in futures.values())
                        raise ClusterLost(f"the Dask scheduler at {conn.address} was lost: {left} "
                                          f"point{'s' if left != 1 else ''} in flight cancelled") from exc
                    why = {"error": f"task raised {type(exc).__name__}: "
                                    f"{str(exc).splitlines()[0] if str(exc) else ''}"}
                    results = [why] * len(chunk)
                f.release()
                del f
                walls = [float(g["wall_s"]) for g in results if g.get("wall_s") is not None]
                if walls:
                    point_s = sum(walls) / len(walls)
                for p, got in zip(chunk, results):
                    finished(p, got, conn.attempts.pop(p.name, 1))
                del results
                healthy = time.monotonic()
            del batch
            top_up()
            now = time.monotonic()
            if now - checked >= (HEALTH_S if now - healthy >= HEALTH_S else HEALTH_BUSY_S):
                checked = now
                n = _workers(client, timeout=min(5.0, max(1.0, lost_after_s / 2)))
                if n:
                    healthy, n_workers = time.monotonic(), n
                elif time.monotonic() - healthy >= lost_after_s:
                    what = (f"no Dask worker left for {lost_after_s:g} s" if n == 0 else
                            f"the Dask scheduler at {conn.address} has not answered for {lost_after_s:g} s")
                    flying = sum(len(c) for c in futures.values())
                    raise ClusterLost(f"{what}: {flying} point{'s' if flying != 1 else ''} in flight "
                                      f"and {len(pending)} not started are left for the next run")
                top_up()
    except (KeyboardInterrupt, ClusterLost):
        if _workers(client, timeout=1.0) is not None:
            for f in list(futures):
                f.cancel()
        raise
