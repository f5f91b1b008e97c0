"""Turn-taking as columnar transforms: the ``voice`` rows' segments (``segments_json``, as
``voice_row`` wrote them: ``[speaker, start_s, end_s, words(, kinds)]`` each, in order of start and
end) exploded into one frame of segments, measured per commit batch, not per scenario, and never by
pairing each segment with every other one (a frame of pairs grows with the square of a call).

On two clocks:

- **Seconds** (``_sweep``): each speaker's speech is the union of its segments; talk, overlap and
  the silences between the first speech and the last from one sweep over their starts and ends, and
  dead air from the call's start (the segments' zero) to its end (``call_s``).
- **tau2's ticks** (``_interaction``): tau2-bench's interaction metrics, as its module computes them
  on a full-duplex simulation's ticks (``src/tau2/metrics/voice_interaction_metrics.py``; the manual's
  docs/guide/voice.md). The segments are made ticks (tick ``k`` spans ``k * tick`` to ``(k + 1) * tick``; a
  speaker speaks in it when its speech covers the tick's midpoint; the ticks run from the call's
  start to its end), each speaker's contiguous speaking ticks one of tau2's segments, and tau2's
  rules are applied to those in tick arithmetic: its end-of-conversation filter, response and
  no-response events, yields within a window of ticks, agent interruptions and the selectivity
  events. Every look-up tau2 makes by scanning ticks or segments is an as-of join on tick numbers.
"""

from __future__ import annotations

import polars as pl

from scorelake.transforms.voice._speech import AGENT, BACKCHANNEL, EFFECT, NON_DIRECTED, TICK_S, USER, VOCAL_TIC

# tau2's detection windows (InteractionMetricsConfig), in seconds
YIELD_WINDOW_S = 2.0  # no_yield_window_sec: an agent still talking 2 s into an interruption did not yield
KIND_YIELD_WINDOW_S = 1.0  # backchannel_, vocal_tic_ and non_directed_yield_window_sec
KIND_RESPONSE_WINDOW_S = 2.0  # vocal_tic_ and non_directed_response_window_sec
LONG_GAP_S = 3.0  # a silence longer than this counts in gaps_over_3s
OPEN_AT_END_S = 1.0  # a user segment ending this close to the call's end ran to it (its end never logged)
_ROW, _SEG = "_voice_row", "_segment"
_TICKS_APART = 1 << 40  # more ticks than any call holds (a year of 0.01 s ticks is 3.2e9)
_KIND_EVENTS = (BACKCHANNEL, VOCAL_TIC, NON_DIRECTED)


def segment_frame(voice: pl.LazyFrame) -> pl.LazyFrame:
    """One row per segment of each ``voice`` row that has segments: its row (``_voice_row``, the
    row's place), its place among the row's segments (``_segment``), ``speaker``, ``start``, ``end``
    and ``kinds`` (what the source marks it as, comma-separated; empty when nothing)."""
    return (voice.select(pl.col("segments_json").str.json_decode(pl.List(pl.List(pl.String))).alias("s"))
            .with_row_index(_ROW)
            .explode("s").drop_nulls("s")
            .with_row_index(_SEG)
            .select(_ROW, _SEG, pl.col("s").list.get(0).alias("speaker"),
                    pl.col("s").list.get(1).cast(pl.Float64).alias("start"),
                    pl.col("s").list.get(2).cast(pl.Float64).alias("end"),
                    pl.col("s").list.get(4, null_on_oob=True).fill_null("").alias("kinds")))


