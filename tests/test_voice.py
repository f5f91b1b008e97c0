"""The voice panel: turn-taking from the speech segments, what each side heard (WER) and the key
entities misheard, each checked against numbers worked out by hand; then the same on edited copies
of a conformance session, through ingest, the `scenario_voice` view, `scorelake voice` and the API."""

from __future__ import annotations

import html
import json
import random
import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from scorelake.present import LATENCY_PANEL, VOICE_PANEL
from scorelake.transforms.voice import (
    LONG_SEGMENT_S,
    Segment,
    audio_facts,
    heard_facts,
    heard_turns,
    key_entities,
    segments_of,
    turn_taking,
    voice_row,
    words,
)
from scorelake.transforms.columns import FAILURE_CAUSES, frame
from scorelake.web._voice import timeline_svg
from tests.conftest import BASELINE, CONFORMANCE, PRINT_PEAK_MB
from tests.tau2_reference import events, segment_ticks
from tests.test_view import browser, serve  # noqa: F401  (a fixture, and the viewer as a process)

runner = CliRunner()


def measured(segments: list[Segment], call_s: float | None = None) -> dict:
    """One conversation's turn-taking as an ingest measures it: its ``voice`` row, then ``turn_taking``
    over the rows of a commit (here, its one row)."""
    row = voice_row({"run_id": "r", "generation": "g", "scenario_name": "s"}, segments, None, None, lambda: [],
                    call_s=call_s)
    return turn_taking(frame("voice", [row]).lazy()).collect().row(0, named=True)


def test_turn_taking_of_segments_worked_out_by_hand():
    # agent 0-4 ("one two three four five six"), user 3-6 (barges in at 3, inside the agent's 0-4),
    # agent 8-10, user 9.45-12 (barges in at 9.45), user 15-16, user 20-21, agent 21.55-23; the call
    # ends at 30
    segments = [Segment("agent", 0, 4, "one two three four five six"), Segment("user", 3, 6, "wait"),
                Segment("agent", 8, 10, "a b"), Segment("user", 9.45, 12, "no"), Segment("user", 15, 16, "hello"),
                Segment("user", 20, 21, "hello again"), Segment("agent", 21.55, 23, "yes")]
    facts = measured(segments, call_s=30)
    assert facts["agent_talk_s"] == pytest.approx(4 + 2 + 1.45)
    assert facts["user_talk_s"] == pytest.approx(3 + 2.55 + 1 + 1)
    assert facts["overlap_s"] == pytest.approx(1 + 0.55)
    # speech of anyone: 0-6, 8-12, 15-16, 20-21, 21.55-23: gaps 2, 3, 4, 0.55; then 7 s to the hang-up
    assert facts["silence_s"] == pytest.approx(9.55) and facts["longest_silence_s"] == pytest.approx(4)
    assert (facts["leading_silence_s"], facts["trailing_silence_s"]) == (0, pytest.approx(7))
    assert facts["dead_air_s"] == pytest.approx(16.55) and facts["dead_air_fraction"] == pytest.approx(16.55 / 30)
    assert facts["max_gap_s"] == pytest.approx(7) and facts["gaps_over_3s"] == 2 and facts["call_s"] == 30
    assert facts["agent_talk_ratio"] == pytest.approx(7.45 / 15)
    assert (facts["agent_barge_ins"], facts["user_barge_ins"]) == (0, 2)
    assert facts["agent_wpm"] == pytest.approx(9 / (7.45 / 60))
    # on tau2's 0.2 s ticks (a tick spoken when the speech covers its midpoint): user 15-29, 47-59,
    # 75-79, 100-104; agent 0-19, 40-49, 108-114. The user's turns end (first silent tick) at 30
    # (answered at 40: 2.0 s), 60 (the user speaks again at 75 before the agent's 108: missed), 80
    # (again at 100: missed), 105 (answered at 108: 0.6 s)
    assert (facts["user_turns"], facts["responses"], facts["missed_user_turns"]) == (4, 2, 2)
    assert facts["response_latency_s"] == pytest.approx((2.0 + 0.6) / 2) and facts["response_rate"] == 0.5
    # interruptions at ticks 15 (the agent's first silent tick 20: yields in 1.0 s) and 47 (50: 0.6 s)
    assert facts["interruptions"] == 2 and facts["yield_rate"] == 1.0
    assert facts["yield_latency_s"] == pytest.approx(0.8)
    assert facts["agent_interruption_rate"] == 0.0
    assert facts["backchannel_total"] is None and facts["selectivity_vocal_tic"] is None  # a seglst marks none


def test_an_agent_that_talks_over_the_user_and_does_not_yield():
    segments = [Segment("user", 0, 5, "x"), Segment("agent", 2, 9, "y"), Segment("user", 6, 7, "stop")]
    facts = measured(segments)
    assert facts["agent_barge_ins"] == 1 and facts["user_barge_ins"] == 1
    assert facts["interruptions"] == 1 and facts["yield_rate"] == 0.0 and facts["yield_latency_s"] is None
    # the user's turns end at 5 and 7, the agent speaking both times: no response event
    assert facts["user_turns"] == 0 and facts["response_rate"] is None and facts["agent_interruption_rate"] is None


def test_turn_taking_measures_each_conversation_of_a_batch_on_its_own():
    """A commit measures all its rows at once: each row's facts are its own (none leak into the next),
    a row without segments keeps NULLs, and one with a single speaker gets zeros, not NULLs."""
    conversations = [[Segment("user", 0, 5, "x"), Segment("agent", 2, 9, "y"), Segment("user", 6, 7, "stop")],
                     None,
                     [Segment("agent", 1, 3, "only me"), Segment("agent", 3, 4, "still me")],
                     [Segment("user", 10, 11, "hi"), Segment("agent", 11.6, 12.1, "hello")]]
    rows = [voice_row({"run_id": "r", "generation": "g", "scenario_name": f"s{i}"}, c,
                      [{"role": "user", "content": "hi"}] if c is None else None, None, lambda: [])
            for i, c in enumerate(conversations)]
    together = turn_taking(frame("voice", rows).lazy()).collect().to_dicts()
    assert [r["scenario_name"] for r in together] == ["s0", "s1", "s2", "s3"]
    for conversation, row in zip(conversations, together):
        if conversation is not None:
            for name, value in measured(conversation).items():
                if name != "scenario_name":
                    assert row[name] == (pytest.approx(value) if isinstance(value, float) else value), name
    assert together[1]["has_segments"] is False
    assert all(together[1][k] is None for k in ("agent_talk_s", "overlap_s", "user_turns", "agent_wpm"))
    alone = together[2]
    assert alone["agent_talk_s"] == pytest.approx(3.0) and alone["user_talk_s"] == 0.0  # 1-3 and 3-4 touch: one stretch
    assert (alone["overlap_s"], alone["silence_s"], alone["user_turns"], alone["interruptions"]) == (0.0, 0.0, 0, 0)
    assert alone["response_rate"] is None and alone["agent_wpm"] == pytest.approx(4 / (3 / 60))
    assert alone["leading_silence_s"] == 1.0 and alone["dead_air_s"] == 1.0  # no call length: it ends with the speech
    # the user's turn ends at tick 55 (11.0 s), the agent's answer starts at tick 58 (11.7 s covers 11.6-12.1)
    assert together[3]["response_latency_s"] == pytest.approx(0.6)
    assert together[3]["agent_talk_ratio"] == pytest.approx(1 / 3)


