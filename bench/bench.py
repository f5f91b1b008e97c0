"""scorelake benchmark: run on demand, not in CI.

    .venv/bin/python bench/bench.py --sizes 1000 10000 100000 --rescore-rows 1000000
    .venv/bin/python bench/bench.py --ingest-only --sizes 10000 100000 --per-session 500 25
    .venv/bin/python bench/bench.py --ingest-only --sizes 100000 --reuse-store --before /tmp/before/bin/python

For ``--ingest-only``: ``scorelake ingest`` as a user runs it (a whole process, its own fan-out)
against the single-thread parse floor (one thread reads every file ingest reads and parses each JSON
one with orjson), side by side, three rounds, then a no-change re-ingest; with the CPU-seconds the
command and its workers spent (two cores can at most halve them). With ``--before``, an earlier
scorelake's ingest (installed in that interpreter) runs in the same rounds, and so does the floor of
the files that scorelake reads (a reader that reads more files has a higher floor). Otherwise:

For each size it builds a synthetic store in the upstream format (bench/synth.py) and reports, as
ratios measured in the same run:
- full ingest (the ingest flow's body, its tasks run one session at a time, commits batched as the
  flow batches them) against the time to merely read the same files' bytes, both with a cold page
  cache (when this process may drop it) and warm;
- a no-change re-ingest against the full ingest;
- re-scoring from the Delta tables under a new policy against a straightforward per-scenario Python
  re-scorer over the same files;
- query time of domain_rates and signal_rates through the view database (views over each table's
  current file list), and through views bound to deltalake's Arrow datasets (what object storage
  and --as-of use);
- peak memory (max RSS) of each phase, each phase in its own process.
Then it replicates the largest store's rows to ``--rescore-rows`` scenarios and times a re-score
and the two rate views there. Prefect's start-up is timed separately (one flow with one task
against a fresh temporary server), since it is paid once per command, not per scenario.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "data" / "runs" / "eval_20260904_080000"


def phase(code: str, python: str | None = None) -> dict:
    """Run ``code`` in a fresh interpreter; it sets ``result`` (a dict). Adds seconds and peak RSS.
    ``python``: another interpreter, whose installed scorelake ``code`` imports (this checkout's otherwise).

    The clock restarts at a line ``start = time.perf_counter()`` in ``code``, so imports are not timed.
    """
    script = textwrap.dedent("""
        import json, sys, time
        {path}
        start = time.perf_counter()
        result = {{}}
    """).format(path="" if python else f"sys.path.insert(0, {str(REPO)!r})") + textwrap.dedent(code) + textwrap.dedent("""
        result["seconds"] = time.perf_counter() - start
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across fork + exec
        hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")][0]
        result["peak_rss_mb"] = int(hwm.split()[1]) / 1024
        print(json.dumps(result))
    """)
    interpreter, env, cwd = scorelake_process(python) if python else (sys.executable, None, None)
    out = subprocess.run([interpreter, "-c", script], capture_output=True, text=True, env=env, cwd=cwd)
    if out.returncode:
        return {"failed": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def drop_caches() -> bool:
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


READ_FLOOR = """
    from pathlib import Path
    n = 0
    for path in Path({store!r}).rglob("*"):
        if path.is_file():
            with open(path, "rb") as fh:
                n += len(fh.read())
    result["bytes"] = n
"""

# The floor ingest is measured against: one thread walks the store, reads every file ingest reads
# (the session's run files, each scenario's inputs) and parses each JSON one with orjson.
PARSE_FLOOR = """
    import os, orjson
    from scorelake.transforms.sources.nemo._listing import RUN_FILES, SCENARIO_INPUTS
    start = time.perf_counter()
    files = parsed = n = 0
    for session in sorted(os.scandir({store!r}), key=lambda e: e.name):
        if not session.is_dir():
            continue
        paths = [os.path.join(session.path, name) for name in RUN_FILES]
        for scenario in os.scandir(session.path):
            if scenario.is_dir():
                paths += [os.path.join(scenario.path, rel) for rel in SCENARIO_INPUTS]
        for path in paths:
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except FileNotFoundError:
                continue
            files += 1
            n += len(data)
            if path.endswith(".json"):
                orjson.loads(data)
                parsed += 1
    result.update(files=files, parsed=parsed, bytes=n)
"""

# The flow bodies with their tasks run one at a time in this process: the pipeline's own cost.
SEQUENTIAL = """
    class Sequential:
        def run(self, job, calls):
            for call in calls:
                yield job(*call)

        def log(self, level, message):
            pass
"""

INGEST = SEQUENTIAL + """
    from scorelake.flows.flow_bodies import ingest
    start = time.perf_counter()
    report = ingest(Sequential(), runs_dirs=[{store!r}], warehouse={warehouse!r})
    result["ingested"] = len(report.ingested)
    result["unchanged"] = len(report.unchanged)
"""

RESCORE = SEQUENTIAL + """
    from scorelake.flows.flow_bodies import rescore_policies
    from scorelake.transforms.scoring import Policy
    start = time.perf_counter()
    policy = Policy(name="bench-{tag}", judge_threshold={threshold}, min_agent_turns=5, strict_match=True)
    report = rescore_policies(Sequential(), warehouse={warehouse!r}, policy_specs=[policy.spec_json()])
    result["scenarios"] = report.scored[policy.name]
"""

NAIVE_RESCORE = """
    # What a user would write without scorelake: walk the folders, load each scenario's JSON,
    # recompute the verdicts under the new flags one scenario at a time.
    import json
    from pathlib import Path
    start = time.perf_counter()
    threshold, min_turns = 0.8, 5
    results = []
    for scenario in sorted(Path({store!r}).glob("eval_*/*/metrics.json")):
        folder = scenario.parent
        metrics = json.loads(scenario.read_text())
        meta = json.loads((folder / "scenario_config" / "metadata.json").read_text())
        judge_file = folder / "judge_result.json"
        judge = json.loads(judge_file.read_text()) if judge_file.exists() else None
        checks = {{
            "is_action_match": None if metrics["is_action_match"] == "N/A" else metrics["is_action_match"],
            "db_state_match": metrics.get("db_state_match"),
            "db_state_assertion": None if metrics.get("db_state_assertion_pass_rate") is None
            else metrics["db_state_assertion_pass_rate"] >= 1.0,
            "nl_assertion": None if metrics.get("nl_assertion_pass_rate") is None
            else metrics["nl_assertion_pass_rate"] >= 1.0,
            "judge_passed": None if judge is None else judge["score"] >= threshold,
            "clean_exit": metrics["stop_reason"] == "[EXIT]",
        }}
        listed = set(meta["success_signals"])
        failed = [k for k, v in checks.items() if k in listed and v is False]
        applicable = [k for k, v in checks.items() if k in listed and v is not None]
        stalled = metrics["token_usage"]["agent"]["n_calls"] < min_turns
        ok = False if stalled else ("N/A" if not applicable else not failed)
        results.append((metrics["scenario_name"], ok))
    result["scenarios"] = len(results)
"""

QUERIES = """
    # Each view's whole answer, fetched as Arrow (a columnar client's fetch; Python tuples would
    # add the conversion of every value), over every stored policy and over the recorded one alone.
    import duckdb
    start = time.perf_counter()
    {connect}
    for view in ("domain_rates", "signal_rates"):
        for label, where in (("", ""), ("_one_policy", " WHERE policy_id = (SELECT policy_id FROM stg_policies "
                                                             "WHERE name = 'recorded')")):
            query = "SELECT * FROM " + view + where
            con.sql(query).to_arrow_table()  # warm the metadata
            times = []
            for _ in range(5):
                t = time.perf_counter()
                rows = con.sql(query).to_arrow_table().num_rows
                times.append(time.perf_counter() - t)
            result[view + label + "_ms"] = sorted(times)[2] * 1000
            result[view + label + "_rows"] = rows
"""

# The view database: views over each table's current files (what a local warehouse's commands use).
VIEW_DATABASE = "con = duckdb.connect({db!r}, read_only=True)"

# The pages of `scorelake view`, through its ASGI app in this process (no socket): each timed once
# after a warm-up, in milliseconds.
VIEW_PAGES = """
    import scorelake
    from starlette.testclient import TestClient
    from scorelake.web import make_app
    wh = scorelake.open({warehouse!r})
    run = wh.runs()["run_id"][-1]
    failed = wh.run_scenarios(run, failed_only=True, limit=1)["scenario_name"][0]
    pages = {{"runs": "/", "run": f"/runs/{{run}}", "run_failed_by_judge_score": f"/runs/{{run}}?failed=1&sort=judge_score",
              "run_last_page": f"/runs/{{run}}?offset=400", "scenario": f"/runs/{{run}}/scenarios/{{failed}}"}}
    client = TestClient(make_app(wh))
    for path in pages.values():
        assert client.get(path).status_code == 200
    start = time.perf_counter()
    for name, path in pages.items():
        began = time.perf_counter()
        client.get(path)
        result[f"{{name}}_ms"] = (time.perf_counter() - began) * 1000
"""
# The same views bound to deltalake's Arrow datasets of the current versions (object storage, --as-of).
ARROW_DATASETS = """from scorelake.storage import TABLES, Store
    wh = Store({warehouse!r})
    con = duckdb.connect()
    for table in TABLES:
        con.register("delta_" + table, wh.views._arrow_dataset(table, None))
    for _, statement in wh.views.statements():
        con.execute(statement)"""

COMPACT = """
    from scorelake.storage import Store
    start = time.perf_counter()
    Store({warehouse!r}).maintenance.compact()
"""

REPLICATE = """
    # Copies of the stored runs under new run ids, to reach a larger scored store cheaply: each
    # table rewritten whole (one commit), then compacted, the state a large warehouse settles in.
    import math
    import polars as pl
    from scorelake.storage import RUN_TABLES, Store
    wh = Store({warehouse!r})
    copies = math.ceil({rows} / wh.tables.committed_runs()["n_scenarios"].sum())
    for table in ("runs", *RUN_TABLES):
        rows = wh.tables.read(table).collect()
        wh.tables.replace(table, pl.concat([rows.with_columns(run_id=pl.col("run_id") + f"_c{{c}}") if c else rows
                                     for c in range(copies)]))
    wh.maintenance.compact()
    wh.views.build()
    result["runs"] = wh.tables.committed_runs().height
"""

# With the settings a write command gives a temporary server (flows.runtime): Prefect's own start-up
# timeout of 20 s is what a first start on a loaded 2-core machine loses.
PREFECT_STARTUP = """
    from scorelake.flows import runtime
    runtime.prepare_prefect(runtime.Orchestration(True, None), False, print)
    from prefect import flow, task
    @task
    def one():
        return 1
    @flow
    def startup():
        return one()
    startup()
"""


def _tree_memory_mb(pid: int) -> float:
    """The memory ``pid`` and every process under it hold now: their proportional set sizes (a page
    the processes share counted once, split between them)."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            rollup = Path(f"/proc/{current}/smaps_rollup").read_text()
            total += int(next(line for line in rollup.splitlines() if line.startswith("Pss:")).split()[1])
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, StopIteration, ValueError):
            continue
    return total / 1024


