"""tau2's interaction metrics as tau2 computes them: the voice panel's tau2 columns against tau2-bench's
own module (tests/tau2_reference, run here on the same ticks) and its golden fixture, on τ-voice
ticks and on NeMo segments made ticks, at tau2's 0.2 s tick and at 0.01 s."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scorelake
from scorelake.transforms.columns import frame
from scorelake.transforms.voice import Segment, segments_of, tick_segments, turn_taking, voice_row
from tests.conftest import CONFORMANCE, conformance_sessions
from tests.tau2_reference import GOLDEN, events, panel, segment_ticks, tick

COUNTS = ("user_turns", "responses", "missed_user_turns", "interruptions", "yields", "agent_barge_ins")
MEANS = ("response_latency_s", "yield_latency_s")
KINDS = tuple(f"{kind}_{part}" for kind in ("backchannel", "vocal_tic", "non_directed") for part in ("total", "errors"))
# tau2's panel names and the voice panel's
PANEL = {"response_latency_mean": "response_latency_s", "yield_latency_mean": "yield_latency_s",
         "response_rate": "response_rate", "yield_rate": "yield_rate",
         "agent_interruption_rate": "agent_interruption_rate", "selectivity_backchannel": "selectivity_backchannel",
         "selectivity_vocal_tic": "selectivity_vocal_tic", "selectivity_non_directed": "selectivity_non_directed"}
PANEL_COUNTS = {"response_total": "user_turns", "yield_total": "interruptions",
                "backchannel_total": "backchannel_total", "vocal_tic_total": "vocal_tic_total",
                "non_directed_total": "non_directed_total", "agent_interrupts_count": "agent_barge_ins"}


def measured(calls: list[tuple[list[Segment], float | None]], tick_s: float, marked: bool = False) -> list[dict]:
    """Each call's turn-taking as an ingest measures it: its ``voice`` row, then ``turn_taking``
    over all of them as one commit batch."""
    rows = [voice_row({"run_id": "r", "generation": "g", "scenario_name": f"s{i}"}, segments, None, None,
                      lambda: [], call_s=call_s, tick_s=tick_s, kinds_marked=marked)
            for i, (segments, call_s) in enumerate(calls)]
    return turn_taking(frame("voice", rows).lazy()).collect().to_dicts()


def assert_same(ours: dict, theirs: dict, names: tuple[str, ...], where: str) -> None:
    for name in names:
        expected = theirs[name]
        if name in MEANS and expected is not None:
            assert ours[name] == pytest.approx(expected, abs=1e-9), f"{where}: {name}"
        else:
            assert ours[name] == expected, f"{where}: {name}: {ours[name]} != tau2's {expected}"


def golden(tmp_path: Path) -> tuple[Path, dict]:
    with tarfile.open(GOLDEN) as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / "experiment", json.loads((tmp_path / "expected_metrics.json").read_text())


def test_tau2s_golden_fixture_ingested_as_a_tau_voice_run_gives_its_expected_metrics(tmp_path):
    """tau2's tests/test_voice/test_interaction_metrics/testdata: three τ-voice simulations and the
    panel tau2's paper pipeline computed on them. Ingested, ``run_voice`` holds that panel (to tau2's
    own tolerance, 1e-9; every count exactly), and so does tau2's module run on the ticks here."""
    experiment, expected = golden(tmp_path)
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(experiment)
    (run,) = wh.voice(by="domain").filter(pl.col("domain") == "(all)").to_dicts()
    for name, column in PANEL.items():
        assert run[column] == pytest.approx(expected[name], abs=1e-9), name
    for name, column in PANEL_COUNTS.items():
        assert run[column] == expected["counts"][name], name
    assert run["scenarios"] == expected["counts"]["n_simulations"]
    simulations = [[tick(t) for t in json.loads(path.read_text())["ticks"]]
                   for path in sorted((experiment / "simulations").glob("*.json"))]
    theirs = panel(simulations)
    assert {k: v for k, v in theirs.items() if k != "counts"} == pytest.approx(
        {k: v for k, v in expected.items() if k != "counts"}, abs=1e-9)


def test_each_golden_simulation_equals_tau2s_events_on_its_own_ticks(tmp_path):
    experiment, _ = golden(tmp_path)
    for path in sorted((experiment / "simulations").glob("*.json")):
        ticks = json.loads(path.read_text())["ticks"]
        ticked = tick_segments(ticks, 0.2)
        (ours,) = measured([(ticked.segments, ticked.call_s)], ticked.tick_s, marked=True)
        assert_same(ours, events([tick(t) for t in ticks]), COUNTS + MEANS + KINDS, path.name)


def _conformance_calls() -> list[tuple[str, list[Segment], float]]:
    """Every scenario of the conformance sessions that logged segments: its segments and its call's length."""
    calls = []
    for session in conformance_sessions():
        for folder in sorted((CONFORMANCE / session).iterdir()):
            seglst = folder / "conversation_log.seglst.json"
            if seglst.is_file():
                metrics = json.loads((folder / "metrics.json").read_text())
                calls.append((f"{session}/{folder.name}", segments_of(json.loads(seglst.read_text())).segments,
                              metrics["duration_seconds"]))
    return calls


