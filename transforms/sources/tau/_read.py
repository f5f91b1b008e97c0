"""tau2-bench and tau-bench results as a second source, mapped onto the same tables.

Mapping (tau2-notes.md §6): DB_STATE_MATCH <- ``db_check.db_match`` (tau2's own verdict: no hashes
exist), DB_STATE_ASSERTION <- ``env_assertions[].met``, NL_ASSERTION <- ``nl_assertions[].met``,
ACTION_MATCH <- ``action_checks[].action_match``, COMMUNICATE <- ``communicate_checks[].met`` (a
signal of its own: the runner has none), CLEAN_EXIT <- termination ``agent_stop`` / ``user_stop``
(tau2's gate). A simulation's whitelist is its reward basis mapped to those signals plus CLEAN_EXIT,
so the composite is tau2's reward recomputed; tau2's own reward is kept beside it as the claim.
A task id that contradicts the task definition (its gold actions or NL assertions) is replaced by
the task the simulation's checks identify, the claimed one kept in ``task_id_claimed``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scorelake.transforms.columns import SCHEMAS
from scorelake.transforms.scoring import Signal
from scorelake.transforms.sources._evidence import message_turn_rows, task_rows, tool_call_rows
from scorelake.transforms.sources._files import BadInput, SessionTables, load_json, validate
from scorelake.transforms.sources._kit import collect_items, quarantined_run, run_row, scenario_row
from scorelake.transforms.sources._lineage import definition_columns, part_hash
from scorelake.transforms.sources._session import Session
from scorelake.transforms.sources.tau._raw import Tau2Header, Tau2Simulation, TauBenchRecord
from scorelake.transforms.voice import call_end, tick_segments, voice_row

BASIS_SIGNALS = {
    "DB": Signal.DB_STATE_MATCH,
    "ENV_ASSERTION": Signal.DB_STATE_ASSERTION,
    "NL_ASSERTION": Signal.NL_ASSERTION,
    "ACTION": Signal.ACTION_MATCH,
    "COMMUNICATE": Signal.COMMUNICATE,
}
# The simulation's checks per basis entry, and the task's criteria that make tau2 run them (a
# task without criteria of a kind scores that component 1 without recording a check).
BASIS_CHECKS = {"DB": ("db_check", None), "ENV_ASSERTION": ("env_assertions", "env_assertions"),
                "NL_ASSERTION": ("nl_assertions", "nl_assertions"), "ACTION": ("action_checks", "actions"),
                "COMMUNICATE": ("communicate_checks", "communicate_info")}
NORMAL_ENDS = ("agent_stop", "user_stop")
DEFAULT_BASIS = ["DB", "COMMUNICATE"]  # tau2's pydantic default when a task sets none


def is_success(reward: float | None) -> bool | None:
    """tau2 ``is_successful``: reward within 1e-6 of 1."""
    return None if reward is None else abs(reward - 1.0) <= 1e-6


def whitelist(basis: list[str]) -> list[str]:
    signals = {BASIS_SIGNALS[b] for b in basis if b in BASIS_SIGNALS} | {Signal.CLEAN_EXIT}
    return [str(s) for s in Signal if s in signals]  # enum order, as upstream lists them


def _verdict(session: Session, generation: str, scenario: str, kind: str, ordinal: int, **fields: Any) -> dict:
    row = {name: None for name in SCHEMAS["verdicts"]}
    row.update(run_id=session.run_id, generation=generation, scenario_name=scenario, kind=kind, ordinal=ordinal,
               **fields)
    return row


def _criteria(task: dict | None) -> dict:
    return (task or {}).get("evaluation_criteria") or {}


def _evidence(sim: Tau2Simulation) -> dict[str, tuple]:
    """What identifies a simulation's task: its checked gold action ids and NL assertion texts."""
    info, found = sim.reward_info, {}
    if info and info.action_checks:
        found["actions"] = tuple(c.action.get("action_id") for c in info.action_checks)
    if info and info.nl_assertions:
        found["nl_assertions"] = tuple(a.nl_assertion for a in info.nl_assertions)
    return found


def _fits(task: dict, evidence: dict[str, tuple]) -> bool:
    criteria = _criteria(task)
    gold = {"actions": tuple(a.get("action_id") for a in criteria.get("actions") or []),
            "nl_assertions": tuple(criteria.get("nl_assertions") or [])}
    return all(gold[kind] == value for kind, value in evidence.items())


