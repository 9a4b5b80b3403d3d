"""The PC's own threads, on the ground beside the model (neither knows the other): a thread's real-time
scheduling as cyclictest asks for it (SCHED_FIFO, or RealtimeKit's SCHED_RR for a user without RLIMIT_RTPRIO;
mlockall; timer slack), the run's loop at nice -10 with the firing thread left at the user's, the native threads'
library (native/: the firing and the reading thread in C), the interpreter kept out of the firing thread's way,
and the stretches the run's own process was held off the CPU."""
