"""A run in one line: what a person reads first (``rates``, ``summary --brief``, the viewer's runs
page and the report all say it so)."""

from __future__ import annotations

from scorelake.transforms.results import Headline


def _parts(h: Headline) -> list[str]:
    """The headline's facts, each a phrase: success with its interval and n, the change from the
    run before, the judge's errors, the stalls, the worst domain."""
    if not h.success_total:
        return ["no scenario scored"]
    parts = [f"success {h.success_passed / h.success_total * 100:.1f}% {h.success_passed}/{h.success_total} "
             f"(95% CI {h.success_ci_low * 100:.1f}-{h.success_ci_high * 100:.1f}%)"]
    if h.previous_run is None:
        parts.append(f"first run of group {h.run_group}")
    elif not h.pairs:
        parts.append(f"no scenario paired with {h.previous_run}")
    else:
        parts.append(f"vs {h.previous_run}: {h.broken} broken, {h.fixed} fixed of {h.pairs} paired ({h.change})")
    if h.judge_errors:
        alone = f", {h.judge_only} failing a scenario alone" if h.judge_only else ""
        parts.append(f"{h.judge_errors} judge error{'s' * (h.judge_errors != 1)}{alone}")
    parts.append(f"{h.stalled} stalled")
    if h.worst_domain is not None:
        parts.append(f"worst domain {h.worst_domain} {h.worst_passed}/{h.worst_total}")
    return parts


def headline_facts(h: Headline) -> str:
    """The headline's facts after the run's name, in one line (a title, a page's line, a legend's)."""
    return "; ".join(_parts(h))


def headline_text(h: Headline) -> str:
    """The run's headline: its name, then its facts."""
    return f"{h.run_id}: {headline_facts(h)}"
