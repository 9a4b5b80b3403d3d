"""One run from HELLO to its files, the top floor: the Runner and the helpers it gives the bundles they act
on (the event book, the nodes' set-up and wind-down, the calibrations, deadlines, recovery from faults of the rig,
mixed mode's series, normal mode's firing threads, the NOP load), the run's use of the host, the run's record and
its end (the judgement, the sidecar, the input records, the files), the PC's scheduler trace, and real boards
identified. Entry points (mmrig) import this floor; it imports every floor below."""
