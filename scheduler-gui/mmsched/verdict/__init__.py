"""What a run's events came to and what the rig can stand behind, on the model alone: outcomes and the
matching of RESULTs, the profiler's losses, the rig's faults and the ones the endpoint injected, validity by
cause, FIREs lost to crowding, the invariant, normal mode's budget, the statistics, and the formats of the run's
files (CSV and sidecar, the journal, the traced run's files, the environment). Given records, never a run or a
link."""
