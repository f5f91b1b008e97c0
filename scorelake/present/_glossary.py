"""What each column a person reads means, said once: the legend under each table on a terminal, the
title on each table heading in the viewer and the report. A column with a declaration (a signal, a
voice or latency metric) takes its declaration's words; the rest are declared here."""

from __future__ import annotations

import html
import re

from scorelake.present._panels import LATENCY_PANEL, LATENCY_SCENARIO_PANEL, VOICE_PANEL
from scorelake.transforms.registry import SIGNALS

# Columns without a declaration elsewhere, by the heading they are shown under.
MEANINGS: dict[str, str] = {
    # what a row is
    "run": "the run: its session directory's name",
    "domain": "the scenarios' domain (the name before '__'); (all): the whole run",
    "scenario": "the scenario's name",
    "task id": "the task: a scenario's name without its trial",
    "group": "the run group: runs that are trials of one system, compared one after another",
    "n": "scenarios scored",
    "scenarios": "scenarios counted",
    "started": "when the run's session started",
    "version": "the warehouse version a write step left (an --as-of VERSION)",
    "name": "the policy's name",
    "id": "the policy's id (a hash of its settings)",
    "judge": "the judge: recorded (the runs' own), one scorelake rejudge asked (NAME#K: its K-th ask, "
             "NAME@majority: the majority of its asks), or human (people's reviews)",
    # rates and their changes
    "success": "the composite is_successful: every signal of the domain's whitelist passed and the scenario "
               "did not stall (percent, passed/total)",
    "task": "is_task_successful: success with a clean exit not required (the agent did the task, however the "
            "call ended)",
    "stalled": "scenarios whose agent answered fewer than the policy's minimum turns: failures of the composite, "
               "left out of every per-signal rate",
    "pass rate": "passed of counted",
    "counted in": "what the rate counts: scenarios, or their predicates or assertions",
    "95% CI": "the 95% interval of the rate before it (Wilson's)",
    "A": "run A's (or judge A's) value: the baseline",
    "B": "run B's (or judge B's) value",
    "A 95% CI": "run A's success rate's 95% interval (Wilson's)",
    "B 95% CI": "run B's success rate's 95% interval (Wilson's)",
    "delta": "B minus A on the paired scenarios, in points",
    "delta 95% CI": "the delta's 95% interval (Newcombe's, from the two Wilson intervals)",
    "change": "improved or regressed only beyond the noise (exact McNemar at --alpha), else inconclusive or "
              "unchanged",
    "p": "the exact McNemar test's p-value on the paired scenarios",
    "detectable": "the smallest change the pairs could detect (80% power at --alpha)",
    "broken": "scenarios that passed in the run before and fail now (the same definition)",
    "fixed": "scenarios that failed in the run before and pass now",
    "p50 ms": "the agent's median response latency, in ms",
    "p95 ms": "the agent's 95th-percentile response latency, in ms",
    "p50 A": "run A's median response latency, in ms",
    "p50 B": "run B's median response latency, in ms",
    "p95 A": "run A's 95th-percentile response latency, in ms",
    "p95 B": "run B's 95th-percentile response latency, in ms",
    "B-A": "B minus A",
    "95% CI (bootstrap)": "the difference's 95% interval, resampling the scenarios",
    "overlap A s": "run A's seconds of overlapping speech a scenario",
    "overlap B s": "run B's seconds of overlapping speech a scenario",
    "B-A s": "B minus A, in seconds",
    "WER A": "run A's word error rate of what the agent heard",
    "WER B": "run B's word error rate of what the agent heard",
    "B-A pts": "B minus A, in percentage points",
    "words A": "the words run A's WER is over",
    "words B": "the words run B's WER is over",
    "missing A": "user turns the agent never heard, in run A",
    "missing B": "user turns the agent never heard, in run B",
    # pass^k and flaky tasks
    "k": "the trials drawn (pass^k: the chance that k trials of a task all pass)",
    "tasks": "tasks with at least k trials",
    "pass^k": "tau2's pass^k from scorelake's composite: the mean over tasks of C(passed, k) / C(trials, k)",
    "claimed tasks": "tasks with at least k trials the source gave a verdict on",
    "claimed pass^k": "pass^k from the source's own verdicts (tau2's reward, the runner's is_successful)",
    "verdicts": "the verdicts a task got across the group's runs and trials",
    "passed": "verdicts or asks that passed",
    "failed": "verdicts or asks that failed",
    "flips": "times the verdict changed from one run to the next",
    "flip rate": "flips per verdict after the first; for a judge, its asks that disagree with their majority",
    # evidence
    "failed by": "the signals that failed the scenario (and stalled)",
    "judge score": "the judge's score, 0 to 1 (JUDGE_PASSED: at least the threshold)",
    "outcome": "passed or failed under the policy",
    "places": "where the phrase was found: transcript, judge reason, tool calls",
    "first found in": "the first place the phrase was found",
    "around it": "the words around the first place it was found",
    "stop reason": "how the conversation ended (the runner's stop reason)",
    "agent turns": "the turns the agent answered",
    "minimum": "the policy's minimum agent turns, below which a scenario stalls",
    "evidence": "what shows it: the values compared, the items that failed",
    "key": "the tool call's argument",
    "reference": "what the scenario expected (the reference the signal compares against)",
    "prediction": "what the agent did",
    "its scenarios here": "the task's scenarios in this run",
    "previous": "the run before's success rate (the baseline)",
    "latest": "the latest run's success rate",
    "95% interval": "the delta's 95% interval (Newcombe's, from the two Wilson intervals)",
    # reviewing
    "now": "the verdict as the policy scores it now",
    "standing review": "the reviews in force, each reviewer's",
    "your verdict": "agree or disagree, with a note: kept with its history",
    # voice and latency beside the panels
    "cause": "the failure's primary cause (the first that holds: harness, judge, dead_air, stall, "
             "transcription, turn_taking, logic)",
    "the user said": "the user's turn as the simulator spoke it",
    "the agent heard": "the same turn as the agent's speech recognition heard it",
    "user said": "the user's turn before the agent's answer",
    "agent answered": "the agent's answer",
    "scenario, turn": "the scenario and the turn of the exchange",
    "ms": "the agent's response latency, in ms",
    "interrupted": "agent turns the user talked over (the runner's [INTERRUPTED]), and their share of agent turns",
    "failed by cause": "the failed scenarios counted by their primary cause",
    # cost
    "agent in": "the agent's input (prompt) tokens",
    "agent out": "the agent's output (completion) tokens",
    "user in": "the simulated user's input tokens",
    "user out": "the simulated user's output tokens",
    "judge in": "the judges' input tokens (every call scorelake rejudge made)",
    "judge out": "the judges' output tokens",
    "agent cost": "the agent's tokens at --price agent",
    "user cost": "the simulated user's tokens at --price user",
    "judge cost": "the judges' tokens at --price judge",
    # judges
    "model": "the model the judge asked (a majority: its asks' model)",
    "from": "the judge it takes its answers from where it has none (a base judge)",
    "coverage": "stored judge inputs this judge has a judgement of",
    "errors": "judgements that are errors (the endpoint failed or its reply could not be parsed)",
    "asked": "calls made to the endpoint",
    "no call": "judgements taken without a call: from the cache or the base judge",
    "retries": "calls asked again after a failure",
    "tokens in": "input tokens of the calls made",
    "tokens out": "output tokens of the calls made",
    "cost": "the calls' tokens at --price-in and --price-out",
    "asks": "the times a repeated judge was asked each input",
    "flipping": "scenarios whose asks did not all agree",
    "score spread": "the highest ask's score minus the lowest's",
    "settled after": "asks before the running majority stopped changing (mean; 1: the first ask said it)",
    "at most": "the most asks any scenario needed to settle",
    "verdict": "which verdict: judge passed, or an NL assertion; in reviews, pass or fail",
    "pairs": "scenarios (or assertions) both judges gave a verdict on",
    "agree": "pairs where both said the same",
    "kappa [95% CI]": "Cohen's kappa: agreement beyond chance (1 perfect, 0 chance), with its 95% interval",
    "score B-A": "judge B's score minus judge A's, on average",
    "A only": "pairs judge A passed and judge B failed",
    "B only": "pairs judge B passed and judge A failed",
    "judge errors": "pairs where a judge's answer was an error",
    "precision": "of the judge's passes, those people passed",
    "recall": "of people's passes, those the judge passed",
    "A score": "judge A's score",
    "B score": "judge B's score",
    "threshold": "the score JUDGE_PASSED needs",
    "judge passes": "scenarios the judge passes at that threshold",
    "judge said": "the judge's verdict, the stratum the labels are drawn from",
    "labelled": "scenarios people labelled so far",
    "label more": "labels to add for the planned interval width",
    "units": "the items all the judges rated",
    "alpha": "Krippendorff's alpha (nominal): agreement beyond chance over every judge",
    "labels": "people's labels of JUDGE_PASSED (in the run, or in a calibration's scope)",
    "sensitivity": "of the scenarios people passed, those the judge passed",
    "specificity": "of the scenarios people failed, those the judge failed",
    "corrected [95% CI]": "the rate people's labels imply (Rogan-Gladen), with its 95% interval",
    "why": "what leaves the corrected rate blank, or that it was clipped to [0, 100%]",
    # a judge kept with a guarantee, and rates from judge and labels together
    "scope": "what a calibration covers: a domain, or (all)",
    "may disagree": "alpha: on the verdicts kept, the judge disagrees with people at most this often ...",
    "may fail": "delta: ... except with at most this probability",
    "confidence at least": "the confidence a verdict needs to be kept (blank: no threshold gives the guarantee)",
    "kept share": "the share of the judge's verdicts kept (the rest escalated to people)",
    "agrees at least": "the agreement with people the kept verdicts reach, with probability 1 - delta",
    "more labels": "about how many more labels a threshold takes",
    "calibration note": "why no threshold gives the guarantee yet",
    "judged": "scenarios the judge gave a verdict on",
    "kept": "verdicts the calibration keeps",
    "escalated": "verdicts below the calibrated threshold: people's to decide",
    "kept rate [95% CI]": "JUDGE_PASSED's pass rate over the kept verdicts, with its 95% interval (Wilson's)",
    "judge rate": "JUDGE_PASSED's pass rate over all the judge's verdicts",
    "labels rate [95% CI]": "JUDGE_PASSED's pass rate from people's labels alone, with its 95% interval (Wilson's)",
    "ppi rate [95% CI]": "the prediction-powered rate: every judged scenario plus a correction from the labelled "
                         "ones, with its 95% interval",
    "ppi method": "ppi++ (PPI++, power-tuned), or active (labels drawn with a known chance, weighted by it)",
    "paired": "scenarios both runs scored with the same definition",
    "broken/fixed": "paired scenarios that went from passed to failed / from failed to passed",
    "p-value": "the exact McNemar test's p-value",
    "corrected p": "the p-value corrected for the gate's many tests (Holm, or Benjamini-Hochberg)",
    "call": "regressed: the domain dropped beyond the noise after correction",
    "detectable drop": "the smallest drop the paired scenarios detect with 80% power at the corrected level",
    # Inspect AI runs
    "eval task": "the Inspect AI task (its domain here)",
    "inspect scorer": "the Inspect AI scorer",
    "samples": "the samples the scorer scored (an errored one is left out, as Inspect leaves it out)",
    "scores": "the scores it gave: a sample's, once an epoch",
    "accuracy": "the mean of the samples' scores (each the mean over its epochs; C 1, P 0.5, I 0): Inspect's "
                "accuracy() and mean()",
    "stderr": "the standard error of that mean (sample standard deviation over the square root of the samples): "
              "Inspect's stderr()",
    # reviews
    "signal": "the signal reviewed (#N: its N-th assertion)",
    "reviewer": "who reviewed (names compared case-folded)",
    "when (UTC)": "when the review was recorded",
    "note": "the reviewer's note",
    "stands": "yes: the review in force (not superseded or withdrawn)",
    # the log
    "committed (UTC)": "when the write step committed",
    "operation": "the write step: ingest, rescore, rejudge, review, compact, migrate",
    "what": "what it did",
    "tables changed": "the tables it changed, each at the version it left",
    "by (host:pid)": "the process that wrote it",
    # policies
    "reviews": "whether people's standing reviews replace the judge's verdicts",
    "min turns": "the agent turns below which a scenario is stalled",
    "strict": "ACTION_MATCH strict: arguments must match exactly",
    "judge on": "whether the judge's signals count",
    "whitelists": "the signals that gate success, per domain",
    "scorer": "the scoring code's version",
}


def _declared() -> dict[str, str]:
    meanings = {s.label: s.help for s in SIGNALS}
    for panel in (VOICE_PANEL, LATENCY_PANEL, LATENCY_SCENARIO_PANEL):
        meanings.update((m.label, m.doc) for m in panel.metrics)
    return {**meanings, **MEANINGS}


GLOSSARY = _declared()


def column_meaning(heading: str) -> str | None:
    """What the column headed ``heading`` means, or None for a heading nobody declared."""
    return GLOSSARY.get(heading)


_HEADING = re.compile(r"<th>([^<]*)</th>")


def titled_headings(page: str) -> str:
    """``page`` with each plain table heading it has a meaning for titled with it (shown on hover)."""
    def titled(m: re.Match) -> str:
        meaning = column_meaning(html.unescape(m[1]))
        return m[0] if meaning is None else f'<th title="{html.escape(meaning)}">{m[1]}</th>'

    return _HEADING.sub(titled, page)
