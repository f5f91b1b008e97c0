"""Faults a user or a hostile page runs into: query limits that a bad value would switch off, a
first ingest killed while it builds the view database, scorelake's own temporary files, the viewer
reached under another host name or asked for an absurd page."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from tests.conftest import BASELINE, CONFORMANCE, PRINT_PEAK_MB

runner = CliRunner()
SCORELAKE = str(Path(sys.executable).parent / "scorelake")


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("faults") / "wh"
    scorelake.open(root).ingest(CONFORMANCE / BASELINE)
    return str(root)


@pytest.mark.parametrize("args", [["--memory-limit", "-5GB"], ["--memory-limit", "0"], ["--memory-limit", "abc"],
                                  ["--memory-limit", "1PB"], ["--timeout", "nan"], ["--timeout", "inf"],
                                  ["--timeout", "-3"], ["--timeout", "0"]])
def test_a_query_limit_a_bad_value_would_switch_off_is_refused(warehouse, args):
    done = runner.invoke(app, ["sql", "SELECT 1", "-w", warehouse, *args])
    assert done.exit_code == 2 and args[1] in done.output, done.output


@pytest.mark.slow
@pytest.mark.parametrize("setting", ["SCORELAKE_SQL_TIMEOUT=abc", "SCORELAKE_SQL_TIMEOUT=-3",
                                     "SCORELAKE_SQL_TIMEOUT=inf", "SCORELAKE_SQL_MEMORY=abc",
                                     "SCORELAKE_SQL_MEMORY=-1GB", "SCORELAKE_SQL_SPILL=abc"])
def test_a_bad_limit_in_the_environment_is_refused_naming_it(warehouse, setting):
    name, _, value = setting.partition("=")
    done = subprocess.run([SCORELAKE, "rates", "-w", warehouse], env={**os.environ, name: value},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and f"${name} '{value}'" in done.stderr and "Traceback" not in done.stderr


def test_scorelakes_own_temporary_files_never_make_a_folder_foreign(tmp_path):
    target = tmp_path / "wh"
    target.mkdir()
    for name in (".scorelake.duckdb.1a2b3c4d.tmp", ".scorelake.duckdb.1a2b3c4d.tmp.wal"):
        (target / name).write_bytes(b"left by a killed writer")
    done = runner.invoke(app, ["ingest", str(CONFORMANCE / BASELINE), "-w", str(target)])
    assert done.exit_code == 0, done.output
    (target.parent / "other").mkdir()
    (target.parent / "other" / "notes.txt").write_text("mine")
    refused = runner.invoke(app, ["ingest", str(CONFORMANCE / BASELINE), "-w", str(target.parent / "other")])
    assert refused.exit_code == 2 and "holds other files (notes.txt)" in refused.output


def first_ingest_killed_at(tmp_path: Path, step: str) -> str:
    """A warehouse whose first ingest was killed (SIGKILL) at a crash point (``_faults.crash_point``)."""
    target = str(tmp_path / "wh")
    killed = subprocess.run([SCORELAKE, "ingest", str(CONFORMANCE / BASELINE), "-w", target],
                            env={**os.environ, "SCORELAKE_CRASH_AT": step}, capture_output=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL
    return target


@pytest.mark.slow
def test_a_first_ingest_killed_at_the_view_database_leaves_a_warehouse_that_answers(tmp_path):
    target = first_ingest_killed_at(tmp_path, "views")
    assert any(".tmp" in p.name for p in Path(target).iterdir())  # the view database it was writing
    rates = subprocess.run([SCORELAKE, "rates", "-w", target], capture_output=True, text=True, timeout=120)
    assert rates.returncode == 0, rates.stderr  # the committed tables, bound in memory
    again = subprocess.run([SCORELAKE, "ingest", str(CONFORMANCE / BASELINE), "-w", target], capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    wh = scorelake.open(target)
    assert wh.check().consistent and wh.summary(BASELINE) == (CONFORMANCE / BASELINE / "all_summary.txt").read_text()
    assert not [p for p in Path(target).iterdir() if ".tmp" in p.name]


@pytest.mark.slow
def test_the_viewer_answers_only_as_itself_and_a_bad_parameter_is_a_4xx(warehouse):
    from tests.test_view import serve

    server, url = serve(Path(warehouse))
    try:
        def status(path: str, host: str | None = None) -> int:
            request = urllib.request.Request(url + path, headers={"Host": host} if host else {})
            try:
                return urllib.request.urlopen(request, timeout=30).status
            except urllib.error.HTTPError as exc:
                return exc.code

        port = url.rsplit(":", 1)[1]
        assert status("/") == 200 and status("/", f"localhost:{port}") == 200
        assert status("/", "attacker.example") == 421 and status("/", f"attacker.example:{port}") == 421
        assert status(f"/runs/{BASELINE}?offset=9223372036854775808") == 400
        assert status(f"/runs/{BASELINE}?offset=-1") == 400 and status(f"/runs/{BASELINE}?sort=nope") == 400
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=30)
    assert "Traceback" not in stderr


@pytest.mark.slow
@pytest.mark.parametrize("repetition", range(20))
def test_an_ingest_and_a_new_policy_at_once_on_object_storage_leave_the_policy_whole(s3_warehouse, s3_server,
                                                                                        repetition):
    """On object storage writers do not wait for each other: an `ingest --force` that replaces every
    run's generation while `rescore --policy new` scores the old ones. Whatever the interleaving, the
    new policy ends up covering every committed scenario (20 repetitions of the race)."""
    env = {**os.environ, **s3_server}
    sessions = [str(CONFORMANCE / BASELINE), str(CONFORMANCE / "eval_20260904_083000")]
    assert subprocess.run([SCORELAKE, "ingest", *sessions, "-w", s3_warehouse], env=env,
                          capture_output=True, timeout=300).returncode == 0
    ingest = subprocess.Popen([SCORELAKE, "ingest", *sessions, "--force", "-w", s3_warehouse], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rescore = subprocess.Popen([SCORELAKE, "rescore", "--policy", "new", "--judge-threshold", "0.5", "-w",
                                s3_warehouse], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    outcomes = [(p.wait(timeout=300), p.stderr.read()) for p in (ingest, rescore)]
    assert all(code == 0 for code, _ in outcomes), outcomes
    wh = scorelake.open(s3_warehouse)
    scored = wh.sql("SELECT count(*) AS n FROM scenario_scores WHERE policy_name = 'new'")["n"][0]
    assert scored == wh.runs()["n_scenarios"].sum() == 28
    assert wh.check().consistent


def _policy_rows(store, policy) -> dict[str, int]:
    return {table: store.tables.read(table).filter(pl.col("policy_id") == policy.id).select(pl.len()).collect().item()
            for table in ("scores", "rate_counts")}


@pytest.mark.parametrize("where", ["before its read", "inside its commit"])
def test_two_writers_scoring_one_policy_at_once_store_its_scores_once(tmp_path, monkeypatch, where):
    """On object storage writers do not wait for each other: another writer scores the same policy
    either before this one looks for what is scored, or between the snapshot this one's commit is
    based on and the commit itself (a conflict, retried on a fresh read). Either way every score is
    stored once (today's main stored them twice)."""
    from scorelake.storage import Store, _tables
    from scorelake.pipeline import _rescore
    from scorelake.pipeline._rescore import rescore
    from scorelake.transforms.scoring import Policy

    scorelake.open(tmp_path).ingest(CONFORMANCE / BASELINE)
    store, policy = Store(tmp_path), Policy(name="new", judge_threshold=0.5)
    other_writer_ran = []

    def once(real):
        def interleaved(*args, **kwargs):
            if not other_writer_ran:
                other_writer_ran.append(True)
                assert rescore(store, policy) == 14  # the other writer, whole, first
            return real(*args, **kwargs)
        return interleaved

    if where == "before its read":
        monkeypatch.setattr(_rescore, "coverage", once(_rescore.coverage))
    else:
        monkeypatch.setattr(_tables, "conform", once(_tables.conform))
    rescore(store, policy)
    assert other_writer_ran
    assert _policy_rows(store, policy)["scores"] == 14
    counts = store.tables.read("rate_counts").filter(pl.col("policy_id") == policy.id).collect()
    assert counts["scenarios"].sum() == 14


def test_scores_stored_twice_are_reported_by_check_and_repaired_by_the_next_rescore(tmp_path):
    from scorelake.storage import Store
    from scorelake.transforms.scoring import Policy

    wh = scorelake.open(tmp_path)
    wh.ingest(CONFORMANCE / BASELINE)
    wh.rescore("new", judge_threshold=0.5)
    store, policy = Store(tmp_path), Policy(name="new", judge_threshold=0.5)
    for table in ("scores", "rate_counts"):  # as two blind appends of an older scorelake left them
        store.tables.append(table, store.tables.read(table).filter(pl.col("policy_id") == policy.id).collect())
    checked = runner.invoke(app, ["check", "-w", str(tmp_path)])
    assert checked.exit_code == 1 and "scores cover 28 of 14 scenarios (stored twice" in checked.output
    assert wh.rescore("new", judge_threshold=0.5).scored == {"new": 14}
    assert _policy_rows(store, policy)["scores"] == 14
    assert runner.invoke(app, ["check", "-w", str(tmp_path)]).exit_code == 0
    assert wh.rates(policy="new").filter(pl.col("domain") == "(all)")["success_total"].sum() == 14


@pytest.mark.parametrize("args, option", [
    (["gate", BASELINE, BASELINE, "--max-drop", "nan"], "--max-drop"),
    (["gate", BASELINE, BASELINE, "--max-drop", "-1"], "--max-drop"),
    (["gate", BASELINE, BASELINE, "--max-p95-rise", "-5"], "--max-p95-rise"),
    (["gate", BASELINE, BASELINE, "--max-p95-rise", "inf"], "--max-p95-rise"),
    (["gate", BASELINE, BASELINE, "--alpha", "1e-16"], "--alpha"),
    (["compare", BASELINE, BASELINE, "--alpha", "nan"], "--alpha"),
    (["cost", "--price", "agent=nan,1"], "--price agent"),
    (["cost", "--price", "user=1,inf"], "--price user"),
    (["cost", "--price", "judge=-1,1"], "--price judge"),
    (["judges", "--price-in", "nan"], "--price-in"),
    (["judges", "--price-out", "-2"], "--price-out"),
    (["rejudge", "--judge", "j", "--judge-url", "http://127.0.0.1:9/v1", "--seed", str(2**64)], "--seed"),
    (["serve", "runs", "--interval", "nan"], "--interval"),
    (["serve", "runs", "--interval", "60", "--max-drop", "inf"], "--max-drop"),
    (["view", "--port", "70000"], "--port"),
])
def test_a_number_that_would_switch_a_check_off_is_refused_naming_the_option(warehouse, args, option):
    done = runner.invoke(app, [*args, "-w", warehouse])
    assert done.exit_code == 2, done.output
    assert option in done.output and "Traceback" not in done.output


@pytest.mark.slow
def test_the_viewers_review_writes_refuse_what_they_cannot_store_and_never_read_a_huge_body(tmp_path):
    """A reviewer named in Chinese or with an emoji is stored and remembered (its cookie quoted); an
    assertion that is not a whole number and a verdict other than pass / fail are a 400 with nothing
    stored; a body declared or sent larger than a form is refused without being read (server memory)."""
    import socket

    from tests.test_view import serve

    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(CONFORMANCE / BASELINE)
    server, url = serve(tmp_path / "wh", "--review", "--token", "secret-secret-secret")
    origin = {"Origin": url, "Content-Type": "application/x-www-form-urlencoded"}

    def post(fields: dict, token: str = "secret-secret-secret") -> tuple[int, dict]:
        from urllib.parse import urlencode

        body = urlencode({"token": token, "run": BASELINE, "scenario": "qa__telephone_inventor",
                          "signal": "judge_passed", **fields}).encode()
        request = urllib.request.Request(url + "/review", body, origin, method="POST")
        opener = urllib.request.build_opener(type("NoRedirect", (urllib.request.HTTPRedirectHandler,),
                                                  {"redirect_request": lambda *a, **k: None}))
        try:
            response = opener.open(request, timeout=30)
            return response.status, dict(response.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers)

    try:
        for name in ("李雷", "fox 🦊"):
            status, headers = post({"verdict": "pass", "reviewer": name})
            assert status == 303, (name, status)
            assert "scorelake_reviewer=" in headers.get("set-cookie", "")
        assert set(wh.reviews(history=True)["reviewer"]) == {"李雷", "fox 🦊"}
        for fields in ({"assertion": "abc"}, {"assertion": "0x1"}, {"assertion": "1.0"}, {"verdict": "withdrawn"},
                       {"verdict": "maybe"}):
            status, _ = post({"verdict": "pass", "reviewer": "eve", **fields})
            assert status == 400, fields
        assert "eve" not in set(wh.reviews(history=True)["reviewer"])

        host, port = url.removeprefix("http://").split(":")
        for declared in ("300000000", None):  # declared too large; sent chunked without end
            with socket.create_connection((host, int(port)), timeout=30) as sock:
                length = f"Content-Length: {declared}\r\n" if declared else "Transfer-Encoding: chunked\r\n"
                sock.sendall(f"POST /review HTTP/1.1\r\nHost: {host}:{port}\r\n{length}"
                             "Content-Type: application/x-www-form-urlencoded\r\n\r\n".encode())
                chunk = b"x" * 65536
                try:
                    for _ in range(64):  # 4 MB at most: the answer comes long before
                        sock.sendall(chunk if declared else b"10000\r\n" + chunk + b"\r\n")
                except OSError:  # the server answered and closed
                    pass
                answer = sock.recv(200).decode(errors="replace")
            assert answer.startswith("HTTP/1.1 413"), answer
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=30)
    assert "Traceback" not in stderr


