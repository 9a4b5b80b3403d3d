"""A run's session with its nodes: one `mmproto.Link` per node, all feeding one inbox, and the scheduler's
reconnect policy. The link itself (port, reader thread, decoder, sequence numbers, HELLO) is mmproto's.

Every frame and link fault of both nodes goes to the one inbox, so the run loop sees them in the order
they happened.
"""

from __future__ import annotations

import queue
from dataclasses import dataclass, field
from typing import Any

from mmproto import Item, Link, Message, Written
from mmproto.link import HELLO_LISTEN_S

from . import nativereader
from .endpoint import Endpoint, Ports

RECONNECT_S = 2.0      # a vanished port is tried again this long, then the run gives up on it
# ... and this long where the open resets the node: the link listens HELLO_LISTEN_S for its boot HELLO first
RECONNECT_RESET_S = RECONNECT_S + HELLO_LISTEN_S
# how long the endpoint may take to tell whether a vanished port can come back at all (a bench's ptys close as it
# dies, a moment before it can be seen to have ended)
REFUSAL_WAIT_S = 0.2


@dataclass
class Session:
    endpoint: Endpoint
    inbox: "queue.Queue[Item]" = field(default_factory=queue.Queue)
    links: dict[str, Link] = field(default_factory=dict, init=False)
    # reopened nodes: how many of their HELLOs still to be handled answer the reopen's handshake (and BAUD)
    answers: dict[str, int] = field(default_factory=dict, init=False)
    reset_on_open: bool = field(default=False, init=False)            # Ports.reset_on_open of the open ports
    # nodes whose vanished port was not tried again, and why (Endpoint.reopen_refusal)
    refusals: dict[str, str] = field(default_factory=dict, init=False)

    def open(self, ports: Ports, reader_priority: int | None = None) -> None:
        """Makes the links (`prepare`) and opens them (`open_links`)."""
        self.prepare(ports, reader_priority)
        self.open_links()

    def prepare(self, ports: Ports, reader_priority: int | None = None) -> None:
        """Makes a link per node (the executor's only if there is one), not yet open: a HIL script's Rig has its
        links from the start and opens them when told (mmhil.Rig). With `ports.reset_on_open` the links listen for
        the nodes' boot HELLO before they ask (Link.reset_on_open). Where the run's clock is the host's, each port
        is read by a C thread (nativereader.py: every frame stamped as it came, not when the interpreter got to
        it), at `reader_priority` (SCHED_FIFO; None: as the process is)."""
        self.reset_on_open = ports.reset_on_open
        reader = nativereader.reader_factory(reader_priority) if self.endpoint.wall_clock else None
        self.links = {node: Link(node, url, self.inbox.put, baud=self.endpoint.baud, clock=self.endpoint.clock,
                                 reset_on_open=ports.reset_on_open, reader=reader)
                      for node, url in (("profiler", ports.profiler), ("executor", ports.executor)) if url}

    def open_links(self) -> None:
        """Opens the links `prepare` made, one after the other, and hands them to the endpoint. Raises LinkError if
        a port cannot be opened (the links opened before it stay open: `close` closes them)."""
        for link in self.links.values():
            link.open()
        self.endpoint.attach(self.links, self.inbox)

    def handshake(self, timeout_s: float = 5.0) -> None:
        """Each node's HELLO, one after the other. Where the open reset both nodes, the second one's boot
        HELLO may come while the first is listened to: its link keeps it (Link.handshake)."""
        for link in self.links.values():
            link.handshake(timeout_s, wait=self.endpoint.wait_until)

    def change_baud(self, baud: int) -> None:
        """Both links to `baud` (BAUD, SPEC.md 0x06), before the run's events begin. Raises LinkError."""
        for link in self.links.values():
            link.change_baud(baud, wait=self.endpoint.wait_until)

    def send(self, node: str, message: Message) -> float:
        return self.links[node].send(message)

    def send_frame(self, node: str, message: Message) -> Written:
        """As `send`, and says where in the port's byte stream and when the frame was written."""
        return self.links[node].send_frame(message)

    def pending(self) -> bool:
        """Whether frames already came that the run has not handled: waiting in the inbox (the endpoint's say), or
        not yet handed over by a link's reader."""
        return self.endpoint.has_pending(self.inbox) or any(link.unread() for link in self.links.values())

    def has(self, node: str) -> bool:
        return node in self.links

    def alive(self, node: str) -> bool:
        link = self.links.get(node)
        return link is not None and link.vanished is None

    def reconnect(self, node: str) -> bool:
        """The policy: try the vanished port for RECONNECT_S (a board replugged, a bench restarted). The node's
        HELLO that answers the new handshake is not a reset (`answered_hello`). Where opening the port
        resets the node (`reset_on_open`, tried RECONNECT_RESET_S) the reopen itself reset it: its schedule
        list and mode are gone, and the caller must treat a reconnect as the node's reset (the HELLOs the
        reopen read are then not counted again as resets). A port the endpoint says cannot come back is not
        tried at all (`refusals`): a dead bench's links lead to pty numbers the kernel gives to other ptys."""
        if self._refused(node, wait_s=REFUSAL_WAIT_S):
            return False
        link = self.links[node]
        give_up = lambda: self._refused(node)      # noqa: E731 - asked again before every try
        if self.reset_on_open:
            before = link.hellos_in
            ok = link.reopen(RECONNECT_RESET_S, wait=self.endpoint.wait_until, give_up=give_up)
            if ok:
                # every HELLO the reopen read (the boot HELLO or the answer that stands for it, the one at the
                # run's rate after BAUD) is accounted for by the reset the caller records (Recovery.link_fault)
                self.answers[node] = link.hellos_in - before
            return ok
        ok = link.reopen(RECONNECT_S, wait=self.endpoint.wait_until, give_up=give_up)
        if ok:
            self.answers[node] = 1
        return ok

    def _refused(self, node: str, wait_s: float = 0.0) -> bool:
        why = self.endpoint.reopen_refusal(node, wait_s)
        if why is not None:
            self.refusals[node] = why
        return why is not None

    def answered_hello(self, node: str) -> bool:
        """Whether a HELLO from `node` answers our reconnect's handshake (once), not a reset of the node."""
        if self.answers.get(node, 0) > 0:
            self.answers[node] -= 1
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


__all__ = ["RECONNECT_RESET_S", "RECONNECT_S", "Session"]
