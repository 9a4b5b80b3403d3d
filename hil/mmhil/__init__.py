"""mmhil: the virtual bench (hil/bench, simavr) from Python, and the Rig API that drives either the
bench or real boards through pyserial."""

from .bench import Bench, BenchError, ensure_built
from .cli import run_bench_foreground
from .endpoint import BenchEndpoint, LockstepEndpoint
from .rig import Rig, RigError

__all__ = ["Bench", "BenchEndpoint", "BenchError", "LockstepEndpoint", "Rig", "RigError", "ensure_built", "run_bench_foreground"]
