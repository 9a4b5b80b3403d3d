/*
 * The control channel's commands (commands.c has the list): the table main.c hands to the server
 * (control.h).
 */
#ifndef MMBENCH_COMMANDS_H
#define MMBENCH_COMMANDS_H

#include "control.h"

extern const struct command commands[]; /* ends with a NULL name */

#endif
