"""A gate's and a comparison's results in words: the lines the command line prints, a webhook's
text and a Prefect artifact."""

from __future__ import annotations

from scorelake.transforms.analysis import Comparison, GateResult, Regression


def delta_text(row: dict, missing: str) -> tuple[str, str]:
    """A ``deltas`` row's change in points and its 95% interval, as shown to a person."""
    if row["delta"] is None:
        return missing, missing
    return (f"{row['delta'] * 100:+.1f} pts",
            f"[{row['delta_ci_low'] * 100:+.1f}, {row['delta_ci_high'] * 100:+.1f}]")


def mcnemar_text(c: Comparison) -> str:
    """The run-wide test in words (each face puts "exact" or "Exact" before it)."""
    m = c.mcnemar
    return f"McNemar on {c.paired} paired scenarios: {m.broken} broken vs {m.fixed} fixed, p = {m.p_value:.4g}"


def not_compared(c: Comparison, a: str = "A", b: str = "B") -> list[tuple[str, list[str]]]:
    """What a comparison left out, as (what, its names): the scenarios only run A (``a``) or only
    run B (``b``) has, the definitions that changed (each with the parts that did)."""
    changed = [f"{d['scenario_name']} ({', '.join(d['changed']) or 'definition'})" for d in c.changed_definitions]
    return [(what, names) for what, names in ((f"only in {a}", c.only_a), (f"only in {b}", c.only_b),
                                              ("definition changed", changed)) if names]


def gate_summary(result: GateResult) -> str:
    """A gate's result in a few lines (a webhook's text, a Prefect artifact)."""
    c = result.comparison
    lines = [f"scorelake gate {c.run_a} -> {c.run_b}: {'passed' if result.passed else 'REGRESSED'}"]
    lines += [f"- {regression_text(r, result.broken.get(r.domain, []))}" for r in result.regressions]
    return "\n".join(lines)


LISTED = 20  # names a line lists before "... and N more"


def listed(names: list[str], limit: int = LISTED, more: str = "") -> str:
    """``names`` joined, the first ``limit`` of them and then how many more (``more``: where the rest are)."""
    shown = ", ".join(names[:limit])
    return shown + (f" ... and {len(names) - limit} more{more}" if len(names) > limit else "")


def regression_text(regression: Regression, broken: list[str], more: str = "") -> str:
    """One regression of a gate, in words (its broken scenarios: the first ``LISTED``)."""
    r = regression.figures
    if regression.kind == "slower":
        return f"{r['domain']}: p95 latency {r['p95_a_ms']:.0f} -> {r['p95_b_ms']:.0f} ms (+{r['p95_rise_ms']:.0f} ms)"
    if regression.kind == "overlap":
        return (f"{r['domain']}: overlap of speech {r['overlap_a_s']:.2f} -> {r['overlap_b_s']:.2f} s a scenario "
                f"(+{r['overlap_rise_s']:.2f} s)")
    if regression.kind == "wer":
        return (f"{r['domain']}: WER of what the agent heard {r['wer_a'] * 100:.1f}% -> {r['wer_b'] * 100:.1f}% "
                f"(+{r['wer_rise_pts']:.1f} pts over {r['words_a']} and {r['words_b']} words; user turns never heard "
                f"{r['missing_a']} -> {r['missing_b']})")
    return (f"{r['domain']}: {r['delta'] * 100:+.1f} pts (p = {r['p_value']:.3g})"
            + (f"; broken: {listed(broken, more=more)}" if broken else ""))
