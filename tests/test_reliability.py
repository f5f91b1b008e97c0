"""Hostile input, crashes and concurrency: nothing lost, nothing half-written."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scorelake.transforms.sources._files as source_files
from scorelake.flows.prefect_flows import ingest_flow
from scorelake.storage import RUN_TABLES, TABLES, Store
from scorelake.pipeline import verify
from scorelake.transforms.scoring import Policy, score_and_count
from scorelake.transforms.sources import Session, list_session, read_session
from tests.conftest import CONFORMANCE, no_prefect_env

pytestmark = [pytest.mark.slow]

MIXED = "eval_20260902_091500"
BASELINE = "eval_20260904_080000"


def placement(tables) -> tuple[set[str], set[str]]:
    return set(tables.table("scenarios")["scenario_name"]), set(tables.table("quarantine")["scenario_name"].drop_nulls())


def quarantined_files(tables) -> dict[str | None, tuple[str, str]]:
    """Each quarantined scenario's file and reason."""
    return {q["scenario_name"]: (q["file"], q["reason"]) for q in tables.table("quarantine").iter_rows(named=True)}


def assert_each_dir_in_exactly_one_place(session: Path, tables) -> None:
    """And fingerprinted as a pass of stats lists it: a read makes its fingerprints from what it saw."""
    ingested, quarantined = placement(tables)
    listing = list_session(session)
    assert ingested | quarantined == set(listing.scenarios)
    assert not ingested & quarantined
    assert tables.run["fingerprint"] == listing.fingerprint
    assert (tables.run["n_scenario_dirs"], tables.run["n_killed_dirs"]) == (len(listing.scenarios), len(listing.killed))
    for row in tables.rows.get("scenarios", []):
        assert row["fingerprint"] == listing.scenarios[row["scenario_name"]]


def test_hostile_files_are_quarantined_with_their_reason(runs_copy, tmp_path, monkeypatch):
    session = runs_copy(MIXED) / MIXED
    dirs = sorted(d for d in session.iterdir() if d.is_dir())
    outside = tmp_path / "outside.json"
    outside.write_text((dirs[0] / "metrics.json").read_text())
    (dirs[0] / "metrics.json").unlink()
    (dirs[0] / "metrics.json").symlink_to(outside)  # leaves the run directory
    (dirs[1] / "metrics.json").unlink()
    (dirs[1] / "metrics.json").symlink_to(dirs[1] / "loop.json")
    (dirs[1] / "loop.json").symlink_to(dirs[1] / "metrics.json")  # a symlink loop
    metrics = json.loads((dirs[2] / "metrics.json").read_text())
    metrics["total_turns"] = str(metrics["total_turns"])  # a string for a number
    (dirs[2] / "metrics.json").write_text(json.dumps(metrics))
    (dirs[3] / "final_agent_response.json").write_text('"just text"')  # odd, but upstream scores it: False
    judge = json.loads((dirs[4] / "judge_result.json").read_text())
    (dirs[4] / "judge_result.json").write_text(json.dumps({**judge, "reason": "x" * 2_000_000}))
    monkeypatch.setattr(source_files, "MAX_FILE_BYTES", 1_000_000)

    tables = read_session(Session(MIXED, session), "g")
    reasons = {q["scenario_name"]: q["reason"] for q in tables.table("quarantine").iter_rows(named=True)}
    assert reasons[dirs[0].name] == "symlink points outside the run directory"
    assert reasons[dirs[1].name] == "unreadable path"
    assert reasons[dirs[2].name].startswith("schema violation at total_turns")
    assert reasons[dirs[4].name] == "file too large"
    assert dirs[3].name not in reasons
    assert tables.table("scenarios").filter(scenario_name=dirs[3].name)["action_match_lenient"].to_list() == [False]
    assert_each_dir_in_exactly_one_place(session, tables)


