"""``all_summary.txt`` rendered from warehouse rows, byte for byte as the upstream runner writes it.

The template, the conditions for each line and the aggregation rules are run-format.md §11 and
§13; the run-level buckets follow ``RunAggregator`` (stalled scenarios are failures in the
composite buckets and skipped everywhere else; a per-domain block needs two or more domains).
"""

from __future__ import annotations

from typing import Any

RULE = "=" * 80
DASH = "-" * 80


def _label(value: Any) -> str:
    """Python ``str`` of a bool-or-"N/A" value, as the runner prints it."""
    return "N/A" if value is None else str(value)


def _scenario_block(r: dict[str, Any]) -> list[str]:
    lines = [
        "",
        f"====== {r['scenario_name']} ======:",
        f"  Is successful: {_label(r['is_successful'])}",
    ]
    if r["is_task_successful"] is not None:
        lines.append(f"  Is task-successful (excl. clean_exit): {r['is_task_successful']}")
    lines.append(f"    Action-list match: {_label(r['is_action_match'])}")
    if r["db_state_match"] is not None:
        lines.append(f"    DB-state match: {r['db_state_match']}")
    if r["db_state_assertion_pass_rate"] is not None:
        lines.append(f"    DB-state-assertion pass rate: {r['db_state_assertion_pass_rate'] * 100:.2f}%")
    if r["nl_assertion_pass_rate"] is not None:
        lines.append(f"    NL-assertion pass rate: {r['nl_assertion_pass_rate'] * 100:.2f}%")
    if r["judge_score"] is not None:
        lines.append(f"    Judge score: {r['judge_score']:.2f}")
    if r["judge_passed"] is not None:
        lines.append(f"    Judge passed: {r['judge_passed']}")
    if r["failed"]:
        lines.append(f"    Failed signals: {', '.join(r['failed'])}")
    lines.append(f"  Turns: {r['total_turns']}")
    if r["stalled"]:
        lines.append("  [COUNTED AS FAILURE: insufficient agent turns / stalled — excluded from per-signal rates]")
    lines.append(f"  Duration: {r['scenario_duration']:.1f}s")
    if r["scenario_duration"] > 0:
        lines.append(f"  Turns/min: {r['total_turns'] / (r['scenario_duration'] / 60):.1f}")
    lines.append(f"  Latency Measurements: {r['latency_count']}")
    if r["latency_count"] > 0:
        for label, key in (("Mean", "mean"), ("P50", "p50"), ("P95", "p95"), ("Min", "min"), ("Max", "max")):
            lines.append(f"    {label}: {r[f'latency_{key}_ms']:.1f}ms")
    return lines


class _Buckets:
    """The runner's run-level and per-domain lists, filled scenario by scenario in results order."""

    def __init__(self) -> None:
        self.lists: dict[str, list] = {}
        self.per_domain: dict[str, dict[str, list]] = {}

    def add(self, name: str, domain: str, values: list) -> None:
        self.lists.setdefault(name, []).extend(values)
        self.per_domain.setdefault(name, {}).setdefault(domain, []).extend(values)

    def get(self, name: str) -> list:
        return self.lists.get(name, [])


def _fill(rows: list[dict[str, Any]]) -> tuple[_Buckets, list[str]]:
    buckets, stalled = _Buckets(), []
    for r in rows:
        d = r["domain"]
        if r["stalled"]:
            stalled.append(r["scenario_name"])
            buckets.add("success", d, [False])
            buckets.add("task", d, [False])
            continue
        if r["is_action_match"] is not None:
            buckets.add("action", d, [r["is_action_match"]])
        if r["judge_score"] is not None:
            buckets.add("judge_score", d, [r["judge_score"]])
        if r["judge_passed"] is not None:
            buckets.add("judge_passed", d, [r["judge_passed"]])
        if r["db_state_match"] is not None:
            buckets.add("db_state", d, [r["db_state_match"]])
        if r["clean_exit"] is not None:
            buckets.add("clean_exit", d, [r["clean_exit"]])
        if r["nl_assertion_pass_rate"] is not None:
            buckets.add("nl", d, [True] * r["nl_passed"] + [False] * (r["nl_total"] - r["nl_passed"]))
        if r["db_state_assertion_pass_rate"] is not None:
            buckets.add("dbsa", d, [True] * r["dbsa_passed"] + [False] * (r["dbsa_total"] - r["dbsa_passed"]))
        if r["is_successful"] is not None:
            buckets.add("success", d, [r["is_successful"]])
            buckets.add("task", d, [r["is_task_successful"]])
    return buckets, stalled


