"""What only the virtual bench can do: inject faults, and give the same figure every time in lockstep.
On boards these skip, saying why."""

import pytest


@pytest.mark.rig_needs("executor", "faults")
def test_a_corrupted_line_costs_the_event_not_the_executor(bench, rig):
    rig.mode("mixed", dispatch="isr")
    bench.fault("executor", "in", "corrupt", 1.0)       # every byte to the executor corrupted
    assert rig.schedule(1).outcome == "missed"          # dropped by its CRC: never fired wrong
    bench.clear_faults()
    rig.mode("mixed", dispatch="isr")                   # the line resynchronises at the next frame
    assert rig.schedule(2).on_time


@pytest.mark.rig_needs("executor", "lockstep", "capture")
def test_isr_dispatch_is_exactly_22_cycles(rig):
    assert [rig.schedule(5).latency_us for _ in range(3)] == [1.375] * 3   # 22 cycles at 16 MHz