@pytest.mark.parametrize("folder", ["scenario_config", "bot_logs_agent", "bot_logs_user"])
def test_a_folder_symlinked_out_of_the_run_is_never_read(runs_copy, tmp_path, folder):
    """Each folder a scenario's files are read from, made a symlink to a copy outside the run
    directory: the scenario is quarantined naming it, and nothing of the copy is stored."""
    session = runs_copy(MIXED) / MIXED
    victim = min(d for d in session.iterdir() if (d / folder).is_dir())
    outside = tmp_path / "outside"
    shutil.copytree(victim / folder, outside)
    for context in outside.glob("llm_context.json"):  # words that must not reach any table
        messages = json.loads(context.read_text())
        context.write_text(json.dumps([{**m, "content": "SECRET-FROM-OUTSIDE"} if isinstance(m.get("content"), str)
                                       else m for m in messages]))
    shutil.rmtree(victim / folder)
    (victim / folder).symlink_to(outside, target_is_directory=True)

    tables = read_session(Session(MIXED, session), "g")
    quarantined = quarantined_files(tables)
    assert quarantined == {victim.name: (f"{victim.name}/{folder}", "symlink points outside the run directory")}
    assert "SECRET-FROM-OUTSIDE" not in repr(tables.rows)
    assert_each_dir_in_exactly_one_place(session, tables)


def test_a_reference_file_through_a_folder_symlinked_out_of_the_run_is_never_read(runs_copy, tmp_path):
    session = runs_copy(MIXED) / MIXED
    victim = min(d for d in session.iterdir() if (d / "scenario_config" / "reference_answer.json").exists())
    (tmp_path / "answers").mkdir()
    (tmp_path / "answers" / "reference_answer.json").write_text('{"secret": "SECRET-FROM-OUTSIDE"}')
    (victim / "scenario_config" / "answers").symlink_to(tmp_path / "answers", target_is_directory=True)
    metadata = json.loads((victim / "scenario_config" / "metadata.json").read_text())
    metadata["reference_file"] = "answers/reference_answer.json"
    (victim / "scenario_config" / "metadata.json").write_text(json.dumps(metadata))

    tables = read_session(Session(MIXED, session), "g")
    quarantined = quarantined_files(tables)
    assert quarantined == {victim.name: (f"{victim.name}/scenario_config/metadata.json",
                                         "reference_file points outside the run directory")}
    assert "SECRET-FROM-OUTSIDE" not in repr(tables.rows)


def test_a_column_reads_its_sources_in_order_and_a_required_one_missing_quarantines(runs_copy):
    """The declared mapping (nemo/columns.py) as the reader runs it: the first source holding a value,
    an optional column missing reads NULL, a required one missing quarantines naming its file."""
    session = runs_copy(MIXED) / MIXED
    dirs = sorted(d for d in session.iterdir() if (d / "metrics.json").exists())

    def edit(folder, file, change):
        doc = json.loads((folder / file).read_text())
        change(doc)
        (folder / file).write_text(json.dumps(doc))

    edit(dirs[0], "metrics.json", lambda doc: doc["success_breakdown"].pop("passed"))
    edit(dirs[1], "scenario_config/metadata.json", lambda doc: (doc.pop("expected_db_hash", None), doc.pop("domain")))
    edit(dirs[1], "metrics.json", lambda doc: doc.update(db_state_expected_hash="from-metrics"))
    tables = read_session(Session(MIXED, session), "g")
    quarantined = quarantined_files(tables)
    assert quarantined == {dirs[0].name: (f"{dirs[0].name}/metrics.json", "required value 'raw_passed' is missing")}
    row = tables.table("scenarios").filter(scenario_name=dirs[1].name).row(0, named=True)
    assert (row["expected_db_hash"], row["registry_domain"]) == ("from-metrics", None)


def test_legacy_run_args_shape_is_read(runs_copy):
    session = runs_copy(BASELINE) / BASELINE
    args = json.loads((session / "run_args.json").read_text())
    legacy = dict(args["invocations"][0]["parsed_args"], judge_threshold=0.8)  # a bare argparse namespace
    (session / "run_args.json").write_text(json.dumps(legacy))
    tables = read_session(Session(BASELINE, session), "g")
    assert tables.run["status"] == "complete" and tables.table("quarantine").is_empty()
    assert tables.run["judge_threshold"] == 0.8 and tables.table("scenarios")["rec_judge_threshold"].unique().to_list() == [0.8]


def test_unusable_run_args_quarantines_every_scenario(runs_copy):
    session = runs_copy(BASELINE) / BASELINE
    (session / "run_args.json").write_text('{"invocations": [')
    tables = read_session(Session(BASELINE, session), "g")
    assert tables.run["status"] == "quarantined"
    assert_each_dir_in_exactly_one_place(session, tables)