def _rate_line(label: str, values: list, unit: str) -> str:
    return f"  {label}{sum(values) / len(values) * 100:6.2f}% ({sum(values)}/{len(values)} {unit})"


def render_summary(rows: list[dict[str, Any]], queued_count: int, min_agent_turns: int) -> str:
    """``rows``: ``scenario_scores`` rows of one run under one policy, in ``position`` order."""
    out = ["EVALUATION SUMMARY", RULE, ""]
    out.append(f"Total Scenarios: {queued_count}")
    out.append(f"Total Duration: {sum(r['scenario_duration'] for r in rows) / 60:.1f}mins")
    out.append(f"Total Turns: {sum(r['total_turns'] for r in rows)}")
    out += ["", "Per-Scenario Results:", DASH]
    for r in rows:
        out += _scenario_block(r)

    latencies = sorted(v for r in rows for v in r["latency_ms"])
    n = len(latencies)
    stats = (
        [sum(latencies) / n, latencies[n // 2], latencies[int(n * 0.95)], latencies[0], latencies[-1]]
        if n else [-1] * 5
    )
    out += ["", "", "Overall Latency Statistics:", DASH, f"  Total Measurements: {n}"]
    for label, value in zip(("Mean", "P50", "P95", "Min", "Max"), stats):
        out.append(f"  {label}: {value:.1f}ms")

    buckets, stalled = _fill(rows)
    if stalled:
        out += [
            "", "",
            f"WARNING: {len(stalled)} scenario(s) had fewer than {min_agent_turns} agent turn(s) "
            "(likely stalled LLM / server hang) and were counted as failures.",
            f"Stalled scenarios: {', '.join(stalled)}",
            f"Run with --resume <TIMESTAMP> --min-agent-turns {min_agent_turns} to retry them.",
        ]

    success, task = buckets.get("success"), buckets.get("task")
    if success:
        out += ["", "", f"Overall Success Rate: {sum(success) / len(success) * 100:.2f}% ({sum(success)}/"
                f"{len(success)} scenarios — strict conjunction across all applicable signals)"]
        if task:
            out.append(f"Task Success Rate (excl. clean_exit): {sum(task) / len(task) * 100:.2f}% "
                       f"({sum(task)}/{len(task)} scenarios)")
    else:
        out += ["", "", "Overall Success Rate: N/A (no scenarios had any applicable signal)"]

    out += ["", "Per-signal pass rates:"]
    for key, label, unit in (
        ("action", "Action-list match:           ", "scenarios"),
        ("db_state", "DB-State match:              ", "scenarios"),
        ("dbsa", "DB-State-Assertion pass:     ", "predicates"),
        ("nl", "NL-Assertion pass:           ", "assertions"),
    ):
        if buckets.get(key):
            out.append(_rate_line(label, buckets.get(key), unit))
    scores = buckets.get("judge_score")
    if scores:
        out.append(f"  Judge score mean:            {sum(scores) / len(scores):.3f} (across {len(scores)} scenarios)")
    if buckets.get("judge_passed"):
        out.append(_rate_line("Judge passed (>= threshold): ", buckets.get("judge_passed"), "scenarios"))
    if buckets.get("clean_exit"):
        out.append(_rate_line("Clean exit: ", buckets.get("clean_exit"), "scenarios"))

    usage = {side: [sum(r[f"{side}_{k}"] or 0 for r in rows) for k in ("n_calls", "prompt_tokens", "completion_tokens")]
             for side in ("agent", "user")}
    if usage["agent"][0] + usage["user"][0] > 0:
        out += ["", "", "Token Usage:", DASH]
        for side, (calls, prompt, completion) in usage.items():
            out.append(f"  {side}: {calls} call(s), prompt={prompt:,}, completion={completion:,}, "
                       f"total={prompt + completion:,}")
        out.append(f"  Run total: {sum(p + c for _, p, c in usage.values()):,} tokens")

    for i, (key, title, fmt) in enumerate((
        ("success", "Per-Domain Success Rate:", "g"),
        ("task", "Per-Domain Task Success Rate (excl. clean_exit):", "g"),
        ("db_state", "Per-Domain DB-State Match Rate:", ""),
        ("nl", "Per-Domain NL-Assertion Pass Rate:", ""),
        ("dbsa", "Per-Domain DB-State-Assertion Pass Rate:", ""),
    )):
        per_domain = buckets.per_domain.get(key, {})
        if len(per_domain) > 1:
            out += ["", "", title, DASH] if i == 0 else ["", title, DASH]
            for domain in sorted(per_domain):
                values = per_domain[domain]
                out.append(f"  {domain}: {sum(values) / len(values) * 100:.2f}% ({sum(values):{fmt}}/{len(values)})")
    return "\n".join(out) + "\n"
