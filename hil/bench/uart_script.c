/*
 * --script FILE: host bytes at given virtual times, one line each, instead of (or besides) a host on the
 * line; what a replay feeds the bench from a run's record of what the PC sent (mmanalysis/inputrecord.py),
 * and what the firmware tests feed a node alone. The bytes enter the line's queue (uart_line.c) as a
 * host's would and are paced the same way.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uart_node.h"

/* Script lines: "<seconds> <node> <hex bytes...>"   e.g. "0.25 executor 03 22 02 ..."
 * The bytes reach the bench at that virtual time and are paced like host bytes. */
void uart_load_script(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    if (!f)
        die("cannot open script %s: %s", path, strerror(errno));
    while (fgets(line, sizeof line, f)) {
        char *p = line, *end, name[32];
        double t;
        int k, id;
        uint64_t at;
        unsigned long baud;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' || *p == '\n' || !*p)
            continue;
        if (*p == '@') { /* @CYCLE: a global cycle, exact (a replay's record: mmanalysis/inputrecord.py) */
            unsigned long long c;
            if (sscanf(p + 1, "%llu %31s %n", &c, name, &k) != 2)
                die("bad script line: %s", line);
            at = (uint64_t)c;
            p += 1 + k;
        } else {
            if (sscanf(p, "%lf %31s %n", &t, name, &k) != 2)
                die("bad script line: %s", line);
            p += k;
            at = (uint64_t)llround(t * (double)F_CPU);
        }
        id = parse_node(name);
        if (id < 0)
            die("bad node in script line: %s", line);
        baud = 0;
        if (!strncmp(p, "baud=", 5)) { /* the rate the host had set when it wrote them: theirs on the line */
            baud = strtoul(p + 5, &end, 10);
            if (end == p + 5)
                die("bad baud in script line: %s", line);
            uart.n[id].script_baud = 1;
            p = end;
        }
        for (;;) {
            unsigned long v = strtoul(p, &end, 16);
            if (end == p)
                break;
            p = end;
            uart_inq_push(&uart.n[id], usb_down_byte(&uart.usb, at), (uint8_t)v, 0); /* the host's write */
            if (baud) /* (uart_inq_push took the adapter's rate: the line's own, as the host had set it) */
                uart.n[id].inq[(uart.n[id].inq_head + uart.n[id].inq_n - 1) % uart.n[id].inq_cap].baud =
                    (uint32_t)baud;
        }
    }
    fclose(f);
}