def test_duplicate_run_ids_from_two_folders_are_refused_and_recorded(prefect_server, runs_copy, tmp_path):
    first = runs_copy(BASELINE)
    second = tmp_path / "elsewhere"
    shutil.copytree(first, second)
    # byte for byte the same session under two folders: the same run, ingested once, nothing refused
    result = ingest_flow(runs_dirs=[str(first), str(second)], warehouse=str(tmp_path / "wh"))
    assert [r.run_id for r in result.ingested] == [BASELINE] and result.refused == []
    assert ingest_flow(runs_dirs=[str(second)], warehouse=str(tmp_path / "wh")).unchanged == [BASELINE]

    judged = next((second / BASELINE).glob("*/judge_result.json"))
    judged.write_text(judged.read_text().replace("}", ', "edited": true}', 1))  # another run under the same name
    result = ingest_flow(runs_dirs=[str(first), str(second)], warehouse=str(tmp_path / "wh"))
    assert result.refused[0].reason.startswith("duplicate run id") and result.ingested == []
    with Store(tmp_path / "wh").views.connect() as con:
        assert con.execute("SELECT run_id, path FROM stg_refusals").fetchall() == [(BASELINE, str(second / BASELINE))]


# ---- fuzzing ----------------------------------------------------------------------------------

FUZZED_FILES = ["metrics.json", "judge_result.json", "scenario_config/metadata.json", "final_scenario_db_hash.txt",
                "scenario_config/reference_answer.json", "final_agent_response.json"]
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                           lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
                           max_leaves=6)
MUTATION = st.tuples(st.integers(0, 13), st.sampled_from(FUZZED_FILES),
                     st.sampled_from(["truncate", "flip", "retype", "delete", "empty"]),
                     st.integers(0, 10**6), JSON_VALUES)


def mutate(path: Path, kind: str, seed: int, value) -> None:
    if not path.exists():
        return
    data = path.read_bytes()
    if kind == "truncate":
        path.write_bytes(data[: seed % max(len(data), 1)])
    elif kind == "flip":
        i = seed % max(len(data), 1)
        path.write_bytes(data[:i] + bytes([(data[i] if data else 0) ^ (1 + seed % 255)]) + data[i + 1:])
    elif kind == "retype":
        try:
            doc = json.loads(data)
        except ValueError:
            return
        if isinstance(doc, dict) and doc:
            doc[sorted(doc)[seed % len(doc)]] = value
        path.write_text(json.dumps(doc))
    elif kind == "delete":
        path.unlink()
    else:
        path.write_bytes(b"")


@pytest.fixture(scope="module")
def baseline_rows():
    tables = read_session(Session(BASELINE, CONFORMANCE / BASELINE), "g")
    return {r["scenario_name"]: {k: v for k, v in r.items() if k not in ("fingerprint", "position")}
            for r in tables.table("scenarios").iter_rows(named=True)}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations=st.lists(MUTATION, min_size=1, max_size=4))
def test_fuzzed_corpus_never_aborts_and_never_loses_a_scenario(baseline_rows, mutations):
    with tempfile.TemporaryDirectory() as tmp:
        session = Path(tmp) / BASELINE
        shutil.copytree(CONFORMANCE / BASELINE, session)
        dirs = sorted(d for d in session.iterdir() if d.is_dir())
        touched = set()
        for index, file, kind, seed, value in mutations:
            target = dirs[index % len(dirs)]
            touched.add(target.name)
            mutate(target / file, kind, seed, value)
        tables = read_session(Session(BASELINE, session), "g")
        assert_each_dir_in_exactly_one_place(session, tables)
        score_and_count(tables.table("scenarios").lazy(), Policy())  # whatever was ingested can be scored and counted
        for row in tables.table("scenarios").iter_rows(named=True):  # untouched scenarios read exactly as before
            if row["scenario_name"] not in touched:
                got = {k: v for k, v in row.items() if k not in ("fingerprint", "position")}
                assert got == baseline_rows[row["scenario_name"]]


# ---- crashes and concurrency -------------------------------------------------------------------

