/*
 * Lockstep (--lockstep): virtual time advances only as far as the host has granted, with the
 * host's bytes entering at grant points (lockstep.c has the protocol).
 */
#ifndef MMBENCH_LOCKSTEP_H
#define MMBENCH_LOCKSTEP_H

#include <stdint.h>

#include "bench.h"
#include "control.h"

struct lockstep {
    int on;            /* --lockstep */
    int active;        /* a grant is outstanding */
    uint64_t client;   /* the control client the grant's reply goes to (control_reply_later) */
    int frame;         /* the grant stops when a frame delimiter (0x00) is complete */
    uint64_t granted;  /* the cycle granted */
    uint64_t stop_at;  /* granted, or earlier: the end of the first delimiter */
    uint64_t grants;   /* grants answered */
};
extern struct lockstep lockstep;

void lockstep_grant(struct command_req *req, struct sbuf *b); /* the grant command: req->args after "grant" */
void lockstep_on_byte_out(uint8_t b, uint64_t at); /* an MCU byte queued, complete at `at` */
int lockstep_reached(uint64_t now);             /* the grant is done: reply, return 1 */
void lockstep_end(void);                        /* the run ends: answer an outstanding grant */

#endif