def _busy_cpu_s() -> tuple[float, float]:
    """CPU-seconds this machine's cores have been busy since boot (``/proc/stat``): across a command,
    its own process's, its worker processes' (which it does not wait for) and anything else running;
    and the seconds the hypervisor gave its cores to another machine (steal), apart: on a host that
    takes them, both a round's time and its CPU grew with them by up to a fifth (2026-12-06)."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    hz = os.sysconf("SC_CLK_TCK")
    return (sum(ticks) - ticks[3] - ticks[4] - ticks[7]) / hz, ticks[7] / hz  # all but idle, iowait, steal


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def scorelake_process(python: str | None) -> tuple[str, dict[str, str], str | None]:
    """The interpreter, environment and working folder of a process that runs this checkout's
    scorelake (``python`` None) or the one installed in ``python``, with no Prefect API configured."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_") and k != "PYTHONPATH"}
    if python is None:
        env["PYTHONPATH"] = str(REPO)
    # another install run from elsewhere: from this checkout, `-m` or `-c` would import its scorelake first
    return python or sys.executable, env, None if python is None else tempfile.gettempdir()


def _compile_checkout() -> None:
    """This checkout's modules compiled to bytecode, as an installed wheel's are (pip compiles them):
    run from source under PYTHONDONTWRITEBYTECODE, every process of every command would compile
    them again (at 100,000 scenarios, a second of an ingest's three processes)."""
    import compileall

    for package in ("scorelake", "transforms", "flows"):
        compileall.compile_dir(REPO / package, quiet=1)


