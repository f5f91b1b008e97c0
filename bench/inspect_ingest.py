"""``scorelake ingest`` of an Inspect AI log of 10,000 samples against the time Inspect's own reader
(``inspect_ai.log.read_eval_log``, in an environment that has inspect_ai: ``--inspect-python``) takes
to load it, each a whole process, three alternating rounds. The log is tests/data/inspect's arith log
with its samples copied under new ids until there are ``--samples``, written as ``.eval`` by Inspect.
Target: within 2x::

    python bench/inspect_ingest.py --inspect-python /path/to/venv/bin/python --samples 10000

Writes bench/inspect_ingest.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LOG = next((REPO / "tests" / "data" / "inspect" / "logs").glob("*arith*.json"))
LOAD = "import sys\nfrom inspect_ai.log import read_eval_log\nlog = read_eval_log(sys.argv[1])\nprint(len(log.samples))"


GROW = """
import sys
from inspect_ai.log import read_eval_log, write_eval_log
log = read_eval_log(sys.argv[1])
originals, size = log.samples, int(sys.argv[3])
log.samples = [originals[n % len(originals)].model_copy(update={"id": f"s{n}"}) for n in range(size)]
write_eval_log(log, sys.argv[2], format="eval")
"""


def grown(inspect_python: str, path: Path, samples: int) -> None:
    """The fixture's arith log with its samples copied (new ids) until it holds ``samples``, written by
    Inspect's own writer as an ``.eval`` archive (a sample a member: a JSON log of 10,000 samples is
    480 MB, over what ingest reads of one file)."""
    subprocess.run([inspect_python, "-c", GROW, str(LOG), str(path), str(samples)], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inspect-python", required=True)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "inspect_ingest.json")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from bench.guarantees import timed

    script = str(Path(sys.executable).with_name("scorelake"))
    with tempfile.TemporaryDirectory() as work:
        log = Path(work) / "big.eval"
        grown(args.inspect_python, log, args.samples)
        loads, ingests = [], []
        for n in range(args.rounds):
            loads.append(timed([args.inspect_python, "-c", LOAD, str(log)]))
            start = time.perf_counter()
            done = subprocess.run([script, "ingest", str(log), "-w", str(Path(work) / f"wh{n}")], check=True,
                                  capture_output=True, text=True)
            ingests.append(time.perf_counter() - start)
            if f"{args.samples} scenarios" not in done.stderr or "quarantined" in done.stderr:
                raise SystemExit(f"the log was not ingested whole:\n{done.stderr}")
    result = {"samples": args.samples, "inspect_load_s": loads, "ingest_s": ingests,
              "ratio": statistics.median(ingests) / statistics.median(loads), "target": 2.0}
    print(json.dumps(result, indent=2))
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
