/*
 * Faults on the lines between the nodes and the host, and between the nodes: the control channel's
 * fault, garbage, hangup and stuck commands (faults.c says what each does).
 */
#ifndef MMBENCH_FAULTS_H
#define MMBENCH_FAULTS_H

/* a fault command (words as control.c splits them); returns 0 if w[0] is not one */
int faults_command(int fd, char w[][128], int nw);

#endif
