/*
 * The status: one JSON object of what every part of the bench counts (the `status` command, and the
 * final status mmbench prints on exit). Each part's members come from the part where it keeps them
 * (a node's own from the node: node.h, status_json); this file only puts them in their order.
 */
#define _GNU_SOURCE
#include "status.h"

#include <inttypes.h>

#include "arduino.h"
#include "control.h"
#include "cosim.h"
#include "exectrace.h"
#include "hostin.h"
#include "inject.h"
#include "lockstep.h"
#include "pacing.h"
#include "uart_bridge.h"
#include "vcd.h"

void status_json(struct sbuf *b)
{
    uint64_t wall = mono_ns() - pacing.wall_start_ns;
    uint64_t now = cosim_now();
    int i;
    double vs = (double)now / (double)F_CPU;
    /* wall_start_s: CLOCK_MONOTONIC (the host's time.monotonic()) at virtual time 0, so the host can
     * place the virtual-time stall intervals on its own clock (per-event validity, paced runs). */
    sb_printf(b, "{\"ok\":true,\"virtual_s\":%.9f,\"cycle\":%" PRIu64 ",\"paced\":%s,\"wall_s\":%.6f,"
                 "\"wall_start_s\":%.9f,\"speed\":%.4f,",
              vs, now, pacing.paced ? "true" : "false", (double)wall / 1e9,
              (double)pacing.wall_start_ns / 1e9, wall ? vs / ((double)wall / 1e9) : 0.0);
    pacing_status_json(b, now);
    hostin_status_json(b);
    sb_printf(b, "\"lockstep\":%s,\"valid\":%s,", lockstep.on ? "true" : "false", pacing_valid() ? "true" : "false");
    sb_printf(b, "\"arduino\":%s,\"bootloader\":", arduino.on ? "true" : "false");
    sb_json_str(b, arduino.on ? arduino.bootloader : "");
    sb_printf(b, ",");
    cosim_noise_json(b);
    sb_printf(b, ",\"nodes\":{");
    for (i = 0; i < NNODES; i++) {
        struct node *n = cosim_node(i);
        if (!n)
            continue; /* one-node mode */
        /* cycle: the node's own (its crystal: ppm); everything else in the status is global */
        sb_printf(b, "%s\"%s\":{\"kind\":\"%s\",\"clock_hz\":%" PRIu64 ",\"cycle\":%" PRIu64 ",\"ppm\":%d,",
                  b->p[b->n - 1] == '{' ? "" : ",", n->name, n->kind, n->hz, n->ops->cycle(n), cosim_ppm(i));
        n->ops->status_json(n, b);
        uart_status_json(i, b);
        if (arduino.on)
            sb_printf(b, ",\"open_resets\":%" PRIu64 ",\"bootloader_bytes\":%u,\"baud_mismatch_garbled\":%" PRIu64,
                      arduino.open_resets[i], (unsigned)arduino.boot_bytes[i], uart_arduino_garbled(i));
        sb_printf(b, "}"); /* the node's object */
    }
    sb_printf(b, "},");
    control_clients_json(b);
    inject_status_json(b);
    cosim_wires_json(b);
    sb_printf(b, ",\"vcd\":");
    if (vcd_is_open())
        sb_json_str(b, vcd_path());
    else
        sb_printf(b, "null");
    sb_printf(b, ",\"exectrace\":");
    if (exectrace_is_open())
        sb_json_str(b, exectrace_path());
    else
        sb_printf(b, "null");
    sb_printf(b, ",\"exectrace_records\":%" PRIu64 ",\"run_dir\":", exectrace_records());
    sb_json_str(b, bench_run_dir);
    sb_printf(b, "}\n");
}