def _sweep(segments: pl.LazyFrame, calls: pl.LazyFrame) -> pl.LazyFrame:
    """Per conversation, the speech lengths: a sweep over its segments' starts (+1) and ends (-1) in
    order of time, a start before an end at the same time (a segment starting where another ends
    joins its speech), counting the segments going on, each speaker's and all. Each stretch between
    two events is agent speech, user speech, both (overlap) or neither (a gap, one per silence)
    by the counts after the first. Every conversation's counts end at 0, so one running sum serves
    them all (a window per conversation cost four times as much). Then the dead air: the silences
    inside, and those before the first speech and after the last, to the call's end (``call_s``, made
    at least the last speech's end), and a user turn still open when the call ended."""
    spoken = segments.filter(pl.col("speaker").is_in([AGENT, USER]))
    steps = pl.concat([spoken.select(_ROW, "speaker", t="start", step=pl.lit(1, pl.Int32)),
                       spoken.select(_ROW, "speaker", t="end", step=pl.lit(-1, pl.Int32))])
    counted = (steps.sort(_ROW, "t", "step", descending=[False, False, True])
               .with_columns(anyone=pl.col("step").cum_sum(),
                             agent=pl.when(pl.col("speaker") == AGENT).then("step").otherwise(0).cum_sum(),
                             user=pl.when(pl.col("speaker") == USER).then("step").otherwise(0).cum_sum(),
                             lasts=pl.when(pl.col(_ROW) == pl.col(_ROW).shift(-1))
                             .then(pl.col("t").shift(-1) - pl.col("t"))))
    lasts, agent, user = pl.col("lasts"), pl.col("agent") > 0, pl.col("user") > 0
    silent = pl.col("anyone") == 0
    measured = counted.group_by(_ROW).agg(
        agent_talk_s=lasts.filter(agent).sum(), user_talk_s=lasts.filter(user).sum(),
        overlap_s=lasts.filter(agent & user).sum(), silence_s=lasts.filter(silent).sum(),
        longest_silence_s=lasts.filter(silent).max().fill_null(0.0),
        _gaps_inside=(silent & (lasts > LONG_GAP_S)).sum(), _first=pl.col("t").min(), _last=pl.col("t").max())
    leading = pl.col("_first").clip(lower_bound=0.0)
    trailing = (pl.col("call_s") - pl.col("_last")).fill_null(0.0).clip(lower_bound=0.0)
    over = lambda gap: (gap > LONG_GAP_S).cast(pl.Int64)  # noqa: E731
    last_user = (spoken.filter(pl.col("speaker") == USER).group_by(_ROW)
                 .agg(pl.col("start").sort_by("end").last().alias("_user_start"), _user_end=pl.col("end").max()))
    return (measured.join(calls.select(_ROW, "call_s"), on=_ROW, how="left").join(last_user, on=_ROW, how="left")
            .with_columns(leading_silence_s=leading, trailing_silence_s=trailing)
            .with_columns(dead_air_s=pl.col("leading_silence_s") + pl.col("silence_s") + pl.col("trailing_silence_s"),
                          max_gap_s=pl.max_horizontal("leading_silence_s", "longest_silence_s", "trailing_silence_s"),
                          gaps_over_3s=over(pl.col("leading_silence_s")) + pl.col("_gaps_inside")
                          + over(pl.col("trailing_silence_s")),
                          call_s=pl.max_horizontal("call_s", "_last"))
            .with_columns(dead_air_fraction=pl.when(pl.col("call_s") > 0).then(pl.col("dead_air_s") / pl.col("call_s")),
                          user_open_at_end_s=pl.when(pl.col("call_s") - pl.col("_user_end") < OPEN_AT_END_S)
                          .then(pl.col("_user_end") - pl.col("_user_start")).otherwise(0.0))
            .drop("_gaps_inside", "_first", "_last", "_user_start", "_user_end"))


def _calls(voice: pl.LazyFrame) -> pl.LazyFrame:
    """Each ``voice`` row's call: its place (``_voice_row``), length and tick (tau2's where unrecorded)."""
    return voice.with_row_index(_ROW).select(_ROW, "call_s", tick=pl.col("tick_s").fill_null(TICK_S))


def _first_tick(t: pl.Expr, tick: pl.Expr) -> pl.Expr:
    """The first tick whose midpoint, ``(k + 0.5) * tick``, is at or after ``t`` (from 0): a speech
    from ``start`` to ``end`` covers the midpoints of ticks ``_first_tick(start)`` up to, not
    including, ``_first_tick(end)``. The estimate by division is corrected by the midpoints
    themselves, as a tick-by-tick reading computes them."""
    k = (t / tick - 0.5).ceil()
    k = pl.when((k - 0.5) * tick >= t).then(k - 1).otherwise(k)
    k = pl.when((k + 0.5) * tick < t).then(k + 1).otherwise(k)
    return k.clip(lower_bound=0).cast(pl.Int64)


