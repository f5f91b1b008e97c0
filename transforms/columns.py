"""Every warehouse column, declared as data: name, type, where its value comes from, required or not.

A scenario column reads from one or more ``From(file, *path)`` sources (the first one present
wins; ``*`` in a path maps over a list) or is ``Derived`` by a named function in
``transforms.extract``. The other tables are produced by code (run context, verdict
flattening, scoring) and are declared here by name and type so that every table has one
schema, written even when a table is still empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

# Raw files of a scenario directory that columns read from (run-format.md §1).
SCENARIO_FILES = {
    "metrics": "metrics.json",
    "judge": "judge_result.json",
    "metadata": "scenario_config/metadata.json",
    "db_hash": "final_scenario_db_hash.txt",
}

_MISSING = object()


@dataclass(frozen=True)
class From:
    """A path into one of the parsed ``SCENARIO_FILES``."""

    file: str
    path: tuple[str, ...]

    def __init__(self, file: str, *path: str):
        object.__setattr__(self, "file", file)
        object.__setattr__(self, "path", path)

    def get(self, docs: dict[str, Any]) -> Any:
        return _walk(docs.get(self.file, _MISSING), self.path)


@dataclass(frozen=True)
class Derived:
    """Computed from the parsed files and the run context by ``transforms.extract.DERIVATIONS``."""

    name: str


@dataclass(frozen=True)
class Column:
    name: str
    dtype: Any
    sources: tuple[From | Derived, ...]
    required: bool = False
    doc: str = ""


def _walk(node: Any, path: tuple[str, ...]) -> Any:
    for i, key in enumerate(path):
        if node is _MISSING or node is None:
            return _MISSING
        if key == "*":
            if not isinstance(node, list):
                return _MISSING
            rest = path[i + 1 :]
            return [v for v in (_walk(item, rest) for item in node) if v is not _MISSING]
        if isinstance(node, list) and key.isdigit():
            if int(key) >= len(node):
                return _MISSING
            node = node[int(key)]
        elif isinstance(node, dict) and key in node:
            node = node[key]
        else:
            return _MISSING
    return node


def C(name: str, dtype: Any, *sources: From | Derived, required: bool = False, doc: str = "") -> Column:
    return Column(name, dtype, sources, required, doc)


Str, F64, I64, Bool = pl.String, pl.Float64, pl.Int64, pl.Boolean
StrList = pl.List(pl.String)

SCENARIO_COLUMNS: tuple[Column, ...] = (
    # identity
    C("run_id", Str, Derived("run_id"), required=True, doc="session directory name"),
    C("generation", Str, Derived("generation"), required=True, doc="ingest that wrote this row"),
    C("scenario_name", Str, From("metrics", "scenario_name"), required=True),
    C("domain", Str, Derived("domain"), required=True, doc="bucket: scenario_name.split('__', 1)[0]"),
    C("registry_domain", Str, From("metadata", "domain"), doc="Scenario.domain (registry namespace)"),
    C("position", I64, Derived("position"), required=True, doc="index in all_metrics.json order"),
    C("invocation_index", I64, Derived("invocation_index"), required=True,
      doc="run_args.json invocation that produced the scenario"),
    C("fingerprint", Str, Derived("fingerprint"), required=True, doc="size+mtime hash of the files read"),
    C("task_id", Str, Derived("task_id"), required=True, doc="what repeats across trials (pass^k): the scenario name"),
    C("trial", I64, Derived("trial"), required=True, doc="trial number within the run (0 for voice-agent runs)"),
    # configuration the scenario was run with
    C("success_signals", StrList, From("metadata", "success_signals"), required=True),
    C("ignore_capitalization", Bool, From("metadata", "ignore_capitalization"), required=True),
    C("ignore_punctuation", Bool, From("metadata", "ignore_punctuation"), required=True),
    C("clean_text", Bool, From("metadata", "clean_text"), required=True),
    C("disallow_extra_items", Bool, From("metadata", "disallow_extra_items"), required=True),
    C("rec_judge_enabled", Bool, Derived("rec_judge_enabled"), required=True,
      doc="judge on in the producing invocation"),
    C("rec_judge_threshold", F64, Derived("rec_judge_threshold")),
    C("rec_strict_match", Bool, Derived("rec_strict_match"), required=True),
    C("rec_min_agent_turns", I64, Derived("rec_min_agent_turns"), required=True,
      doc="from the last invocation: the one that aggregated the run"),
    # conversation
    C("total_turns", I64, From("metrics", "total_turns"), required=True),
    C("scenario_duration", F64, From("metrics", "scenario_duration"), required=True),
    C("duration_seconds", F64, From("metrics", "duration_seconds")),
    C("stop_reason", Str, From("metrics", "stop_reason"), required=True),
    C("first_turn_at", Str, From("metrics", "turns", "0", "timestamp")),
    C("latency_count", I64, From("metrics", "latency_stats", "count"), required=True),
    C("latency_mean_ms", F64, From("metrics", "latency_stats", "mean_ms"), required=True),
    C("latency_p50_ms", F64, From("metrics", "latency_stats", "p50_ms"), required=True),
    C("latency_p95_ms", F64, From("metrics", "latency_stats", "p95_ms"), required=True),
    C("latency_min_ms", F64, From("metrics", "latency_stats", "min_ms"), required=True),
    C("latency_max_ms", F64, From("metrics", "latency_stats", "max_ms"), required=True),
    C("latency_ms", pl.List(F64), From("metrics", "latencies", "*", "latency_ms"), required=True),
    C("agent_n_calls", I64, From("metrics", "token_usage", "agent", "n_calls")),
    C("agent_prompt_tokens", I64, From("metrics", "token_usage", "agent", "prompt")),
    C("agent_completion_tokens", I64, From("metrics", "token_usage", "agent", "completion")),
    C("user_n_calls", I64, From("metrics", "token_usage", "user", "n_calls")),
    C("user_prompt_tokens", I64, From("metrics", "token_usage", "user", "prompt")),
    C("user_completion_tokens", I64, From("metrics", "token_usage", "user", "completion")),
    C("agent_context_messages", I64, Derived("agent_context_messages"),
      doc="assistant messages in bot_logs_agent/llm_context.json; read only when n_calls is absent"),
    # ACTION_MATCH inputs and comparator outcome
    C("has_reference", Bool, Derived("has_reference"), required=True),
    C("has_prediction", Bool, Derived("has_prediction"), required=True),
    C("action_match_lenient", Bool, Derived("action_match_lenient")),
    C("action_reference_items", I64, Derived("action_reference_items")),
    C("action_prediction_items", I64, Derived("action_prediction_items")),
    C("reference_json", Str, Derived("reference_json")),
    C("prediction_json", Str, Derived("prediction_json")),
    # DB_STATE_MATCH
    C("expected_db_hash", Str, From("metadata", "expected_db_hash"), From("metrics", "db_state_expected_hash")),
    C("actual_db_hash", Str, From("db_hash", "db_hash"), From("metrics", "db_state_actual_hash")),
    C("actual_user_db_hash", Str, From("db_hash", "user_db_hash")),
    C("db_match_recorded", Bool, Derived("db_match_recorded"),
      doc="a source's own DB verdict where no hashes exist (tau2 db_check); NULL for voice-agent runs"),
    # DB_STATE_ASSERTION (verdicts only: the predicates' DBs are not on disk)
    C("has_db_state_assertions", Bool, Derived("has_db_state_assertions"), required=True),
    C("dbsa_total", I64, Derived("dbsa_total")),
    C("dbsa_passed", I64, Derived("dbsa_passed")),
    # judge and NL_ASSERTION
    C("judge_ran", Bool, Derived("judge_ran"), required=True, doc="judge_result.json exists"),
    C("judge_score", F64, From("judge", "score"), From("metrics", "judge_score")),
    C("nl_total", I64, Derived("nl_total")),
    C("nl_passed", I64, Derived("nl_passed")),
    # tau2's COMMUNICATE check and reward basis (NULL for voice-agent runs)
    C("communicate_total", I64, Derived("communicate_total"), doc="tau2 communicate_checks"),
    C("communicate_passed", I64, Derived("communicate_passed")),
    C("reward_basis", StrList, Derived("reward_basis"), doc="tau2 reward basis the simulation was scored on"),
    C("basis_checks_missing", StrList, Derived("basis_checks_missing"),
      doc="basis entries with no check recorded (a normally ended tau2 simulation)"),
    C("task_id_claimed", Str, Derived("task_id_claimed"),
      doc="the source's task id where it contradicts the task definition (task_id is the recovered one)"),
    # what upstream stored, kept next to the recomputed values
    C("claimed_reward", F64, Derived("claimed_reward"), doc="the source's own reward (tau2 / tau-bench)"),
    C("claimed_success", Bool, Derived("claimed_success"),
      doc="the source's own verdict: metrics.is_successful, or tau2 reward within 1e-6 of 1"),
    C("raw_is_action_match", Str, Derived("raw_is_action_match"), required=True),
    C("raw_db_state_match", Bool, From("metrics", "db_state_match")),
    C("raw_db_state_assertion_pass_rate", F64, From("metrics", "db_state_assertion_pass_rate")),
    C("raw_nl_assertion_pass_rate", F64, From("metrics", "nl_assertion_pass_rate")),
    C("raw_judge_score", F64, From("metrics", "judge_score")),
    C("raw_judge_passed", Bool, From("metrics", "judge_passed")),
    C("raw_clean_exit", Bool, From("metrics", "clean_exit"), required=True),
    C("raw_insufficient_agent_turns", Bool, From("metrics", "insufficient_agent_turns")),
    C("raw_is_successful", Str, Derived("raw_is_successful"), required=True),
    C("raw_is_task_successful", Bool, From("metrics", "is_task_successful")),
    C("raw_passed", StrList, From("metrics", "success_breakdown", "passed"), required=True),
    C("raw_failed", StrList, From("metrics", "success_breakdown", "failed"), required=True),
    C("raw_not_applicable", StrList, From("metrics", "success_breakdown", "not_applicable"), required=True),
    C("raw_excluded", StrList, From("metrics", "success_breakdown", "excluded"), required=True),
)

SCHEMAS: dict[str, dict[str, Any]] = {
    "runs": {
        "run_id": Str,
        "generation": Str,
        "source": Str,  # nemo | tau2 | tau-bench
        "run_group": Str,  # runs whose scenarios repeat as trials of one system (pass^k)
        "session_path": Str,
        "session_started_at": pl.Datetime("us"),
        "status": Str,  # complete | partial | quarantined
        "fingerprint": Str,
        "ingested_at": pl.Datetime("us", "UTC"),
        "n_invocations": I64,
        "queued_count": I64,
        "judge_enabled": Bool,
        "judge_threshold": F64,
        "strict_match": Bool,
        "min_agent_turns": I64,
        "n_scenario_dirs": I64,
        "n_scenarios": I64,
        "n_quarantined": I64,
        "n_killed_dirs": I64,
        "run_args_json": Str,
    },
    "scenarios": {c.name: c.dtype for c in SCENARIO_COLUMNS},
    "verdicts": {
        "run_id": Str,
        "generation": Str,
        "scenario_name": Str,
        "kind": Str,  # db_state_assertion | nl_assertion | action | communicate
        "ordinal": I64,
        "label": Str,  # predicate func_name or assertion text
        "side": Str,
        "passed": Bool,
        "expected_json": Str,
        "actual_json": Str,
        "detail": Str,  # predicate message / judge reason
        "error": Str,
    },
    "quarantine": {
        "run_id": Str,
        "generation": Str,
        "scenario_name": Str,
        "file": Str,
        "reason": Str,
        "error": Str,
    },
    # The evidence behind the verdicts (sources/_evidence.py): long texts kept whole, in tables
    # no rate view reads.
    "turns": {  # the conversation: metrics.json turns, or a tau2 / tau-bench simulation's messages
        "run_id": Str,
        "generation": Str,
        "scenario_name": Str,
        "ordinal": I64,
        "role": Str,
        "text": Str,
        "timestamp": Str,
        "latency_ms": F64,  # agent turns answering a user turn: that exchange's response latency
    },
    "tool_calls": {  # bot_logs_{agent,user}/llm_context.json, or a simulation's messages
        "run_id": Str,
        "generation": Str,
        "scenario_name": Str,
        "side": Str,  # agent | user
        "ordinal": I64,
        "message_index": I64,  # the calling message's place in the LLM context
        "call_id": Str,
        "name": Str,
        "arguments_json": Str,
        "result": Str,  # what the tool returned
        "requestor": Str,
    },
    "judge_results": {  # judge_result.json whole
        "run_id": Str,
        "generation": Str,
        "scenario_name": Str,
        "score": F64,
        "reason": Str,
        "errored": Bool,  # the judge failed (upstream's "Error: ..." reason), not the agent
        "extra_json": Str,  # every other key the judge returned (confidence, deductions, ...)
    },
    "judge_inputs": {  # judge_result.json's judge_input: what the judge was asked, to ask a judge again
        "run_id": Str,
        "generation": Str,
        "scenario_name": Str,
        "system_prompt": Str,
        "user_content": Str,
        "nl_assertions": StrList,  # the scenario's NL assertions (metadata.json), numbered in the request
        "input_hash": Str,  # of the three above: a judgement is of this input
        "askable": Bool,  # false where upstream asks no judge (no observed agent evidence)
    },
    "scores": {
        "run_id": Str,
        "generation": Str,
        "scenario_name": Str,
        "policy_id": Str,
        "scorer_version": Str,
        "judge_enabled": Bool,
        "judge_threshold": F64,
        "strict_match": Bool,
        "min_agent_turns": I64,
        "success_signals": StrList,
        "is_action_match": Bool,
        "db_state_match": Bool,
        "db_state_assertion_pass_rate": F64,
        "nl_assertion_pass_rate": F64,
        "judge_score": F64,
        "judge_passed": Bool,
        "clean_exit": Bool,
        "communicate": Bool,
        "agent_turns": I64,
        "stalled": Bool,
        "passed": StrList,
        "failed": StrList,
        "not_applicable": StrList,
        "excluded": StrList,
        "is_successful": Bool,
        "is_task_successful": Bool,
        "reward": F64,  # tau2's product over the reward basis, recomputed (NULL without a basis)
    },
    # Per run, policy and domain: the numerators and denominators of every rate (transforms/rollup.py).
    # Each signal's pair skips stalled scenarios, as all_summary.txt does; the composite's does not.
    "rate_counts": {
        "run_id": Str,
        "generation": Str,
        "policy_id": Str,
        "domain": Str,
        "scenarios": I64,
        "stalled": I64,
        "success_passed": I64,
        "success_total": I64,
        "task_passed": I64,
        "task_total": I64,
        "action_match_passed": I64,
        "action_match_total": I64,
        "db_state_match_passed": I64,
        "db_state_match_total": I64,
        "db_state_assertion_passed": I64,  # predicates
        "db_state_assertion_total": I64,
        "nl_assertion_passed": I64,  # assertions
        "nl_assertion_total": I64,
        "judge_passed_passed": I64,
        "judge_passed_total": I64,
        "clean_exit_passed": I64,
        "clean_exit_total": I64,
        "communicate_passed": I64,
        "communicate_total": I64,
        "judge_score_sum": F64,
        "judge_scored": I64,
        "agent_tokens": I64,
        "user_tokens": I64,
    },
    # Every judgement a judge made through `scorelake rejudge` (the runs' own judge_result.json are
    # the built-in judge `recorded`, in judge_results). Not run-scoped: a judgement belongs to the
    # judge input it answered (input_hash), whichever ingest stored that input; the latest per
    # (judge, run, scenario, input) counts.
    "judgements": {
        "judgement_id": Str,
        "judge": Str,
        "run_id": Str,
        "scenario_name": Str,
        "input_hash": Str,
        "request_key": Str,  # hash of URL and payload: the cache key (identical requests are paid once)
        "model": Str,
        "url": Str,
        "prompt_hash": Str,  # of the system prompt sent
        "params_json": Str,  # max_tokens, temperature, top_p, seed, ... as sent
        "score": F64,
        "reason": Str,
        "errored": Bool,  # upstream's "Error: ..." result: the call or its parse failed
        "nl_verdicts_json": Str,  # normalised as upstream: exactly N {index, assertion, passed, reason}
        "nl_passed": I64,
        "nl_total": I64,
        "extra_json": Str,
        "prompt_tokens": I64,
        "completion_tokens": I64,
        "latency_ms": F64,
        "attempts": I64,  # HTTP requests made (retries included); 0 when copied
        "source": Str,  # asked | cache (an identical request's answer) | copied (--only-errors base)
        "judged_at": pl.Datetime("us", "UTC"),
    },
    "judges": {  # one row per judge definition (name and the settings its judgements are made with)
        "name": Str,
        "spec_json": Str,
        "created_at": pl.Datetime("us", "UTC"),
    },
    "refusals": {
        "run_id": Str,
        "path": Str,
        "reason": Str,
        "refused_at": pl.Datetime("us", "UTC"),
    },
    "policies": {
        "policy_id": Str,
        "name": Str,
        "spec_json": Str,
        "created_at": pl.Datetime("us", "UTC"),
    },
    # One row per write step (ingest, re-score, compaction, migration); its Delta version is the
    # warehouse version that `scorelake log` lists and --as-of takes.
    "commits": {
        "committed_at": pl.Datetime("us", "UTC"),
        "operation": Str,
        "detail": Str,
        "table_versions": Str,  # JSON: each other table's Delta version after the step
    },
}


def empty_frame(table: str) -> pl.DataFrame:
    return pl.DataFrame(schema=SCHEMAS[table])


def frame(table: str, rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Rows as a DataFrame with the table's declared schema (column order included)."""
    schema = SCHEMAS[table]
    return pl.DataFrame(rows, schema=schema) if rows else empty_frame(table)