def test_words_as_wer_counts_them():
    assert words("TC-55678, don't 'quote' it’s O'Brien 3.5") == ["tc", "55678", "don't", "quote", "it's", "o'brien",
                                                                   "3", "5"]
    assert words("  ") == []
    # ASCII text takes a faster road than the regular expression that defines a word: the same words
    definition = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
    rng = random.Random(7)
    for _ in range(20_000):
        text = "".join(rng.choice("aZ9' -_.,\t'x\u2019é") for _ in range(rng.randint(0, 14)))
        assert words(text) == definition.findall(text.lower().replace("\u2019", "'")), text


def test_turns_are_aligned_before_words_are_counted():
    """A heard turn twice, a said turn never heard, a turn heard with a word wrong, the last turns
    never delivered before the hang-up, and a turn heard that nobody said: each counted as what it
    is, and the word error rate only over the turns paired."""
    said = ["Hi, I need help.", "My code is TC-55678.", "Yes.", "It is for Kevin Smith.", "Thanks, bye.",
            "Are you there?"]
    heard = ["hi i need help", "hi i need help", "my code is tc 55687", "background noise here please",
             "it is for kevin smith"]
    found = heard_turns(said, heard)
    assert (found.missing, found.duplicated, found.undelivered, found.extra) == (1, 1, 2, 1)
    assert (found.errors, found.words) == (1, 4 + 5 + 5)  # "55687" for "55678", over the three pairs
    assert found.pairs[:3] == [(0, 0), (None, 1), (1, 2)]
    assert heard_turns(said, []).missing == len(said)  # heard nothing while the other side spoke
    assert heard_turns(["yes"], ["yeah"]).pairs == [(0, 0)]  # one word wrong still pairs


def test_the_word_error_rate_of_the_paired_turns_is_jiwers():
    """jiwer's WER (the maintained reference) over the turns the alignment paired, on random turns
    heard with substitutions, deletions and insertions."""
    import jiwer

    rng = random.Random(7)
    vocabulary = ["yes", "no", "order", "code", "tc", "55678", "kevin", "help", "the", "a", "is", "my"]
    for _ in range(300):
        said = [" ".join(rng.choices(vocabulary, k=rng.randint(1, 9))) for _ in range(rng.randint(1, 6))]
        heard = []
        for turn in said:
            turn_words = turn.split()
            for _ in range(rng.randint(0, 2)):
                at = rng.randrange(len(turn_words) + 1)
                edit = rng.choice("sdi")
                if edit == "i" or not turn_words[at:]:
                    turn_words.insert(at, rng.choice(vocabulary))
                elif edit == "d" and len(turn_words) > 1:
                    del turn_words[at]
                else:
                    turn_words[at] = rng.choice(vocabulary)
            heard.append(" ".join(turn_words))
        found = heard_turns(said, heard)
        paired = [(said[s], heard[h]) for s, h in found.pairs if s is not None and h is not None]
        if not paired:
            continue
        measured = jiwer.process_words([s for s, _ in paired], [h for _, h in paired])
        assert found.errors == measured.substitutions + measured.deletions + measured.insertions
        assert found.words == measured.substitutions + measured.deletions + measured.hits


def test_what_each_side_heard_worked_out_by_hand():
    agent_context = [{"role": "system", "content": "You are Lisa."}, {"role": "user", "content": "Hello"},
                     {"role": "assistant", "content": "Hi, how can I help?"},
                     {"role": "user", "content": "my code is TC 55687"},  # heard: two digits swapped
                     {"role": "assistant", "content": "Thanks."}]
    user_context = [{"role": "system", "content": "You are Kevin."}, {"role": "user", "content": "(conversation start)"},
                    {"role": "user", "content": "Hi how can I help"},  # heard: "?" and "," are no words
                    {"role": "assistant", "content": "My code is TC-55678."},
                    {"role": "user", "content": "Thanks"}]
    facts = heard_facts(agent_context, user_context, lambda: key_entities(None, None, "Your code is TC-55678."))
    # user said: my code is tc 55678 (5 words); the agent heard: my code is tc 55687: 1 substitution,
    # the one turn paired
    assert (facts["user_to_agent_errors"], facts["user_to_agent_words"]) == (1, 5)
    assert facts["user_to_agent_wer"] == pytest.approx(0.2)
    # the agent said: hi how can i help thanks (6); the user heard the same (the cues left out)
    assert (facts["agent_to_user_errors"], facts["agent_to_user_words"]) == (0, 6)
    assert json.loads(facts["misheard_json"]) == [{"entity": "tc 55678", "heard": "tc 55687", "acted_on": True}]
    assert facts["misheard_acted_on"] == 1  # the agent answered ("Thanks.") after hearing it
    assert facts["user_to_agent_turns_missing"] == facts["agent_to_user_turns_missing"] == 0


def test_an_empty_or_absent_context_is_no_error_rate():
    facts = heard_facts([], None, lambda: pytest.fail("no entity is needed where nothing was heard"))
    assert facts["user_to_agent_wer"] is None and facts["agent_to_user_wer"] is None
    assert facts["misheard_json"] is None


def test_key_entities_are_numbers_codes_and_names_the_scenario_gives():
    reference = {"actions": [{"name": "modify_order", "arguments": {"order_id": "#W2378156", "city": "Philadelphia"}}]}
    assertions = [{"func_name": "check", "arguments": {"user": "Yusuf Rossi", "flag": True}}]
    found = key_entities(reference, assertions, "Call about order #W2378156; zip 19122.")
    assert found == ["w2378156", "philadelphia", "yusuf rossi", "19122"]


def _misheard(entity: str, said: str, heard: str) -> list[dict]:
    """The entity misheard (or not) where the user said one turn and the agent heard another."""
    facts = heard_facts([{"role": "user", "content": heard}, {"role": "assistant", "content": "On it."}],
                        [{"role": "assistant", "content": said}], lambda: [entity])
    return json.loads(facts["misheard_json"])


@pytest.mark.parametrize(("form", "said", "heard"), [
    ("digits as words", "My code is HAT266.", "my code is HAT two six six"),
    ("oh for zero", "Order 4017 please.", "order four oh one seven please"),
    ("zero as a word", "Order 4017 please.", "order four zero one seven please"),
    ("letters spelled out", "The code is 8JVSDF.", "the code is 8 J V S D F"),
    ("letters in NATO's alphabet", "Booking HAT266.", "booking hotel alpha tango 266"),
    ("double and triple", "PIN 5558.", "pin triple five eight"),
    ("case, hyphens and spaces", "It's TC-55678.", "it's tc 556 78"),
])
def test_a_key_entity_heard_in_a_spoken_form_is_heard_as_said(form, said, heard):
    entity = key_entities(None, None, said)[0]
    assert _misheard(entity, said, heard) == [], form


