"""A corpus generator of hostile input: each case a session, scenario or results file broken the way a
hostile (or unlucky) user breaks them, and what scorelake must say of it. Built fresh by the tests
from the conformance sessions, never committed as blobs."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import BASELINE, CONFORMANCE

DEEP = b"[" * 100_000 + b"]" * 100_000  # far past any parser's recursion


@dataclass(frozen=True)
class Case:
    """Where a hostile case lands: quarantined (``scenario`` None for a run-level file) or refused
    (``refused``), with the file and the reason the message must name."""

    run_id: str
    scenario: str | None
    file: str
    reason: str
    refused: bool = False


def _copy_session(name: str, target: Path) -> Path:
    shutil.copytree(CONFORMANCE / BASELINE, target / name)
    for path in (target / name).rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    return target / name


def _edit_json(path: Path, **changes) -> None:
    doc = json.loads(path.read_text())
    doc.update(changes)
    path.write_text(json.dumps(doc))


def _replace(path: Path, how: str) -> None:
    """``path`` replaced by a FIFO, a directory, or deeply nested JSON."""
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
    if how == "fifo":
        os.mkfifo(path)
    elif how == "dir":
        path.mkdir()
    else:
        path.write_bytes(DEEP)


def tau2_document(domain: str = "airline", **header) -> dict:
    """A small, valid tau2-bench results document (one simulation), with ``header`` overriding its keys."""
    sim = {"id": "s1", "task_id": "1", "trial": 0, "termination_reason": "agent_stop", "duration": 1.0,
           "reward_info": {"reward": 1.0, "db_check": {"db_match": True}, "reward_basis": ["DB"]},
           "messages": [{"role": "assistant", "content": "done"}]}
    return {"timestamp": "2026-01-01T00:00:00", "info": {"environment_info": {"domain_name": domain}},
            "tasks": [{"id": "1"}], "simulations": [sim], **header}


def build(root: Path, outside: Path) -> tuple[Path, list[Case], list[str]]:
    """The hostile corpus under ``root`` (a FIFO and a file outside it under ``outside``): its folder,
    the cases, and the clean runs that must be ingested whole beside them."""
    runs = root / "runs"
    runs.mkdir(parents=True)
    outside.mkdir(parents=True, exist_ok=True)
    os.mkfifo(outside / "trap.fifo")
    (outside / "secret.json").write_text('[{"never": "read"}]')
    cases: list[Case] = []

    # one session, each of its scenarios broken another way
    run = "eval_20990101_000001"
    session = _copy_session(run, runs)
    scenarios = sorted(p.name for p in session.iterdir() if (p / "metrics.json").exists())
    broken = iter(scenarios)

    def scenario_case(rel: str, how: str, reason: str) -> None:
        name = next(broken)
        _replace(session / name / rel, how)
        cases.append(Case(run, name, f"{name}/{rel}", reason))

    scenario_case("metrics.json", "deep", "invalid JSON")
    scenario_case("scenario_config/reference_answer.json", "deep", "invalid JSON")
    scenario_case("metrics.json", "dir", "a directory, not a file")
    scenario_case("scenario_config/metadata.json", "dir", "a directory, not a file")
    scenario_case("metrics.json", "fifo", "not a regular file")
    scenario_case("judge_result.json", "fifo", "not a regular file")
    scenario_case("final_agent_response.json", "fifo", "not a regular file")
    # llm_context.json is read for the agent's turns when metrics.json does not count them
    name = next(broken)
    metrics = json.loads((session / name / "metrics.json").read_text())
    metrics["token_usage"] = None
    (session / name / "metrics.json").write_text(json.dumps(metrics))
    (session / name / "bot_logs_agent").mkdir(exist_ok=True)
    (session / name / "bot_logs_agent" / "llm_context.json").write_bytes(DEEP)
    cases.append(Case(run, name, f"{name}/bot_logs_agent/llm_context.json", "invalid JSON"))
    for target in (str(outside / "secret.json"), "../../../../../../../../etc/passwd", str(outside / "trap.fifo")):
        name = next(broken)
        _edit_json(session / name / "scenario_config" / "metadata.json", reference_file=target)
        cases.append(Case(run, name, f"{name}/scenario_config/metadata.json",
                          "reference_file points outside the run directory"))
    # a scenario folder whose name is not UTF-8
    name = next(broken)
    os.rename(session / name, os.path.join(os.fsencode(session), b"bad_\xff_" + os.fsencode(name)))
    cases.append(Case(run, "bad_\\xff_" + name, "bad_\\xff_" + name, "folder name is not UTF-8"))

    # sessions whose run_args.json cannot be used: every scenario quarantined, the run stored as such
    run_args_cases = {
        "fifo": ("not a regular file", lambda p: _replace(p, "fifo")),
        "missing": ("missing file", lambda p: p.unlink()),
        "truncated": ("invalid JSON", lambda p: p.write_bytes(p.read_bytes()[:40])),
        "list": ("schema violation", lambda p: p.write_text("[1, 2]")),
        "no-invocations": ("schema violation", lambda p: p.write_text('{"invocations": []}')),
        "string-threshold": ("schema violation", lambda p: p.write_text(json.dumps(
            {"invocations": [{"parsed_args": {"judge_threshold": "0.5"}}]}))),
        "deep": ("invalid JSON", lambda p: _replace(p, "deep")),
    }
    for i, (label, (reason, spoil)) in enumerate(run_args_cases.items(), start=2):
        run_id = f"eval_20990101_00000{i}"
        spoil(_copy_session(run_id, runs) / "run_args.json")
        cases.append(Case(run_id, None, "run_args.json", reason))

    # a session folder whose name is not UTF-8: refused, named
    bad = os.path.join(os.fsencode(runs), b"eval_20990101_\xfe")
    shutil.copytree(os.fsencode(CONFORMANCE / BASELINE), bad)
    cases.append(Case("eval_20990101_\\xfe", None, "eval_20990101_\\xfe", "not UTF-8", refused=True))

    # tau2 and tau-bench files of the wrong shapes, several levels down
    deep_dir = runs / "external" / "tau2" / "results"
    deep_dir.mkdir(parents=True)
    for stem, doc, reason in (
        ("tau2_info_text", tau2_document(info="airline"), "schema violation at info"),
        ("tau2_tasks_number", tau2_document(tasks=7), "schema violation at tasks"),
        ("tau2_timestamp_number", tau2_document(timestamp=1700000000), "schema violation at timestamp"),
    ):
        (deep_dir / f"{stem}.json").write_text(json.dumps(doc))
        cases.append(Case(stem, None, f"{stem}.json", reason))
    (deep_dir / "tau2_deep.json").write_bytes(b'{"simulations": ' + DEEP + b"}")
    cases.append(Case("tau2_deep", None, "tau2_deep.json", "invalid JSON"))
    folder = runs / "external" / "tau2_folder"
    (folder / "simulations").mkdir(parents=True)
    header = tau2_document()
    sims = header.pop("simulations")
    (folder / "results.json").write_text(json.dumps(header))
    (folder / "simulations" / "s1.json").write_text(json.dumps(sims[0]))
    os.mkfifo(folder / "simulations" / "s2.json")
    cases.append(Case("tau2_folder", None, "simulations/s2.json", "not a regular file"))
    record = {"task_id": 0, "reward": 1.0, "trial": 0, "traj": [{"role": "assistant", "content": "x"}],
              "info": {"reward_info": {"reward": 1.0, "info": {"r_actions": "yes"}}}}
    (runs / "external" / "taubench_airline_text.json").write_text(json.dumps([record]))
    cases.append(Case("taubench_airline_text", None, "taubench_airline_text.json#[0]", "schema violation"))

    clean = ["eval_20260902_091500", "tau2_clean_airline"]
    shutil.copytree(CONFORMANCE / clean[0], runs / clean[0])
    (deep_dir / "tau2_clean_airline.json").write_text(json.dumps(tau2_document()))
    return runs, cases, clean
