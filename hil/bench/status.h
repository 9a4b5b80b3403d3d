/*
 * The status JSON (status.c): virtual and wall time, lag, the nodes with their UART counters, the
 * wires, the control clients, injections, traces.
 */
#ifndef MMBENCH_STATUS_H
#define MMBENCH_STATUS_H

#include "bench.h"

void status_json(struct sbuf *b); /* one line, with its newline */

#endif