def _edited(calls: list[tuple[str, list[Segment], float]]) -> list[tuple[str, list[Segment], float]]:
    """The conformance calls edited where tau2's rules are finest: the user talking over the agent
    (each user turn a second early), a user turn split into two touching segments, an agent turn
    starting in the same instant as a user turn, and the last user turn running to the hang-up."""
    edited = []
    for name, segments, call_s in calls:
        early = [s._replace(start=s.start - 1.0) if s.speaker == "user" else s for s in segments]
        touching = [part for s in segments for part in (
            (s._replace(end=(s.start + s.end) / 2), s._replace(start=(s.start + s.end) / 2))
            if s.speaker == "user" else (s,))]
        same_start = sorted([*segments, *(Segment("agent", s.start, s.start + 0.5) for s in segments
                                           if s.speaker == "user")], key=lambda s: (s.start, s.end))
        last = max((i for i, s in enumerate(segments) if s.speaker == "user"), default=None)
        hang_up = [s._replace(end=call_s) if i == last else s for i, s in enumerate(segments)]
        edited += [(f"{name} early", early, call_s), (f"{name} touching", touching, call_s),
                   (f"{name} same start", same_start, call_s), (f"{name} hang-up", hang_up, call_s)]
    return edited


@pytest.mark.parametrize("tick_s", [0.2, pytest.param(0.01, marks=pytest.mark.slow)])
def test_nemo_segments_equal_tau2s_functions_on_their_ticks(tick_s):
    """Every scenario of the conformance sessions, and its edited copies: the voice panel's tau2
    columns equal tau2's module run on the segments made ticks (a speaker speaks in a tick when its
    speech covers the tick's midpoint), at tau2's 0.2 s and at 0.01 s."""
    calls = _conformance_calls()
    calls += _edited(calls[:40])
    ours = measured([(segments, call_s) for _, segments, call_s in calls], tick_s)
    for (name, segments, call_s), row in zip(calls, ours, strict=True):
        theirs = events(segment_ticks([(s.speaker, s.start, s.end) for s in segments], call_s, tick_s), tick_s)
        assert_same(row, theirs, COUNTS + MEANS, name)
        assert all(row[k] is None for k in KINDS), name  # a seglst marks no backchannel, tic or aside


def test_the_last_user_turn_before_the_hang_up_is_no_missed_turn():
    """tau2 counts a turn as missed only when the user had to speak again; the call's last word
    left unanswered is no event (a conformance call: agent and user take turns, the user's eighth
    and last is never answered: the call ends 2.7 s later)."""
    name, segments, call_s = next(c for c in _conformance_calls()
                                  if c[0] == "eval_20260902_091500/customer_service__service_outage")
    assert [s.speaker for s in segments] == ["agent", "user"] * 8
    (row,) = measured([(segments, call_s)], 0.2)
    users = sum(s.speaker == "user" for s in segments)
    assert row["user_turns"] == users - 1 and row["missed_user_turns"] == 0 and row["response_rate"] == 1.0


_times = st.integers(min_value=0, max_value=400).map(lambda t: t / 20)  # 0-20 s on a 50 ms grid


@st.composite
def _calls(draw) -> tuple[list[Segment], float]:
    segments = []
    for speaker in draw(st.lists(st.sampled_from(["user", "agent"]), min_size=1, max_size=12)):
        start = draw(_times)
        segments.append(Segment(speaker, start, start + draw(st.integers(1, 80)) / 20))
    return sorted(segments, key=lambda s: (s.start, s.end)), draw(_times)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_calls(), min_size=1, max_size=4), st.sampled_from([0.2, 0.1, 0.05]))
def test_any_segments_equal_tau2s_functions_on_their_ticks(calls, tick_s):
    """Segments drawn at random (overlaps, touching, equal starts, ends on tick boundaries and
    between them, a call that ends before the last speech), a few to a commit batch."""
    for (segments, call_s), row in zip(calls, measured(calls, tick_s), strict=True):
        theirs = events(segment_ticks([(s.speaker, s.start, s.end) for s in segments], call_s, tick_s), tick_s)
        assert_same(row, theirs, COUNTS + MEANS, repr((segments, call_s)))


def _tick_doc(user: str, agent: bool) -> dict:
    """A τ-voice tick as JSON: ``user`` is "" (silent), "speech", "backchannel" (speech whose action
    is a backchannel), "tic" / "aside" (speech with a vocal tic / non-directed phrase inserted), or
    "tic-" / "aside-" (the insert in a tick without speech)."""
    inserted = {"tic": "vocal_tic", "aside": "non_directed_phrase"}.get(user.rstrip("-"))
    return {"agent_chunk": {"contains_speech": agent},
            "user_chunk": {"contains_speech": bool(user) and not user.endswith("-"),
                           "turn_taking_action": {"action": "backchannel" if user == "backchannel" else "keep_talking"},
                           "speech_effects": {"speech_insert": {"text": "um", "type": inserted}} if inserted else None}}


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["", "", "speech", "speech", "backchannel", "tic", "aside", "tic-",
                                            "aside-"]), st.booleans()), min_size=2, max_size=60))
def test_any_tau_voice_ticks_equal_tau2s_functions_selectivity_included(spec):
    """τ-voice ticks drawn at random, backchannels, vocal tics and non-directed speech among them (in
    the user's speech and outside it): every tau2 count, selectivity's included."""
    docs = [_tick_doc(user, agent) for user, agent in spec]
    ticked, theirs = tick_segments(docs), events([tick(d) for d in docs])
    if ticked is None:  # nobody spoke: no segment, no event
        assert not any(theirs[name] for name in COUNTS + KINDS)
        return
    (row,) = measured([(ticked.segments, ticked.call_s)], ticked.tick_s, marked=True)
    assert_same(row, theirs, COUNTS + MEANS + KINDS, repr(spec))