def _ticks(segments: pl.LazyFrame, calls: pl.LazyFrame) -> tuple[pl.LazyFrame, pl.LazyFrame, pl.LazyFrame,
                                                                  pl.LazyFrame]:
    """The conversations as tau2's segments on ticks: (user runs ``a``-``b`` with their
    ``backchannel``, ``vocal_tic`` and ``non_directed`` marks, agent runs ``c``-``d``, effects
    ``e0``-``e1`` with their ``kind``, and per conversation its ``tick`` and tick count ``n``), each
    end exclusive (the first tick without). As tau2's ``filter_end_of_conversation_ticks``, a last
    tick whose user speech starts there (the stop signal's, in τ-voice) is no tick at all."""
    tick = pl.col("tick")
    spans = (segments.join(calls.select(_ROW, "tick"), on=_ROW)
             .with_columns(a=_first_tick(pl.col("start"), tick), b=_first_tick(pl.col("end"), tick))
             .filter(pl.col("b") > pl.col("a")))
    ends = segments.group_by(_ROW).agg(_last=pl.col("end").max())
    calls = (calls.join(ends, on=_ROW).with_columns(n=_first_tick(pl.max_horizontal("call_s", "_last"), tick))
             .select(_ROW, "tick", "n"))
    spoken = spans.filter(pl.col("speaker").is_in([AGENT, USER])).sort(_ROW, "speaker", "a", "b")
    # a run begins where a segment starts after every earlier one of its speaker has ended: one running
    # maximum over all conversations, each speaker of each offset past the one before (no window)
    offset = (pl.col(_ROW).cast(pl.Int64) * 2 + (pl.col("speaker") == USER).cast(pl.Int64)) * _TICKS_APART
    begins = (offset + pl.col("a") > (offset + pl.col("b")).cum_max().shift(1)).fill_null(True)
    kinds = pl.col("kinds")
    runs = (spoken.with_columns(_run=begins.cum_sum())
            .group_by("_run").agg(pl.first(_ROW), pl.first("speaker"), pl.col("a").min(), pl.col("b").max(),
                                  backchannel=kinds.first().str.contains(BACKCHANNEL, literal=True),
                                  vocal_tic=kinds.str.contains(VOCAL_TIC, literal=True).any(),
                                  non_directed=kinds.str.contains(NON_DIRECTED, literal=True).any())
            .drop("_run"))
    n = pl.col("n")
    stop = (runs.join(calls, on=_ROW).filter((pl.col("speaker") == USER) & (n >= 2) & (pl.col("a") == n - 1))
            .select(_ROW, _stop=pl.lit(1, pl.Int64)))
    calls = calls.join(stop, on=_ROW, how="left").select(_ROW, "tick", n=n - pl.col("_stop").fill_null(0))
    within = lambda frame, first, last: (frame.join(calls.select(_ROW, "n"), on=_ROW)  # noqa: E731
                                         .with_columns(pl.min_horizontal(last, "n").alias(last))
                                         .filter(pl.col(last) > pl.col(first)).drop("n"))
    users = within(runs.filter(pl.col("speaker") == USER), "a", "b").drop("speaker").sort(_ROW, "a")
    agents = (within(runs.filter(pl.col("speaker") == AGENT), "a", "b")
              .select(_ROW, c="a", d="b").sort(_ROW, "c"))
    effects = (within(spans.filter(pl.col("speaker") == EFFECT), "a", "b")
               .select(_ROW, e0="a", e1="b", kind="kinds").sort(_ROW, "e0"))
    return users, agents, effects, calls


def _agent_at(frame: pl.LazyFrame, at: str, agents: pl.LazyFrame, strategy: str, c: str, d: str) -> pl.LazyFrame:
    """``frame`` with, for the tick in its column ``at``, the agent run that starts last at or
    before it (``strategy="backward"``) or first at or after it (``"forward"``): its start as ``c``
    and its end as ``d``."""
    return (frame.sort(_ROW, at).join_asof(agents.select(_ROW, pl.col("c").alias(c), pl.col("d").alias(d)),
                                           left_on=at, right_on=c, by=_ROW, strategy=strategy, coalesce=False,
                                           check_sortedness=False)  # sorted just before, within each conversation
            .drop(f"{_ROW}_right", strict=False))


def _window(seconds: float) -> pl.Expr:
    """A window in whole ticks, as tau2 takes it: ``int(seconds / tick)``."""
    return (seconds / pl.col("tick")).floor().cast(pl.Int64)


def _user_turns(users: pl.LazyFrame, agents: pl.LazyFrame, calls: pl.LazyFrame) -> pl.LazyFrame:
    """Each user segment with what tau2 reads around it: whether the agent speaks at its first tick
    (``at_start``; that agent segment's end ``_d_at_start``) and at the tick after its last
    (``at_end``), and when the agent next starts (``_next_agent``)."""
    a, b = pl.col("a"), pl.col("b")
    return (users.join(calls, on=_ROW)
            .pipe(_agent_at, "a", agents, "backward", "_c_at_start", "_d_at_start")
            .pipe(_agent_at, "b", agents, "backward", "_c_at_end", "_d_at_end")
            .pipe(_agent_at, "b", agents, "forward", "_next_agent", "_next_agent_end")
            .with_columns(at_start=(pl.col("_d_at_start") > a).fill_null(False),
                          at_end=((pl.col("_d_at_end") > b) & (b < pl.col("n"))).fill_null(False))
            .sort(_ROW, "a"))


