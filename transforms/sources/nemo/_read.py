"""Reading one session directory into table rows: runs, scenarios, verdicts, quarantine.

Everything a scenario needs for scoring is read here once; re-scoring later works from the
stored rows alone. A scenario that cannot be read becomes a quarantine row naming the file
and the reason; it never stops the rest of the session.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, TypeVar

from scorelake.transforms.columns import SCENARIO_COLUMNS
from scorelake.transforms.scoring import ActionMatch, ActionMatchUndefined, TextFlags, compare
from scorelake.transforms.sources._evidence import (
    action_verdict_rows,
    judge_input_rows,
    judge_row,
    task_rows,
    tool_call_rows,
    turn_rows,
)
from scorelake.transforms.sources._files import (
    BadInput,
    SessionTables,
    check_directory,
    dump_json,
    inside,
    is_utf8,
    json_of,
    load_json,
    load_json_if_present,
    printable,
    read_bytes,
    resolves_inside,
    validate,
)
from scorelake.transforms.sources._session import ABSENT, Session, stat_token, stat_token_of
from scorelake.transforms.sources.nemo._listing import (
    AUDIO_FILE,
    SCENARIO_INPUTS,
    SEGMENTS_FILE,
    USER_PROMPT_FILE,
    list_session,
    scenario_fingerprint,
    session_fingerprint,
    session_folders,
)
from scorelake.transforms.sources.nemo._raw import Invocation, JudgeResultFile, MetadataFile, MetricsFile, RunArgsFile
from scorelake.transforms.sources.nemo.columns import (
    MISSING,
    NEMO_COLUMNS,
    SCENARIO_FILES,
    Definition,
    Derived,
    definition_of,
)
from scorelake.transforms.voice import call_end, key_entities, segments_of, voice_row

PREDICTION_FILE = "final_agent_response.json"
DEFAULT_RUN_GROUP = "default"
DEFAULT_REFERENCE_FILE = "reference_answer.json"


def parse_db_hash_file(data: bytes, file: str) -> dict[str, str | None]:
    """``final_scenario_db_hash.txt``: ``db_hash: <hex>`` and optionally ``user_db_hash: <hex>``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(file, "not UTF-8", str(exc)) from None
    values: dict[str, str | None] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        if not sep or key.strip() not in ("db_hash", "user_db_hash"):
            raise BadInput(file, "unexpected line", line[:80])
        value = value.strip()
        values[key.strip()] = None if value in ("", "None", "null") else value
    return values


@dataclass
class RunContext:
    """What every scenario of a session shares."""

    session: Session
    generation: str
    invocations: list[Invocation]
    queue: list[str]

    def invocation_for(self, first_turn_at: str | None) -> int:
        """Index of the invocation that produced a scenario: the last one started before its first turn.

        A scenario with no turns is always re-run on resume, so it belongs to the last invocation.
        """
        last = len(self.invocations) - 1
        if not first_turn_at:
            return last
        index = 0
        for i, inv in enumerate(self.invocations):
            if inv.started_at and inv.started_at <= first_turn_at:
                index = i
        return index


@dataclass
class ScenarioSource:
    """The parsed files of one scenario directory."""

    dir: Path
    run: RunContext
    docs: dict[str, Any]
    metadata: MetadataFile
    metrics: MetricsFile
    judge: JudgeResultFile | None
    # the bytes of metadata.json and of the reference answer (None: no file), its definition's
    definition_files: tuple[bytes, bytes | None]
    reference: Any = MISSING
    prediction: Any = MISSING
    action: ActionMatch | None = None
    agent_context_messages: int | None = None
    invocation_index: int = 0
    fingerprint: str = ""

    @property
    def invocation(self) -> Invocation:
        return self.run.invocations[self.invocation_index]

    @cached_property
    def definition(self) -> Definition:
        return _DEFINITIONS.get(self.definition_files) or _DEFINITIONS.keep(self.definition_files, definition_of(self))


Kept = TypeVar("Kept")


