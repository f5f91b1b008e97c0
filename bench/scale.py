"""Growth with the store's size: each user-facing command, a whole process, at every size, so that
what grows faster than the scenarios shows (run on demand, not in CI; writes bench/scale.json).

    python bench/scale.py --ingested 10000 100000 500000 --replicated 1000000

``--ingested N``: a store of N scenarios (sessions of 500, whole scenario folders: ``bench.synth``)
ingested against the single-thread parse floor (time, ratio, peak memory) and re-ingested with no
change. ``--replicated N``: the largest ingested warehouse's runs copied under new run ids to N
scenarios (``bench.bench.REPLICATE``). A store of 1,000,000 whole scenario folders holds about 13
million files and folders, more inodes than this machine's disk has free: it is built on a file
system of its own (``--work`` on a loop-mounted ext4 image made with enough inodes). Then at every size:
``rates``, ``compare`` of two runs, ``latency``, ``voice``, ``rescore`` under a new policy, the
report, and the viewer's run page and review queue (each timed once warm, median of three).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench import PARSE_FLOOR, REPLICATE, SOURCE, drop_caches, phase, scorelake_command  # noqa: E402

ROUNDS = 3


def timed(*args: str) -> dict:
    """``scorelake ARGS`` ``ROUNDS`` times: its median seconds and every round's."""
    runs = [scorelake_command(*args, memory=False) for _ in range(ROUNDS)]
    failed = [r["failed"] for r in runs if "failed" in r]
    if failed:
        return {"failed": failed[0]}
    seconds = [r["seconds"] for r in runs]
    return {"median_s": statistics.median(seconds), "seconds": seconds}


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def pages(warehouse: Path, run: str) -> dict:
    """The viewer (``scorelake view --review``, a real server): the run page and the review queue,
    each fetched once to warm up, then the median of three, in milliseconds; and its start-up."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    began = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "scorelake", "view", "-w", str(warehouse), "--port", str(port),
                               "--review", "--token", "t"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env={**env, "PYTHONPATH": str(REPO)})
    base = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                urllib.request.urlopen(f"{base}/?token=t", timeout=60).read()
                break
            except OSError:
                if server.poll() is not None:
                    return {"failed": "the viewer did not start"}
                time.sleep(0.1)
        found = {"first_page_s": time.perf_counter() - began}
        for name, path in (("run_page", f"/runs/{run}?token=t"), ("review_queue", "/review?token=t&pick=errors")):
            urllib.request.urlopen(base + path, timeout=120).read()
            times = []
            for _ in range(ROUNDS):
                start = time.perf_counter()
                urllib.request.urlopen(base + path, timeout=120).read()
                times.append((time.perf_counter() - start) * 1000)
            found[f"{name}_ms"] = statistics.median(times)
        return found
    finally:
        server.terminate()
        server.wait(timeout=30)


def commands(warehouse: Path, n: int) -> dict:
    """Every command at one size, on its warehouse."""
    import scorelake

    runs = scorelake.open(warehouse).runs()["run_id"].to_list()
    w, policy = ["-w", str(warehouse)], f"scale-{n}"
    return {
        "runs": len(runs),
        "rates": timed("rates", *w),
        "compare": timed("compare", runs[0], runs[-1], *w),
        "latency": timed("latency", *w),
        "voice": timed("voice", *w),
        # a new policy: every scenario scored once (a second call would find it scored)
        # (a threshold of its own per size: a replicated warehouse holds the policies of the one copied)
        "rescore": scorelake_command("rescore", "--policy", policy, "--judge-threshold", f"{0.5 + n / 1e8:g}", *w),
        "report": timed("report", "-o", str(warehouse.parent / f"{warehouse.name}.html"), *w),
        "viewer": pages(warehouse, runs[-1]),
    }


def ingested(n: int, work: Path, cold: bool) -> tuple[Path, dict]:
    """A store of ``n`` scenarios (built unless there), ingested against the parse floor: both from
    the page cache, or with ``cold`` both from the disk (the page cache dropped before each: a store
    larger than the memory cannot be read from the cache)."""
    from bench.synth import build_store

    store, warehouse = work / f"store_{n}", work / f"scale_{n}"
    if not (store / "done").exists():
        build_store(SOURCE, store, n, resume=True)  # a big store's build, cut short, goes on
        (store / "done").write_text("")
    os.sync()
    if not cold:
        phase(PARSE_FLOOR.format(store=str(store)))  # the store read once: both measured from the page cache
    cold = cold and drop_caches()
    floor = phase(PARSE_FLOOR.format(store=str(store)))
    shutil.rmtree(warehouse, ignore_errors=True)
    if cold:
        drop_caches()
    ingest = scorelake_command("ingest", str(store), "-w", str(warehouse))
    report = {"cold": cold, "parse_floor": floor, "ingest": ingest,
              "ingest_vs_parse_floor": ingest.get("seconds", float("nan")) / floor["seconds"],
              "reingest": scorelake_command("ingest", str(store), "-w", str(warehouse))}
    return warehouse, report


def replicated(n: int, source: Path, work: Path) -> Path:
    warehouse = work / f"scale_{n}"
    shutil.rmtree(warehouse, ignore_errors=True)
    shutil.copytree(source, warehouse)
    phase(REPLICATE.format(warehouse=str(warehouse), rows=n))
    return warehouse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ingested", type=int, nargs="+", default=[10_000, 100_000, 500_000])
    parser.add_argument("--replicated", type=int, nargs="*", default=[1_000_000])
    parser.add_argument("--cold", type=int, nargs="*", default=[],
                        help="Sizes whose floor and ingest are both read from the disk (the page cache dropped)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/scorelake-bench"))
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "scale.json")
    args = parser.parse_args()
    # sizes measured before (another --work, say a file system with more inodes) kept, the new ones added
    found: dict = json.loads(args.out.read_text()) if args.out.exists() else {"machine": {"cpus": os.cpu_count()},
                                                                                "sizes": {}}
    save = lambda: args.out.write_text(json.dumps(found, indent=2))  # noqa: E731
    largest = None
    for n in args.ingested:
        warehouse, report = ingested(n, args.work, n in args.cold)
        found["sizes"][str(n)] = {"ingested": report, **commands(warehouse, n)}
        largest = warehouse
        save()
        print(json.dumps({n: found["sizes"][str(n)]}), flush=True)
    for n in args.replicated:
        began = time.perf_counter()
        warehouse = replicated(n, largest, args.work)
        found["sizes"][str(n)] = {"replicated_s": time.perf_counter() - began, **commands(warehouse, n)}
        save()
        print(json.dumps({n: found["sizes"][str(n)]}), flush=True)


if __name__ == "__main__":
    main()