def test_what_the_agent_heard_instead_is_the_span_of_the_turn_it_heard():
    # a one-word code heard wrong: the span of the heard turn closest to it, not the first heard word
    assert _misheard("hat266", "Hi. My code is HAT266.", "hi my code is hat two six nine") == [
        {"entity": "hat266", "heard": "hat two six nine", "acted_on": True}]
    assert _misheard("tc 55678", "Hi. It's TC-55678, thanks.", "hi it's tc five five six eight seven thanks") == [
        {"entity": "tc 55678", "heard": "tc five five six eight seven", "acted_on": True}]


needs_espeak = pytest.mark.skipif(not shutil.which("espeak-ng"),
                                  reason="Debian's espeak-ng speaks the recordings (.ci/run installs it)")
INVENTOR, LIGHT = "qa__telephone_inventor", "qa__speed_of_light"


def _edit_json(path, edit) -> None:
    path.chmod(0o644)
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))


@pytest.fixture(scope="module")
def edited(tmp_path_factory):
    """The baseline session with, in qa__telephone_inventor, the user's second turn moved to start
    at 17.0 s (inside the agent's 14.809-17.619) and the agent's last turn run on to 38.5 s (past the
    user's start at 37.655), and "Yes, that's right." heard by the agent as "Yes, that's wrong.";
    in qa__speed_of_light, a code the user is told (TC-55678) said by the user and heard by the
    agent as TC 55687, which it then answers."""
    runs = tmp_path_factory.mktemp("voice") / "runs"
    shutil.copytree(CONFORMANCE / BASELINE, runs / BASELINE)
    inventor, light = runs / BASELINE / INVENTOR, runs / BASELINE / LIGHT
    original = json.loads((inventor / "conversation_log.seglst.json").read_text())

    def shift(segments):
        segments[3]["start_time"] = 17.0
        segments[6]["end_time"] = 38.5

    _edit_json(inventor / "conversation_log.seglst.json", shift)
    _edit_json(inventor / "bot_logs_agent" / "llm_context.json", lambda context: [
        m.update(content="Yes, that's wrong.") for m in context if m.get("content") == "Yes, that's right."])
    _edit_json(light / "bot_logs_user" / "llm_context.json",
               lambda context: context.append({"role": "assistant", "content": "My code is TC-55678."}))
    _edit_json(light / "bot_logs_agent" / "llm_context.json", lambda context: context.extend(
        [{"role": "user", "content": "My code is TC 55687"}, {"role": "assistant", "content": "Let me look."}]))
    prompt = light / "scenario_config" / "user_prompt.txt"
    prompt.chmod(0o644)
    prompt.write_text(prompt.read_text() + "\nYour code is TC-55678.\n")
    wh = scorelake.open(runs.parent / "wh")
    wh.ingest(runs)
    return wh, original


def test_the_voice_view_of_the_edited_copies_holds_the_numbers_worked_out_by_hand(edited):
    wh, seg = edited
    rows = {r["scenario_name"]: r for r in wh.sql(f"SELECT * FROM scenario_voice WHERE run_id = '{BASELINE}'").to_dicts()}
    assert len(rows) == 14
    inventor = rows[INVENTOR]
    t = [(s["start_time"], s["end_time"]) for s in seg]  # agent 0, 2, 4, 6; user 1, 3, 5, 7
    agent = (t[0][1] - t[0][0]) + (t[2][1] - t[2][0]) + (t[4][1] - t[4][0]) + (38.5 - t[6][0])
    user = (t[1][1] - t[1][0]) + (t[3][1] - 17.0) + (t[5][1] - t[5][0]) + (t[7][1] - t[7][0])
    assert inventor["agent_talk_s"] == pytest.approx(agent) and inventor["user_talk_s"] == pytest.approx(user)
    assert inventor["overlap_s"] == pytest.approx((t[2][1] - 17.0) + (38.5 - t[7][0]))
    assert (inventor["user_barge_ins"], inventor["agent_barge_ins"]) == (2, 0)
    assert (inventor["interruptions"], inventor["yields"]) == (2, 2) and inventor["yield_rate"] == 1.0
    # on tau2's 0.2 s ticks: the user barges in at ticks 85 and 188, the agent's first silent ticks
    # are 88 and 192 (0.6 and 0.8 s); the user's turns end at 13.754 (answered 14.809), 20.770
    # (21.995), 28.666 (30.672) and 39.805, the call's last word: no event, so no missed turn
    assert inventor["yield_latency_s"] == pytest.approx(0.7)
    assert (inventor["user_turns"], inventor["responses"], inventor["missed_user_turns"]) == (3, 3, 0)
    folder = Path(wh.location).parent / "runs" / BASELINE / INVENTOR
    said = [(s["speaker"], s["start_time"], s["end_time"])
            for s in json.loads((folder / "conversation_log.seglst.json").read_text())]
    call_s = json.loads((folder / "metrics.json").read_text())["duration_seconds"]
    theirs = events(segment_ticks(said, call_s, 0.2))  # tau2's own module on the same ticks
    for name in ("user_turns", "responses", "missed_user_turns", "interruptions", "yields", "agent_barge_ins"):
        assert inventor[name] == theirs[name], name
    for name in ("response_latency_s", "yield_latency_s"):
        assert inventor[name] == pytest.approx(theirs[name], abs=1e-9), name
    assert inventor["call_s"] == call_s and inventor["call_end"] == "exit"
    assert inventor["trailing_silence_s"] == pytest.approx(call_s - t[7][1])
    # the user said 13 + 3 + 4 + 5 = 25 words ("hi ask a question to the ai agent and wait for the
    # answer", "yes that's right", "okay go ahead please", "no i think that's everything"); the agent
    # heard one of them otherwise
    assert (inventor["user_to_agent_errors"], inventor["user_to_agent_words"]) == (1, 25)
    assert inventor["user_to_agent_wer"] == pytest.approx(1 / 25) and inventor["agent_to_user_wer"] == 0
    light = rows[LIGHT]
    assert json.loads(light["misheard_json"]) == [{"entity": "tc 55678", "heard": "tc 55687", "acted_on": True}]
    assert light["misheard_entities"] == light["misheard_acted_on"] == 1 and light["user_to_agent_errors"] == 1
    untouched = rows["tau2_retail__21"]
    assert untouched["user_to_agent_wer"] == 0 and untouched["overlap_s"] == 0


def test_each_failed_scenario_gets_its_causes_and_the_run_counts_them_by_the_primary_one(edited):
    wh, _ = edited
    per = {r["scenario_name"]: r for r in wh.voice([BASELINE], by="scenario").to_dicts()}
    assert per[LIGHT]["failure_cause"] == "transcription" and "tc 55678" in per[LIGHT]["failure_evidence"]
    assert per[INVENTOR]["failure_cause"] == "judge"  # its judge failed: the verdict says nothing of the agent
    # its one sentence logged to the timeout (the end of the user's turn never detected), so it stalled
    assert per["restaurant__burger_spicy_feast"]["failure_causes"] == ["turn_taking", "stall"]
    assert per["restaurant__pizza_veggie_combo"]["failure_cause"] is None  # passed
    failed = wh.scenarios(run=BASELINE).filter(~pl.col("is_successful")).height
    whole = wh.voice([BASELINE]).filter(pl.col("domain") == "(all)").row(0, named=True)
    causes = [c.name for c in FAILURE_CAUSES]
    assert whole["failed"] == failed == sum(whole[f"failed_{c}"] for c in causes)
    assert whole["failed_transcription"] == 1 and whole["failed_judge"] == 1


