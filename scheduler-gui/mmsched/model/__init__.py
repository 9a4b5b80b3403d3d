"""The ground of the scheduler's core, beside the host floor: what a run is made of, shared by the floors
above. A run's configuration and the executor's and the PC's loads, an event and the bytes its figure depends
on, the endpoint's record of the bytes it carried, the reasons a run is invalid, the schedule grid and mixed
mode's series, the generator, the timecode tracker with its tick fit and the clock servo, the TIMECODE arrivals
judged with hindsight, the counters, the live view's hook, and what a run gives back. It imports no other
floor."""
