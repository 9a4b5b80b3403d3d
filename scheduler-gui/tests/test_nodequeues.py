"""A session's inbox one node at a time (mmsched.link.nodequeues): a wait for one node's frame keeps the other
node's that came meanwhile, in their order; either node's next comes from what is waiting first; a drain takes what
has come without waiting; timeouts are on the endpoint's clock, and every item is taken through the endpoint."""

from __future__ import annotations

import queue
import threading
import time

from mmproto import Item, LinkDown
from mmsched.link.endpoint import Endpoint
from mmsched.link.nodequeues import NodeQueues


class CountingEndpoint(Endpoint):
    """The base endpoint's waiting on the host's clock, counting the items taken through it."""

    def __init__(self) -> None:
        self.taken = 0

    def next_item(self, inbox: "queue.Queue[Item]", timeout_s: float) -> Item | None:
        item = super().next_item(inbox, timeout_s)
        self.taken += item is not None
        return item

    def open(self, cfg):  # noqa: ANN001 - not used here
        raise NotImplementedError

    def identity(self) -> dict:
        return {}


def down(node: str, k: int) -> LinkDown:
    return LinkDown(node, float(k), f"#{k}")


def setup() -> tuple[CountingEndpoint, "queue.Queue[Item]", NodeQueues]:
    endpoint, inbox = CountingEndpoint(), queue.Queue()
    return endpoint, inbox, NodeQueues(endpoint, inbox, ("profiler", "executor"))


def test_a_wait_for_one_node_keeps_the_others_items_in_order() -> None:
    endpoint, inbox, nodes = setup()
    for item in (down("executor", 1), down("executor", 2), down("profiler", 3), down("executor", 4)):
        inbox.put(item)
    assert nodes.next("profiler", 1.0).error == "#3"
    assert [i.error for i in nodes.drain("executor")] == ["#1", "#2", "#4"]
    assert endpoint.taken == 4
    assert nodes.drain("executor") == [] and nodes.drain("nobody") == []


def test_either_nodes_next_comes_from_what_waits_first() -> None:
    _, inbox, nodes = setup()
    inbox.put(down("executor", 1))
    inbox.put(down("profiler", 2))
    assert nodes.next("profiler", 1.0).error == "#2"          # the executor's #1 waits in its queue
    inbox.put(down("profiler", 3))
    assert nodes.next_any(1.0).error == "#1"                  # what waited, before the inbox's next
    assert nodes.next_any(1.0).error == "#3"
    assert nodes.next_any(0.0) is None


def test_a_wait_ends_at_its_timeout_or_as_soon_as_its_node_speaks() -> None:
    _, inbox, nodes = setup()
    t0 = time.monotonic()
    assert nodes.next("executor", 0.1) is None
    assert 0.1 <= time.monotonic() - t0 < 1.0
    # the other node's item does not end the wait, its own does, at once (no polling)
    t0 = time.monotonic()                 # (before the timers start: their 0.15 s count from then)
    threading.Timer(0.05, inbox.put, (down("profiler", 1),)).start()
    threading.Timer(0.15, inbox.put, (down("executor", 2),)).start()
    assert nodes.next("executor", 5.0).error == "#2"
    assert 0.15 <= time.monotonic() - t0 < 1.0
    assert nodes.next("profiler", 0.0).error == "#1"