def cli(*args: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "scorelake", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture
def many_runs(runs_copy):
    """All conformance sessions, plus renamed copies, so an ingest takes long enough to be killed mid-way."""
    runs = runs_copy(*sorted(p.name for p in CONFORMANCE.glob("eval_*")))
    for i, session in enumerate(sorted(runs.glob("eval_*"))):
        shutil.copytree(session, runs / f"eval_2027010{i}_000000")
    return runs


@pytest.fixture(params=["local/in-process", "local/prefect", "s3/in-process"])
def target(request, tmp_path) -> tuple[Store, dict]:
    """A warehouse and the environment of the commands writing it: on local disk with no Prefect API
    configured (in-process) and as Prefect flows, and on S3 (a local S3-compatible server)."""
    storage, mode = request.param.split("/")
    if mode == "in-process":
        env = no_prefect_env(tmp_path / "prefect-home")
    else:
        from prefect.settings import PREFECT_API_URL

        request.getfixturevalue("prefect_server")
        env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PREFECT_LOGGING_LEVEL": "ERROR"}
    if storage == "s3":
        env = {**env, **request.getfixturevalue("s3_server")}
        return Store(request.getfixturevalue("s3_warehouse")), env
    return Store(tmp_path / "wh"), env


def assert_consistent(wh: Store) -> None:
    assert verify(wh) == []
    with wh.views.connect() as con:
        counts = dict(con.execute("SELECT run_id, count(*) FROM scenario_scores WHERE policy_name = 'recorded' "
                                  "GROUP BY run_id").fetchall())
    assert counts == {r["run_id"]: r["n_scenarios"] for r in wh.tables.committed_runs().iter_rows(named=True)
                      if r["n_scenarios"]}


def test_kill_9_at_random_write_steps_leaves_a_consistent_warehouse(many_runs, target):
    """Each command killed (SIGKILL) at a write step chosen at random: just before its Nth Delta
    commit, or with its view database written but not yet in place."""
    wh, cli_env = target
    assert cli("ingest", str(many_runs), "-w", wh.location, env=cli_env).wait(timeout=300) == 0
    rng = random.Random(20261202)
    killed = 0
    for attempt in range(9):
        command = ("ingest", "rescore", "compact")[attempt % 3]
        args = {"ingest": ("ingest", str(many_runs), "--force"),
                "rescore": ("rescore", "--policy", f"crash-{attempt}", "--judge-threshold", f"0.{attempt}"),
                "compact": ("compact",)}[command]
        step = "views" if attempt == 4 and wh.tables.is_local else f"commit:{rng.randint(1, 4)}"
        process = cli(*args, "-w", wh.location, env={**cli_env, "SCORELAKE_CRASH_AT": step})
        killed += process.wait(timeout=300) == -signal.SIGKILL
        assert_consistent(wh)
    assert killed == 9, "every command is killed at its step"
    # The next ingest completes the job and the warehouse is exact again.
    assert cli("ingest", str(many_runs), "--force", "-w", wh.location, env=cli_env).wait(timeout=300) == 0
    assert_consistent(wh)
    if wh.tables.is_local:
        assert not list(wh.tables.root.rglob(".*.tmp"))
    summary = cli("summary", MIXED, "-w", wh.location, env=cli_env).communicate(timeout=120)[0]
    assert summary == (CONFORMANCE / MIXED / "all_summary.txt").read_text()


def test_two_ingests_at_once_cannot_corrupt_the_warehouse(many_runs, target):
    """On local disk the second waits its turn (the writer lock); on S3 both run, and Delta's
    conditional commits keep either from losing the other's commits."""
    wh, cli_env = target
    if wh.tables.is_local:
        with wh.lock.hold():
            blocked = cli("ingest", str(many_runs), "-w", wh.location, env=cli_env)
            _, stderr = blocked.communicate(timeout=300)
        assert blocked.returncode == 1 and "is being written by pid" in stderr

    sessions = sorted(many_runs.glob("eval_*"))
    halves = [many_runs.parent / "first", many_runs.parent / "second"]
    for i, half in enumerate(halves):  # disjoint runs: every one of them must land
        half.mkdir()
        for session in sessions[i::2]:
            session.rename(half / session.name)
    both = [cli("ingest", str(half), "-w", wh.location, env=cli_env) for half in halves]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in both]
    assert any(code == 0 for code, _ in results), [err[-3000:] for _, err in results]
    assert all(code == 0 or "is being written by pid" in err for code, err in results), results
    landed = {r: half for half, (code, _) in zip(halves, results) if code == 0 for r in (p.name for p in half.iterdir())}
    assert set(wh.tables.committed_runs()["run_id"]) == set(landed)
    assert_consistent(wh)
    if not wh.tables.is_local:
        assert all(code == 0 for code, _ in results), results
        # the same runs re-ingested by two writers at once: each run ends with one generation, whole
        both = [cli("ingest", str(half), "--force", "-w", wh.location, env=cli_env) for half in halves * 2]
        codes = [p.wait(timeout=300) for p in both]
        assert codes == [0] * 4, [p.stderr.read()[-3000:] for p, code in zip(both, codes) if code]  # its error
        assert_consistent(wh)
        assert wh.tables.committed_runs().height == len(sessions)