class _KeptByContent(dict[tuple, Kept]):
    """Values worked out from a scenario's definition files alone, kept by their contents (a tuple
    of bytes or text, None for a file absent) for the next scenario whose files hold the same, the
    oldest let go past ``limit`` bytes of keys. Every run of a suite holds the same definitions:
    hashing one (its parts as sorted JSON, each hashed) cost a reader about 6% of its time, finding
    its key entities 2%; comparing the contents costs a microsecond."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit, self.size = limit, 0
        self._lock = threading.Lock()  # readers on threads share it (a read is one atomic dict lookup)

    def keep(self, key: tuple, value: Kept) -> Kept:
        with self._lock:
            if key not in self:
                self.size += sum(len(part) for part in key if part)
            while self and self.size > self.limit:
                oldest = next(iter(self))
                self.size -= sum(len(part) for part in oldest if part)
                del self[oldest]
            self[key] = value
        return value


_DEFINITIONS: _KeptByContent[Definition] = _KeptByContent(limit=16 << 20)
_ENTITIES: _KeptByContent[tuple[str, ...]] = _KeptByContent(limit=16 << 20)


# The declared mapping made functions once: (column, its sources as (derived, read), required, the
# file it comes from). A derived source reads the parsed scenario, a path the parsed files.
_COLUMN_READERS = [(column.name, [(True, source.fn) if isinstance(source, Derived) else (False, source.reader())
                                  for source in NEMO_COLUMNS[column.name].sources],
                    NEMO_COLUMNS[column.name].required, NEMO_COLUMNS[column.name].file) for column in SCENARIO_COLUMNS]


def _column_values(src: ScenarioSource) -> dict[str, Any]:
    row: dict[str, Any] = {}
    docs = src.docs
    for name, readers, required, file in _COLUMN_READERS:
        for derived, read in readers:  # the first source that holds a value
            if (value := read(src) if derived else read(docs)) is not None:
                break
        else:
            if required:
                raise BadInput(os.path.relpath(src.dir / file, src.run.session.path),
                               f"required value '{name}' is missing")
        row[name] = value
    return row


def _verdict_rows(src: ScenarioSource) -> list[dict[str, Any]]:
    base = {"run_id": src.run.session.run_id, "generation": src.run.generation,
            "scenario_name": src.metrics.scenario_name}
    rows = []
    defined = src.metadata.db_state_assertions or []  # evaluated in this order (run-format.md §9)
    for i, v in enumerate(src.metrics.db_state_assertion_verdicts or []):
        spec = defined[i] if i < len(defined) and isinstance(defined[i], dict) else {}
        rows.append({**base, "kind": "db_state_assertion", "ordinal": i + 1, "label": v.func_name,
                     "side": v.side, "passed": v.passed, "expected_json": json.dumps(v.expected),
                     "actual_json": json.dumps(v.actual),
                     "arguments_json": dump_json(spec["arguments"]) if "arguments" in spec else None,
                     "detail": v.message, "error": v.error})
    for i, v in enumerate((src.judge.nl_assertion_verdicts if src.judge else None) or []):
        rows.append({**base, "kind": "nl_assertion", "ordinal": v.index if v.index is not None else i + 1,
                     "label": v.assertion, "side": None, "passed": v.passed, "expected_json": None,
                     "actual_json": None, "arguments_json": None, "detail": v.reason, "error": None})
    return rows


def _instructions(src: ScenarioSource, warnings: list[str], seen: dict[str, str]) -> str | None:
    """What the user simulator was told (its prompt), or None: absent, empty or unreadable (a warning)."""
    try:
        data = read_bytes(f"{os.fspath(src.dir)}/{USER_PROMPT_FILE}", src.run.session.path, missing_ok=True,
                          seen=seen)
    except BadInput as err:
        warnings.append(f"{src.dir.name}: task not stored: {err}")
        return None
    return data.decode("utf-8", "replace") if data and data.strip() else None


def _voice_rows(key: dict, src: ScenarioSource, contexts: dict[str, Any], instructions: str | None,
                warnings: list[str], seen: dict[str, str]) -> list[dict]:
    """The scenario's ``voice`` row: turn-taking from its speech segments, what each side heard
    (evidence: a file that cannot be read is a warning, the scenario is scored all the same)."""
    folder, root = os.fspath(src.dir), src.run.session.path
    try:
        segments = load_json_if_present(f"{folder}/{SEGMENTS_FILE}", root, seen=seen)
    except BadInput as err:
        warnings.append(f"{src.dir.name}: speech segments not measured: {err}")
        segments = None

    def entities() -> tuple[str, ...]:  # found only when the agent misheard the user somewhere
        kept = (*src.definition_files, instructions)
        found = _ENTITIES.get(kept)
        return found if found is not None else _ENTITIES.keep(kept, tuple(key_entities(
            None if src.reference is MISSING else src.reference, src.metadata.db_state_assertions, instructions)))

    audio = f"{folder}/{AUDIO_FILE}"
    try:
        found = os.stat(audio)
    except OSError:
        found = None
    seen[audio] = ABSENT if found is None else stat_token_of(found)  # the fingerprint's: no second stat
    unmeasured = lambda reason: warnings.append(f"{src.dir.name}: {AUDIO_FILE} not measured: {reason}")  # noqa: E731
    if found is None:
        audio = None
    elif not stat.S_ISREG(found.st_mode):
        unmeasured(f"not a regular file ({_file_kind(found.st_mode)})")
        audio = None
    elif not resolves_inside(audio, root):
        unmeasured("a link to a file outside the run's directory")
        audio = None
    read = segments_of(segments)
    row = voice_row(key, read.segments, contexts["agent"], contexts["user"], entities, audio, unmeasured,
                    call_s=src.metrics.duration_seconds, ended=call_end(src.metrics.stop_reason),
                    anomalies=[f"{SEGMENTS_FILE}: {anomaly}" for anomaly in read.anomalies])
    warnings += [f"{src.dir.name}: {anomaly}" for anomaly in (row or {}).get("anomalies") or []]
    return [row] if row else []


def _file_kind(mode: int) -> str:
    """What a path that is no regular file is, in words."""
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    return next((name for is_kind, name in kinds if is_kind(mode)), "not a file")


# The folders within a scenario's that its files are read from: each is checked not to be a symlink
# that leaves the run directory (a file's own open follows no symlink, its folders' would).
_INNER_FOLDERS = sorted({os.path.dirname(file) for file in SCENARIO_INPUTS} - {""})


def _seen_or_stat(seen: dict[str, str]) -> Callable[[str], str]:
    """A file's stat token as a read saw it, else as a stat sees it (a file no read opened)."""
    return lambda path: seen[path] if path in seen else stat_token(path)


