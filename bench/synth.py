"""Synthetic stores in the upstream on-disk format, for the benchmark.

Each session copies the scenario directories of a conformance session under new scenario names,
so every byte is real upstream output and only names differ: whole (every file the runner wrote,
both LLM contexts and the conversation logs included), or only the files scoring reads.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

SCENARIO_FILES = ("metrics.json", "judge_result.json", "final_scenario_db_hash.txt", "final_agent_response.json",
                  "scenario_config/metadata.json", "scenario_config/reference_answer.json")
SCENARIOS_PER_SESSION = 500  # about a full-suite voice-agent run


def _templates(source: Path, whole: bool) -> list[tuple[str, dict[str, bytes]]]:
    templates = []
    for scenario in sorted(p for p in source.iterdir() if p.is_dir() and ".killed." not in p.name):
        names = (sorted(p.relative_to(scenario).as_posix() for p in scenario.rglob("*") if p.is_file()) if whole
                 else [rel for rel in SCENARIO_FILES if (scenario / rel).exists()])
        templates.append((scenario.name, {rel: (scenario / rel).read_bytes() for rel in names}))
    return templates


def build_store(source: Path, target: Path, n_scenarios: int, whole: bool = True,
                per_session: int = SCENARIOS_PER_SESSION, resume: bool = False) -> list[Path]:
    """``n_scenarios`` scenarios in sessions of ``per_session`` under ``target`` (each scenario
    folder ``whole``, or only the files scoring reads); returns the files written. ``resume``: the
    sessions a build cut short left whole (their ``run_args.json``, written last, there) are kept."""
    if target.exists() and not resume:
        shutil.rmtree(target)
    templates = _templates(source, whole)
    run_args = json.loads((source / "run_args.json").read_text())
    written: list[Path] = []
    for s in range(0, n_scenarios, per_session):
        session = target / f"eval_2030{s // per_session:08d}_000000"
        if resume and (session / "run_args.json").exists():
            continue
        names = []
        for i in range(s, min(s + per_session, n_scenarios)):
            template_name, files = templates[i % len(templates)]
            name = f"{template_name.split('__', 1)[0]}__bench_{i}"
            names.append(name)
            for rel, data in files.items():
                if rel == "metrics.json":
                    data = data.replace(f'"{template_name}"'.encode(), f'"{name}"'.encode())
                path = session / name / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                written.append(path)
        invocation = dict(run_args["invocations"][0], resolved_scenario_names=names,
                          resolved_scenario_count=len(names))
        (session / "run_args.json").write_text(json.dumps({"invocations": [invocation]}))
        (session / "all_summary.txt").write_text("synthetic\n")
        written += [session / "run_args.json", session / "all_summary.txt"]
    return written
