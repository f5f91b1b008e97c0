"""tau2-bench results (a monolithic JSON file, or ``results.json`` + ``simulations/``) and tau-bench
(v1) trajectory files."""

from scorelake.transforms.sources.tau._read import UNRESOLVED_SUFFIX
from scorelake.transforms.sources.tau._source import Tau2File, Tau2Folder, TauBenchFile

__all__ = ["UNRESOLVED_SUFFIX", "Tau2File", "Tau2Folder", "TauBenchFile"]
