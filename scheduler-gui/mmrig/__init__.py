"""mmrig: the application layer, every entry point of the rig (docs/architecture.md, "Layers").

The `mmrig` command line (one module per subcommand under `mmrig.cli`), the demo, the sweep command and
its campaigns, the lab key, the fault campaign, the soak, the pytest plugin and the desktop app. Each
chooses where a run goes (boards, the paced bench, the lockstep bench) through `mmrig.endpoints`. Below
this layer nothing imports it: `mmsched` (the headless core), `mmhil` (the bench and the Rig),
`mmanalysis` and `mmproto` (tests/test_layers.py).
"""

__version__ = "0.1.0"