def test_compaction_changes_files_not_answers(prefect_server, runs_copy, tmp_path):
    runs = runs_copy(MIXED, BASELINE, "eval_20260904_093000")
    wh = Store(tmp_path / "wh")
    for session in sorted(runs.iterdir()):  # one ingest per session: a few files per table
        ingest_flow(runs_dirs=[str(session)], warehouse=str(wh.tables.root))
    assert len(wh.tables.files("scenarios")) == 3
    query = ("SELECT run_id, domain, success_passed, success_total, db_state_assertion_passed, nl_assertion_total "
             "FROM domain_rates ORDER BY ALL")
    with wh.views.connect() as con:
        before = con.execute(query).fetchall()
    with wh.lock.hold():
        wh.maintenance.compact()
        wh.views.build()
    assert all(len(wh.tables.files(t)) <= 1 for t in TABLES if t != "commits")  # compaction then records itself
    with wh.views.connect() as con:
        assert con.execute(query).fetchall() == before
    assert verify(wh) == []

    # After compaction: a changed session replaces its compacted rows, a new policy is scored.
    metrics_file = runs / MIXED / "qa__largest_ocean" / "metrics.json"
    metrics = json.loads(metrics_file.read_text())
    metrics_file.write_text(json.dumps({**metrics, "stop_reason": "[TIMEOUT]"}))
    result = ingest_flow(runs_dirs=[str(runs)], warehouse=str(wh.tables.root))
    assert [r.run_id for r in result.ingested] == [MIXED]
    from scorelake.pipeline import rescore, save_policy

    policy = Policy(name="after-compaction", judge_threshold=0.5)
    assert rescore(wh, policy) == 34 + 14 + 14
    assert rescore(wh, policy) == 0  # already scored: nothing to redo
    save_policy(wh, policy)
    wh.views.build()  # the views name each table's current files: a write outside a command rebuilds them
    assert verify(wh) == []
    with wh.views.connect() as con:
        (clean,), = con.execute("SELECT clean_exit FROM scenario_scores WHERE run_id = ? AND scenario_name = "
                                "'qa__largest_ocean' AND policy_name = 'recorded'", [MIXED]).fetchall()
        assert clean is False
        assert con.execute("SELECT count(*) FROM scenario_scores").fetchone() == ((34 + 14 + 14) * 2,)
        after = con.execute(query).fetchall()
    # The re-ingest removed the rows it replaced; a second compaction leaves every row once.
    assert pl.read_delta(str(wh.tables.root / "scenarios")).height == 34 + 14 + 14
    with wh.lock.hold():
        wh.maintenance.compact()
        wh.views.build()
    assert verify(wh) == []
    with wh.views.connect() as con:
        assert con.execute(query).fetchall() == after
        assert con.execute("SELECT count(*) FROM scenario_scores").fetchone() == ((34 + 14 + 14) * 2,)


def test_missing_rate_counts_are_recounted_from_the_stored_scores(prefect_server, runs_copy, tmp_path):
    """A re-score killed between committing its scores and their counts: the counts are rebuilt
    from the stored scores and every rate comes out the same."""
    from scorelake.pipeline import rescore, save_policy

    runs = runs_copy(MIXED, BASELINE)
    wh = Store(tmp_path / "wh")
    ingest_flow(runs_dirs=[str(runs)], warehouse=str(wh.tables.root))
    policy = Policy(name="strict", strict_match=True, min_agent_turns=5, judge_threshold=0.6)
    assert rescore(wh, policy) == 34 + 14
    save_policy(wh, policy)
    wh.views.build()
    query = "SELECT * REPLACE (round(judge_score_mean, 9) AS judge_score_mean) FROM rate_rollup ORDER BY ALL"
    with wh.views.connect() as con:
        before = con.sql(query).fetchall()
    assert {r[2] for r in before} == {"recorded", "strict"}

    wh.tables.delete("rate_counts", f"policy_id = '{policy.id}'")
    assert verify(wh) == [f"{run}: policy strict: rate_counts cover 0 of {n} scenarios"
                          for run, n in ((MIXED, 34), (BASELINE, 14))]
    assert rescore(wh, policy) == 0  # nothing to score again, only to count
    assert verify(wh) == []
    wh.views.build()
    with wh.views.connect() as con:
        assert con.sql(query).fetchall() == before


