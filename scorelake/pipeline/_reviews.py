"""People's verdicts: checked against the stored runs, appended to ``reviews`` as a write step of
their own, read back as the verdict that stands per key (the latest row; a withdrawal removes it).

A key is (run, scenario, signal, assertion): ``signal`` a ``success_breakdown`` name or
``is_successful`` (the composite); ``assertion`` the NL assertion or DB predicate number of
``nl_assertion`` / ``db_state_assertion``, or none for the signal as a whole.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from scorelake.storage import Store
from scorelake.transforms.columns import frame
from scorelake.transforms.errors import InvalidArgument
from scorelake.transforms.names import SIGNALS
from scorelake.transforms.registry import BY_NAME, ITEM_SIGNALS
from scorelake.transforms.scoring import reviewer_identity, standing_verdicts
from scorelake.transforms.sources import open_regular, read_within

COMPOSITE = "is_successful"
REVIEW_SIGNALS = (*SIGNALS, COMPOSITE)
VERDICTS = ("pass", "fail")
WITHDRAWN = "withdrawn"
KEY = ["run_id", "scenario_name", "signal", "assertion"]
REVIEW_LOCK_WAIT_S = 120.0  # a review waits this long for another writer (an ingest, a reviewer) to finish
IMPORT_COLUMNS = ("run_id", "scenario_name", "signal", "verdict", "assertion", "reviewer", "note")
REQUIRED_COLUMNS = ("run_id", "scenario_name", "signal", "verdict")
MAX_IMPORT_BYTES = 1 << 30  # a file of reviews: millions of rows
MAX_LINE_BYTES = 1 << 20  # one review's line, its note included


@dataclass(frozen=True)
class Review:
    """One verdict a person gives (``verdict`` pass, fail, or withdrawn), before it is stored."""

    run_id: str
    scenario_name: str
    signal: str
    verdict: str
    reviewer: str
    assertion: int | None = None
    note: str | None = None
    line: int | None = None  # where an imported review came from


def _items(store: Store, run_ids: list[str]) -> pl.DataFrame:
    """Per scenario of the runs: how many NL assertions and DB predicates it has (the numbers a
    review may name)."""
    runs = store.tables.committed_runs().filter(pl.col("run_id").is_in(run_ids))
    nl_asked = (store.tables.scan("judge_inputs", runs)
                .select("run_id", "scenario_name", pl.col("nl_assertions").list.len().alias("_asked")))
    # an NL assertion the judge was asked about counts even where its reply graded none
    asked = {"nl_assertion": pl.col("_asked").fill_null(0)}
    return (store.tables.scan("scenarios", runs)
            .join(nl_asked, on=["run_id", "scenario_name"], how="left")
            .select("run_id", "scenario_name",
                    *(pl.max_horizontal(pl.col(BY_NAME[name].items[1]).fill_null(0), asked.get(name, 0)).alias(name)
                      for name in ITEM_SIGNALS))
            .collect())


def check_reviews(store: Store, reviews: list[Review]) -> list[str]:
    """What is wrong with each review, one line each (an imported one names its line): an unknown run,
    scenario, signal or assertion, a verdict other than pass or fail."""
    known_runs = set(store.tables.committed_runs()["run_id"])
    items = {(row["run_id"], row["scenario_name"]): row
             for row in _items(store, sorted({r.run_id for r in reviews} & known_runs)).iter_rows(named=True)}
    problems = []
    for review in reviews:
        where = f"line {review.line}: " if review.line is not None else ""
        said = []
        if review.run_id not in known_runs:
            said.append(f"no run '{review.run_id}' in the warehouse")
        elif (review.run_id, review.scenario_name) not in items:
            said.append(f"no scenario '{review.scenario_name}' in run '{review.run_id}'")
        if review.signal not in REVIEW_SIGNALS:
            said.append(f"unknown signal '{review.signal}' (one of {', '.join(REVIEW_SIGNALS)})")
        if review.verdict not in (*VERDICTS, WITHDRAWN):
            said.append(f"verdict '{review.verdict}': pass or fail")
        if review.assertion is not None and review.signal in REVIEW_SIGNALS:
            if review.signal not in ITEM_SIGNALS:
                said.append(f"--assertion is for {' and '.join(ITEM_SIGNALS)}, not {review.signal}")
            elif (review.run_id, review.scenario_name) in items:
                count = items[review.run_id, review.scenario_name][review.signal]
                if not 1 <= review.assertion <= count:
                    unit = "NL assertions" if review.signal == "nl_assertion" else "DB predicates"
                    said.append(f"{review.signal} {review.assertion}: the scenario has {count} {unit}")
        problems += [where + thing for thing in said]
    return problems


def _review_id(review: Review, version: int) -> str:
    """A review's id: what it says, by whom, on the warehouse version it was made on. Stored again
    at that version (an import killed after its rows landed, before its log step: nothing moves the
    version on then), it is the same review, not a second one."""
    said = [review.run_id, review.scenario_name, review.signal, review.assertion, review.verdict, review.reviewer,
            review.note, version]
    return hashlib.sha256(json.dumps(said).encode()).hexdigest()[:24]


def store_reviews(store: Store, reviews: list[Review], detail: str) -> tuple[int, int]:
    """With the writer lock held: append the reviews as one write step, recorded in the log as
    ``detail``: the warehouse version they were made on, and the version they made. Rows this very
    step stored already (it was killed before its log step) are not stored twice: the step completes."""
    version = store.tables.delta_table("commits").version()
    now = datetime.now(UTC)
    rows = frame("reviews", [
        {"review_id": _review_id(r, version), "run_id": r.run_id, "scenario_name": r.scenario_name,
         "signal": r.signal, "assertion": r.assertion, "verdict": r.verdict, "reviewer": r.reviewer,
         "note": r.note, "reviewed_at": now, "warehouse_version": version} for r in reviews]).unique("review_id")
    stored = (store.tables.read("reviews").filter(pl.col("warehouse_version") == version)
              .select("review_id").collect())
    store.tables.append("reviews", rows.join(stored, on="review_id", how="anti"))
    store.log.record("review", detail)
    store.views.build()
    return version, store.tables.delta_table("commits").version()


def describe(reviews: list[Review]) -> str:
    """The log's words for a review step: who reviewed which scenario (or how many)."""
    names = sorted({r.reviewer for r in reviews})
    who = ", ".join(names) if len(names) <= 5 else f"{len(names):,} reviewers"  # a log line, not a roster
    if len(reviews) == 1:
        r = reviews[0]
        action = "withdrawal" if r.verdict == WITHDRAWN else "review"
        item = f" #{r.assertion}" if r.assertion is not None else ""
        return f"{action} by {who} of {r.run_id}/{r.scenario_name} ({r.signal}{item}: {r.verdict})"
    scenarios = len({(r.run_id, r.scenario_name) for r in reviews})
    return f"{len(reviews)} reviews by {who} of {scenarios} scenarios"