def test_scorelake_voice_shows_the_panel_with_a_dash_below_ten_events(edited):
    wh, _ = edited
    table = runner.invoke(app, ["voice", "-w", wh.location])
    assert table.exit_code == 0, table.output
    qa = next(line for line in table.stdout.splitlines() if " qa " in f" {line} ")
    assert "\u2014" in qa  # the qa domain's response rate rests on fewer than 10 user turns
    assert "transcription=1" in table.stdout
    as_json = runner.invoke(app, ["voice", "-w", wh.location, "--format", "json"])
    whole = next(r for r in json.loads(as_json.stdout) if r["domain"] == "(all)")
    assert whole["user_turns"] >= 10 and whole["response_rate"] == pytest.approx(whole["responses"] / whole["user_turns"])
    by_scenario = runner.invoke(app, ["voice", "-w", wh.location, "--by", "scenario", "--format", "csv"])
    assert by_scenario.exit_code == 0 and by_scenario.stdout.count("\n") == 15


BAD_SEGMENTS = [{"speaker": "user", "start_time": float("nan"), "end_time": 2.0},
                {"speaker": "user", "start_time": float("inf"), "end_time": 2.0},
                {"speaker": "user", "start_time": 0.0, "end_time": 1e308},
                {"speaker": "user", "start_time": 5.0, "end_time": 4.0},
                {"speaker": "user", "start_time": True, "end_time": 2.0},
                {"speaker": "robot", "start_time": 1.0, "end_time": 2.0},
                {"start_time": 1.0, "end_time": 2.0},
                "a segment", None, [1, 2], 7, {"speaker": "agent"}]


def test_segments_no_measure_should_trust_are_said_by_ingest_and_check_naming_the_file(tmp_path):
    """A seglst that is no list, one whose items are no segments (12 kinds), one out of order and one
    with an 876 s user segment: each a line of the ingest's report and of `scorelake check` naming
    the file, the scenario stored and the rest of it measured; the timeline clips the outlier."""
    runs = tmp_path / "runs"
    shutil.copytree(CONFORMANCE / BASELINE, runs / BASELINE)
    folder = runs / BASELINE
    (folder / INVENTOR / "conversation_log.seglst.json").chmod(0o644)
    (folder / INVENTOR / "conversation_log.seglst.json").write_text('{"not": "a seglst"}')
    _edit_json(folder / LIGHT / "conversation_log.seglst.json", lambda doc: doc.extend(BAD_SEGMENTS))
    _edit_json(folder / "simple_qa_1" / "conversation_log.seglst.json", lambda doc: doc.reverse())
    _edit_json(folder / "qa__moon_landing" / "conversation_log.seglst.json",
               lambda doc: doc.append({"speaker": "user", "start_time": 9.0, "end_time": 885.0, "words": "hello?"}))
    wh = scorelake.open(tmp_path / "wh")
    (report,) = wh.ingest(runs).ingested
    said = "\n".join(report.warnings)
    assert f"{INVENTOR}: conversation_log.seglst.json: not a list of segments (a dict)" in said
    logged = len(json.loads((CONFORMANCE / BASELINE / LIGHT / "conversation_log.seglst.json").read_text()))
    assert f"{LIGHT}: conversation_log.seglst.json: 12 of {logged + 12} items are no segment" in said
    assert "simple_qa_1: conversation_log.seglst.json: segments out of order" in said
    assert "qa__moon_landing: conversation_log.seglst.json: a user segment of 876.0 s (9.0-885.0 s)" in said
    checked = runner.invoke(app, ["check", "-w", wh.location])
    assert checked.exit_code == 0 and f"{BASELINE}/{LIGHT}: conversation_log.seglst.json: 12 of" in checked.stderr
    rows = {r["scenario_name"]: r for r in wh.voice([BASELINE], by="scenario").to_dicts()}
    assert rows[INVENTOR]["has_segments"] is False and rows[INVENTOR]["user_turns"] is None
    assert rows[LIGHT]["user_turns"] > 0 and rows["simple_qa_1"]["user_turns"] > 0  # the rest measured
    row, timeline = wh.voice_of(BASELINE, "qa__moon_landing"), wh.speech_timeline(BASELINE, "qa__moon_landing")
    (clipped,) = [s for s in timeline.segments if s.clipped]  # measured in the core, drawn by the viewer
    assert (clipped.start, clipped.end, clipped.logged_end) == (9.0, 9.0 + LONG_SEGMENT_S, 885.0)
    assert "clipped: 876.0 s" in timeline_svg(timeline) and row["anomalies"]


