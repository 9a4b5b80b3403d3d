"""A session's inbox seen one node at a time, for a reader that waits for a given node's frames (a HIL script's
Rig, mmhil.Rig) rather than handling both nodes' in the order they came (the run, run/runner.py).

The frames and link faults are taken from the inbox through the endpoint, as the run takes them: on the host's
clock a plain wait on the inbox, on a lockstep bench virtual time stepped frame by frame, each frame stamped with
the moment it was complete. What comes for the other node meanwhile waits in that node's queue, in its order.
"""

from __future__ import annotations

import queue
from collections import deque
from dataclasses import dataclass, field

from mmproto import Item

from .endpoint import Endpoint


@dataclass
class NodeQueues:
    endpoint: Endpoint
    inbox: "queue.Queue[Item]"
    nodes: tuple[str, ...]
    queues: dict[str, deque[Item]] = field(init=False)

    def __post_init__(self) -> None:
        self.queues = {n: deque() for n in self.nodes}

    def _take(self, timeout_s: float) -> bool:
        """The inbox's next item into its node's queue; False if none came within `timeout_s` (0: none waiting)."""
        item = self.endpoint.next_item(self.inbox, timeout_s)
        if item is None:
            return False
        self.queues[item.node].append(item)
        return True

    def next(self, node: str, timeout_s: float) -> Item | None:
        """`node`'s next frame or link fault; None if none came within `timeout_s` on the endpoint's clock."""
        waiting = self.queues[node]
        deadline = self.endpoint.clock() + timeout_s
        while not waiting:
            if not self._take(max(0.0, deadline - self.endpoint.clock())):
                return None
        return waiting.popleft()

    def next_any(self, timeout_s: float) -> Item | None:
        """The next item of either node: one already waiting in a node's queue (the profiler's first), else the
        inbox's next; None if none came within `timeout_s`."""
        for waiting in self.queues.values():
            if waiting:
                return waiting.popleft()
        return self.endpoint.next_item(self.inbox, max(0.0, timeout_s))

    def drain(self, node: str) -> list[Item]:
        """Every item of `node`'s that has come so far, without waiting (none for a node the session has no link
        to)."""
        while self._take(0.0):
            pass
        waiting = self.queues.get(node)
        if waiting is None:
            return []
        out = list(waiting)
        waiting.clear()
        return out


__all__ = ["NodeQueues"]