def read_scenario(scenario_dir: Path, run: RunContext,
                  seen: dict[str, str]) -> tuple[dict, list[dict], dict, list[str]]:
    """One scenario directory as a ``scenarios`` row, its ``verdicts`` rows, its evidence rows per
    table and warnings (evidence that could not be read); raises ``BadInput``. ``seen`` gets the stat
    token of each file read, so its fingerprint (even of a scenario it quarantines) needs no stats again."""
    root = run.session.path
    # paths as strings from here: pathlib's joins cost more than the reads of the small files
    folder = os.fspath(scenario_dir)
    for directory in (folder, *(f"{folder}/{inner}" for inner in _INNER_FOLDERS)):
        check_directory(directory, root)
    docs: dict[str, Any] = {}
    for key, rel in SCENARIO_FILES.items():
        path = f"{folder}/{rel}"
        data = read_bytes(path, root, missing_ok=True, seen=seen)
        if data is None:
            if key in ("metrics", "metadata"):
                reason = "missing file (scenario in flight or crashed)" if key == "metrics" else "missing file"
                raise BadInput(os.path.relpath(path, root), reason)
            continue
        if key == "metadata":
            metadata_bytes = data  # a definition is kept by its files' bytes (``_DEFINITIONS``)
        docs[key] = (parse_db_hash_file(data, os.path.relpath(path, root)) if key == "db_hash"
                     else json_of(data, path, root))
    rel = lambda key: os.path.relpath(f"{folder}/{SCENARIO_FILES[key]}", root)  # noqa: E731
    # the file's name for an error only: a relative path costs more than the validation itself
    metrics = validate(MetricsFile, docs["metrics"], lambda: rel("metrics"))
    metadata = validate(MetadataFile, docs["metadata"], lambda: rel("metadata"))
    judge = validate(JudgeResultFile, docs["judge"], lambda: rel("judge")) if "judge" in docs else None
    if metrics.scenario_name != scenario_dir.name:
        raise BadInput(rel("metrics"), f"scenario_name '{metrics.scenario_name}' does not match its directory")

    reference_file = metadata.reference_file or DEFAULT_REFERENCE_FILE
    reference_path = os.path.join(folder, "scenario_config", reference_file)  # a name the run gave: joined, not glued
    if not inside(reference_path, root) or (  # a folder the name goes through may be a symlink out
            os.path.dirname(reference_path) != f"{folder}/scenario_config"
            and not resolves_inside(os.path.dirname(reference_path), root)):
        raise BadInput(rel("metadata"), "reference_file points outside the run directory", reference_file)
    reference_bytes = read_bytes(reference_path, root, missing_ok=True, seen=seen)

    src = ScenarioSource(dir=scenario_dir, run=run, docs=docs, metadata=metadata, metrics=metrics, judge=judge,
                         definition_files=(metadata_bytes, reference_bytes))
    src.invocation_index = run.invocation_for(metrics.turns[0].get("timestamp") if metrics.turns else None)
    if reference_bytes is not None:
        src.reference = json_of(reference_bytes, reference_path, root)
        src.prediction = load_json_if_present(f"{folder}/{PREDICTION_FILE}", root, MISSING, seen)
        if src.prediction is not MISSING:
            flags = TextFlags(metadata.ignore_capitalization, metadata.ignore_punctuation, metadata.clean_text)
            try:
                src.action = compare(src.reference, src.prediction, flags)
            except ActionMatchUndefined as exc:
                raise BadInput(os.path.relpath(reference_path, root), "ACTION_MATCH undefined", str(exc)) from None

    agent_usage = metrics.token_usage.agent if metrics.token_usage else None
    counts_turns = agent_usage is None or agent_usage.n_calls is None  # the stall check needs the context
    contexts, warnings = {}, []
    for side in ("agent", "user"):
        path = f"{folder}/bot_logs_{side}/llm_context.json"
        try:
            contexts[side] = load_json_if_present(path, root, seen=seen)
        except BadInput as err:
            if side == "agent" and counts_turns:
                raise
            warnings.append(f"{scenario_dir.name}: evidence not stored: {err}")  # scored all the same
            contexts[side] = None
    if counts_turns:
        agent = contexts["agent"]
        src.agent_context_messages = None if not isinstance(agent, list) else sum(
            1 for m in agent if isinstance(m, dict) and m.get("role") == "assistant")

    key = {"run_id": run.session.run_id, "generation": run.generation, "scenario_name": metrics.scenario_name}
    turns = turn_rows(key, docs["metrics"].get("turns") or [], docs["metrics"].get("latencies"))
    said = {side: [t["text"] for t in turns if (t["role"] == "user") == (side == "user")] for side in ("user", "agent")}
    evidence = {
        "turns": turns,
        # each side's calls placed in the transcript by the other side's words its context heard
        "tool_calls": [row for side, messages in contexts.items() if isinstance(messages, list)
                       for row in tool_call_rows(key, side, messages, said["agent" if side == "user" else "user"])],
        "judge_results": [judge_row(key, docs["judge"])] if isinstance(docs.get("judge"), dict) else [],
    }
    evidence["judge_inputs"], evidence["judge_prompts"] = (judge_input_rows(key, docs["judge"], metadata.nl_assertions)
                                                           if isinstance(docs.get("judge"), dict) else ([], []))
    instructions = _instructions(src, warnings, seen)
    evidence["tasks"], evidence["task_instructions"] = task_rows(key, instructions, USER_PROMPT_FILE)
    evidence["voice"] = _voice_rows(key, src, contexts, instructions, warnings, seen)
    verdicts = _verdict_rows(src) + (action_verdict_rows(key, src.action) if src.action else [])
    # never None: metrics.json was read, so the folder is a scenario
    src.fingerprint = scenario_fingerprint(root, scenario_dir.name, _seen_or_stat(seen))
    return _column_values(src), verdicts, evidence, warnings