def standing(store: Store, version: int | None = None, rule: str = "latest",
             adjudicator: str | None = None) -> pl.LazyFrame:
    """The verdict that stands per key under the review ``rule`` (``scoring.standing_verdicts``), from
    each reviewer's own standing verdict: their latest row of the key, unless it withdrew theirs."""
    return standing_verdicts(_each_reviewers(store, version), rule, adjudicator)


def _each_reviewers(store: Store, version: int | None = None) -> pl.LazyFrame:
    """Each reviewer's own standing verdict per key: their latest row of it, unless it withdrew theirs."""
    return (store.tables.read("reviews", version).sort("reviewed_at", "review_id")
            .unique([*KEY, "reviewer"], keep="last", maintain_order=True).filter(pl.col("verdict") != WITHDRAWN))


def ruled_reviews(store: Store, rule: str, adjudicator: str | None, scenarios: list[str]) -> pl.DataFrame:
    """Per key people reviewed in ``scenarios`` (``run_id`` and ``scenario_name`` joined by \x1f), as
    ``rule`` rules it: the verdict that stands, or ``undecided`` where none does, and by whom in words
    ("the majority of 3 reviewers", "the adjudicator carol", "2 reviewers, tied"), as ``reviews``
    rows (``StandingReview``'s columns, with ``run_id`` and ``scenario_name``): what ``show --policy``
    says a policy that takes reviews counted."""
    mine = _each_reviewers(store).filter(pl.concat_str("run_id", "scenario_name", separator="\x1f").is_in(scenarios))
    votes = mine.group_by(KEY).agg(
        _passes=(pl.col("verdict") == "pass").sum(), _fails=(pl.col("verdict") == "fail").sum(), _n=pl.len(),
        reviewed_at=pl.col("reviewed_at").max(), note=pl.col("note").sort_by("reviewed_at").last(),
        _who=pl.col("reviewer").sort_by("reviewed_at").last())
    stood = standing_verdicts(mine, rule, adjudicator).select(*KEY, _stood=pl.col("verdict"))
    n, agreed = pl.col("_n").cast(pl.String), (pl.col("_passes") == 0) | (pl.col("_fails") == 0)
    one = pl.col("_n") == 1
    by = (pl.when(one).then(pl.col("_who"))
          .when(pl.col("_stood").is_null() & pl.lit(rule == "majority")).then(pl.format("{} reviewers, tied", n))
          .when(pl.col("_stood").is_null()).then(pl.format("{} reviewers disagreeing, no ruling by {}", n,
                                                           pl.lit(adjudicator)))
          .when(pl.lit(rule == "majority")).then(pl.format("the majority of {} reviewers", n))
          .when(agreed).then(pl.format("{} reviewers agreeing", n))
          .otherwise(pl.format("the adjudicator {}", pl.lit(adjudicator))))
    return (votes.join(stood, on=KEY, how="left", nulls_equal=True)
            .select("run_id", "scenario_name", "signal", "assertion", verdict=pl.col("_stood").fill_null("undecided"),
                    reviewer=by, note=pl.when(one).then("note"), reviewed_at="reviewed_at")
            .sort("run_id", "scenario_name", "signal", pl.col("assertion"), nulls_last=False).collect())


