"""A run's session with its nodes: one `mmproto.Link` per node, all feeding one inbox, and the scheduler's
reconnect policy. The link itself (port, reader thread, decoder, sequence numbers, HELLO) is mmproto's.

Every frame and link fault of both nodes goes to the one inbox, so the run loop sees them in the order
they happened.
"""

from __future__ import annotations

import queue
from dataclasses import dataclass, field
from typing import Any

from mmproto import Item, Link, Message

from .endpoint import Endpoint, Ports

RECONNECT_S = 2.0      # a vanished port is tried again this long, then the run gives up on it


@dataclass
class Session:
    endpoint: Endpoint
    inbox: "queue.Queue[Item]" = field(default_factory=queue.Queue)
    links: dict[str, Link] = field(default_factory=dict, init=False)
    reconnected: set[str] = field(default_factory=set, init=False)   # reopened, their HELLO not yet handled

    def open(self, ports: Ports) -> None:
        """Opens a link per node (the executor's only if there is one) and hands them to the endpoint.
        Raises LinkError if a port cannot be opened."""
        for node, url in (("profiler", ports.profiler), ("executor", ports.executor)):
            if url:
                self.links[node] = Link(node, url, self.inbox.put, baud=self.endpoint.baud,
                                        clock=self.endpoint.clock).open()
        self.endpoint.attach(self.links, self.inbox)

    def handshake(self, timeout_s: float = 5.0) -> None:
        for link in self.links.values():
            link.handshake(timeout_s, wait=self.endpoint.wait_until)

    def change_baud(self, baud: int) -> None:
        """Both links to `baud` (BAUD, SPEC.md 0x06), before the run's events begin. Raises LinkError."""
        for link in self.links.values():
            link.change_baud(baud, wait=self.endpoint.wait_until)

    def send(self, node: str, message: Message) -> float:
        return self.links[node].send(message)

    def has(self, node: str) -> bool:
        return node in self.links

    def alive(self, node: str) -> bool:
        link = self.links.get(node)
        return link is not None and link.vanished is None

    def reconnect(self, node: str) -> bool:
        """The policy: try the vanished port for RECONNECT_S (a board replugged, a bench restarted). The node's
        HELLO that answers the new handshake is not a reset (`answered_hello`)."""
        ok = self.links[node].reopen(RECONNECT_S, wait=self.endpoint.wait_until)
        if ok:
            self.reconnected.add(node)
        return ok

    def answered_hello(self, node: str) -> bool:
        """Whether a HELLO from `node` answers our reconnect's handshake (once), not a reset of the node."""
        if node in self.reconnected:
            self.reconnected.discard(node)
            return True
        return False

    def close(self) -> None:
        for link in self.links.values():
            link.close()

    # ---- what the sidecar and a live view show ---------------------------------------------
    def hellos(self) -> dict[str, dict[str, int] | None]:
        return {n: link.hello_dict() for n, link in self.links.items()}

    def counters(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for n, link in self.links.items():
            out[f"{n}_decoder"] = link.decoder.counters.as_dict()
            out[f"{n}_decoder_before_hello"] = link.before_hello
            if link.during_baud_change:
                out[f"{n}_decoder_during_baud_change"] = link.during_baud_change
            out[f"{n}_reconnects"] = link.reconnects
        return out

    def health(self) -> dict[str, Any]:
        return {n: link.health() for n, link in list(self.links.items())}


__all__ = ["RECONNECT_S", "Session"]