def _response_events(turns: pl.LazyFrame) -> pl.LazyFrame:
    """tau2's response events (``extract_turn_transitions``): each user segment that is no
    backchannel and did not end with the agent speaking, ``answered`` when the agent next starts at
    or before the next such user segment, ``missed`` when that user segment comes first; one
    followed by neither is no event."""
    agent_next, user_next = pl.col("_next_agent"), pl.col("_next_user")
    answered = agent_next.is_not_null() & (user_next.is_null() | (agent_next <= user_next))
    return (turns.filter(~pl.col("backchannel") & ~pl.col("at_end"))
            .with_columns(_next_user=pl.col("a").shift(-1).over(_ROW))
            .with_columns(answered=answered, missed=~answered & user_next.is_not_null())
            .filter(pl.col("answered") | pl.col("missed")))


def _interaction(users: pl.LazyFrame, agents: pl.LazyFrame, effects: pl.LazyFrame,
                 calls: pl.LazyFrame) -> pl.LazyFrame:
    """Per conversation, tau2's event counts and latencies (``extract_voice_quality_events_from_simulation``
    and ``_count_agent_interruptions``)."""
    a, b, n, tick = pl.col("a"), pl.col("b"), pl.col("n"), pl.col("tick")
    users = _user_turns(users, agents, calls)
    answered = pl.col("answered")
    turn_end = a.cast(pl.Float64) * tick + (b - a).cast(pl.Float64) * tick  # tau2's end_time_sec
    responses = _response_events(users).group_by(_ROW).agg(
        responses=answered.sum(), missed_user_turns=pl.col("missed").sum(),
        response_latency_s=(pl.col("_next_agent").cast(pl.Float64) * tick - turn_end).filter(answered).mean())
    # a user segment starting while the agent speaks: did the agent stop (its segment end) within the window?
    kind = (pl.when("backchannel").then(pl.lit(BACKCHANNEL)).when("vocal_tic").then(pl.lit(VOCAL_TIC))
            .when("non_directed").then(pl.lit(NON_DIRECTED)).otherwise(pl.lit("interruption")))
    stopped = pl.col("_d_at_start")
    window = pl.when(kind == "interruption").then(_window(YIELD_WINDOW_S)).otherwise(_window(KIND_YIELD_WINDOW_S))
    barged = (users.filter("at_start")
              .with_columns(kind=kind, yielded=(stopped < pl.min_horizontal(a + window, n)),
                            went_on=(stopped - a).cast(pl.Float64) * tick))
    is_ = lambda name: pl.col("kind") == name  # noqa: E731
    yields = barged.group_by(_ROW).agg(
        user_barge_ins=pl.len(), interruptions=is_("interruption").sum(),
        yields=(is_("interruption") & pl.col("yielded")).sum(),
        yield_latency_s=pl.col("went_on").filter(is_("interruption") & pl.col("yielded")).mean())
    # selectivity: a backchannel, vocal tic or non-directed speech the agent yielded to while it
    # spoke (above), or (tics and non-directed speech) started answering while it was silent
    kind_events = [barged.filter(pl.col("kind") != "interruption").select(_ROW, "kind", error="yielded")]
    silent = (users.filter(~pl.col("at_start") & (pl.col("vocal_tic") | pl.col("non_directed")))
              .pipe(_agent_at, "a", agents, "forward", "_answer", "_answer_end"))
    kind_events.append(silent.select(
        _ROW, kind=pl.when("vocal_tic").then(pl.lit(VOCAL_TIC)).otherwise(pl.lit(NON_DIRECTED)),
        error=(pl.col("_answer") <= b + _window(KIND_RESPONSE_WINDOW_S)).fill_null(False)))
    # an effect outside the user's speech: while the agent spoke, only its stopping within the
    # window is an event (an error); while it was silent, answering within the window is an error
    e0 = pl.col("e0")
    outside = (effects.join(calls, on=_ROW)
               .pipe(_agent_at, "e0", agents, "backward", "_c_over", "_d_over")
               .pipe(_agent_at, "e0", agents, "forward", "_answer", "_answer_end")
               .with_columns(over=(pl.col("_d_over") > e0).fill_null(False)))
    stopped_in = (pl.col("_d_over") - e0).cast(pl.Float64) * tick <= KIND_YIELD_WINDOW_S
    kind_events.append(outside.filter(pl.col("over") & stopped_in).select(_ROW, "kind", error=pl.lit(True)))
    kind_events.append(outside.filter(~pl.col("over")).select(
        _ROW, "kind", error=(pl.col("_answer") <= pl.col("e1") + _window(KIND_RESPONSE_WINDOW_S)).fill_null(False)))
    selectivity = pl.concat(kind_events).group_by(_ROW).agg(
        *(is_(k).sum().alias(f"{k}_total") for k in _KIND_EVENTS),
        *((is_(k) & pl.col("error")).sum().alias(f"{k}_errors") for k in _KIND_EVENTS))
    # the agent starting while the user speaks (tau2's agent_interrupts_user)
    user_runs = users.select(_ROW, _ua="a", _ub="b").sort(_ROW, "_ua")
    agent_barge_ins = (agents.sort(_ROW, "c")
                       .join_asof(user_runs, left_on="c", right_on="_ua", by=_ROW, strategy="backward",
                                  check_sortedness=False)
                       .group_by(_ROW).agg(agent_barge_ins=(pl.col("_ub") > pl.col("c")).fill_null(False).sum()))
    facts = calls.select(_ROW)
    for part in (responses, yields, selectivity, agent_barge_ins):
        facts = facts.join(part, on=_ROW, how="left")
    return facts