def undecided(store: Store, rule: str, adjudicator: str | None = None) -> int:
    """The keys people reviewed where no verdict stands under ``rule``: a tie under ``majority``,
    a disagreement the ``adjudicator`` has not ruled on under ``adjudicated``. Their signals keep
    the verdict they had, and the command that scores them says how many."""
    mine = _each_reviewers(store)
    return (mine.select(KEY).unique().join(standing_verdicts(mine, rule, adjudicator).select(KEY), on=KEY,
                                           how="anti", nulls_equal=True).select(pl.len()).collect().item())


def _file_text(path: Path) -> str:
    """The text of a regular file (never a FIFO or a device, which would never end), of at most
    ``MAX_IMPORT_BYTES`` and no line longer than ``MAX_LINE_BYTES``; ``InvalidArgument`` naming it
    otherwise. Lines are measured on the bytes, read in one call, before any decoding: a file of one
    huge line is refused holding one copy of it (a 200 MB one took 2 GB when a parser met it)."""
    fd = open_regular(path)
    if fd is None:
        reason = "no such file" if not os.path.lexists(path) else "not a regular file (a folder, a FIFO or a device)"
        raise InvalidArgument(f"{path}: {reason}")
    try:
        data = read_within(fd, MAX_IMPORT_BYTES, expected=os.fstat(fd).st_size)
        if data is None:
            raise InvalidArgument(f"{path}: larger than {MAX_IMPORT_BYTES:,} bytes: split it")
        _check_line_lengths(path, data)
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidArgument(f"{path}: not UTF-8 ({exc})") from None
    except OSError as exc:
        raise InvalidArgument(f"{path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _check_line_lengths(path: Path, data: bytes) -> None:
    """``InvalidArgument`` naming the first line longer than ``MAX_LINE_BYTES``."""
    start, number = 0, 1
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        if end - start > MAX_LINE_BYTES:
            raise InvalidArgument(f"{path}: line {number} is {end - start:,} bytes long: a review's line "
                                  f"holds at most {MAX_LINE_BYTES:,}")
        start, number = end + 1, number + 1


def read_review_file(path: Path, reviewer: str) -> tuple[list[Review], list[str]]:
    """Reviews from a CSV file (a header row naming the columns) or a JSON Lines file (an object a
    line): ``run_id``, ``scenario_name``, ``signal``, ``verdict``, optional ``assertion``,
    ``reviewer`` (default ``reviewer``) and ``note``; and what is wrong with the lines that are not
    reviews, one line each. ``InvalidArgument`` when the file cannot be read as either."""
    text = _file_text(path)
    records: list[tuple[int, dict]] = []
    problems: list[str] = []
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json") or text.lstrip().startswith("{"):
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                problems.append(f"line {number}: not JSON ({exc})")
                continue
            except RecursionError:
                problems.append(f"line {number}: not JSON (nested too deep)")
                continue
            if not isinstance(record, dict):
                problems.append(f"line {number}: not an object")
                continue
            records.append((number, record))
    else:
        csv.field_size_limit(max(csv.field_size_limit(), len(text)))  # a note may be longer than 128 KiB
        reader = csv.DictReader(io.StringIO(text))
        try:
            missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise InvalidArgument(f"{path}: no column {', '.join(missing)} (the header row names "
                                      f"{', '.join(REQUIRED_COLUMNS)}, and optionally assertion, reviewer, note)")
            records = [(reader.line_num, row) for row in reader]
        except csv.Error as exc:
            raise InvalidArgument(f"{path}: line {reader.line_num}: not CSV ({exc})") from None
    reviews = []
    for number, record in records:
        absent = [c for c in REQUIRED_COLUMNS if record.get(c) in (None, "")]
        if absent:
            problems.append(f"line {number}: no {', '.join(absent)}")
            continue
        assertion = record.get("assertion")
        if assertion in (None, ""):
            assertion = None
        elif type(assertion) is int or (isinstance(assertion, str) and assertion.strip().isdigit()):
            assertion = int(assertion)
        else:  # 1.5, 1e400, true, "0x1": no assertion's number
            problems.append(f"line {number}: assertion '{str(assertion)[:40]}' is not a whole number")
            continue
        verdict = str(record["verdict"]).strip().lower()
        if verdict not in VERDICTS:  # an import says pass or fail (withdraw one by one)
            problems.append(f"line {number}: verdict '{record['verdict']}': pass or fail")
            continue
        try:
            who = reviewer_identity(str(record.get("reviewer") or reviewer))
        except ValueError as exc:
            problems.append(f"line {number}: {exc}")
            continue
        reviews.append(Review(str(record["run_id"]), str(record["scenario_name"]), str(record["signal"]), verdict,
                              who, assertion,
                              None if record.get("note") in (None, "") else str(record["note"]), number))
    return reviews, problems