UNRESOLVED_SUFFIX = " (unresolved)"  # a contradicted id no task can replace: a group of its own


def recover_task_id(sim: Tau2Simulation, tasks: dict[str, dict]) -> tuple[str, str | None, bool]:
    """(task id, claimed id where contradicted, whether the checks identify the task). The claimed id
    stands unless the simulation's checks contradict its task; then the one task they fit."""
    evidence = _evidence(sim)
    claimed = tasks.get(sim.task_id)
    if not evidence or not tasks:
        return sim.task_id, None, False
    if claimed is not None and _fits(claimed, evidence):
        return sim.task_id, None, True
    fitting = [task_id for task_id, task in tasks.items() if _fits(task, evidence)]
    if len(fitting) == 1:
        return fitting[0], sim.task_id, True
    return sim.task_id + UNRESOLVED_SUFFIX, sim.task_id, False


def _settle_collisions(rows: list[dict], identified: list[bool]) -> None:
    """A (task, trial) held by a simulation its checks identify contradicts any other simulation
    that merely claims it: that claim is marked unresolved (pass^k must not count it as a trial)."""
    holders = {(r["task_id"], r["trial"]) for r, known in zip(rows, identified) if known}
    for row, known in zip(rows, identified):
        if not known and row["task_id_claimed"] is None and (row["task_id"], row["trial"]) in holders:
            row["task_id_claimed"] = row["task_id"]
            row["task_id"] += UNRESOLVED_SUFFIX


def _missing_checks(sim: Tau2Simulation, basis: list[str], task: dict | None) -> list[str]:
    """Basis entries a normally ended simulation has no check for (tau2 would have run them)."""
    if sim.termination_reason not in NORMAL_ENDS:
        return []  # tau2 scores a premature end 0 without running the checks
    criteria, missing = _criteria(task), []
    for entry in basis:
        check, needs = BASIS_CHECKS.get(entry, (None, None))
        recorded = getattr(sim.reward_info, check, None) if check else None
        if recorded is None and (check is None or needs is None or task is None or criteria.get(needs)):
            missing.append(entry)
    return missing


def tau2_instructions(task: dict | None) -> str | None:
    """A tau2 task's user scenario as text: its persona, then each instruction field on a line
    ("reason for call: ..."), as tau2 lays them out for the user simulator."""
    scenario = (task or {}).get("user_scenario") or {}
    if not isinstance(scenario, dict):
        return None
    lines = [f"persona: {scenario['persona'].strip()}"] if isinstance(scenario.get("persona"), str) else []
    instructions = scenario.get("instructions")
    if isinstance(instructions, str):
        lines.append(instructions.strip())
    elif isinstance(instructions, dict):
        lines += [f"{key.replace('_', ' ')}: {str(value).strip()}" for key, value in instructions.items()
                  if value not in (None, "")]
    return "\n".join(lines) or None