def turn_taking(voice: pl.LazyFrame) -> pl.LazyFrame:
    """``voice`` rows with their turn-taking columns (``VOICE_COLUMNS`` names) measured from their
    segments, ``call_s``, ``tick_s`` and ``agent_words``; null for a row without segments, zero where
    it has some but not of that kind; the selectivity columns null unless ``turn_kinds_marked``."""
    # each made once: every measure and each of tau2's look-ups reads them again
    segments = segment_frame(voice).collect(engine="in-memory").lazy()
    calls = _calls(voice).join(segments.select(_ROW).unique(), on=_ROW, how="semi").collect(engine="in-memory").lazy()
    ticked_frames = pl.collect_all(_ticks(segments, calls), engine="in-memory")
    users, agents, effects, ticked = (frame.lazy() for frame in ticked_frames)
    measured = (calls.select(_ROW).join(_sweep(segments, calls), on=_ROW, how="left")
                .join(_interaction(users, agents, effects, ticked), on=_ROW, how="left"))
    kind_counts = [f"{k}_{part}" for k in _KIND_EVENTS for part in ("total", "errors")]
    counts = ("responses", "missed_user_turns", "user_barge_ins", "interruptions", "yields", "agent_barge_ins",
              *kind_counts)
    measured = measured.with_columns(pl.col(counts).fill_null(0)).with_columns(
        user_turns=pl.col("responses") + pl.col("missed_user_turns"))
    talk_s, user_turns = pl.col("agent_talk_s") + pl.col("user_talk_s"), pl.col("user_turns")
    per = lambda part, whole: pl.when(whole > 0).then(part / whole)  # noqa: E731  (null over nothing)
    facts = measured.with_columns(
        agent_talk_ratio=per(pl.col("agent_talk_s"), talk_s),
        response_rate=per(pl.col("responses"), user_turns),
        yield_rate=per(pl.col("yields"), pl.col("interruptions")),
        agent_interruption_rate=per(pl.col("agent_barge_ins"), user_turns),
        **{f"selectivity_{k}": 1.0 - per(pl.col(f"{k}_errors"), pl.col(f"{k}_total")) for k in _KIND_EVENTS})
    schema = voice.collect_schema()
    names = [name for name in facts.collect_schema().names() if name != _ROW]
    marked = pl.col("turn_kinds_marked").fill_null(False)
    selectivity = [*kind_counts, *(f"selectivity_{k}" for k in _KIND_EVENTS)]
    return (voice.with_row_index(_ROW).drop(names).join(facts, on=_ROW, how="left", maintain_order="left")
            .with_columns(agent_wpm=per(pl.col("agent_words"), pl.col("agent_talk_s") / 60),
                          **{name: pl.when(marked).then(name) for name in selectivity})
            .select(pl.col(name).cast(dtype) for name, dtype in schema.items()))


def response_events(voice: pl.LazyFrame) -> pl.LazyFrame:
    """tau2's response events of ``voice`` rows (their segments, ``call_s`` and ``tick_s``), for the
    viewer's timeline: (``_voice_row``, ``turn_end``, ``answer``) in seconds on their ticks, the start
    of the agent's answer null when the user spoke again first."""
    users, agents, _, ticked = _ticks(segment_frame(voice), _calls(voice))
    tick = pl.col("tick")
    return _response_events(_user_turns(users, agents, ticked)).select(
        _ROW, turn_end=pl.col("b").cast(pl.Float64) * tick,
        answer=pl.when("answered").then(pl.col("_next_agent").cast(pl.Float64) * tick))