def scorelake_command(*args: str, memory: bool = True, python: str | None = None) -> dict:
    """``scorelake ARGS`` as a user runs it: a whole process (imports and start-up included), its own
    fan-out on the machine's cores, no Prefect API configured; its seconds and, with ``memory``, its
    peak memory, the command's and its worker processes' together (proportional set sizes, sampled
    every 20 ms). The sampling reads every process's page tables: on two cores it takes about a
    second from a 10,000-scenario ingest, so a timed run goes without it. ``python``: another
    interpreter, running the scorelake installed in it (this checkout's otherwise)."""
    interpreter, env, cwd = scorelake_process(python)
    if python is None:
        _compile_checkout()
    busy, own = _busy_cpu_s(), _children_cpu_s()
    began = time.perf_counter()
    # its output to files, not pipes: sampled without reading them, a pipe fills (a line per session)
    # and the command waits on it for ever
    with tempfile.TemporaryFile("w+") as out_file, tempfile.TemporaryFile("w+") as err_file:
        process = subprocess.Popen([interpreter, "-m", "scorelake", *args], stdout=out_file, stderr=err_file,
                                   text=True, env=env, cwd=cwd)
        peak = 0.0
        while memory and process.poll() is None:
            peak = max(peak, _tree_memory_mb(process.pid))
            time.sleep(0.02)
        process.wait()
        seconds = time.perf_counter() - began
        out_file.seek(0), err_file.seek(0)
        out, err = out_file.read(), err_file.read()
    (busy_after, stolen_after), own = _busy_cpu_s(), _children_cpu_s() - own
    if process.returncode:
        return {"failed": err.strip()[-300:] or f"exit {process.returncode}"}
    said = [line for line in (out + err).splitlines() if line.strip()]
    spent = {"cpu_s": busy_after - busy[0], "stolen_s": stolen_after - busy[1], "command_process_cpu_s": own}
    return {"seconds": seconds, **({"peak_pss_mb": peak} if memory else spent), "said": said[-1] if said else ""}


