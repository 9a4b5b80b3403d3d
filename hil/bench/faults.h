/*
 * Faults on the lines between the nodes and the host, and between the nodes: the control channel's
 * fault, garbage, hangup and stuck commands (faults.c says what each does; commands.c has the table).
 */
#ifndef MMBENCH_FAULTS_H
#define MMBENCH_FAULTS_H

#include "control.h"

void faults_fault(struct command_req *r, struct sbuf *b);
void faults_garbage(struct command_req *r, struct sbuf *b);
void faults_hangup(struct command_req *r, struct sbuf *b);
void faults_stuck(struct command_req *r, struct sbuf *b);

#endif
