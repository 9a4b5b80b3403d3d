/*
 * Floor calibration: bytes injected into a node's UART receiver with their first start bit a given
 * number of cycles after the next change of the profiler's timecode port (inject.c says how).
 */
#ifndef MMBENCH_INJECT_H
#define MMBENCH_INJECT_H

#include <stdint.h>

#include "bench.h"
#include "control.h"

void inject_attach(void);                         /* the profiler added (and wired): watch its timecode port */
void inject_command(struct command_req *req, struct sbuf *b); /* the inject command: req->args after "inject" */
void inject_status_json(struct sbuf *b);          /* "inject_pending":[...],"injections":[...], */

#endif