def test_a_scenario_without_segments_or_contexts_is_null_not_zero(tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(CONFORMANCE / BASELINE, runs / BASELINE)
    (runs / BASELINE / INVENTOR / "conversation_log.seglst.json").unlink()
    for side in ("agent", "user"):
        path = runs / BASELINE / INVENTOR / f"bot_logs_{side}" / "llm_context.json"
        path.chmod(0o644)
        path.write_text("[]")
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(runs)
    row = wh.sql(f"SELECT * FROM scenario_voice WHERE scenario_name = '{INVENTOR}'").row(0, named=True)
    assert row["overlap_s"] is None and row["agent_talk_s"] is None and row["user_to_agent_wer"] is None


def test_the_review_queue_picks_by_voice_the_most_first(edited):
    wh, _ = edited
    voice = {r["scenario_name"]: r for r in wh.voice([BASELINE], by="scenario").to_dicts()}
    for pick, measure in (("dead_air", lambda r: r["dead_air_s"]),
                          ("missing_turns", lambda r: (r["user_to_agent_turns_missing"] or 0)
                           + (r["agent_to_user_turns_missing"] or 0)),
                          ("wer", lambda r: r["user_to_agent_wer"])):
        queue = wh.review_queue(pick, BASELINE)
        measured = [measure(voice[name]) for name in queue["scenario_name"]]
        assert measured == sorted(measured, reverse=True) and all(m > 0 for m in measured), pick
    worst = wh.review_queue("dead_air", BASELINE).row(0, named=True)
    assert worst["scenario_name"] == ("tau2_telecom__service_issue__airplane_mode_on__break_apn_settings__"
                                      "lock_sim_card_pin")
    assert "s after the last speech, the call ended by timeout" in worst["reason"]
    assert set(wh.review_queue("wer", BASELINE)["scenario_name"]) == {LIGHT, INVENTOR}  # the two heard otherwise


def test_show_prints_what_the_agent_heard_of_each_user_turn(edited):
    wh, _ = edited
    shown = runner.invoke(app, ["show", BASELINE, INVENTOR, "-w", wh.location])
    assert shown.exit_code == 0, shown.output
    heard = shown.stdout.split("what the agent heard of each user turn", 1)[1].split("the judge's reply", 1)[0]
    assert "  = Hi. Ask a question to the AI agent and wait for the answer." in heard
    assert "  ~ said:  Yes, that's right." in heard and "    heard: Yes, that's wrong." in heard
    assert "WER 4.0% of the turns heard" in " ".join(heard.split())
    as_json = json.loads(runner.invoke(app, ["show", BASELINE, INVENTOR, "-w", wh.location, "-f", "json"]).stdout)
    assert as_json["heard"]["pairs"][1] == ["Yes, that's right.", "Yes, that's wrong."]


@pytest.mark.slow  # seconds of one call: the fast loop leaves it to CI
def test_compare_and_gate_see_the_voice_change_between_two_runs(edited, tmp_path):
    """The original baseline against the edited copy as a later run: the same verdicts (the edits
    touch no scoring input), more overlap and more word errors in qa: the gate passes without the
    voice limits and fails with them, naming the domain."""
    wh, seg = edited
    later = "eval_20260905_000000"
    shutil.copytree(Path(wh.location).parent / "runs" / BASELINE, tmp_path / later)
    both = scorelake.open(tmp_path / "wh")
    both.ingest(CONFORMANCE / BASELINE)
    both.ingest(tmp_path / later)
    qa = both.compare(BASELINE, later).voice.filter(pl.col("domain") == "qa").row(0, named=True)
    t = [(s["start_time"], s["end_time"]) for s in seg]
    assert qa["overlap_rise_s"] == pytest.approx(((t[2][1] - 17.0) + (38.5 - t[7][0])) / 3)  # 3 qa scenarios
    assert qa["wer_a"] == 0 and qa["wer_rise_pts"] == pytest.approx(100 * 2 / qa["words_b"])
    assert runner.invoke(app, ["gate", BASELINE, later, "-w", both.location]).exit_code == 0
    for option, value, says in (("--max-overlap-rise", "0.1", "qa: overlap of speech"),
                                ("--max-wer-rise", "1", "qa: WER of what the agent heard")):
        done = runner.invoke(app, ["gate", BASELINE, later, option, value, "-w", both.location])
        assert done.exit_code == 3 and says in done.output, (option, done.output)
    assert runner.invoke(app, ["gate", BASELINE, later, "--max-wer-rise", "nan", "-w", both.location]).exit_code == 2
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    page = TestClient(make_app(both)).get(f"/compare?a={BASELINE}&b={later}").text  # the sections the CLI has
    voice = page.split('id="compare-voice"', 1)[1].split("</table>", 1)[0]
    assert "<td>qa</td>" in voice and f"<td class=num>{qa['wer_rise_pts']:+.1f}</td>" in voice
    assert 'id="compare-latency"' in page and "p95 A" in page


def test_the_viewer_draws_the_speech_timeline_and_what_was_heard_and_a_runs_voice_page(edited):
    import re

    from starlette.testclient import TestClient

    from scorelake.web import make_app

    wh, _ = edited
    client = TestClient(make_app(wh))
    page = client.get(f"/runs/{BASELINE}/scenarios/{INVENTOR}")
    assert page.status_code == 200
    timeline = page.text.split('id="speech-timeline"', 1)[1].split("</svg>", 1)[0]
    assert len(re.findall(r'class="seg agent"', timeline)) == 4 and len(re.findall(r'class="seg user"', timeline)) == 4
    assert len(re.findall(r'class="overlap"', timeline)) == 2  # the two barge-ins
    assert "<title>user 17.0-20.8 s: Yes, that&#x27;s right.</title>" in timeline  # the words, on hover
    heard = page.text.split('id="heard"', 1)[1].split("</table>", 1)[0]
    assert "<del>right</del>" in heard and "<ins>wrong</ins>" in heard
    assert f'href="/runs/{BASELINE}/voice' in client.get(f"/runs/{BASELINE}").text
    voice = client.get(f"/runs/{BASELINE}/voice")
    assert voice.status_code == 200 and 'id="voice-panel"' in voice.text
    causes = voice.text.split('id="causes"', 1)[1]
    assert LIGHT in causes and "transcription" in causes and "heard" in causes


def speak_into_wav(segments: list[dict], path, shift_s: float, moved: dict[int, float] | None = None, *,
                   speech_dbfs: float | None = None, noise_dbfs: float | None = None, rate: int | None = None,
                   subtype: str = "PCM_16", container: str = "WAV") -> None:
    """A stereo recording as the runner keeps one (left: the user, right: the agent), each segment's
    words spoken by espeak-ng at its logged start plus ``shift_s`` (``moved``: a segment's own start
    instead), for the audio measures to find; its speech scaled to ``speech_dbfs`` (RMS over the
    spoken samples), white noise at ``noise_dbfs`` added to both channels, resampled to ``rate``, and
    written as ``container`` (``WAVEX``: a WAVE_FORMAT_EXTENSIBLE header) of ``subtype`` samples."""
    import subprocess

    import numpy as np
    import soundfile

    spoken_rate, length = 22050, max(s["end_time"] for s in segments) + 1 + shift_s
    tracks = np.zeros((2, int(length * spoken_rate)))
    for i, s in enumerate(segments):
        spoken = path.parent / f".spoken-{i}.wav"
        subprocess.run(["espeak-ng", "-w", str(spoken), s["words"]], check=True, capture_output=True)
        data, got = soundfile.read(spoken)
        spoken.unlink()
        assert got == spoken_rate
        at = int(((moved or {}).get(i, s["start_time"]) + shift_s) * spoken_rate)
        track = tracks[0 if s["speaker"] == "user" else 1]
        track[at:at + len(data)] = data[:len(track) - at]
    if speech_dbfs is not None:
        tracks *= 10 ** (speech_dbfs / 20) / np.sqrt(np.mean(tracks[tracks != 0] ** 2))
    if noise_dbfs is not None:
        tracks += np.random.default_rng(7).normal(0, 10 ** (noise_dbfs / 20), tracks.shape)
    if rate is not None:
        tracks = tracks[:, (np.arange(int(tracks.shape[1] * rate / spoken_rate)) * spoken_rate / rate).astype(int)]
    soundfile.write(path, np.clip(tracks.T, -1, 1), rate or spoken_rate, subtype=subtype, format=container)


@needs_espeak
def test_the_audio_measures_find_real_speech_at_the_logged_times_and_their_drift(tmp_path):
    """Two recordings of qa__telephone_inventor spoken by espeak-ng at its segments' times 0.25 s late:
    as logged, and with the user's second turn moved to 16.0 s, inside the agent's 14.809-17.619."""
    runs = tmp_path / "runs"
    shutil.copytree(CONFORMANCE / BASELINE, runs / BASELINE)
    logged = json.loads((runs / BASELINE / INVENTOR / "conversation_log.seglst.json").read_text())
    speak_into_wav(logged, runs / BASELINE / INVENTOR / "conversation_log.wav", 0.25)
    speak_into_wav(logged, runs / BASELINE / LIGHT / "conversation_log.wav", 0.25, moved={3: 16.0})
    _edit_json(runs / BASELINE / LIGHT / "conversation_log.seglst.json", lambda doc: doc.__setitem__(slice(None), logged))
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(runs)
    rows = {r["scenario_name"]: r for r in wh.sql(f"SELECT * FROM scenario_voice WHERE run_id = '{BASELINE}'").to_dicts()}
    heard = rows[INVENTOR]
    assert heard["audio_drift_s"] == pytest.approx(-0.25, abs=0.06)  # logged 0.25 s before the audio
    assert heard["audio_first_agent_s"] == pytest.approx(logged[0]["start_time"] + 0.25, abs=0.1)
    assert heard["audio_overlap_s"] == 0 and heard["audio_s"] == pytest.approx(logged[-1]["end_time"] + 1.25, abs=0.01)
    spoken_s = heard["audio_agent_talk_s"] + heard["audio_user_talk_s"]
    assert 0.5 * (heard["agent_talk_s"] + heard["user_talk_s"]) < spoken_s < heard["agent_talk_s"] + heard["user_talk_s"]
    moved = rows[LIGHT]
    assert 0.5 < moved["audio_overlap_s"] < 1.3  # the agent speaks on until about 17.2 s of the audio
    assert rows["tau2_retail__21"]["audio_s"] is None  # no recording: NULL


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The baseline with qa__telephone_inventor's recording spoken by espeak-ng at its logged times."""
    if not shutil.which("espeak-ng"):
        pytest.skip("Debian's espeak-ng speaks the recordings (.ci/run installs it)")
    runs = tmp_path_factory.mktemp("recorded") / "runs"
    shutil.copytree(CONFORMANCE / BASELINE, runs / BASELINE)
    logged = json.loads((runs / BASELINE / INVENTOR / "conversation_log.seglst.json").read_text())
    speak_into_wav(logged, runs / BASELINE / INVENTOR / "conversation_log.wav", 0.0)
    wh = scorelake.open(runs.parent / "wh")
    wh.ingest(runs)
    return wh, runs


def test_the_scenario_page_plays_the_recording_in_the_ranges_asked(recorded):
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    wh, runs = recorded
    client = TestClient(make_app(wh))
    page = client.get(f"/runs/{BASELINE}/scenarios/{INVENTOR}").text
    assert f'<audio id="recording" controls preload="metadata" src="/runs/{BASELINE}/audio/{INVENTOR}">' in page
    assert "document.getElementById('recording')" in page and 'id="cursor"' in page
    whole = (runs / BASELINE / INVENTOR / "conversation_log.wav").read_bytes()
    part = client.get(f"/runs/{BASELINE}/audio/{INVENTOR}", headers={"Range": "bytes=44-1043"})
    assert part.status_code == 206 and part.content == whole[44:1044]
    assert part.headers["content-range"] == f"bytes 44-1043/{len(whole)}"
    assert part.headers["content-type"] == "audio/wav"
    assert "<audio" not in client.get(f"/runs/{BASELINE}/scenarios/{LIGHT}").text  # no recording
    assert client.get(f"/runs/{BASELINE}/audio/{LIGHT}").status_code == 404
    assert client.get(f"/runs/{BASELINE}/audio/..%2F..%2Fetc%2Fpasswd").status_code == 404


@pytest.mark.browser
def test_a_click_on_a_turn_seeks_the_recording_and_the_cursor_follows_it_in_chromium(recorded, browser):
    from selenium.webdriver.common.by import By

    wh, _ = recorded
    server, site = serve(Path(wh.location))
    try:
        browser.get(f"{site}/runs/{BASELINE}/scenarios/{INVENTOR}")
        user_turn = browser.find_elements(By.CSS_SELECTOR, "#speech-timeline rect.seg.user")[1]
        browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click'))", user_turn)
        at = browser.execute_script("return document.getElementById('recording').currentTime")
        assert at == pytest.approx(float(user_turn.get_attribute("data-t")), abs=0.05)
        browser.execute_script("var a = document.getElementById('recording'); a.pause(); a.currentTime = 20;"
                               "a.dispatchEvent(new Event('timeupdate'))")
        cursor = float(browser.find_element(By.ID, "cursor").get_attribute("x1"))
        svg = browser.find_element(By.ID, "speech-timeline")
        start, span = float(svg.get_attribute("data-start")), float(svg.get_attribute("data-span"))
        assert cursor == pytest.approx(42 + (20 - start) / span * (900 - 42), abs=0.5)
    finally:
        server.terminate()
        server.wait(timeout=30)


def _heard_in(tmp_path, name: str, shift_s: float = 0.25, **wav) -> dict:
    """The audio columns of qa__telephone_inventor spoken at its logged times, ``shift_s`` late."""
    logged = json.loads((CONFORMANCE / BASELINE / INVENTOR / "conversation_log.seglst.json").read_text())
    speak_into_wav(logged, tmp_path / f"{name}.wav", shift_s, **wav)
    return audio_facts(str(tmp_path / f"{name}.wav"), segments_of(logged).segments)


@needs_espeak
def test_quiet_speech_and_a_noisy_line_read_as_the_speech_they_hold(tmp_path):
    """Speech at -45 dBFS (a fixed -40 dBFS threshold heard none of it) and speech under a -35 dBFS
    noise floor (which that threshold heard as one long speech): each channel's talk within 10% of
    the same recording clean (bench/vad.py: 5.1% at most), the silences kept, the drift found (a
    quiet start heard a frame or two late)."""
    clean = _heard_in(tmp_path, "clean")
    for name, wav in (("quiet", {"speech_dbfs": -45.0}), ("noisy", {"speech_dbfs": -20.0, "noise_dbfs": -35.0})):
        heard = _heard_in(tmp_path, name, **wav)
        for side in ("audio_user_talk_s", "audio_agent_talk_s"):
            assert heard[side] == pytest.approx(clean[side], rel=0.1), (name, side)
        assert heard["audio_silence_s"] == pytest.approx(clean["audio_silence_s"], rel=0.1), name
        assert heard["audio_drift_s"] == pytest.approx(-0.25, abs=0.06), name  # spoken 0.25 s after the log


@needs_espeak
@pytest.mark.parametrize(("container", "subtype", "rate"), [
    ("WAVEX", "PCM_16", None), ("WAV", "PCM_24", None), ("WAV", "FLOAT", None), ("WAV", "PCM_U8", None),
    ("WAV", "PCM_16", 8000), ("WAVEX", "PCM_32", 48000)])
def test_any_pcm_wav_is_measured(tmp_path, container, subtype, rate):
    clean = _heard_in(tmp_path, "clean")
    heard = _heard_in(tmp_path, "other", container=container, subtype=subtype, rate=rate)
    for side in ("audio_user_talk_s", "audio_agent_talk_s", "audio_s"):
        assert heard[side] == pytest.approx(clean[side], rel=0.05), side
    assert heard["audio_drift_s"] == pytest.approx(-0.25, abs=0.021)


@needs_espeak
def test_the_drift_is_the_shift_that_lands_the_logged_starts_on_the_audio(tmp_path):
    """The recording 1.0 s and 3.3 s later than the log (the former measure read 0.65 s for 1.0 s)."""
    for shift in (1.0, 3.3):
        heard = _heard_in(tmp_path, f"shift{shift}", shift_s=shift)
        assert heard["audio_drift_s"] == pytest.approx(-shift, abs=0.021), shift
        assert heard["audio_drift_confidence"] >= 0.8, shift


@needs_espeak
def test_no_speech_or_speech_lost_in_noise_is_a_warning_not_numbers(tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(CONFORMANCE / BASELINE, runs / BASELINE)
    logged = json.loads((runs / BASELINE / INVENTOR / "conversation_log.seglst.json").read_text())
    speak_into_wav(logged, runs / BASELINE / INVENTOR / "conversation_log.wav", 0.0, speech_dbfs=-45.0,
                   noise_dbfs=-35.0)
    import numpy as np
    import soundfile

    soundfile.write(runs / BASELINE / LIGHT / "conversation_log.wav", np.zeros((22050 * 30, 2)), 22050)
    wh = scorelake.open(tmp_path / "wh")
    (report,) = wh.ingest(runs).ingested
    said = "\n".join(report.warnings)
    assert f"{INVENTOR}: conversation_log.wav not measured: the user's channel (noise floor" in said
    assert "its speech cannot be told from it" in said
    assert f"{LIGHT}: conversation_log.wav not measured: no speech on either channel" in said
    rows = {r["scenario_name"]: r for r in wh.voice([BASELINE], by="scenario").to_dicts()}
    assert rows[INVENTOR]["audio_s"] is None and rows[LIGHT]["audio_drift_s"] is None


def test_the_report_charts_the_voice_across_runs_and_counts_failures_by_cause(edited):
    wh, _ = edited
    page = wh.report()
    charts = page.split("id='voice-charts'", 1)[1].split("</div>", 1)[0]
    assert charts.count("<figure class='voice-chart'") == len(VOICE_PANEL.metrics)
    assert "data-metric='user_to_agent_wer'" in charts
    causes = page.split("id='failure-causes'", 1)[1].split("</table>", 1)[0]
    whole = wh.voice([BASELINE]).filter(pl.col("domain") == "(all)").row(0, named=True)
    assert f"<td class=num>{whole['failed']}</td>" in causes and BASELINE in causes


def _tick(agent: str | None = None, user: str | None = None) -> dict:
    """One τ-voice tick: a side that speaks has a chunk with contains_speech and its words."""
    chunk = lambda role, text: None if text is None else {"role": role, "content": text, "contains_speech": True}
    return {"tick_id": 0, "timestamp": "t", "tick_duration_seconds": 0.2, "agent_chunk": chunk("assistant", agent),
            "user_chunk": chunk("user", user)}


def test_tau_voice_ticks_read_as_segments_and_measured_by_the_same_panel(tmp_path):
    """A τ-voice simulation of 20 ticks of 0.2 s: the agent speaks ticks 0-4 (0-1.0 s), the user 3-7
    (0.6-1.6 s: barging in at 0.6), the agent again 10-14 (2.0-3.0 s), and the user's last tick (19)
    is the stop signal's, after a silent one, and is left out."""
    from tests.hostile import tau2_document

    ticks = [_tick() for _ in range(20)]
    for i in range(5):
        ticks[i] = _tick(agent="hello" if i == 0 else "there")
    for i in range(3, 8):
        ticks[i] = {**ticks[i], "user_chunk": {"role": "user", "content": "wait", "contains_speech": True}}
    for i in range(10, 15):
        ticks[i] = _tick(agent="ok")
    ticks[19] = _tick(user="###STOP###")
    doc = tau2_document()
    doc["simulations"][0]["ticks"] = ticks
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "voice_airline.json").write_text(json.dumps(doc))
    wh = scorelake.open(tmp_path / "wh")
    wh.ingest(tmp_path / "runs")
    (row,) = wh.sql("SELECT * FROM scenario_voice").to_dicts()
    assert row["agent_talk_s"] == pytest.approx(2.0) and row["user_talk_s"] == pytest.approx(1.0)
    assert row["overlap_s"] == pytest.approx(0.4) and row["user_barge_ins"] == 1
    # the user's turn ends at 1.6 with the agent silent; the agent answers at 2.0
    assert (row["user_turns"], row["responses"]) == (1, 1) and row["response_latency_s"] == pytest.approx(0.4)
    assert row["longest_silence_s"] == pytest.approx(0.4) and row["user_to_agent_wer"] is None
    segments = json.loads(wh.voice_of(row["run_id"], row["scenario_name"])["segments_json"])
    assert [s[0] for s in segments] == ["agent", "user", "agent"] and segments[0][3] == "hello there there there there"


def test_a_context_of_odd_messages_is_measured_not_raised():
    """Roles that are no strings (a list, an object) are no turns: measured as absent, never an error."""
    odd = [{"role": []}, {"role": {"a": 1}}, {"role": "user", "content": "hi there"}, "text", None]
    facts = heard_facts(odd, [{"role": ["user"]}, {"role": "assistant", "content": "hi there"}], lambda: [])
    assert facts["user_to_agent_wer"] == 0.0 and facts["agent_to_user_wer"] is None


def _wav_header(rate: int, frames: int, channels: int = 2, bits: int = 16) -> bytes:
    """A PCM WAV's header declaring ``frames`` frames at ``rate`` Hz (the data may say otherwise)."""
    import struct

    block = channels * bits // 8
    data = frames * block
    return (b"RIFF" + struct.pack("<I", 36 + data) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, channels, rate,
                                                                              rate * block, block, bits)
            + b"data" + struct.pack("<I", data))


