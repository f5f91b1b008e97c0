"""What each side heard: the words one bot's LLM said against the words the other bot's speech
recognition gave its LLM, as a word error rate over the whole conversation, and the key entities
(numbers, codes, names) the user said that the agent did not hear as said.

Text is lower-cased; every character that is not a letter or a digit (``str.isalnum``) becomes a
space, except an apostrophe between two such characters (``don't``); words are what whitespace
separates (so ``TC-55678`` is two words); a typographic apostrophe (’) counts as one ('). WER = word
edit distance (substitutions, deletions, insertions) / reference words.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from itertools import zip_longest
from typing import Any

import orjson

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


def edit_distance(reference: list[str], hypothesis: list[str]) -> int:
    """Word-level Levenshtein distance, bit-parallel (Myers 1999, Hyyrö's formulation): one pass over
    the hypothesis with the reference as bit vectors, so a conversation of thousands of words costs
    a few milliseconds. The words both share at the start and at the end are set aside first: they
    cost nothing in some optimal alignment, and a transcript mostly heard right leaves little else."""
    shared, most = 0, min(len(reference), len(hypothesis))
    while shared < most and reference[shared] == hypothesis[shared]:
        shared += 1
    end = 0
    while end < most - shared and reference[-1 - end] == hypothesis[-1 - end]:
        end += 1
    if shared or end:
        reference, hypothesis = reference[shared:len(reference) - end], hypothesis[shared:len(hypothesis) - end]
    m = len(reference)
    if m == 0:
        return len(hypothesis)
    match: dict[str, int] = {}
    for i, word in enumerate(reference):
        match[word] = match.get(word, 0) | (1 << i)
    mask, top = (1 << m) - 1, 1 << (m - 1)
    positive, negative, distance = mask, 0, m
    for word in hypothesis:
        eq = match.get(word, 0)
        vertical = eq | negative
        horizontal = (((eq & positive) + positive) ^ positive) | eq
        up = negative | ~(horizontal | positive)
        down = positive & horizontal
        if up & top:
            distance += 1
        elif down & top:
            distance -= 1
        up = (up << 1) | 1
        down <<= 1
        positive = (down | ~(vertical | up)) & mask
        negative = up & vertical & mask
    return distance


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


def _words_of(texts: list[str] | None) -> list[str] | None:
    """The words of some turns' texts; None when there are none."""
    return words(" ".join(texts)) or None if texts else None


def _acted_after(context: list, heard: list[tuple[int, str]],
                 heard_words: list[list[str]]) -> list[tuple[list[str], bool]]:
    """Each user turn of the agent's context (``heard``, its words ``heard_words``), and whether the
    agent acted after hearing it (a later assistant message that says something or calls a tool)."""
    last_act = max((i for i, m in enumerate(context) if isinstance(m, dict) and m.get("role") == "assistant"
                    and (_content(m).strip() or m.get("tool_calls"))), default=-1)
    return [(said, place < last_act) for (place, _), said in zip(heard, heard_words)]


def error_rate(said: list[str] | None, heard: list[str] | None) -> tuple[int | None, int | None]:
    """(word errors, reference words) of the words heard against the words said; (None, None) when
    either side is unknown."""
    if not said or not heard:
        return None, None
    return (0 if said == heard else edit_distance(said, heard)), len(said)


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


def _said_in(entity: str, text: str) -> bool:
    """Whether the words of ``entity`` come one after the other in ``text`` (words joined by spaces)."""
    return f" {entity} " in f" {text} "


def misheard(entities: Sequence[str], said: list[str], heard_turns: list[tuple[list[str], bool]]) -> list[dict]:
    """The key entities the user said and the agent did not hear as said (``said``: the user's words;
    ``heard_turns``: each turn the agent heard, its words and whether the agent acted after it), each
    with what it heard instead (the words of its input closest to the entity) and whether it acted
    after hearing that."""
    heard = [w for turn, _ in heard_turns for w in turn]
    acted = [after for turn, after in heard_turns for _ in turn]  # per word: its turn's
    said_text, heard_text = " ".join(said), " ".join(heard)
    found = []
    for entity in entities:
        if not _said_in(entity, said_text) or _said_in(entity, heard_text):
            continue
        wanted = entity.split()
        n = len(wanted)
        starts = range(max(len(heard) - n + 1, 1))
        at = min(starts, key=lambda i: edit_distance(wanted, heard[i:i + n]))  # the first of the closest
        found.append({"entity": entity, "heard": " ".join(heard[at:at + n]) or None,
                      "acted_on": bool(acted) and acted[at]})
    return found


def heard_facts(agent_context: Any, user_context: Any, entities: Callable[[], Sequence[str]]) -> dict[str, Any]:
    """Per scenario: both directions' word errors and reference words, their WER, the key entities
    misheard, and the user's turns as said and as heard (``VOICE_COLUMNS`` names). ``entities`` gives
    the scenario's key entities: asked only when the agent heard the user other than as said (else
    none can have been misheard)."""
    user_side, agent_side = _placed_turns(user_context, "user"), _placed_turns(agent_context, "agent")
    said_turns = None if user_side is None else [text for _, text in user_side["assistant"]]
    heard_turns = None if agent_side is None else [text for _, text in agent_side["user"]]
    heard_words = [words(text) for text in heard_turns or []]  # per turn: whether the agent acted after it
    user_said, agent_heard = _words_of(said_turns), [w for turn in heard_words for w in turn] or None
    agent_said = None if agent_side is None else _words_of([text for _, text in agent_side["assistant"]])
    user_heard = None if user_side is None else _words_of([text for _, text in user_side["user"]])
    to_agent, to_agent_words = error_rate(user_said, agent_heard)
    to_user, to_user_words = error_rate(agent_said, user_heard)
    missed = (None if to_agent is None else
              misheard(entities(), user_said, _acted_after(agent_context, agent_side["user"], heard_words)) if to_agent
              else [])
    return {
        "user_to_agent_errors": to_agent, "user_to_agent_words": to_agent_words,
        "user_to_agent_wer": to_agent / to_agent_words if to_agent_words else None,
        "agent_to_user_errors": to_user, "agent_to_user_words": to_user_words,
        "agent_to_user_wer": to_user / to_user_words if to_user_words else None,
        "misheard_json": None if missed is None else json.dumps(missed),
        # each user turn as said and as heard, paired in order (the viewer's side by side)
        "heard_json": None if said_turns is None and heard_turns is None else orjson.dumps(
            list(zip_longest(said_turns or [], heard_turns or []))).decode(),
        "misheard_entities": None if missed is None else len(missed),
        "misheard_acted_on": None if missed is None else sum(m["acted_on"] for m in missed),
    }