def _session_started_at(run_id: str) -> datetime | None:
    try:
        return datetime.strptime(run_id.removeprefix("eval_"), "%Y%m%d_%H%M%S")
    except ValueError:
        return None


def _assign_positions(rows: list[dict[str, Any]], run: RunContext) -> None:
    """Order of ``all_metrics.json``: scenarios loaded on resume first, then fresh ones, each in queue order."""
    last = len(run.invocations) - 1
    queue_index = {name: i for i, name in enumerate(run.queue)}
    rows.sort(key=lambda r: (r["invocation_index"] == last, queue_index.get(r["scenario_name"], len(queue_index)),
                             r["scenario_name"]))
    for i, row in enumerate(rows):
        row["position"] = i


def read_session(session: Session, generation: str) -> SessionTables:
    """Read a whole session; bad scenarios are quarantined, a bad ``run_args.json`` quarantines them all.

    Its fingerprints are made as it reads (``list_session``'s, from the stats the reads saw): a
    second pass of stats, eight a scenario, cost a worker about 4% of its time."""
    run_row: dict[str, Any] = {
        "run_id": session.run_id, "generation": generation, "source": "nemo",
        "run_group": session.group or DEFAULT_RUN_GROUP, "session_path": str(session.path.resolve()),
        "session_started_at": _session_started_at(session.run_id), "ingested_at": datetime.now(UTC),
    }
    quarantine: list[dict[str, Any]] = []
    errors: list[BadInput] = []

    def quarantined(scenario: str | None, err: BadInput) -> None:
        errors.append(err)
        quarantine.append(err.quarantine_row(session.run_id, generation, scenario))

    try:
        run_args_doc = load_json(session.path / "run_args.json", session.path)
        run_args = validate(RunArgsFile, run_args_doc, "run_args.json")
    except BadInput as err:
        quarantined(None, err)
        listing = list_session(session.path)
        for name in listing.scenarios:
            quarantined(printable(name), BadInput(err.file, "session quarantined: run_args.json unusable", err.reason))
        run_row.update(status="quarantined", n_invocations=0, queued_count=None, judge_enabled=None,
                       judge_threshold=None, strict_match=None, min_agent_turns=None, n_scenarios=0,
                       n_quarantined=len(quarantine), run_args_json=None, fingerprint=listing.fingerprint,
                       n_scenario_dirs=len(listing.scenarios), n_killed_dirs=len(listing.killed))
        return SessionTables(run_row, {"quarantine": quarantine}, errors)

    last = run_args.invocations[-1]
    queue = last.resolved_scenario_names or []
    context = RunContext(session, generation, run_args.invocations, queue)
    rows: list[dict[str, Any]] = []
    verdicts: list[dict[str, Any]] = []
    evidence: dict[str, list[dict[str, Any]]] = {}
    warnings: list[str] = []
    folders, killed = session_folders(session.path)
    scenarios: dict[str, str] = {}  # scenario folder -> its fingerprint, as list_session's
    for name in folders:
        seen: dict[str, str] = {}
        try:
            if not is_utf8(name):
                raise BadInput(printable(name), "folder name is not UTF-8")
            row, row_verdicts, row_evidence, row_warnings = read_scenario(session.path / name, context, seen)
        except BadInput as err:
            # a folder that is no scenario (none of its markers) is not one to quarantine either
            if (fingerprint := scenario_fingerprint(session.path, name, _seen_or_stat(seen))) is not None:
                scenarios[name] = fingerprint
                quarantined(printable(name), err)
            continue
        scenarios[name] = row["fingerprint"]
        rows.append(row)
        verdicts.extend(row_verdicts)
        warnings.extend(row_warnings)
        for table, evidence_rows in row_evidence.items():
            evidence.setdefault(table, []).extend(evidence_rows)
    _assign_positions(rows, context)

    args = last.parsed_args
    run_row.update(
        status="complete" if (session.path / "all_summary.txt").exists() else "partial",
        n_invocations=len(run_args.invocations),
        queued_count=last.resolved_scenario_count if last.resolved_scenario_count is not None
        else (len(queue) or len(scenarios)),
        judge_enabled=args.judge_enabled, judge_threshold=args.judge_threshold, strict_match=args.strict_match,
        min_agent_turns=args.min_agent_turns, n_scenarios=len(rows), n_quarantined=len(quarantine),
        run_args_json=json.dumps(run_args_doc), fingerprint=session_fingerprint(session.path, scenarios, killed),
        n_scenario_dirs=len(scenarios), n_killed_dirs=len(killed),
    )
    return SessionTables(run_row, {"scenarios": rows, "verdicts": verdicts, "quarantine": quarantine, **evidence},
                         errors, warnings)