def test_odd_recordings_are_each_a_warning_naming_the_file_and_the_rest_is_stored(tmp_path):
    """A WAV cut mid-frame, one whose header says 0 Hz or 1 Hz, a 0-byte one, a link to a WAV outside
    the run, a FIFO and a folder in its place: every scenario is stored, each odd recording a warning
    naming conversation_log.wav and why (none silently skipped), the run's other numbers measured."""
    import os

    import numpy as np
    import soundfile

    runs = tmp_path / "runs"
    shutil.copytree(CONFORMANCE / BASELINE, runs / BASELINE)
    folder = runs / BASELINE
    names = sorted(p.name for p in folder.iterdir() if (p / "metrics.json").is_file())[:7]
    outside = tmp_path / "outside.wav"
    soundfile.write(outside, np.zeros((16000, 2)), 16000)
    odd = {
        names[0]: lambda path: path.write_bytes(_wav_header(16000, 8000) + b"\x01\x00" * 7999 + b"\x01"),  # mid-frame
        names[1]: lambda path: path.write_bytes(_wav_header(0, 100) + b"\x00" * 400),
        names[2]: lambda path: path.write_bytes(_wav_header(1, 100) + b"\x00" * 400),
        names[3]: lambda path: path.write_bytes(b""),
        names[4]: lambda path: path.symlink_to(outside),
        names[5]: lambda path: os.mkfifo(path),
        names[6]: lambda path: path.mkdir(),
    }
    for name, make in odd.items():
        make(folder / name / "conversation_log.wav")
    wh = scorelake.open(tmp_path / "wh")
    (report,) = wh.ingest(runs).ingested
    assert report.status == "complete" and report.quarantined == 0
    said = {name: [w for w in report.warnings if w.startswith(f"{name}: conversation_log.wav not measured: ")]
            for name in odd}
    assert all(len(lines) == 1 for lines in said.values()), said
    assert "outside the run" in said[names[4]][0] and "a FIFO" in said[names[5]][0]
    assert "a folder" in said[names[6]][0] and "libsndfile cannot read it" in said[names[1]][0]
    assert "a sample rate of 1 Hz" in said[names[2]][0] and str(tmp_path) not in "".join(report.warnings)
    rows = {r["scenario_name"]: r for r in wh.voice([BASELINE], by="scenario").to_dicts()}
    assert all(rows[name]["audio_s"] is None and rows[name]["has_segments"] for name in odd)