@pytest.mark.slow
def test_a_first_ingest_killed_while_it_creates_the_tables_is_said_and_completed_by_a_write(tmp_path):
    target = first_ingest_killed_at(tmp_path, "create:4")
    reads = [["check"], ["rates"], ["sql", "SELECT count(*) FROM scenario_scores"], ["reviews"], ["log"],
             ["policies"], ["latency"]]
    for args in reads:
        done = runner.invoke(app, [*args, "-w", target])
        assert done.exit_code == 1, (args, done.output)
        assert "the warehouse is incomplete" in done.output and "scorelake compact" in done.output, done.output
        assert done.exception is None or isinstance(done.exception, SystemExit), (args, done.exception)
    assert runner.invoke(app, ["compact", "-w", target]).exit_code == 0
    for args in reads:
        assert runner.invoke(app, [*args, "-w", target]).exit_code in (0, 2), args  # answers (2: no policy yet)
    again = runner.invoke(app, ["ingest", str(CONFORMANCE / BASELINE), "-w", target])
    assert again.exit_code == 0, again.output
    assert scorelake.open(target).check().consistent


@pytest.mark.slow
def test_a_cluster_address_that_never_answers_is_one_line_within_its_deadline_and_nothing_is_made(tmp_path):
    """--dask-address at a port that accepts and never answers, at an HTTP server, and at a closed
    port: each a one-line error, exit 2, within the documented deadline, no warehouse made (no
    flow run left Running, no empty tables)."""
    import http.server
    import socket
    import threading
    import time

    from scorelake.flows.runtime import DASK_DEADLINE_S

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    accepted = []
    threading.Thread(target=lambda: [accepted.append(silent.accept()) for _ in range(8)], daemon=True).start()
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    try:
        for port in (silent.getsockname()[1], web.server_port, closed_port):
            warehouse = tmp_path / f"wh{port}"
            started = time.monotonic()
            done = subprocess.run([SCORELAKE, "ingest", str(CONFORMANCE / BASELINE), "-w", str(warehouse),
                                   "--dask-address", f"tcp://127.0.0.1:{port}"], capture_output=True, text=True,
                                  timeout=120)
            assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, (port, done.stderr)
            assert f"--dask-address tcp://127.0.0.1:{port}" in done.stderr
            assert time.monotonic() - started < DASK_DEADLINE_S + 20 and not warehouse.exists()
    finally:
        web.shutdown()
        silent.close()


