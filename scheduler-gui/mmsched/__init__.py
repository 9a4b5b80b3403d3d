"""mmsched: the scheduler's headless core and the `mmrig` command line.

Serial sessions, the timecode tracker, the schedule generator, normal-mode firing, result matching,
the experiment runner, export and the demo (docs/architecture.md lists the modules). Nothing in this
package imports Qt except the `gui` subpackage, which only views and commands the rest.
"""

__version__ = "0.1.0"