def store_label(n: int, per_session: int) -> str:
    """A store of ``n`` scenarios in sessions of ``per_session``, as the results name it."""
    from bench.synth import SCENARIOS_PER_SESSION

    return f"{n}" if per_session == SCENARIOS_PER_SESSION else f"{n} in sessions of {per_session}"


def bench_ingest(n: int, work: Path, per_session: int, rounds: int = 3, before: str | None = None,
                 reuse: bool = False) -> dict:
    """``scorelake ingest`` as a user runs it against the single-thread parse floor, side by side in
    one run, ``rounds`` times (the medians compared), then a no-change re-ingest. ``before``: an
    interpreter with an earlier scorelake installed, whose ingest runs in the same rounds, the two
    in alternating order (a change measured against the machine's drift, not across runs). ``reuse``:
    the store an earlier run built is kept (built anew otherwise: the synthesiser may have changed)."""
    from bench.synth import build_store

    name = store_label(n, per_session).replace(" ", "_")
    store, warehouse = work.resolve() / f"store_{name}", work.resolve() / f"warehouse_{name}"
    build_store(SOURCE, store, n, per_session=per_session, resume=reuse)
    os.sync()  # the store's pages written out now, not by the kernel's writeback during the timed rounds
    fmt = {"store": str(store)}
    floors, ingests, earlier, earlier_floors = [], [], [], []

    def ingest(python: str | None) -> dict:
        subprocess.run(["rm", "-rf", str(warehouse)], check=True)
        return scorelake_command("ingest", str(store), "-w", str(warehouse), memory=False, python=python)

    def floor(python: str | None = None) -> dict:
        """The parse floor of the files this checkout reads (``python`` None) or the earlier one does."""
        stolen = _busy_cpu_s()[1]
        return {**phase(PARSE_FLOOR.format(**fmt), python), "stolen_s": _busy_cpu_s()[1] - stolen}

    floor()  # untimed: the first read of a store the page cache let go of took 35-80 s, its rounds 15-20
    for round_ in range(rounds):
        floors.append(floor())
        if before:  # what the earlier scorelake reads may differ: its ratio is to its own floor
            earlier_floors.append(floor(before))
        if before and round_ % 2:
            earlier.append(ingest(before))
        ingests.append(ingest(None))
        if before and not round_ % 2:
            earlier.append(ingest(before))
    closing = floor()  # each round's ingests between two floors: the machine's speed drifts within a run
    if before:
        earlier_floors.append(floor(before))
    subprocess.run(["rm", "-rf", str(warehouse)], check=True)
    measured = scorelake_command("ingest", str(store), "-w", str(warehouse))  # its memory, once more
    median = lambda runs: _median([r["seconds"] for r in runs])  # noqa: E731
    report = {"scenarios": n, "scenarios_per_session": per_session, "files": floors[0]["files"], "bytes": floors[0]["bytes"],
              "parse_floor_s": [r["seconds"] for r in floors], "ingest_command_s": [r["seconds"] for r in ingests],
              # where the time goes: CPU-seconds of every process (two cores give at most twice the
              # wall time), of the command's own process, and so of its workers
              "ingest_cpu_s": [r["cpu_s"] for r in ingests],
              # the seconds the host took the cores for another machine meanwhile (in neither time above)
              "parse_floor_stolen_s": [r["stolen_s"] for r in floors],
              "ingest_stolen_s": [r["stolen_s"] for r in ingests],
              "ingest_command_process_cpu_s": [r["command_process_cpu_s"] for r in ingests],
              "ingest_peak_pss_mb": measured["peak_pss_mb"], "ingest_command_s_while_sampled": measured["seconds"],
              "reingest_command": scorelake_command("ingest", str(store), "-w", str(warehouse))}
    report["ingest_vs_parse_floor"] = median(ingests) / median(floors)
    report["parse_floor_closing_s"] = closing["seconds"]
    # each ingest against the floors either side of its round, the median of those: what drifts over
    # a run (this machine's speed moved by half within ten minutes) moves both sides of each ratio
    report["ingest_vs_bracketing_floors"] = _bracketed(ingests, floors + [closing])
    # the ratio were every core busy from start to end: the CPU ingest spends, over the cores, against the floor
    cpu = _median([r["cpu_s"] for r in ingests])
    report["ingest_cpu_vs_parse_floor"] = cpu / median(floors)
    report["least_ratio_on_these_cores"] = cpu / (os.cpu_count() or 1) / median(floors)
    if before:
        report["before"] = {"python": before, "ingest_command_s": [r["seconds"] for r in earlier],
                            "ingest_cpu_s": [r["cpu_s"] for r in earlier],
                            "ingest_stolen_s": [r["stolen_s"] for r in earlier],
                            "ingest_vs_parse_floor": median(earlier) / median(floors),
                            "ingest_vs_bracketing_floors": _bracketed(earlier, floors + [closing]),
                            # against the floor of the files it reads itself, in the same rounds
                            "parse_floor_s": [r["seconds"] for r in earlier_floors],
                            "files": earlier_floors[0]["files"], "bytes": earlier_floors[0]["bytes"],
                            "ingest_vs_own_parse_floor": median(earlier) / median(earlier_floors[:-1]),
                            "ingest_vs_own_bracketing_floors": _bracketed(earlier, earlier_floors)}
        # each round's two ratios, each ingest against its own floors, the later over the earlier
        paired = [now / then for now, then in zip(report["ingest_vs_bracketing_floors"]["per_round"],
                                                  report["before"]["ingest_vs_own_bracketing_floors"]["per_round"])]
        report["before"]["ratio_now_over_before"] = {"per_round": paired, "median": _median(paired)}
    return report