def test_a_commit_that_landed_but_was_reported_as_a_conflict_is_not_made_twice(tmp_path, monkeypatch):
    """Object storage: the client retries a commit whose response was lost, the retry finds the
    version taken (by the commit itself) and delta-rs reports a conflict. Made again, an append
    would add its rows twice, and a switch of `runs` would bring back a generation another writer
    has since replaced and deleted (committed rows lost). The tagged attempt is found in the log."""
    import deltalake
    from deltalake.exceptions import CommitFailedError

    from scorelake.transforms.columns import frame

    real = deltalake.write_deltalake
    landed: list[str] = []

    def lands_then_fails(table, data, **options):
        real(table, data, **options)
        landed.append(options.get("mode"))
        if len(landed) == 1:
            raise CommitFailedError("the version was taken (by this very commit)")

    wh = Store(tmp_path / "wh")
    wh.tables.init()
    monkeypatch.setattr(deltalake, "write_deltalake", lands_then_fails)
    row = {"policy_id": "p", "name": "n", "spec_json": "{}", "created_at": None}
    wh.tables.append("policies", frame("policies", [row]))
    assert landed == ["append"] and wh.tables.read("policies").collect().height == 1

    landed.clear()
    runs = frame("runs", [{"run_id": "r", "generation": "g1", "n_scenarios": 0}])
    empty = {table: frame(table, []) for table in RUN_TABLES}
    wh.tables.commit_runs(runs, empty)
    assert landed == ["overwrite"]  # the switch, made once
    assert wh.tables.committed_runs()["generation"].to_list() == ["g1"]


def test_a_switch_reported_as_a_conflict_after_it_landed_cannot_bring_back_deleted_rows(tmp_path, monkeypatch):
    """The lost write on S3 (scores covering 0 of a run's scenarios): writer A's switch of `runs`
    lands, its response is lost, and delta-rs reports a conflict; meanwhile writer B switches the same
    runs to its generation and deletes A's rows, as replaced. Had A made its switch again, A's
    generation would be committed with no rows left."""
    import deltalake
    from deltalake.exceptions import CommitFailedError

    from scorelake.pipeline import commit_ingested
    from scorelake.transforms.sources import ingest_sessions

    session = Session(BASELINE, CONFORMANCE / BASELINE)
    first, second = (ingest_sessions([session]) for _ in range(2))
    location = tmp_path / "wh"
    writer_a, writer_b = Store(location), Store(location)
    writer_a.tables.init()
    real = deltalake.write_deltalake
    switches: list[int] = []

    def lands_then_b_wins(table, data, **options):
        real(table, data, **options)
        if options.get("mode") == "overwrite" and options.get("predicate") and not switches:
            switches.append(1)
            commit_ingested(writer_b, [second], [Policy()])  # B: switch to its generation, delete A's rows
            raise CommitFailedError("the version was taken (by this very commit)")

    monkeypatch.setattr(deltalake, "write_deltalake", lands_then_b_wins)
    commit_ingested(writer_a, [first], [Policy()])
    monkeypatch.undo()
    assert verify(Store(location)) == []
    assert Store(location).tables.committed_runs()["generation"].to_list() == [second.runs["generation"][0]]


def test_a_file_is_read_whole_whatever_its_size_said(tmp_path):
    """A file is read in one call for the size fstat gave; one that grew or shrank since is still
    read to its end, and one past the limit never whole."""
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    for told in (0, 5, 10, 20):  # none, grown since, as told, shrunk since
        fd = os.open(path, os.O_RDONLY)
        try:
            assert source_files.read_within(fd, 100, told) == b"0123456789", told
        finally:
            os.close(fd)
    for told, limit in ((5, 8), (9, 9), (0, 9)):  # over the limit, found in the first read or in the rest
        fd = os.open(path, os.O_RDONLY)
        try:
            assert source_files.read_within(fd, limit, told) is None, (told, limit)
        finally:
            os.close(fd)