def test_one_long_call_is_measured_in_memory_linear_in_it_and_a_larger_one_is_capped_and_said(tmp_path):
    """A 1 MB seglst (16,000 segments) is read and measured in a process that peaks under 200 MB; a
    seglst over MAX_SEGMENTS and a conversation of 60,000 words a side are not measured whole, each a
    warning naming the cap; 50 key entities over a heard turn of 50,000 words are looked for in
    seconds, not minutes."""
    import subprocess
    import sys
    import time

    from scorelake.transforms.voice._heard import MAX_ENTITIES, MAX_WORDS, misheard
    from scorelake.transforms.voice._speech import MAX_SEGMENTS

    seglst = tmp_path / "long.seglst.json"
    seglst.write_text(json.dumps([{"speaker": "user" if k % 2 else "agent", "start_time": k * 2.0,
                                   "end_time": k * 2.0 + 1.5, "words": "ok"} for k in range(16_000)]))
    assert 0.9e6 < seglst.stat().st_size < 1.6e6
    probe = f"""
import json, orjson
from scorelake.transforms.columns import frame
from scorelake.transforms.voice import segments_of, turn_taking, voice_row
def peak():
    return int([l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]) // 1024
segments = segments_of(orjson.loads(open({str(seglst)!r}, "rb").read())).segments
row = frame("voice", [voice_row({{"run_id": "r", "generation": "g", "scenario_name": "s"}}, segments, None, None,
                                lambda: [])])
out = turn_taking(row.lazy()).collect()
assert out["user_turns"][0] > 7000, out["user_turns"][0]
print(peak())
"""
    peak = int(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                              timeout=300).stdout.split()[-1])
    assert peak < 200, f"{peak} MB at most, the whole process, for one conversation of 16,000 segments"

    over = segments_of([{"speaker": "user", "start_time": k, "end_time": k + 0.5} for k in range(MAX_SEGMENTS + 1)])
    assert over.segments is None and f"over the {MAX_SEGMENTS:,} segments" in over.anomalies[0]
    said = " ".join(["word"] * 60_000)
    context = [{"role": "user", "content": said}, {"role": "assistant", "content": said + " more"}]
    caps = []
    facts = heard_facts(context, context, lambda: [], caps.append)
    assert facts["user_to_agent_wer"] is None and len(caps) == 2 and f"{MAX_WORDS:,} words" in caps[0]

    heard = [["x"] * 50_000]
    started = time.monotonic()
    found = misheard([f"code {k}" for k in range(MAX_ENTITIES)], [["code", str(k)] for k in range(MAX_ENTITIES)],
                     heard, [False], [(k, 0) for k in range(MAX_ENTITIES)])
    assert len(found) == MAX_ENTITIES and time.monotonic() - started < 10