def _tau2_rows(session: Session, generation: str, fingerprint: str, sim: Tau2Simulation, bucket: str,
               tasks: dict[str, dict], tick_s: Any = None) -> tuple[dict, list[dict], dict]:
    info = sim.reward_info
    task_id, task_id_claimed, identified = recover_task_id(sim, tasks)
    task = tasks.get(task_id)
    name = f"{bucket}__{sim.task_id}__trial{sim.trial}"
    basis = (info.reward_basis if info and info.reward_basis and sim.termination_reason in NORMAL_ENDS
             else None) or _criteria(task).get("reward_basis") or DEFAULT_BASIS
    row = scenario_row(session, generation, fingerprint)
    row.update(
        _identified=identified,  # popped by read_tau2, once every simulation is read
        scenario_name=name, domain=bucket, registry_domain=bucket, task_id=task_id, task_id_claimed=task_id_claimed,
        trial=sim.trial, success_signals=whitelist(basis), reward_basis=basis,
        basis_checks_missing=_missing_checks(sim, basis, task) if info else list(basis),
        total_turns=len(sim.messages), scenario_duration=sim.duration or 0.0,
        duration_seconds=sim.duration, stop_reason=sim.termination_reason,
        agent_n_calls=sum(1 for m in sim.messages if m.get("role") == "assistant"),
        claimed_reward=info.reward if info else None, claimed_success=is_success(info.reward if info else None),
        **definition_columns({"evaluation_criteria": part_hash(_criteria(task))} if task else {}),
    )
    verdicts: list[dict] = []
    key = {"run_id": session.run_id, "generation": generation, "scenario_name": name}
    evidence = {"turns": message_turn_rows(key, sim.messages),
                "tool_calls": tool_call_rows(key, "agent", sim.messages)}
    evidence["tasks"], evidence["task_instructions"] = task_rows(key, tau2_instructions(task),
                                                                 "tau2 task user_scenario")
    ticked = tick_segments(sim.ticks, tick_s)  # τ-voice: its full-duplex ticks
    voice = None if ticked is None else voice_row(key, ticked.segments, None, None, lambda: [], call_s=ticked.call_s,
                                                  ended=call_end(sim.termination_reason), tick_s=ticked.tick_s,
                                                  kinds_marked=True)
    if voice is not None:
        evidence["voice"] = [voice]
    if info is None:
        return row, verdicts, evidence
    if info.db_check is not None:
        row["db_match_recorded"] = info.db_check.db_match
    if info.env_assertions is not None:
        row.update(has_db_state_assertions=True, dbsa_total=len(info.env_assertions),
                   dbsa_passed=sum(a.met for a in info.env_assertions))
        for i, a in enumerate(info.env_assertions, 1):
            spec = a.env_assertion
            verdicts.append(_verdict(session, generation, name, "db_state_assertion", i, label=spec.get("func_name"),
                                     side=spec.get("env_type"), passed=a.met,
                                     expected_json=json.dumps(spec.get("assert_value")),
                                     arguments_json=json.dumps(spec["arguments"]) if "arguments" in spec else None,
                                     detail=spec.get("message")))
    if info.nl_assertions is not None:
        row.update(judge_ran=True, nl_total=len(info.nl_assertions), nl_passed=sum(a.met for a in info.nl_assertions))
        for i, a in enumerate(info.nl_assertions, 1):
            verdicts.append(_verdict(session, generation, name, "nl_assertion", i, label=a.nl_assertion,
                                     passed=a.met, detail=a.justification))
    if info.action_checks is not None:
        n = len(info.action_checks)
        row.update(has_reference=True, has_prediction=True, action_reference_items=n, action_prediction_items=n,
                   action_match_lenient=all(c.action_match for c in info.action_checks))
        for i, c in enumerate(info.action_checks, 1):
            verdicts.append(_verdict(session, generation, name, "action", i, label=c.action.get("name"),
                                     side=c.action.get("requestor"), passed=c.action_match,
                                     expected_json=json.dumps(c.action.get("arguments"))))
    if info.communicate_checks is not None:
        row.update(communicate_total=len(info.communicate_checks),
                   communicate_passed=sum(bool(c.get("met")) for c in info.communicate_checks))
    for i, c in enumerate(info.communicate_checks or [], 1):
        verdicts.append(_verdict(session, generation, name, "communicate", i, label=c.get("info"),
                                 passed=bool(c.get("met")), detail=c.get("justification")))
    return row, verdicts, evidence


# A tau2 results document: its header, where the header was read (for errors), one loader per simulation.
Tau2Document = tuple[dict, str, list[tuple[str, Callable[[], Any]]]]


def tau2_folder_document(path: Path) -> Tau2Document:
    """A results folder's document: ``results.json``, and a simulation per file of ``simulations/``."""
    header = load_json(path / "results.json", path)
    if not isinstance(header, dict):
        raise BadInput("results.json", "schema violation at <root>: expected an object")
    files = sorted((path / "simulations").glob("*.json"))
    return header, "results.json", [(os.path.relpath(f, path), lambda f=f: load_json(f, path)) for f in files]


def tau2_file_document(path: Path) -> Tau2Document:
    """A monolithic results file's document: its header and its ``simulations`` list (or the list itself)."""
    doc = load_json(path, path.parent)
    sims = doc.get("simulations") if isinstance(doc, dict) else doc
    if not isinstance(sims, list):
        raise BadInput(path.name, "schema violation at simulations: expected a list")
    header = doc if isinstance(doc, dict) else {}
    return header, path.name, [(f"{path.name}#simulations[{i}]", lambda s=s: s) for i, s in enumerate(sims)]


