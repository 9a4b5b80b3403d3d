/*
 * A line's reading thread in C: it waits on the line's descriptor, stamps each read on CLOCK_MONOTONIC the moment
 * it wakes and keeps the bytes with their stamp until the caller takes them. readthread.c says why;
 * mmproto's Link uses it (mmsched/host/firethread.py loads it with ctypes).
 */
#ifndef MMSCHED_READTHREAD_H
#define MMSCHED_READTHREAD_H

#include <stdint.h>

struct mr_chunk {
    int64_t stamp_ns; /* CLOCK_MONOTONIC when the thread woke for these bytes */
    uint32_t n;       /* bytes of the chunk (in the buffer mr_take filled, one after the other) */
};

struct mr_info {
    int tid, sched_err, policy, prio;
    uint64_t reads, bytes, waits_full;
};

struct mr_thread;
/* Starts the thread on `fd` (read-only use; the caller keeps it open until mr_stop) at SCHED_FIFO `priority` (0:
 * as it inherits), keeping up to `capacity` bytes; returns once it runs. NULL: errno. */
struct mr_thread *mr_start(int fd, int priority, int capacity);
/* Waits up to timeout_ns for bytes (or the end): 1 bytes wait, 0 none came, -1 the line ended (mr_error). */
int mr_wait(struct mr_thread *t, int64_t timeout_ns);
/* The bytes read so far, oldest first: into buf (cap bytes at most) and their reads into chunks (max_chunks at
 * most); a read that does not fit whole waits for the next take. Returns the chunks taken. */
int mr_take(struct mr_thread *t, uint8_t *buf, uint32_t cap, struct mr_chunk *chunks, int max_chunks);
int mr_error(struct mr_thread *t); /* 0, or the errno that ended the line (EPIPE: it was closed at the far end) */
/* 1 while bytes wait that the caller has not taken: read into the ring, or still in the descriptor (the thread has
 * not read them yet); 0 when both are empty */
int mr_unread(struct mr_thread *t);
void mr_info(struct mr_thread *t, struct mr_info *out);
void mr_stop(struct mr_thread *t); /* ends the thread and frees it (the bytes not taken are dropped) */

#endif
