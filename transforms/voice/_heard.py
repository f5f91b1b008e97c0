"""What each side heard: the turns one bot's LLM said against the turns the other bot's speech
recognition gave its LLM, aligned turn to turn first (a turn missing, heard twice, never delivered
before the hang-up), then as a word error rate over the aligned pairs, and the key entities
(numbers, codes, names) the user said that the agent did not hear as said.

Text is lower-cased; every character that is not a letter or a digit (``str.isalnum``) becomes a
space, except an apostrophe between two such characters (``don't``); words are what whitespace
separates (so ``TC-55678`` is two words); a typographic apostrophe (’) counts as one ('). WER = word
edit distance (substitutions, deletions, insertions; rapidfuzz's Levenshtein) / reference words.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import zip_longest
from typing import Any, NamedTuple

import orjson
from rapidfuzz.distance import OSA, Levenshtein

# The messages nobody spoke: the text the pipeline gives a bot to start it, the first ``user``
# message of its LLM context. The agent's: upstream's bridge sends it "Hello" a second after it
# connects (``send_kickoff``: ``send_text_to_agent("Hello")``, nemo_voice_agent/evaluation/bridge.py);
# the user simulator's context opens with "(conversation start)" in the upstream-written sessions (a
# user turn for an LLM that needs one first; upstream's code does not hold the string).
CUES = {"agent": ("Hello",), "user": ("(conversation start)",)}


# A word: letters and digits (``str.isalnum``: ``[^\W_]``), apostrophes between them kept.
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
# ASCII text, lower-cased, with every byte but a letter, a digit or an apostrophe a space: its runs
# are words, once apostrophes not between two letters or digits are taken off (a third of the
# regular expression's time; the conversations are mostly ASCII)
_ASCII_FOLD = bytes(c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122 or c == 39 else 32
                    for c in range(256))
_APOSTROPHES = re.compile(r"'{2,}")


def words(text: str) -> list[str]:
    """``text`` as the words WER counts (see the module's docstring)."""
    if not text.isascii():
        return _WORD.findall(text.lower().replace("\u2019", "'"))
    folded = text.encode("ascii").translate(_ASCII_FOLD).decode("ascii")
    if "'" not in folded:  # most text: its runs are its words
        return folded.split()
    found = []
    for run in folded.split():
        if "'" not in run:
            found.append(run)
        else:
            found.extend(word for word in _APOSTROPHES.split(run.strip("'")) if word)
    return found


def _content(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # parts: the text ones
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _placed_turns(context: Any, side: str) -> dict[str, list[tuple[int, str]]] | None:
    """Per role (``user``, ``assistant``), (its place in the context, its text) of each message of
    one bot's LLM context (``side``: whose context), in order, less the pipeline's cue that opens it
    and the empty ones; None when the context is absent. One pass: a context is read once."""
    if not isinstance(context, list):
        return None
    placed: dict[str, list[tuple[int, str]]] = {"user": [], "assistant": []}
    for i, m in enumerate(context):
        if type(m) is dict and type(role := m.get("role")) is str and (turns := placed.get(role)) is not None:
            text = m.get("content")
            if type(text) is not str:  # parts, or none
                text = _content(m)
            if text and not text.isspace():
                turns.append((i, text))
    heard = placed["user"]
    if heard and heard[0][1].strip() in CUES[side]:
        placed["user"] = heard[1:]
    return placed


def _acted_after(context: list, heard: list[tuple[int, str]]) -> list[bool]:
    """Per user turn of the agent's context (``heard``: its places and texts), whether the agent
    acted after hearing it (a later assistant message that says something or calls a tool)."""
    last_act = max((i for i, m in enumerate(context) if isinstance(m, dict) and m.get("role") == "assistant"
                    and (_content(m).strip() or m.get("tool_calls"))), default=-1)
    return [place < last_act for place, _ in heard]


# a said and a heard turn pair when at most half the said words (one at least) were heard otherwise
PAIRED_AT_MOST = 0.5
# The caps of one conversation, past which it is not measured whole (and a warning says so): its
# alignment costs a word edit distance per pair of turns, its entities a search of the heard turn each.
MAX_TURN_PAIRS = 250_000  # said turns times heard turns of one direction (500 a side)
MAX_WORDS = 50_000  # said or heard words of one direction (a call of about six hours)
MAX_ENTITIES = 50  # key entities looked for
MAX_SEARCHED_WORDS = 2_000  # words of a heard turn searched for what was heard in place of an entity


class Heard(NamedTuple):
    """One direction of a conversation, said turn against heard turn (``heard_turns``)."""
    errors: int  # word errors over the paired turns
    words: int  # said words of the paired turns
    missing: int  # said turns never heard, before the other side's last input
    duplicated: int  # heard turns that repeat a turn already heard
    undelivered: int  # said turns after the other side's last input: the hang-up came first
    extra: int  # heard turns never said
    pairs: list[tuple[int | None, int | None]]  # (said turn, heard turn) in order; None where one side has none


def heard_turns(said: list[str], heard: list[str]) -> Heard:
    """The turns one side said (``said``) against those the other side heard (``heard``), aligned as
    a sequence (Needleman-Wunsch): a said and a heard turn may pair when the heard one has at most
    half the said words wrong (word edit distance / said words; one word wrong always may), or at
    most half the characters of their spoken forms (``spoken``: "HAT266" heard as "hat two six
    six"), the alignment pairing as many turns
    as it can and, among those, the fewest word errors. An unpaired heard turn whose words another
    heard turn has too is duplicated, else extra; unpaired said turns after the last said turn that
    paired are undelivered (the other side got nothing after it), the others missing; a side that
    heard nothing while the other spoke has every said turn missing. The word error rate is over the
    pairs only. The turns both sides share at the start and at the end pair first: a conversation
    mostly heard right leaves little to align."""
    return _aligned_turns(*_split(said, heard))


def _aligned_turns(said_words: list[list[str]], heard_words: list[list[str]]) -> Heard:
    """``heard_turns`` over turns already split into words."""
    if said_words == heard_words:  # most conversations: every turn heard as said
        return Heard(0, sum(map(len, said_words)), 0, 0, 0, 0, [(k, k) for k in range(len(said_words))])
    m, n = len(said_words), len(heard_words)
    most = min(m, n)
    first = 0
    while first < most and said_words[first] == heard_words[first]:
        first += 1
    last = 0
    while last < most - first and said_words[-1 - last] == heard_words[-1 - last]:
        last += 1
    moves = [("p", k, k) for k in range(first)]
    moves += _aligned(said_words[first:m - last], heard_words[first:n - last], first)
    moves += [("p", m - last + k, n - last + k) for k in range(last)]
    last_paired = max((si for how, si, _ in moves if how == "p"), default=None)
    times_heard = Counter(map(tuple, heard_words)) if any(how == "h" for how, _, _ in moves) else Counter()
    errors = total = missing = duplicated = undelivered = extra = 0
    pairs: list[tuple[int | None, int | None]] = []
    for how, si, hj in moves:
        if how == "p":
            errors += Levenshtein.distance(said_words[si], heard_words[hj]) if said_words[si] != heard_words[hj] else 0
            total += len(said_words[si])
        elif how == "s":
            undelivered += last_paired is not None and si > last_paired
            missing += last_paired is None or si < last_paired
        elif times_heard[tuple(heard_words[hj])] > 1:
            duplicated += 1
        else:
            extra += 1
        pairs.append((si, hj))
    return Heard(errors, total, missing, duplicated, undelivered, extra, pairs)


class _LazyJoined:
    """Each turn's spoken form joined (``spoken``), worked out the first time it is asked for."""

    def __init__(self, turns: list[list[str]]):
        self.turns, self.joined = turns, [None] * len(turns)

    def __getitem__(self, k: int) -> str:
        if (found := self.joined[k]) is None:
            found = self.joined[k] = "".join(spoken(self.turns[k]))
        return found


def _pair_errors(said: list[str], heard: list[str], said_spoken: _LazyJoined, heard_spoken: _LazyJoined,
                 i: int, j: int) -> int | None:
    """The word errors of heard turn ``j`` against said turn ``i``, when the two may pair
    (``heard_turns``); ``said`` and ``heard``: those turns' words."""
    allowed = max(1, int(PAIRED_AT_MOST * len(said)))
    errors = Levenshtein.distance(said, heard, score_cutoff=allowed)
    if errors <= allowed:
        return errors
    allowed = int(PAIRED_AT_MOST * len(said_spoken[i]))
    if Levenshtein.distance(said_spoken[i], heard_spoken[j], score_cutoff=allowed) <= allowed:
        return Levenshtein.distance(said, heard)  # paired as spoken ("HAT266" as "hat two six six")
    return None


def _aligned(said: list[list[str]], heard: list[list[str]], offset: int) -> list[tuple[str, int | None, int | None]]:
    """The alignment of ``heard_turns`` over turns given as words: each move ``p`` (a pair), ``s`` (a
    said turn alone) or ``h`` (a heard turn alone), with the turns' places (plus ``offset``)."""
    m, n = len(said), len(heard)
    # best[i][j]: the best alignment of said[:i] with heard[:j] as (-pairs, word errors)
    best = [[(0, 0)] * (n + 1) for _ in range(m + 1)]
    step = [["h"] * (n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        best[i][0], step[i][0] = best[i - 1][0], "s"
    for j in range(1, n + 1):
        best[0][j] = best[0][j - 1]
    # spoken forms only when a pair's words are too far apart (most pairs are not)
    said_spoken = _LazyJoined(said)
    heard_spoken = _LazyJoined(heard)
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            choice, how = min((best[i - 1][j], "s"), (best[i][j - 1], "h"))
            d = _pair_errors(said[i - 1], heard[j - 1], said_spoken, heard_spoken, i - 1, j - 1)
            if d is not None:
                paired = (best[i - 1][j - 1][0] - 1, best[i - 1][j - 1][1] + d)
                if paired <= choice:
                    choice, how = paired, "p"
            best[i][j], step[i][j] = choice, how
    moves, i, j = [], m, n
    while i or j:
        how = step[i][j]
        moves.append((how, offset + i - 1 if how in "sp" else None, offset + j - 1 if how in "hp" else None))
        i, j = i - (how in "sp"), j - (how in "hp")
    return moves[::-1]


_NOT_SAID = {"action_type", "func_name", "side"}  # what the scenario names a tool or a side by, never said


def _strings(value: Any, out: list[str]) -> None:
    """Every string and number in ``value`` (an action's tool ``name`` and the keys above left out)."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        out.append(str(value))
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in _NOT_SAID and not (key == "name" and "arguments" in value):
                _strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)


_DIGIT = re.compile(r"\d")
_NAME = re.compile(r"\b[A-Z][a-z]")
_CODE = re.compile(r"(?<![A-Za-z0-9'\-./])[A-Za-z0-9'\-./]*\d[A-Za-z0-9'\-./]*")  # a run of them with a digit


@functools.lru_cache(maxsize=1024)
def _codes(text: str) -> tuple[str, ...]:
    """The codes of a text as entity words. Cached: a scenario's user prompt is the same in every run
    of its suite, and scanning a prompt of a few KB costs more than the rest of its voice row."""
    return tuple(" ".join(words(code)) for code in _CODE.findall(text))


def key_entities(reference: Any, assertions: Any, instructions: str | None) -> list[str]:
    """The scenario's key entities, as word sequences joined by spaces, first seen first: every word
    with a digit in its user instructions, reference answer and DB assertions, and every value of at
    most four words of the reference answer and the DB assertions' arguments that holds a digit or a
    capitalised word (a name)."""
    values: list[str] = []
    _strings(reference, values)
    for assertion in assertions or []:
        if isinstance(assertion, dict):
            _strings(assertion.get("arguments"), values)
    found: dict[str, None] = {}
    for value in values:
        said = words(value)
        if 0 < len(said) <= 4 and (_DIGIT.search(value) or _NAME.search(value)):
            found[" ".join(said)] = None
    for text in [instructions or "", *values]:
        found.update(dict.fromkeys(_codes(text)))
    return [entity for entity in found if entity]


# Spoken forms of a code, as a speech recogniser or a user simulator writes them: digits as words
# ("oh" for zero), letters spelled out (NATO's alphabet too), "double" / "triple" before one.
_DIGITS = {"zero": "0", "oh": "0", "o": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
           "six": "6", "seven": "7", "eight": "8", "nine": "9"}
_NATO = {"alpha": "a", "alfa": "a", "bravo": "b", "charlie": "c", "delta": "d", "echo": "e", "foxtrot": "f",
         "golf": "g", "hotel": "h", "india": "i", "juliet": "j", "juliett": "j", "kilo": "k", "lima": "l", "mike": "m",
         "november": "n", "oscar": "o", "papa": "p", "quebec": "q", "romeo": "r", "sierra": "s", "tango": "t",
         "uniform": "u", "victor": "v", "whiskey": "w", "xray": "x", "yankee": "y", "zulu": "z"}
_REPEATS = {"double": 2, "triple": 3}


def spoken(text_words: list[str]) -> list[str]:
    """Each word as the characters it stands for in a code: a digit word its digit, a NATO word its
    letter, ``double`` / ``triple`` and the word after it that many of it (an empty string for the
    ``double`` itself), any other word itself. Joined, a code reads the same however it was said:
    ``["hat", "two", "six", "six"]``, ``["h", "a", "t", "two", "double", "six"]`` and ``["hat266"]``
    are all ``hat266``."""
    found, times = [], 1
    for word in text_words:
        if word in _REPEATS:
            times = _REPEATS[word]
            found.append("")
            continue
        found.append((_DIGITS.get(word) or _NATO.get(word) or word) * times)
        times = 1
    return found


def _spans(tokens: list[str], entity: str) -> list[tuple[int, int]]:
    """The spans of words (start, end) whose spoken forms joined are ``entity`` exactly."""
    found = []
    for start, first in enumerate(tokens):
        if not first or not entity.startswith(first):
            continue
        joined, end = "", start
        while end < len(tokens) and len(joined) < len(entity):
            joined += tokens[end]
            end += 1
        if joined == entity:
            found.append((start, end))
    return found


def _closeness(target: str, candidate: str) -> tuple[int, int]:
    """How far a heard span is from an entity: its edit distance, two characters swapped counting as
    one edit (a code's digits heard in the wrong order), then how far apart their lengths are."""
    return OSA.distance(target, candidate), abs(len(target) - len(candidate))


def misheard(entities: Sequence[str], said: list[list[str]], heard: list[list[str]], acted: list[bool],
             pairs: list[tuple[int | None, int | None]]) -> list[dict]:
    """The key entities the user said that the agent did not hear as said, each with what it heard
    instead and whether it acted after hearing that. ``said`` and ``heard``: each turn's words;
    ``acted``: per heard turn, whether the agent acted after it; ``pairs``: the turns aligned
    (``heard_turns``). An entity and a turn are compared in their spoken forms (``spoken``: "TC
    five five six seven eight" is TC-55678); what the agent heard instead is the span of the heard
    turn paired with the first said turn holding the entity closest to it (None when that turn was
    never heard)."""
    said_spoken, heard_spoken = [spoken(t) for t in said], [spoken(t) for t in heard]
    said_joined, heard_joined = ["".join(t) for t in said_spoken], ["".join(t) for t in heard_spoken]
    heard_as = dict(pairs)
    found = []
    for entity in entities:
        target = "".join(spoken(entity.split()))
        # a turn holds the entity only where its spoken form does (a search in C), then as whole words
        turn = next((i for i, tokens in enumerate(said_spoken) if target in said_joined[i] and _spans(tokens, target)),
                    None)
        if turn is None or any(target in heard_joined[i] and _spans(tokens, target)
                               for i, tokens in enumerate(heard_spoken)):
            continue
        at = heard_as.get(turn)
        if at is None:
            found.append({"entity": entity, "heard": None, "acted_on": False})
            continue
        tokens = heard_spoken[at][:MAX_SEARCHED_WORDS]
        spans = [(i, j) for i in range(len(tokens)) for j in range(i + 1, min(i + len(target), len(tokens)) + 1)
                 ] or [(0, 0)]
        i, j = min(spans, key=lambda span: _closeness(target, "".join(tokens[span[0]:span[1]])))
        found.append({"entity": entity, "heard": " ".join(heard[at][i:j]) or None, "acted_on": acted[at]})
    return found


def _too_large(said: list[list[str]], heard: list[list[str]]) -> str | None:
    """Why one direction is too large to align (its turns pairwise, its words), or None."""
    said_words, heard_words = sum(map(len, said)), sum(map(len, heard))
    if len(said) * len(heard) > MAX_TURN_PAIRS or max(said_words, heard_words) > MAX_WORDS:
        return (f"{len(said):,} turns ({said_words:,} words) said against {len(heard):,} ({heard_words:,} words) "
                f"heard: over the {MAX_TURN_PAIRS:,} turn pairs or {MAX_WORDS:,} words a side aligned")
    return None


def _direction(said: list[list[str]] | None, heard: list[list[str]] | None, prefix: str,
               anomaly: Callable[[str], None]) -> tuple[dict[str, Any], Heard | None]:
    """One direction's columns (``prefix``: ``user_to_agent`` or ``agent_to_user``) and its aligned
    turns (``said`` and ``heard``: each turn's words): NULL and None where either side's context is
    absent, nothing was said, or it is too large to align (then said to ``anomaly``)."""
    found = None
    if said and heard is not None:
        too_large = _too_large(said, heard)
        if too_large:
            anomaly(f"{prefix.replace('_', ' ')}: not aligned: {too_large}")
        else:
            found = _aligned_turns(said, heard)
    if found is None:
        names = ("errors", "words", "wer", *(f"turns_{k}" for k in TURN_FAULTS))
        return {f"{prefix}_{name}": None for name in names}, None
    return {f"{prefix}_errors": found.errors, f"{prefix}_words": found.words,
            f"{prefix}_wer": found.errors / found.words if found.words else None,
            **{f"{prefix}_turns_{k}": getattr(found, k) for k in TURN_FAULTS}}, found


TURN_FAULTS = ("missing", "duplicated", "undelivered", "extra")


def _split(said: list[str] | None, heard: list[str] | None) -> tuple[list[list[str]] | None, list[list[str]] | None]:
    """Each said and each heard turn as its words; heard as said (most conversations, the agent's
    side nearly always) split once."""
    said_words = None if said is None else [words(t) for t in said]
    return said_words, said_words if heard == said else None if heard is None else [words(t) for t in heard]


def heard_facts(agent_context: Any, user_context: Any, entities: Callable[[], Sequence[str]],
                anomaly: Callable[[str], None] = lambda said: None) -> dict[str, Any]:
    """Per scenario: both directions' turns aligned (missing, duplicated, undelivered, extra), their
    word errors and reference words over the aligned turns and their WER, the key entities misheard,
    and the user's turns as said and as heard, aligned (``VOICE_COLUMNS`` names). ``entities`` gives
    the scenario's key entities: asked only when the agent heard the user other than as said (else
    none can have been misheard). A conversation past the caps (``MAX_TURN_PAIRS``, ``MAX_WORDS``,
    ``MAX_ENTITIES``) is measured within them, each cap it meets said to ``anomaly``."""
    user_side, agent_side = _placed_turns(user_context, "user"), _placed_turns(agent_context, "agent")
    said_turns = None if user_side is None else [text for _, text in user_side["assistant"]]
    heard_turns_ = None if agent_side is None else [text for _, text in agent_side["user"]]
    said_words, heard_words = _split(said_turns, heard_turns_)
    to_agent, aligned = _direction(said_words, heard_words, "user_to_agent", anomaly)
    to_user, _ = _direction(*_split(None if agent_side is None else [text for _, text in agent_side["assistant"]],
                                    None if user_side is None else [text for _, text in user_side["user"]]),
                            "agent_to_user", anomaly)
    missed = None
    if aligned is not None:
        missed = []
        if aligned.errors or aligned.missing:
            checked = entities()
            if len(checked) > MAX_ENTITIES:
                anomaly(f"{len(checked):,} key entities: the first {MAX_ENTITIES} checked for mishearing")
                checked = checked[:MAX_ENTITIES]
            missed = misheard(checked, said_words, heard_words,
                              _acted_after(agent_context, agent_side["user"]), aligned.pairs)
    pairs = ([(None if si is None else said_turns[si], None if hj is None else heard_turns_[hj])
              for si, hj in aligned.pairs] if aligned else list(zip_longest(said_turns or [], heard_turns_ or [])))
    return {
        **to_agent, **to_user,
        "misheard_json": None if missed is None else json.dumps(missed),
        # each user turn as said and as heard, aligned (the viewer's side by side)
        "heard_json": None if said_turns is None and heard_turns_ is None else orjson.dumps(pairs).decode(),
        "misheard_entities": None if missed is None else len(missed),
        "misheard_acted_on": None if missed is None else sum(m["acted_on"] for m in missed),
    }