def test_ingest_prints_a_runs_first_warnings_and_how_many_more_and_verbose_prints_them_all(tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(CONFORMANCE / BASELINE, runs / BASELINE)
    folders = sorted(p for p in (runs / BASELINE).iterdir() if (p / "conversation_log.seglst.json").is_file())[:8]
    for folder in folders:
        (folder / "conversation_log.seglst.json").chmod(0o644)
        (folder / "conversation_log.seglst.json").write_text('{"not": "a seglst"}')
    brief = runner.invoke(app, ["ingest", str(runs), "-w", str(tmp_path / "a")])
    said = [line for line in brief.stderr.splitlines() if "warning" in line]
    assert brief.exit_code == 0 and len(said) == 6 and "and 3 more in this run (--verbose lists every one)" in said[-1]
    every = runner.invoke(app, ["ingest", str(runs), "-w", str(tmp_path / "b"), "--verbose"])
    assert sum("not a list of segments" in line for line in every.stderr.splitlines()) == 8


@pytest.mark.slow
def test_a_long_recording_is_read_in_blocks_in_a_fraction_of_its_size(tmp_path):
    """A 300 MiB WAV (48 kHz stereo 16-bit, 27 minutes) is measured in under 600 MB, less than a
    third of its extra size above a 3-minute one's (measured: 190 and 205 MB): the reader holds a
    block and each 20 ms frame's level, not the samples (it took 4.6 GB for 507 MiB when it read
    the file whole)."""
    import subprocess
    import sys

    import numpy as np
    import soundfile

    rng = np.random.default_rng(0)

    def peak_mb(minutes: int) -> int:
        path = tmp_path / f"{minutes}.wav"
        with soundfile.SoundFile(path, "w", samplerate=48000, channels=2, subtype="PCM_16") as out:
            for _ in range(minutes * 6):  # ten seconds at a time: a tone switched on and off, left and right
                t = np.arange(48000 * 10) / 48000
                tone = 0.3 * np.sin(2 * np.pi * 220 * t) * (np.sin(2 * np.pi * 0.2 * t) > 0)
                out.write(np.stack([tone, 0.1 * tone[::-1]], axis=1) + rng.normal(0, 1e-4, (len(t), 2)))
        probe = (f"from scorelake.transforms.voice import AudioUnreadable, audio_facts\ntry:\n"
                 f"    audio_facts({str(path)!r}, None)\nexcept AudioUnreadable:\n    pass\n"
                 + PRINT_PEAK_MB)
        said = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=600, check=True)
        path.unlink()
        return int(said.stdout.split()[-1])

    short, long = peak_mb(3), peak_mb(27)
    assert long - short < 0.33 * (27 - 3) * 60 * 48000 * 4 / 2**20 and long < 600, (short, long)


def test_every_metric_of_the_voice_and_latency_panels_is_in_every_face(edited):
    """The command line, the viewer and the report lay out one spec per panel (``VOICE_PANEL`` from
    ``VOICE_METRICS``, ``LATENCY_PANEL`` from ``LATENCY_METRICS``): a declared metric missing from a
    face fails here."""
    from starlette.testclient import TestClient

    from scorelake.web import make_app

    wh, _ = edited
    client, report = TestClient(make_app(wh)), wh.report()
    faces = {
        VOICE_PANEL: (CliRunner().invoke(app, ["voice", "--run", BASELINE, "-w", wh.location]).stdout,
                      client.get(f"/runs/{BASELINE}/voice").text.split('id="voice-panel"', 1)[1].split("</tr>", 1)[0],
                      report.split("id='voice-charts'", 1)[1].split("</div>", 1)[0]),
        LATENCY_PANEL: (CliRunner().invoke(app, ["latency", "--run", BASELINE, "-w", wh.location]).stdout,
                        client.get(f"/runs/{BASELINE}/latency").text.split('id="latency"', 1)[1].split("</tr>", 1)[0],
                        report.split("id='latest-latency'", 1)[1].split("</tr>", 1)[0]),
    }
    for panel, (printed, page, reported) in faces.items():
        for metric in panel.metrics:
            assert metric.label in printed, metric.name
            assert f'<th title="{html.escape(metric.doc)}">{html.escape(metric.label)}</th>' in page, metric.name
            assert html.escape(metric.label) in reported, metric.name
    voice_charts = faces[VOICE_PANEL][2]
    assert all(f"data-metric='{m.name}'" in voice_charts for m in VOICE_PANEL.metrics)
