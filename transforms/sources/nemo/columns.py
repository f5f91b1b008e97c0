"""Where each ``scenarios`` column of a voice-agent session comes from, declared as data.

A column reads from one or more ``From(file, *path)`` sources (the first one present wins; ``*`` in
a path maps over a list) or is ``Derived`` by a function of the parsed scenario
(``_read.ScenarioSource``). A ``required`` column missing from every source quarantines the
scenario, naming the file it should have come from. The columns and their types are the
warehouse's (``transforms.columns.SCENARIO_COLUMNS``); this is only the voice-agent mapping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from scorelake.transforms.sources._files import dump_json, dump_json_sorted
from scorelake.transforms.sources._lineage import definition_hash, part_hash

# Raw files of a scenario directory that columns read from (run-format.md §1).
SCENARIO_FILES = {
    "metrics": "metrics.json",
    "judge": "judge_result.json",
    "metadata": "scenario_config/metadata.json",
    "db_hash": "final_scenario_db_hash.txt",
}

MISSING = object()  # a value no source holds (distinct from a JSON null)


@dataclass(frozen=True)
class From:
    """A path into one of the parsed ``SCENARIO_FILES``."""

    file: str
    path: tuple[str, ...]

    def __init__(self, file: str, *path: str):
        object.__setattr__(self, "file", file)
        object.__setattr__(self, "path", path)

    def reader(self) -> Callable[[dict[str, Any]], Any]:
        """A function of the parsed files giving the value at the path, where a value absent and a JSON
        null both read None (what a column makes of either). A path of object keys only skips the
        walk's checks per key: it runs for every column of every scenario."""
        file, path = self.file, self.path
        if any(key == "*" or key.isdigit() for key in path):
            return lambda docs: None if (value := _walk(docs.get(file, MISSING), path)) is MISSING else value

        def read(docs: dict[str, Any]) -> Any:
            node = docs.get(file)
            for key in path:
                if type(node) is not dict:
                    return None
                node = node.get(key)
            return node
        return read


@dataclass(frozen=True)
class Derived:
    """Computed from the parsed scenario (``_read.ScenarioSource``) by ``fn``."""

    fn: Callable[[Any], Any]


@dataclass(frozen=True)
class ColumnSource:
    sources: tuple[From | Derived, ...]
    required: bool

    @property
    def file(self) -> str:
        """The file a missing required value should have come from."""
        return next((SCENARIO_FILES[s.file] for s in self.sources if isinstance(s, From)), "metrics.json")


def required(*sources: From | Derived) -> ColumnSource:
    return ColumnSource(sources, True)


def optional(*sources: From | Derived) -> ColumnSource:
    return ColumnSource(sources, False)


def _walk(node: Any, path: tuple[str, ...]) -> Any:
    for i, key in enumerate(path):
        if node is MISSING or node is None:
            return MISSING
        if key == "*":
            if not isinstance(node, list):
                return MISSING
            rest = path[i + 1 :]
            return [v for v in (_walk(item, rest) for item in node) if v is not MISSING]
        if isinstance(node, list) and key.isdigit():
            if int(key) >= len(node):
                return MISSING
            node = node[int(key)]
        elif isinstance(node, dict) and key in node:
            node = node[key]
        else:
            return MISSING
    return node


# The parts of metadata.json that decide a verdict besides the agent (and the reference answer).
DEFINITION_KEYS = ("success_signals", "expected_db_hash", "db_state_assertions", "nl_assertions",
                   "initialization_actions")


def definition_parts(source: Any) -> dict[str, str]:
    """Each part of a voice-agent scenario's definition that it has, hashed: what a comparison names
    when a definition changed."""
    metadata = source.docs.get("metadata") or {}
    parts = {key: part_hash(metadata[key]) for key in DEFINITION_KEYS if metadata.get(key) is not None}
    if source.reference is not MISSING:
        parts["reference"] = part_hash(source.reference)
    return parts