def read_tau2(session: Session, generation: str, fingerprint: str,
              document: Callable[[Path], Tau2Document]) -> SessionTables:
    """A tau2 run's rows from its ``document`` (the folder's or the file's, as its Source reads it)."""
    try:
        header, header_name, loaders = document(session.path)
    except BadInput as err:
        return quarantined_run(session, generation, fingerprint, "tau2", err)
    try:
        typed = validate(Tau2Header, header, header_name)
    except BadInput as err:
        return quarantined_run(session, generation, fingerprint, "tau2", err)
    info = header.get("info") or {}
    domain = (typed.info and typed.info.environment_info and typed.info.environment_info.domain_name) or "unknown"
    bucket = f"tau2_{domain}"
    tasks = {str(t.get("id")): t for t in typed.tasks or []}
    audio = info.get("audio_native_config") if isinstance(info, dict) else None
    tick_s = audio.get("tick_duration_seconds") if isinstance(audio, dict) else None  # τ-voice's tick

    def reader(where: str, load: Callable[[], Any]) -> Callable[[], tuple[dict, list[dict], dict]]:
        def read() -> tuple[dict, list[dict], dict]:
            sim = validate(Tau2Simulation, load(), where)
            return _tau2_rows(session, generation, fingerprint, sim, bucket, tasks, tick_s)
        return read

    rows, verdicts, quarantine, errors, evidence = collect_items(session, generation, [(w, reader(w, f)) for w, f in loaders])
    _settle_collisions(rows, [row.pop("_identified") for row in rows])
    env = {k: v for k, v in (info.get("environment_info") or {}).items() if k not in ("policy", "tool_defs")}
    summary = {**{k: v for k, v in info.items() if k != "environment_info"}, "environment_info": env}
    run = run_row(session, generation, fingerprint, "tau2", typed.timestamp, len(loaders), len(rows),
                   len(quarantine), summary)
    return SessionTables(run, {"scenarios": rows, "verdicts": verdicts, "quarantine": quarantine, **evidence}, errors)


def _tau_bench_domain(run_id: str) -> str:
    for domain in ("airline", "retail"):
        if domain in run_id:
            return domain
    return "unknown"


def _tau_bench_rows(session: Session, generation: str, fingerprint: str, rec: TauBenchRecord,
                    bucket: str) -> tuple[dict, list[dict], dict]:
    name = f"{bucket}__{rec.task_id}__trial{rec.trial}"
    outcome = rec.info.reward_info.info if rec.info.reward_info else None
    row = scenario_row(session, generation, fingerprint)
    row.update(
        scenario_name=name, domain=bucket, registry_domain=bucket, task_id=str(rec.task_id), trial=rec.trial,
        # v1 records no termination reason, so CLEAN_EXIT is not applicable.
        success_signals=[str(Signal.DB_STATE_MATCH), str(Signal.CLEAN_EXIT)], total_turns=len(rec.traj),
        agent_n_calls=sum(1 for m in rec.traj if m.get("role") == "assistant"),
        # r_actions is the DB-hash check; output-checked records replace it with r_outputs.
        db_match_recorded=is_success(outcome.r_actions) if outcome else None,
        claimed_reward=rec.reward, claimed_success=is_success(rec.reward),
    )
    key = {"run_id": session.run_id, "generation": generation, "scenario_name": name}
    instruction = (rec.info.task or {}).get("instruction")
    tasks, instructions = task_rows(key, instruction if isinstance(instruction, str) else None,
                                    "tau-bench task instruction")
    return row, [], {"turns": message_turn_rows(key, rec.traj), "tool_calls": tool_call_rows(key, "agent", rec.traj),
                     "tasks": tasks, "task_instructions": instructions}


def read_tau_bench(session: Session, generation: str, fingerprint: str) -> SessionTables:
    try:
        doc = load_json(session.path, session.path.parent)
        if not isinstance(doc, list):
            raise BadInput(session.path.name, "schema violation at <root>: expected a list of records")
    except BadInput as err:
        return quarantined_run(session, generation, fingerprint, "tau-bench", err)
    bucket = f"taubench_{_tau_bench_domain(session.run_id)}"

    def reader(i: int, record: Any) -> Callable[[], tuple[dict, list[dict], dict]]:
        where = f"{session.path.name}#[{i}]"
        return lambda: _tau_bench_rows(session, generation, fingerprint, validate(TauBenchRecord, record, where),
                                       bucket)

    rows, verdicts, quarantine, errors, evidence = collect_items(session, generation,
                                                  [(str(i), reader(i, r)) for i, r in enumerate(doc)])
    run = run_row(session, generation, fingerprint, "tau-bench", None, len(doc), len(rows), len(quarantine), {})
    return SessionTables(run, {"scenarios": rows, "verdicts": verdicts, "quarantine": quarantine, **evidence}, errors)