def _bracketed(ingests: list[dict], floors: list[dict]) -> dict:
    """Per round, an ingest's seconds over the mean of the floor before its round and the one after;
    their median."""
    ratios = [run["seconds"] * 2 / (floors[i]["seconds"] + floors[i + 1]["seconds"]) for i, run in enumerate(ingests)]
    return {"per_round": ratios, "median": _median(ratios)}


def _median(values: list[float]) -> float:
    """The middle value; of an even count, the upper of the two middle ones (as every run here has taken it)."""
    return sorted(values)[len(values) // 2]


def bench_size(n: int, work: Path) -> dict:
    from bench.synth import build_store

    store, warehouse = work / f"store_{n}", work / f"warehouse_{n}"
    build_store(SOURCE, store, n)
    subprocess.run(["rm", "-rf", str(warehouse)], check=True)
    fmt = {"store": str(store), "warehouse": str(warehouse), "tag": str(n), "db": str(warehouse / "scorelake.duckdb"),
           "threshold": 0.8}
    report: dict = {"scenarios": n}
    cold = drop_caches()
    if cold:
        report["read_floor_cold"] = phase(READ_FLOOR.format(**fmt))
        drop_caches()
        report["ingest_cold"] = phase(INGEST.format(**fmt))
        subprocess.run(["rm", "-rf", str(warehouse)], check=True)
    report["read_floor_warm"] = phase(READ_FLOOR.format(**fmt))
    report["parse_floor"] = phase(PARSE_FLOOR.format(**fmt))
    report["ingest_command"] = scorelake_command("ingest", str(store), "-w", str(warehouse))
    report["reingest_command"] = scorelake_command("ingest", str(store), "-w", str(warehouse))
    subprocess.run(["rm", "-rf", str(warehouse)], check=True)
    report["ingest_warm"] = phase(INGEST.format(**fmt))
    report["reingest_unchanged"] = phase(INGEST.format(**fmt))
    report["rescore_polars"] = phase(RESCORE.format(**fmt))
    report["rescore_naive_python"] = phase(NAIVE_RESCORE.format(**fmt))
    report["queries"] = phase(QUERIES.format(**fmt, connect=VIEW_DATABASE.format(**fmt)))
    report["view_pages"] = phase(VIEW_PAGES.format(**fmt))
    ratios = {
        "ingest_command_vs_parse_floor": report["ingest_command"].get("seconds", float("nan"))
        / report["parse_floor"]["seconds"],
        "ingest_vs_read_floor_warm": report["ingest_warm"]["seconds"] / report["read_floor_warm"]["seconds"],
        "reingest_unchanged_vs_full": report["reingest_unchanged"]["seconds"] / report["ingest_warm"]["seconds"],
        "rescore_naive_vs_polars": report["rescore_naive_python"]["seconds"] / report["rescore_polars"]["seconds"],
    }
    if cold:
        ratios["ingest_vs_read_floor_cold"] = report["ingest_cold"]["seconds"] / report["read_floor_cold"]["seconds"]
    report["ratios"] = ratios
    return report


def bench_large(n_rows: int, source_size: int, work: Path) -> dict:
    """Re-score and query times on the largest store once compacted, then replicated to ``n_rows``."""
    warehouse = work / f"warehouse_{source_size}"
    fmt = {"warehouse": str(warehouse), "rows": n_rows, "db": str(warehouse / "scorelake.duckdb")}
    report = {"compact": phase(COMPACT.format(**fmt))}
    report["compacted_rescore_polars"] = phase(RESCORE.format(**fmt, tag=f"{source_size}-compacted", threshold=0.75))
    report["compacted_queries"] = phase(QUERIES.format(**fmt, connect=VIEW_DATABASE.format(**fmt)))
    report["replicate"] = phase(REPLICATE.format(**fmt))
    phase(RESCORE.format(**fmt, tag=f"{n_rows}-warm", threshold=0.6))  # warm the page cache
    report["rescore_polars"] = phase(RESCORE.format(**fmt, tag=f"{n_rows}", threshold=0.7))
    report["queries"] = phase(QUERIES.format(**fmt, connect=VIEW_DATABASE.format(**fmt)))
    report["queries_arrow_datasets"] = phase(QUERIES.format(**fmt, connect=ARROW_DATASETS.format(**fmt)))
    report["compact_large"] = phase(COMPACT.format(**fmt))
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--rescore-rows", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/scorelake-bench"))
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results.json")
    parser.add_argument("--ingest-only", action="store_true",
                        help="Only `scorelake ingest` against the parse floor, per size (writes bench/ingest.json)")
    parser.add_argument("--before", metavar="PYTHON",
                        help="With --ingest-only: an interpreter with an earlier scorelake installed; its ingest "
                             "runs in the same rounds, in alternating order with this checkout's")
    parser.add_argument("--rounds", type=int, default=3,
                        help="With --ingest-only: rounds of the floor and ingest (the medians compared)")
    parser.add_argument("--reuse-store", action="store_true",
                        help="With --ingest-only: keep the stores an earlier run built (the sessions it left whole)")
    parser.add_argument("--per-session", type=int, nargs="+",
                        help="With --ingest-only: the stores' scenarios per session, each its own store per size "
                             "(default 500: a full-suite run; smaller sessions cost ingest more per scenario)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(REPO))
    if args.ingest_only:
        out = args.out if args.out != REPO / "bench" / "results.json" else REPO / "bench" / "ingest.json"
        found: dict = {"machine": {"cpus": os.cpu_count()}, "sizes": {}}
        from bench.synth import SCENARIOS_PER_SESSION

        for n in args.sizes:
            for per_session in args.per_session or [SCENARIOS_PER_SESSION]:
                key = store_label(n, per_session)
                found["sizes"][key] = bench_ingest(n, args.work, per_session, rounds=args.rounds,
                                                  before=args.before, reuse=args.reuse_store)
                out.write_text(json.dumps(found, indent=2))
                print(json.dumps({key: found["sizes"][key]}), flush=True)
        return
    results: dict = {"machine": {"cpus": os.cpu_count()}, "sizes": {}}
    save = lambda: args.out.write_text(json.dumps(results, indent=2))  # noqa: E731  (after every phase group)
    for n in args.sizes:
        results["sizes"][n] = bench_size(n, args.work)
        save()
        print(json.dumps({n: results["sizes"][n]["ratios"]}), flush=True)
    if args.rescore_rows:
        results["large"] = {"rows": args.rescore_rows, **bench_large(args.rescore_rows, max(args.sizes), args.work)}
        save()
    results["prefect_startup"] = phase(PREFECT_STARTUP)  # a failed start is recorded, not fatal
    save()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
