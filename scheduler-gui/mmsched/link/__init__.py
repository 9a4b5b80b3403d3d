"""The lines to the nodes, on the host's threads and the model: the Endpoint a run talks through (boards here,
the bench in mmhil) with its verdict and byte record, the Session's links (one mmproto.Link per node into one
inbox, the HELLO handshake, reconnecting), a port read by a native thread, and the USB-serial adapters' latency
timer."""
