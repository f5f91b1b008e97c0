"""tau2-bench results (a monolithic JSON file, or ``results.json`` + ``simulations/``) and tau-bench
(v1) trajectory files."""

from scorelake.transforms.sources.tau._read import UNRESOLVED_SUFFIX
from scorelake.transforms.sources.tau._source import Tau2File, Tau2Folder, TauBenchFile
from scorelake.transforms.sources.tau._task_ids import task_id_warnings

__all__ = ["UNRESOLVED_SUFFIX", "Tau2File", "Tau2Folder", "TauBenchFile", "task_id_warnings"]