def test_smaller_faults_the_readers_cache_on_threads_prices_a_rule_without_its_option_and_a_huge_line(tmp_path):
    """The readers' definition cache under 4 threads at its size limit loses nothing and raises
    nothing; a price that would make a cost infinite is refused naming it; the adjudicated rule
    without --adjudicator says so, not "--value"; a review file of one 200 MB line is refused, naming
    the line, in a process that stays under 512 MB (it holds the one copy)."""
    import threading

    from scorelake.transforms.sources.nemo._read import _KeptByContent

    kept = _KeptByContent(limit=64)
    failures = []

    def churn(worker: int) -> None:
        try:
            for k in range(5_000):
                key = (f"{worker}-{k}".encode(), b"x" * 8)
                assert kept.keep(key, k) == k
        except Exception as exc:  # noqa: BLE001  (what a race raises: KeyError, RuntimeError)
            failures.append(exc)

    threads = [threading.Thread(target=churn, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures and kept.size == sum(len(part) for key in kept for part in key) <= 64

    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(CONFORMANCE / BASELINE)
    priced = runner.invoke(app, ["cost", "--price", "agent=1e308,1e308", "-w", wh.location])
    assert priced.exit_code == 2 and "--price agent: between 0 and 1e+09" in priced.stderr
    ruled = runner.invoke(app, ["rescore", "--policy", "x", "--reviews", "--review-rule", "adjudicated",
                                "-w", wh.location])
    assert ruled.exit_code == 2 and "--value" not in ruled.stderr and "--adjudicator NAME" in ruled.stderr

    huge = tmp_path / "huge.csv"
    with open(huge, "w") as out:
        out.write("run_id,scenario_name,signal,verdict,note\n")
        out.write(f"{BASELINE},qa__moon_landing,judge_passed,pass,")
        for _ in range(200):
            out.write("n" * 1_000_000)
        out.write("\n")
    probe = (f"import scorelake\ntry:\n"
             f"    scorelake.open({str(tmp_path / 'wh')!r}).import_reviews({str(huge)!r})\n"
             "except scorelake.InvalidArgument as exc:\n    print(exc)\n"
             + PRINT_PEAK_MB)
    said = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300).stdout.split("\n")
    assert "line 2 is 200,000,0" in said[0] and int(said[1]) < 512, said
