"""Every warehouse table's columns, declared as data: name and type (and, for ``scenarios``, what
each column means).

Where a ``scenarios`` column comes from is each input format's own business: the voice-agent
mapping is declared in ``sources/nemo/columns.py``; the tau2 / tau-bench reader builds its rows in
code. The other tables are produced by code (run context, verdict flattening, scoring, judging).
Every table has one schema, written even while it is empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
from typing import Any

import polars as pl

from scorelake.transforms.registry import SIGNALS


@dataclass(frozen=True)
class Column:
    name: str
    dtype: Any
    doc: str = ""
    unit: str = ""
    # A per-scenario metric's roll-up per run and domain, over the scenario rows `v`: "mean", "max",
    # "sum" of itself, or an SQL expression (a rate pooled over its events); "" for none.
    rollup: str = ""
    label: str = ""  # its heading in the command line's panel ("" for none)
    events: str = ""  # the column counting the events behind it (a rate), shown as a dash below 10

    def rollup_sql(self) -> str:
        """Its roll-up as an SQL expression named after it."""
        shorthand = {"mean": f"avg(v.{self.name})", "max": f"max(v.{self.name})",
                     "sum": f"sum(v.{self.name})::BIGINT"}
        return f"{shorthand.get(self.rollup, self.rollup)} AS {self.name}"


Str, F64, I64, Bool = pl.String, pl.Float64, pl.Int64, pl.Boolean
StrList = pl.List(pl.String)

SCENARIO_COLUMNS: tuple[Column, ...] = (
    # identity
    Column("run_id", Str, doc="session directory name"),
    Column("generation", Str, doc="ingest that wrote this row"),
    Column("scenario_name", Str),
    Column("domain", Str, doc="bucket: scenario_name.split('__', 1)[0]"),
    Column("registry_domain", Str, doc="Scenario.domain (registry namespace)"),
    Column("position", I64, doc="index in all_metrics.json order"),
    Column("invocation_index", I64, doc="run_args.json invocation that produced the scenario"),
    Column("fingerprint", Str, doc="size+mtime hash of the files read"),
    Column("task_id", Str, doc="what repeats across trials (pass^k): the scenario name"),
    Column("trial", I64, doc="trial number within the run (0 for voice-agent runs)"),
    # configuration the scenario was run with
    Column("success_signals", StrList),
    Column("ignore_capitalization", Bool),
    Column("ignore_punctuation", Bool),
    Column("clean_text", Bool),
    Column("disallow_extra_items", Bool),
    Column("rec_judge_enabled", Bool, doc="judge on in the producing invocation"),
    Column("rec_judge_threshold", F64),
    Column("rec_strict_match", Bool),
    Column("rec_min_agent_turns", I64, doc="from the last invocation: the one that aggregated the run"),
    # conversation
    Column("total_turns", I64),
    Column("scenario_duration", F64),
    Column("duration_seconds", F64),
    Column("stop_reason", Str),
    Column("first_turn_at", Str),
    Column("latency_count", I64),
    Column("latency_mean_ms", F64),
    Column("latency_p50_ms", F64),
    Column("latency_p95_ms", F64),
    Column("latency_min_ms", F64),
    Column("latency_max_ms", F64),
    Column("latency_ms", pl.List(F64)),
    Column("agent_n_calls", I64),
    Column("agent_prompt_tokens", I64),
    Column("agent_completion_tokens", I64),
    Column("user_n_calls", I64),
    Column("user_prompt_tokens", I64),
    Column("user_completion_tokens", I64),
    Column("agent_context_messages", I64,
           doc="assistant messages in bot_logs_agent/llm_context.json; read only when n_calls is absent"),
    # ACTION_MATCH inputs and comparator outcome
    Column("has_reference", Bool),
    Column("has_prediction", Bool),
    Column("action_match_lenient", Bool),
    Column("action_reference_items", I64),
    Column("action_prediction_items", I64),
    Column("reference_json", Str),
    Column("prediction_json", Str),
    # what decides the verdict besides the agent (lineage: a changed definition is not a regression)
    Column("definition_hash", Str, doc="hash of the scenario's definition: every part below"),
    Column("definition_json", Str, doc="each part's own hash: success_signals, expected_db_hash, "
           "db_state_assertions, nl_assertions, initialization_actions, reference; tau2: evaluation_criteria"),
    # DB_STATE_MATCH
    Column("expected_db_hash", Str),
    Column("actual_db_hash", Str),
    Column("actual_user_db_hash", Str),
    Column("db_match_recorded", Bool,
           doc="a source's own DB verdict where no hashes exist (tau2 db_check); NULL for voice-agent runs"),
    # DB_STATE_ASSERTION (verdicts only: the predicates' DBs are not on disk)
    Column("has_db_state_assertions", Bool),
    Column("dbsa_total", I64),
    Column("dbsa_passed", I64),
    # judge and NL_ASSERTION
    Column("judge_ran", Bool, doc="judge_result.json exists"),
    Column("judge_score", F64),
    Column("nl_total", I64),
    Column("nl_passed", I64),
    # tau2's COMMUNICATE check and reward basis (NULL for voice-agent runs)
    Column("communicate_total", I64, doc="tau2 communicate_checks"),
    Column("communicate_passed", I64),
    Column("reward_basis", StrList, doc="tau2 reward basis the simulation was scored on"),
    Column("basis_checks_missing", StrList,
           doc="basis entries with no check recorded (a normally ended tau2 simulation)"),
    Column("task_id_claimed", Str,
           doc="the source's task id where it contradicts the task definition (task_id is the recovered one)"),
    # what upstream stored, kept next to the recomputed values
    Column("claimed_reward", F64, doc="the source's own reward (tau2 / tau-bench)"),
    Column("claimed_success", Bool,
           doc="the source's own verdict: metrics.is_successful, or tau2 reward within 1e-6 of 1"),
    Column("raw_is_action_match", Str),
    Column("raw_db_state_match", Bool),
    Column("raw_db_state_assertion_pass_rate", F64),
    Column("raw_nl_assertion_pass_rate", F64),
    Column("raw_judge_score", F64),
    Column("raw_judge_passed", Bool),
    Column("raw_clean_exit", Bool),
    Column("raw_insufficient_agent_turns", Bool),
    Column("raw_is_successful", Str),
    Column("raw_is_task_successful", Bool),
    Column("raw_passed", StrList),
    Column("raw_failed", StrList),
    Column("raw_not_applicable", StrList),
    Column("raw_excluded", StrList),
)

# The voice panel's per-scenario metrics (transforms/voice; docs/guide/voice.md), beside the scenario's
# key in the `voice` table: each with its unit and meaning, its roll-up per run and domain, and its
# heading in the panel, declared once for the views (sql/marts/scenario_voice.sql, run_voice.sql),
# the command line and the manual. NULL where a scenario's source holds nothing to measure it by.
VOICE_METRICS: tuple[Column, ...] = (
    Column("has_segments", Bool, doc="conversation_log.seglst.json held speech segments"),
    Column("call_s", F64, "the call's length, from its start (the segments' zero) to its end (NeMo's "
           "duration_seconds, a τ-voice simulation's ticks), at least to the last speech", "s", "mean"),
    Column("call_end", Str, "how the call ended: exit (a side hung up), timeout, error (source's stop reason)"),
    Column("tick_s", F64, "the tick the tau2 interaction metrics are measured on (tau2's 0.2 s; a τ-voice "
           "run's own)", "s"),
    Column("turn_kinds_marked", Bool, doc="the source marks backchannels, vocal tics and non-directed speech "
           "(τ-voice): the selectivity metrics are measured"),
    Column("agent_talk_s", F64, "the agent's speech: the union of its segments", "s", "mean"),
    Column("user_talk_s", F64, "the user's speech: the union of its segments", "s", "mean"),
    Column("overlap_s", F64, "both speaking at once", "s", "mean", "overlap s"),
    Column("silence_s", F64, "neither speaking, inside the speech span only (first segment's start to the "
           "last one's end; dead_air_s runs to the call's ends)", "s", "mean", "silence s"),
    Column("longest_silence_s", F64, "the longest time neither spoke, inside the speech span only", "s", "max",
           "longest silence s"),
    Column("leading_silence_s", F64, "from the call's start to the first speech", "s", "mean"),
    Column("trailing_silence_s", F64, "from the last speech to the call's end (dead air until a hang-up or "
           "timeout)", "s", "mean", "trailing s"),
    Column("dead_air_s", F64, "neither speaking, from the call's start to its end", "s", "mean", "dead air s"),
    Column("dead_air_fraction", F64, "dead_air_s / the call's length", "share",
           "sum(v.dead_air_s) / nullif(sum(v.call_s) FILTER (WHERE v.dead_air_s IS NOT NULL), 0)"),
    Column("max_gap_s", F64, "the longest time neither spoke, from the call's start to its end", "s", "max"),
    Column("gaps_over_3s", I64, "silences longer than 3 s, from the call's start to its end", "count", "sum"),
    Column("user_open_at_end_s", F64, "how long the user's last segment had run when the call ended, where it "
           "ran to within 1 s of the end (its end never logged: the end of the turn never detected); 0 otherwise",
           "s", "max"),
    Column("agent_talk_ratio", F64, "agent_talk_s / (agent_talk_s + user_talk_s)", "share",
           "sum(v.agent_talk_s) / nullif(sum(v.agent_talk_s) + sum(v.user_talk_s), 0)", "talk agent"),
    Column("agent_barge_ins", I64, "the agent starting while the user speaks (tau2 agent_interrupts_count)",
           "count", "sum", "barge-ins agent"),
    Column("user_barge_ins", I64, "the user starting while the agent speaks: interruptions, backchannels, "
           "vocal tics, non-directed speech", "count", "sum", "barge-ins user"),
    Column("agent_words", I64, "words the agent spoke (its segments)", "count"),
    Column("agent_wpm", F64, "the agent's words per minute of its own speech", "wpm",
           "sum(v.agent_words) / nullif(sum(v.agent_talk_s) FILTER (WHERE v.agent_words IS NOT NULL) / 60, 0)",
           "wpm"),
    Column("user_turns", I64, "user turns followed by an answer or by more of the user's speech, each ended "
           "with the agent silent, no backchannel (tau2 response_total)", "count", "sum"),
    Column("responses", I64, "of those, answered before the user spoke again (tau2 response events)", "count",
           "sum"),
    Column("response_latency_s", F64, "mean time from a user turn's end to the agent's answer (tau2 L_R)", "s",
           "sum(v.response_latency_s * v.responses) / nullif(sum(v.responses), 0)", "response s", "responses"),
    Column("response_rate", F64, "responses / user_turns (tau2 R_R)", "share",
           "sum(v.responses) / nullif(sum(v.user_turns), 0)", "response rate", "user_turns"),
    Column("missed_user_turns", I64, "user turns the agent never answered before the user spoke again (tau2 "
           "no_response)", "count", "sum", "missed turns"),
    Column("interruptions", I64, "the user starting while the agent speaks, no backchannel, vocal tic or "
           "non-directed speech (tau2 yield_total)", "count", "sum"),
    Column("yields", I64, "of those, the agent stopped within 2 s", "count", "sum"),
    Column("yield_latency_s", F64, "mean time the agent took to stop, when it yielded (tau2 L_Y)", "s",
           "sum(v.yield_latency_s * v.yields) / nullif(sum(v.yields), 0)"),
    Column("yield_rate", F64, "yields / interruptions (tau2 R_Y)", "share",
           "sum(v.yields) / nullif(sum(v.interruptions), 0)", "yield rate", "interruptions"),
    Column("agent_interruption_rate", F64, "agent_barge_ins / user_turns (tau2 I_A)", "per turn",
           "sum(v.agent_barge_ins) FILTER (WHERE v.user_turns IS NOT NULL) / nullif(sum(v.user_turns), 0)",
           "interrupts /turn", "user_turns"),
    *(column for kind, what, wrong in (
        ("backchannel", "user backchannels while the agent speaks", "the agent stopped within 1 s"),
        ("vocal_tic", "user vocal tics (coughs, um)", "the agent stopped within 1 s or answered within 2 s"),
        ("non_directed", "user speech not directed at the agent",
         "the agent stopped within 1 s or answered within 2 s"))
      for column in (
        Column(f"{kind}_total", I64, f"{what} (tau2 {kind}_total; NULL where the source marks none)", "count",
               "sum"),
        Column(f"{kind}_errors", I64, f"of those, {wrong}", "count", "sum"),
        Column(f"selectivity_{kind}", F64, f"1 - {kind}_errors / {kind}_total (tau2 selectivity_{kind})",
               "share", f"1 - sum(v.{kind}_errors) / nullif(sum(v.{kind}_total), 0)", "", f"{kind}_total"))),
    *(column for side, said, heard in (("user_to_agent", "the user simulator said", "the agent's recognition "
                                                                                   "gave its LLM"),
                                       ("agent_to_user", "the agent said", "the user simulator's recognition "
                                                                           "gave its LLM"))
      for column in (
        Column(f"{side}_turns_missing", I64, f"turns {said} that {heard} nowhere, before its last input", "count",
               "sum", "missing " + ("user>agent" if side == "user_to_agent" else "agent>user")),
        Column(f"{side}_turns_duplicated", I64, f"turns {heard} twice", "count", "sum"),
        Column(f"{side}_turns_undelivered", I64, f"turns {said} after the last one {heard}: the hang-up came "
               "first", "count", "sum"),
        Column(f"{side}_turns_extra", I64, f"turns {heard} that were never said", "count", "sum"),
        Column(f"{side}_errors", I64, f"word errors of the turns {heard}, over the turns paired with what was "
               "said", "count", "sum"),
        Column(f"{side}_words", I64, f"words {said} in the paired turns (the reference)", "count", "sum"),
        Column(f"{side}_wer", F64, f"{side}_errors / {side}_words: the word error rate of the paired turns",
               "share", f"sum(v.{side}_errors) / nullif(sum(v.{side}_words), 0)",
               "WER " + ("user>agent" if side == "user_to_agent" else "agent>user"), f"{side}_words"))),
    Column("misheard_entities", I64, "key entities (numbers, codes, names the scenario gives) the user said "
           "that the agent did not hear as said", "count", "sum", "misheard"),
    Column("misheard_acted_on", I64, "of those, heard in a turn the agent acted after (answered or called a "
           "tool)", "count"),
    Column("misheard_json", Str, "those entities, each with what the agent heard instead and whether it acted "
           "after (JSON)"),
    # from conversation_log.wav, where a session has it (transforms/voice/_audio.py: 20 ms frames over each
    # channel's noise floor)
    Column("audio_s", F64, "the recording's length", "s"),
    Column("audio_agent_talk_s", F64, "the agent's speech as the audio has it (right channel)", "s"),
    Column("audio_user_talk_s", F64, "the user's speech as the audio has it (left channel)", "s"),
    Column("audio_overlap_s", F64, "both channels speaking at once", "s", "mean"),
    Column("audio_silence_s", F64, "neither channel speaking, between the first speech and the last", "s"),
    Column("audio_first_speech_s", F64, "time to the first audio of anyone", "s"),
    Column("audio_first_agent_s", F64, "time to the agent's first audio", "s"),
    Column("audio_drift_s", F64, "the logged times minus the audio's: the shift of the log within 10 s that lands "
           "its starts of speech on the audio's", "s", "mean"),
    Column("audio_drift_confidence", F64, "the share of the logged starts of speech within 0.1 s of one of the "
           "audio's at that shift", "share", "mean"),
)

# The response latency panel (``scorelake latency``, the viewer's latency page, the report): per run and
# domain, from ``run_latency`` (the runner's percentiles: sorted values, index int(n * q)); its headings.
LATENCY_METRICS: tuple[Column, ...] = (
    Column("exchanges", I64, "agent responses the runner timed (its latency list)", "count", label="exchanges"),
    Column("mean_ms", F64, "the mean response latency", "ms", label="mean"),
    Column("p50_ms", F64, "the median response latency (a whole run's is all_summary.txt's)", "ms", label="p50"),
    Column("p90_ms", F64, "90 of 100 responses came at least this fast", "ms", label="p90"),
    Column("p95_ms", F64, "95 of 100 responses came at least this fast (a whole run's is all_summary.txt's)", "ms",
           label="p95"),
    Column("p99_ms", F64, "99 of 100 responses came at least this fast", "ms", label="p99"),
    Column("max_ms", F64, "the slowest response", "ms", label="max"),
    Column("first_response_p50_ms", F64, "the median of each scenario's first response latency", "ms",
           label="first p50"),
)
# Per scenario, its own first response in place of the median of them (``latency --by scenario``)
SCENARIO_FIRST_RESPONSE = Column("first_response_ms", F64, "the scenario's first response latency", "ms",
                                 label="first")
# Evidence for the viewer's timeline: no view rolls these up.
VOICE_EVIDENCE: tuple[Column, ...] = (
    Column("anomalies", StrList, "what the speech segments hold that no measure should trust: not a list, items "
           "that are no segment, segments out of order, one longer than 60 s (ingest and check say each)"),
    Column("segments_json", Str, "the speech segments, [speaker, start_s, end_s, words] each, in order (JSON)"),
    Column("heard_json", Str, "each user turn as the user said it and as the agent heard it, paired in order: "
           "[said, heard] (JSON)"),
)
VOICE_COLUMNS = VOICE_METRICS + VOICE_EVIDENCE

DEAD_AIR_S = 10.0  # a call that timed out after more trailing dead air than this failed by dead air
LONG_SILENCE_S = 10.0  # a silence inside the speech longer than this is a turn-taking fault


@dataclass(frozen=True)
class Cause:
    """Why a scenario failed (docs/guide/voice.md): its name, when it holds (an SQL condition over a
    failed scenario's facts in sql/marts/scenario_failure_causes.sql) and the evidence shown for it."""
    name: str
    doc: str
    holds: str
    evidence: str


# Every cause that holds is stored; the first in this order is the scenario's primary cause.
FAILURE_CAUSES: tuple[Cause, ...] = (
    Cause("harness", "the harness could not evaluate or run the call: every failing check errored (a DB assertion "
          "without the DB it reads), nothing ran (no turn, no LLM call on either side), or an infrastructure error",
          "harness_only OR nothing_ran OR stop_reason = 'infrastructure_error'",
          "CASE WHEN harness_only THEN 'every failing check errored: ' || db_error WHEN nothing_ran THEN "
          "'nothing ran: no turn and no LLM call on either side' ELSE 'the call ended in an infrastructure error' END"),
    Cause("judge", "the LLM judge failed (its endpoint or reply) and its verdicts are all that failed the scenario "
          "(judge_errors' judge_only)", "judge_only", "'the judge returned an error: ' || coalesce(judge_reason, '')"),
    Cause("dead_air", f"the call timed out after more than {DEAD_AIR_S:.0f} s of silence since the last speech",
          f"call_end = 'timeout' AND trailing_silence_s > {DEAD_AIR_S}",
          "format('timed out after {:.1f} s of dead air', trailing_silence_s)"),
    Cause("transcription", "a key entity the user said that the agent's speech recognition heard otherwise, in a "
          "turn the agent acted after (answered or called a tool)", "misheard_acted_on > 0",
          "'misheard: ' || misheard_json"),
    Cause("turn_taking", f"2 or more missed user turns, a silence inside the speech over {LONG_SILENCE_S:.0f} s, 3 "
          f"or more agent barge-ins, or a timeout with the user's turn open for over {LONG_SILENCE_S:.0f} s (its "
          "end never detected)", f"missed_user_turns >= 2 OR longest_silence_s > {LONG_SILENCE_S} "
          f"OR agent_barge_ins >= 3 OR (call_end = 'timeout' AND user_open_at_end_s > {LONG_SILENCE_S})",
          "format('{} missed user turns, longest silence {:.1f} s, {} agent barge-ins, the user''s turn open {:.1f} s "
          "at the end', missed_user_turns, longest_silence_s, agent_barge_ins, user_open_at_end_s)"),
    Cause("stall", "the stall override: fewer agent turns than min-agent-turns (after the causes above, which say "
          "why)", "stalled", "format('{} agent turns, fewer than {}', agent_turns, min_agent_turns)"),
    Cause("logic", "none of the above: heard right, the agent still did the wrong thing", "true",
          "'failed by: ' || array_to_string(failed, ', ')"),
)
CAUSE_NAMES = tuple(c.name for c in FAILURE_CAUSES)  # in their order of precedence

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
        "arguments_json": Str,  # a DB predicate's arguments as the scenario defines them
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
        # the call answers the other party's turn number this (1-based; 0: before it said anything):
        # the user messages of its LLM context before it, which places it in the transcript
        "replies_to_turn": I64,
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
        # NULL since prompts are stored once each (judge_prompts); rows ingested before hold their own
        "system_prompt": Str,
        "prompt_hash": Str,  # the judge_prompts row of the system prompt
        "user_content": Str,
        "nl_assertions": StrList,  # the scenario's NL assertions (metadata.json), numbered in the request
        "input_hash": Str,  # of the three above: a judgement is of this input
        "askable": Bool,  # false where upstream asks no judge (no observed agent evidence)
    },
    "tasks": {  # what the scenario asked of the agent: the simulated user's goal and instructions
        "run_id": Str,
        "generation": Str,
        "scenario_name": Str,
        # as the user simulator got them (tau2's user scenario: one line per field); NULL since they are
        # stored once each (task_instructions), rows ingested before hold their own
        "instructions": Str,
        "origin": Str,  # where they were read: scenario_config/user_prompt.txt, a tau2 task's user_scenario, ...
        "instructions_hash": Str,  # the task_instructions row of the instructions
    },
    "task_instructions": {  # each distinct text once: every run of a suite gives its scenarios the same
        "instructions_hash": Str,
        "instructions": Str,
    },
    "judge_prompts": {  # each distinct judge system prompt once: the same long text opens every judge input
        "prompt_hash": Str,
        "system_prompt": Str,
    },
    "voice": {  # per scenario: turn-taking from its speech segments, what each side heard (VOICE_COLUMNS)
        "run_id": Str,
        "generation": Str,
        "scenario_name": Str,
        **{c.name: c.dtype for c in VOICE_COLUMNS},
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
        # each signal's value (registry.py); judge_score just before judge_passed, where the tables
        # already written hold it (a schema in another order would make the next write rewrite them)
        **{name: dtype for s in SIGNALS for name, dtype in (
            (("judge_score", F64),) if s.name == "judge_passed" else ()) + ((s.value, F64 if s.pass_rate else Bool),)},
        "agent_turns": I64,
        "stalled": Bool,
        "passed": StrList,
        "failed": StrList,
        "not_applicable": StrList,
        "excluded": StrList,
        "is_successful": Bool,
        "is_task_successful": Bool,
        "reward": F64,  # tau2's product over the reward basis, recomputed (NULL without a basis)
        "reviews_version": I64,  # a policy that takes reviews: the `reviews` table version scored with
        "unreviewed": Str,  # ... and what each reviewed signal was before ("judge_passed=failed;is_successful=failed")
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
        # each signal's counts, in its unit (registry.py: scenarios, or a pass-rate signal's items)
        **{f"{s.rate}_{count}": I64 for s in SIGNALS for count in ("passed", "total")},
        "judge_score_sum": F64,
        "judge_scored": I64,
        "agent_tokens": I64,
        "user_tokens": I64,
        # the signals that gate success there (the union of its scenarios' whitelists under the policy)
        "gating_signals": StrList,
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
        "reply": Str,  # the judge model's message as it came, before upstream's parse (NULL: no reply)
        "prompt_tokens": I64,
        "completion_tokens": I64,
        "latency_ms": F64,
        "attempts": I64,  # HTTP requests made (retries included); 0 when copied
        "source": Str,  # asked | cache (an identical request's answer) | copied (--only-errors base)
        "odd_score": Bool,  # the score upstream's float() took was no number from 0 to 1 (true, "0.9", Infinity, 7)
        "judged_at": pl.Datetime("us", "UTC"),
    },
    # People's verdicts (`scorelake review`), append-only: a later row of the same key (run, scenario,
    # signal, assertion) supersedes an earlier one; a withdrawal is a row too. Not run-scoped: a
    # review belongs to the scenario of that run, whichever ingest stored it.
    "reviews": {
        "review_id": Str,
        "run_id": Str,
        "scenario_name": Str,
        "signal": Str,  # a success_breakdown name, or is_successful for the composite
        "assertion": I64,  # the NL assertion or DB predicate number (nl_assertion, db_state_assertion); else NULL
        "verdict": Str,  # pass | fail | withdrawn
        "reviewer": Str,
        "note": Str,
        "reviewed_at": pl.Datetime("us", "UTC"),
        "warehouse_version": I64,  # the warehouse version the reviewer saw
    },
    # A judge's verdicts kept with a guarantee (`judges --calibrate`, analysis/_selective.py): per judge
    # and scope (a domain, or (all)), the confidence threshold chosen on people's labels.
    "calibrations": {
        "calibration_id": Str,
        "judge": Str,
        "scope": Str,  # a domain, or (all)
        "alpha": F64,  # on the kept verdicts, the judge disagrees with people at most this often ...
        "delta": F64,  # ... except with at most this probability
        "threshold": F64,  # the confidence a verdict needs to be kept (NULL: none gives the guarantee)
        "labels": I64,  # labelled verdicts the threshold was chosen on
        "kept_labels": I64,
        "kept_disagreements": I64,
        "agreement_bound": F64,  # the agreement the kept verdicts reach at 1 - delta
        "judged": I64,  # the judge's verdicts in scope
        "coverage": F64,  # the share of them kept
        "more_labels": I64,  # no threshold: about how many more labels it takes
        "note": Str,
        "warehouse_version": I64,  # the warehouse version the labels were read at
        "created_at": pl.Datetime("us", "UTC"),
    },
    # Scenarios drawn for labelling with a known chance (review_queue("active")): the chance weights
    # their labels in `rates --ppi` (analysis/_ppi.py), which keeps the rate unbiased.
    "label_draws": {
        "draw_id": Str,  # of the judge, the runs, the budget and the seed: the same draw is not made twice
        "judge": Str,
        "run_id": Str,
        "scenario_name": Str,
        "probability": F64,
        "drawn_at": pl.Datetime("us", "UTC"),
    },
    # Which scenario of one harness's runs is which of another's (`compare --map`): each declaration of a
    # map replaces the one before under its name.
    "task_maps": {
        "map_name": Str,
        "a": Str,  # a scenario name or task id of run A's harness ...
        "b": Str,  # ... and the scenario name or task id of run B's it is
        "declared_at": pl.Datetime("us", "UTC"),
    },
    # Verdicts sent to an OpenTelemetry backend (`export otlp`): a scenario's, once per endpoint and
    # policy, recorded after the backend took them (a killed export sends the rest, not these again).
    "exports": {
        "endpoint": Str,
        "policy_id": Str,
        "run_id": Str,
        "scenario_name": Str,
        "verdicts": I64,  # the evaluation events its span carried
        "exported_at": pl.Datetime("us", "UTC"),
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


# The tables that hold each distinct long text once, by its key (the hash their rows are named by in
# judge_inputs and tasks): stored when first met, by any run; the same text comes in every run of a suite.
SHARED_TEXTS = {"judge_prompts": "prompt_hash", "task_instructions": "instructions_hash"}


def empty_frame(table: str) -> pl.DataFrame:
    return pl.DataFrame(schema=SCHEMAS[table])


# Per table, its list columns (built apart: see _list_column)
_LIST_COLUMNS = {table: [name for name, dtype in schema.items() if isinstance(dtype, pl.List)]
                 for table, schema in SCHEMAS.items()}


def frame(table: str, rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Rows as a DataFrame with the table's declared schema (column order included)."""
    if not rows:
        return empty_frame(table)
    schema, lists = SCHEMAS[table], _LIST_COLUMNS[table]
    if not lists or len(rows) < _GROUPED_FROM_ROWS:
        return pl.DataFrame(rows, schema=schema)
    flat = pl.DataFrame(rows, schema={name: dtype for name, dtype in schema.items() if name not in lists})
    return flat.with_columns(_list_column(name, schema[name], [row.get(name) for row in rows])
                             for name in lists).select(list(schema))


# Rows from which list columns are grouped from their items: Polars' own conversion costs about 3 µs
# a row, a grouping about 0.3 ms whatever the rows (measured: even at about 110 rows).
_GROUPED_FROM_ROWS = 100


def _list_column(name: str, dtype: pl.List, values: list[list | None]) -> pl.Series:
    """``values`` (lists, or None) as a list column. Built from Python lists, Polars makes a Series
    per row, which took a session's scenarios most of their frame's time (six list columns). Lists
    of text mostly come over and over (a scenario's signals, its breakdown, its NL assertions): each
    made once and gathered; the others grouped from one Series of all their items."""
    if dtype.inner == pl.String:
        distinct: dict[tuple[str, ...] | None, int] = {}
        codes = []
        for value in values:
            if value is not None and type(value) is not list:
                return pl.Series(name, values, dtype=dtype)  # not a list: Polars' own conversion decides
            key = None if value is None else tuple(value)
            if (code := distinct.get(key)) is None:
                code = distinct[key] = len(distinct)
            codes.append(code)
        # only where it pays, and only text: a key of another item (1 == 1.0 == True) is no one list
        if len(distinct) <= len(values) // 4 and all(type(item) is str for key in distinct if key for item in key):
            made = pl.Series(name, [None if key is None else list(key) for key in distinct], dtype=dtype)
            return made.gather(pl.Series(codes, dtype=pl.UInt32))
    return _grouped_list_column(name, dtype, values)


def _grouped_list_column(name: str, dtype: pl.List, values: list[list | None]) -> pl.Series:
    """``values`` as a list column grouped from one Series of all their items."""
    rows, items = [], []
    for i, value in enumerate(values):
        if not value and (value is None or isinstance(value, list)):
            rows.append(i)  # a placeholder keeps the row in its place; made [] or null again below
            items.append(None)
        elif isinstance(value, list):
            rows.extend(repeat(i, len(value)))
            items.extend(value)
        else:
            return pl.Series(name, values, dtype=dtype)  # not a list: Polars' own conversion decides
    try:
        grouped = (pl.DataFrame({"row": pl.Series(rows, dtype=pl.UInt32), name: pl.Series(items, dtype=dtype.inner)})
                   .group_by("row", maintain_order=True).agg(name))
    except (TypeError, pl.exceptions.PolarsError):  # an item of another type: likewise
        return pl.Series(name, values, dtype=dtype)
    filled = pl.lit(pl.Series([None if v is None else len(v) > 0 for v in values], dtype=pl.Boolean))
    return grouped.select(pl.when(filled).then(pl.col(name))
                          .when(filled.not_()).then(pl.lit([], dtype=dtype)).alias(name)).to_series()