@dataclass(frozen=True)
class Definition:
    """A scenario's columns made of its definition alone (``metadata.json`` and its reference
    answer), nothing the agent did: the same for every run of the scenario."""

    hash: str
    json: str
    reference_json: str | None


def definition_of(source: Any) -> Definition:
    parts = definition_parts(source)
    return Definition(definition_hash(parts), dump_json_sorted(parts), json_text(source.reference))


def json_text(value: Any) -> str | None:
    return None if value is MISSING else dump_json(value)


NEMO_COLUMNS: dict[str, ColumnSource] = {
    # identity
    "run_id": required(Derived(lambda s: s.run.session.run_id)),
    "generation": required(Derived(lambda s: s.run.generation)),
    "scenario_name": required(From("metrics", "scenario_name")),
    "domain": required(Derived(lambda s: s.metrics.scenario_name.split("__", 1)[0])),
    "registry_domain": optional(From("metadata", "domain")),
    "position": required(Derived(lambda s: 0)),  # assigned once the whole session is read
    "invocation_index": required(Derived(lambda s: s.invocation_index)),
    "fingerprint": required(Derived(lambda s: s.fingerprint)),
    "task_id": required(Derived(lambda s: s.metrics.scenario_name)),
    "trial": required(Derived(lambda s: 0)),
    # configuration the scenario was run with
    "success_signals": required(From("metadata", "success_signals")),
    "ignore_capitalization": required(From("metadata", "ignore_capitalization")),
    "ignore_punctuation": required(From("metadata", "ignore_punctuation")),
    "clean_text": required(From("metadata", "clean_text")),
    "disallow_extra_items": required(From("metadata", "disallow_extra_items")),
    "rec_judge_enabled": required(Derived(lambda s: s.invocation.parsed_args.judge_enabled)),
    "rec_judge_threshold": optional(Derived(lambda s: s.invocation.parsed_args.judge_threshold)),
    "rec_strict_match": required(Derived(lambda s: s.invocation.parsed_args.strict_match)),
    # The run-level stall check re-derives with the aggregating (last) invocation's flag (§13).
    "rec_min_agent_turns": required(Derived(lambda s: s.run.invocations[-1].parsed_args.min_agent_turns)),
    # conversation
    "total_turns": required(From("metrics", "total_turns")),
    "scenario_duration": required(From("metrics", "scenario_duration")),
    "duration_seconds": optional(From("metrics", "duration_seconds")),
    "stop_reason": required(From("metrics", "stop_reason")),
    "first_turn_at": optional(From("metrics", "turns", "0", "timestamp")),
    "latency_count": required(From("metrics", "latency_stats", "count")),
    "latency_mean_ms": required(From("metrics", "latency_stats", "mean_ms")),
    "latency_p50_ms": required(From("metrics", "latency_stats", "p50_ms")),
    "latency_p95_ms": required(From("metrics", "latency_stats", "p95_ms")),
    "latency_min_ms": required(From("metrics", "latency_stats", "min_ms")),
    "latency_max_ms": required(From("metrics", "latency_stats", "max_ms")),
    "latency_ms": required(From("metrics", "latencies", "*", "latency_ms")),
    "agent_n_calls": optional(From("metrics", "token_usage", "agent", "n_calls")),
    "agent_prompt_tokens": optional(From("metrics", "token_usage", "agent", "prompt")),
    "agent_completion_tokens": optional(From("metrics", "token_usage", "agent", "completion")),
    "user_n_calls": optional(From("metrics", "token_usage", "user", "n_calls")),
    "user_prompt_tokens": optional(From("metrics", "token_usage", "user", "prompt")),
    "user_completion_tokens": optional(From("metrics", "token_usage", "user", "completion")),
    "agent_context_messages": optional(Derived(lambda s: s.agent_context_messages)),
    # ACTION_MATCH inputs and comparator outcome
    "has_reference": required(Derived(lambda s: s.reference is not MISSING)),
    "has_prediction": required(Derived(lambda s: s.prediction is not MISSING)),
    "action_match_lenient": optional(Derived(lambda s: s.action.lenient if s.action else None)),
    "action_reference_items": optional(Derived(lambda s: s.action.reference_items if s.action else None)),
    "action_prediction_items": optional(Derived(lambda s: s.action.prediction_items if s.action else None)),
    "reference_json": optional(Derived(lambda s: s.definition.reference_json)),
    "prediction_json": optional(Derived(lambda s: json_text(s.prediction))),
    "definition_hash": required(Derived(lambda s: s.definition.hash)),
    "definition_json": required(Derived(lambda s: s.definition.json)),
    # DB_STATE_MATCH
    "expected_db_hash": optional(From("metadata", "expected_db_hash"), From("metrics", "db_state_expected_hash")),
    "actual_db_hash": optional(From("db_hash", "db_hash"), From("metrics", "db_state_actual_hash")),
    "actual_user_db_hash": optional(From("db_hash", "user_db_hash")),
    "db_match_recorded": optional(Derived(lambda s: None)),
    # DB_STATE_ASSERTION (verdicts only: the predicates' DBs are not on disk)
    "has_db_state_assertions": required(Derived(lambda s: s.metrics.db_state_assertion_verdicts is not None)),
    "dbsa_total": optional(Derived(lambda s: None if s.metrics.db_state_assertion_verdicts is None
    else len(s.metrics.db_state_assertion_verdicts))),
    "dbsa_passed": optional(Derived(lambda s: None if s.metrics.db_state_assertion_verdicts is None
    else sum(v.passed for v in s.metrics.db_state_assertion_verdicts))),
    # judge and NL_ASSERTION
    "judge_ran": required(Derived(lambda s: s.judge is not None)),
    "judge_score": optional(From("judge", "score"), From("metrics", "judge_score")),
    "nl_total": optional(Derived(lambda s: None if s.judge is None or s.judge.nl_assertion_verdicts is None
    else len(s.judge.nl_assertion_verdicts))),
    "nl_passed": optional(Derived(lambda s: None if s.judge is None or s.judge.nl_assertion_verdicts is None
    else sum(v.passed for v in s.judge.nl_assertion_verdicts))),
    # tau2's COMMUNICATE check and reward basis (NULL for voice-agent runs)
    "communicate_total": optional(Derived(lambda s: None)),
    "communicate_passed": optional(Derived(lambda s: None)),
    "reward_basis": optional(Derived(lambda s: None)),
    "basis_checks_missing": optional(Derived(lambda s: None)),
    "task_id_claimed": optional(Derived(lambda s: None)),
    # what upstream stored, kept next to the recomputed values
    "claimed_reward": optional(Derived(lambda s: None)),
    "claimed_success": optional(Derived(
        lambda s: s.metrics.is_successful if isinstance(s.metrics.is_successful, bool) else None)),
    # As the runner prints a bool-or-"N/A" value: Python's str().
    "raw_is_action_match": required(Derived(lambda s: str(s.metrics.is_action_match))),
    "raw_db_state_match": optional(From("metrics", "db_state_match")),
    "raw_db_state_assertion_pass_rate": optional(From("metrics", "db_state_assertion_pass_rate")),
    "raw_nl_assertion_pass_rate": optional(From("metrics", "nl_assertion_pass_rate")),
    "raw_judge_score": optional(From("metrics", "judge_score")),
    "raw_judge_passed": optional(From("metrics", "judge_passed")),
    "raw_clean_exit": required(From("metrics", "clean_exit")),
    "raw_insufficient_agent_turns": optional(From("metrics", "insufficient_agent_turns")),
    "raw_is_successful": required(Derived(lambda s: str(s.metrics.is_successful))),
    "raw_is_task_successful": optional(From("metrics", "is_task_successful")),
    "raw_passed": required(From("metrics", "success_breakdown", "passed")),
    "raw_failed": required(From("metrics", "success_breakdown", "failed")),
    "raw_not_applicable": required(From("metrics", "success_breakdown", "not_applicable")),
    "raw_excluded": required(From("metrics", "success_breakdown", "excluded")),
}
