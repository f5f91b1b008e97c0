"""Turn-taking as columnar transforms: the ``voice`` rows' segments (``segments_json``, as
``voice_row`` wrote them: ``[speaker, start_s, end_s, words]`` each, in order of start and end)
exploded into one frame of segments: the lengths from one sweep over their starts and ends, the
turns from each user segment against the other segments of its conversation. Run once per commit
batch, not per scenario: measured one conversation at a time in Python, it cost a reader a ninth of
its time; here 5,000 conversations take about 50 ms.

A speaker's speech is the union of its segments; tau2's interaction metrics are adapted to segments
(README, "Voice"): every user segment is a user turn, a segment starting strictly inside one of the
other speaker's (``other.start < start < other.end``) is a barge-in, and there are no backchannels,
vocal tics or non-directed speech to tell apart.
"""

from __future__ import annotations

import polars as pl

from scorelake.transforms.voice._speech import AGENT, USER

YIELD_WINDOW_S = 2.0  # tau2's no_yield_window_sec: an agent still talking 2 s into an interruption did not yield
_ROW, _SEG = "_voice_row", "_segment"


def segment_frame(voice: pl.LazyFrame) -> pl.LazyFrame:
    """One row per segment of each ``voice`` row that has segments: its row (``_voice_row``, the
    row's place), its place among the row's segments (``_segment``), ``speaker``, ``start``, ``end``."""
    return (voice.select(pl.col("segments_json").str.json_decode(pl.List(pl.List(pl.String))).alias("s"))
            .with_row_index(_ROW)
            .explode("s").drop_nulls("s")
            .with_row_index(_SEG)
            .select(_ROW, _SEG, pl.col("s").list.get(0).alias("speaker"),
                    pl.col("s").list.get(1).cast(pl.Float64).alias("start"),
                    pl.col("s").list.get(2).cast(pl.Float64).alias("end")))


def _sweep(segments: pl.LazyFrame) -> pl.LazyFrame:
    """Per conversation, the speech lengths: a sweep over its segments' starts (+1) and ends (-1) in
    order of time, a start before an end at the same time (a segment starting where another ends
    joins its speech), counting the segments going on, each speaker's and all. Each stretch between
    two events is agent speech, user speech, both (overlap) or neither (a gap, one per silence)
    by the counts after the first. Every conversation's counts end at 0, so one running sum serves
    them all (a window per conversation cost four times as much)."""
    steps = pl.concat([segments.select(_ROW, "speaker", t="start", step=pl.lit(1, pl.Int32)),
                       segments.select(_ROW, "speaker", t="end", step=pl.lit(-1, pl.Int32))])
    counted = (steps.sort(_ROW, "t", "step", descending=[False, False, True])
               .with_columns(anyone=pl.col("step").cum_sum(),
                             agent=pl.when(pl.col("speaker") == AGENT).then("step").otherwise(0).cum_sum(),
                             user=pl.when(pl.col("speaker") == USER).then("step").otherwise(0).cum_sum(),
                             lasts=pl.when(pl.col(_ROW) == pl.col(_ROW).shift(-1))
                             .then(pl.col("t").shift(-1) - pl.col("t"))))
    lasts, agent, user = pl.col("lasts"), pl.col("agent") > 0, pl.col("user") > 0
    silent = pl.col("anyone") == 0
    return counted.group_by(_ROW).agg(agent_talk_s=lasts.filter(agent).sum(), user_talk_s=lasts.filter(user).sum(),
                                      overlap_s=lasts.filter(agent & user).sum(), silence_s=lasts.filter(silent).sum(),
                                      longest_silence_s=lasts.filter(silent).max().fill_null(0.0))


def _pairs(segments: pl.LazyFrame, left: str, right: str) -> pl.LazyFrame:
    """Each ``left`` speaker's segment with each ``right`` speaker's in its conversation (columns
    of the right one suffixed ``_o``)."""
    side = lambda who: segments.filter(pl.col("speaker") == who).drop("speaker")  # noqa: E731
    return side(left).join(side(right), on=_ROW, suffix="_o")


