"""tau2-bench results (a monolithic JSON file, or ``results.json`` + ``simulations/``) and tau-bench
(v1) trajectory files."""

from scorelake.transforms.sources.tau._read import UNRESOLVED_SUFFIX, read_tau2, read_tau_bench

__all__ = ["UNRESOLVED_SUFFIX", "read_tau2", "read_tau_bench"]
