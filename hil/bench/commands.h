/*
 * The control channel's commands (commands.c has the list): the table main.c hands to the server
 * (control.h).
 */
#ifndef MMBENCH_COMMANDS_H
#define MMBENCH_COMMANDS_H

#include "control.h"

extern const struct command commands[]; /* ends with a NULL name */

/* After a command ran (main.c hands it to the server: control_open): keeps it, with the cycle it took effect
 * at, if it changes the simulation and was taken (REPLY, N bytes, starts {"ok":true); the timing reply's
 * `commands` (commands.c) */
void commands_log(const char *name, const char *line, const char *reply, size_t n);

#endif