def _user_turns(segments: pl.LazyFrame, with_agent: pl.LazyFrame) -> pl.LazyFrame:
    """Each user segment (a turn) against the agent's and the other user segments of its
    conversation: whether it ends with the agent speaking (``start <= end < end``) or inside
    another user segment, when the agent next starts (``answer``) and the user (``next_user``), and
    the end of the first agent segment (in order) it starts strictly inside (``talking_until``).
    ``with_agent``: the user segments paired with the agent's (``_pairs``)."""
    start, end, start_o, end_o = pl.col("start"), pl.col("end"), pl.col("start_o"), pl.col("end_o")
    inside = (start_o < start) & (start < end_o)
    agent = with_agent.group_by(_SEG).agg(agent_speaking=((start_o <= end) & (end < end_o)).any(),
                                          answer=start_o.filter(start_o >= end).min())
    talking = (with_agent.filter(inside).sort(_SEG, f"{_SEG}_o").group_by(_SEG, maintain_order=True)
               .agg(talking_until=end_o.first()))  # few: a barge-in is the exception
    user = _pairs(segments, USER, USER).group_by(_SEG).agg(
        user_speaking=((start_o < end) & (end < end_o)).any(), next_user=start_o.filter(start_o > end).min())
    return (segments.filter(pl.col("speaker") == USER).drop("speaker")
            .join(agent, on=_SEG, how="left").join(user, on=_SEG, how="left").join(talking, on=_SEG, how="left"))


def response_events(segments: pl.LazyFrame) -> pl.LazyFrame:
    """tau2's response events adapted to segments: each user turn that ended with the agent silent
    and no other user speech going on, as (``_voice_row``, ``turn_end``, ``answer``): the start of
    the agent's answer, null when the user spoke again first."""
    return _events(_user_turns(segments, _pairs(segments, USER, AGENT)))


def _events(turns: pl.LazyFrame) -> pl.LazyFrame:
    answered = pl.col("answer").is_not_null() & (pl.col("next_user").is_null() | (pl.col("answer") < pl.col("next_user")))
    return (turns.filter(~pl.col("agent_speaking").fill_null(False) & ~pl.col("user_speaking").fill_null(False))
            .select(_ROW, turn_end="end", answer=pl.when(answered).then(pl.col("answer"))))


def turn_taking(voice: pl.LazyFrame) -> pl.LazyFrame:
    """``voice`` rows with their turn-taking columns (``VOICE_COLUMNS`` names) measured from their
    segments and ``agent_words``; null for a row without segments, zero where it has some but not of
    that kind."""
    segments = segment_frame(voice).cache()
    with_agent = _pairs(segments, USER, AGENT).cache()
    turns = _user_turns(segments, with_agent).cache()
    events = _events(turns).group_by(_ROW).agg(
        user_turns=pl.len(), responses=pl.col("answer").count(),
        response_latency_s=(pl.col("answer") - pl.col("turn_end")).mean())
    went_on = pl.col("talking_until") - pl.col("start")  # how long the agent talked on into a user's barge-in
    yielded = went_on <= YIELD_WINDOW_S
    yields = (turns.filter(pl.col("talking_until").is_not_null()).group_by(_ROW)
              .agg(interruptions=pl.len(), yields=yielded.sum(), yield_latency_s=went_on.filter(yielded).mean()))
    barged = (pl.col("start") < pl.col("start_o")) & (pl.col("start_o") < pl.col("end"))  # the agent's, into the user's
    agent_barge_ins = (with_agent.group_by(f"{_SEG}_o").agg(pl.first(_ROW), barged=barged.any())
                       .group_by(_ROW).agg(agent_barge_ins=pl.col("barged").sum()))
    measured = _sweep(segments)
    for facts in (events, yields, agent_barge_ins):
        measured = measured.join(facts, on=_ROW, how="left")
    zero = ("user_turns", "responses", "interruptions", "yields", "agent_barge_ins")
    measured = measured.with_columns(pl.col(zero).fill_null(0))
    talk_s, user_turns = pl.col("agent_talk_s") + pl.col("user_talk_s"), pl.col("user_turns")
    per = lambda part, whole: pl.when(whole > 0).then(part / whole)  # noqa: E731  (null over nothing)
    facts = measured.select(
        _ROW, "agent_talk_s", "user_talk_s", "overlap_s", "silence_s", "longest_silence_s",
        agent_talk_ratio=per(pl.col("agent_talk_s"), talk_s),
        agent_barge_ins="agent_barge_ins", user_barge_ins="interruptions",  # a user barge-in interrupts the agent
        user_turns=user_turns, responses="responses", response_latency_s="response_latency_s",
        response_rate=per(pl.col("responses"), user_turns),
        missed_user_turns=user_turns - pl.col("responses"),
        interruptions="interruptions", yields="yields", yield_latency_s="yield_latency_s",
        yield_rate=per(pl.col("yields"), pl.col("interruptions")),
        agent_interruption_rate=per(pl.col("agent_barge_ins"), user_turns))
    schema = voice.collect_schema()
    names = facts.collect_schema().names()[1:]
    return (voice.with_row_index(_ROW).drop(names).join(facts, on=_ROW, how="left", maintain_order="left")
            .with_columns(agent_wpm=per(pl.col("agent_words"), pl.col("agent_talk_s") / 60))
            .select(pl.col(name).cast(dtype) for name, dtype in schema.items()))
