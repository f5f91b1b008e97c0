"""Asking an OpenAI-compatible chat-completions endpoint, many requests at once, through httpx.

Transient failures (429 honouring Retry-After, 5xx, timeouts, dropped connections) are retried with
exponential backoff and jitter; one that still fails becomes upstream's error judgement (score
0.0, ``Error: ...``). A bad key or URL (401, 403, 404) stops everything at once: every other call
would fail the same way. Any other status is the request's own error, judged as upstream would.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import math
import random
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import orjson

from scorelake.transforms.errors import JudgeRefused, JudgeUnavailable
from scorelake.transforms.judging import Answer, Call
from scorelake.transforms.judging._upstream import error_judgement, http_error, judged, reply_text

FATAL_STATUSES = {401: "the key was refused", 403: "the key may not use this endpoint or model",
                  404: "no such endpoint or model"}


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 6  # requests per call, the first included
    backoff_s: float = 0.5  # doubled per retry, with full jitter
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 300.0  # a longer Retry-After is waited this long
    # calls in a row left unanswered after their retries (at least twice the concurrency) that mean
    # the judge is down, not flaky: asking the rest now would only wait out their retries
    give_up_after: int = 50
    # ... and while no call at all has been answered, this many failed calls (at least twice the
    # concurrency): a judge that fails every call (a wrong model, port or key) is given up on at once
    give_up_unanswered_first: int = 5
    # a call made alone to find out whether the judge works: any 4xx but 408 and 429 stops everything
    alone: bool = False
    max_reply_bytes: int = 16 * 2**20  # a longer reply is an error, not a memory hog

    def delay(self, retry: int, retry_after: float | None) -> float:
        if retry_after is not None and math.isfinite(retry_after):
            return min(retry_after, self.max_retry_after_s)
        return random.uniform(0, min(self.max_backoff_s, self.backoff_s * 2 ** retry))


@dataclass
class Tally:
    done: int = 0
    errors: int = 0
    retries: int = 0
    tokens: int = 0
    unanswered_in_a_row: int = 0
    last_error: str | None = None
    answered: int = 0  # calls the judge answered (a reply upstream's parse turned into a judgement)
    unanswered: int = 0  # calls left without a usable reply: an HTTP error, a timeout, no connection
    odd_scores: int = 0  # scores upstream's float() took that are outside 0-1 or not finite


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds: a number, or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, (email.utils.parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


def _usage(body: bytes) -> tuple[int | None, int | None]:
    try:
        usage = orjson.loads(body).get("usage") or {}
        counts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
    except Exception:  # any body at all: a count is only taken from a well-formed one
        return None, None
    return tuple(n if isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 2**63 else None for n in counts)


def _message(body: bytes) -> str:
    """What an error reply says (OpenAI's ``error.message``, a ``detail``, else its text), shortened."""
    try:
        doc = orjson.loads(body)
        said = doc.get("error", {}).get("message") if isinstance(doc.get("error"), dict) else doc.get("error")
        said = said or doc.get("detail") or doc.get("message")
    except Exception:
        said = None
    text = str(said) if said else body.decode("utf-8", "replace")
    return " ".join(text.split())[:300]


async def _post(client, url, body: bytes, timeout, deadline_s: float, max_bytes: int):
    """The reply's status, reason, headers and body, within ``deadline_s`` for the whole call (a reply
    trickled byte by byte gets no more time) and at most ``max_bytes`` long."""
    async def read():
        async with client.stream("POST", url, content=body, timeout=timeout) as response:
            chunks, size = [], 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise _TooLong(f"the reply was longer than {max_bytes // 2**20} MB")
                chunks.append(chunk)
            return response.status_code, response.reason_phrase, response.headers, b"".join(chunks)

    return await asyncio.wait_for(read(), deadline_s)


class _TooLong(Exception):
    pass


@functools.cache
def _prepared(url: str, timeout: float):
    """httpx's URL and Timeout of a call, made once per distinct value (parsing a URL per call shows)."""
    import httpx

    return httpx.URL(url), httpx.Timeout(timeout)


async def _ask(client, call: Call, policy: RetryPolicy, tally: Tally) -> Answer:
    import httpx

    started, body = time.monotonic(), orjson.dumps(call.payload)
    url, timeout = _prepared(call.url, call.timeout)
    for attempt in range(1, policy.attempts + 1):
        retry_after, transient = None, True
        try:
            status, reason, headers, content = await _post(client, url, body, timeout, call.timeout,
                                                           policy.max_reply_bytes)
        except (httpx.TimeoutException, asyncio.TimeoutError):
            error = f"the judge did not answer within {call.timeout:g} s"
        except httpx.DecodingError as exc:  # the server's own fault: asking again gives the same
            error, transient = f"the reply could not be decoded ({exc})", False
            break
        except _TooLong as exc:
            error, transient = str(exc), False
            break
        except httpx.TransportError as exc:
            error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        else:
            if status in FATAL_STATUSES or (policy.alone and 400 <= status < 500 and status not in (408, 429)):
                what = FATAL_STATUSES.get(status, "the judge refuses the request")
                raise JudgeRefused(f"{call.url} answered {status} {reason} ({what}): {_message(content)}; "
                                   "nothing more is asked")
            if status < 400:
                result, odd = judged(content, call.nl_assertions)
                prompt_tokens, completion_tokens = _usage(content)
                return Answer(call, result, _failed(result),
                              prompt_tokens, completion_tokens, (time.monotonic() - started) * 1000, attempt,
                              datetime.now(UTC), odd_score=odd, reply=reply_text(content))
            error = http_error(status, reason, call.url)
            if status != 429 and status < 500:  # the request's own fault: asking again gives the same
                transient = False
                break
            retry_after = _retry_after(headers.get("retry-after"))
        if attempt < policy.attempts:
            tally.retries += 1
            await asyncio.sleep(policy.delay(attempt - 1, retry_after))
    tally.last_error = error
    return Answer(call, error_judgement(error, call.nl_assertions), True, None, None,
                  (time.monotonic() - started) * 1000, attempt, datetime.now(UTC), unanswered=True,
                  transient=transient)


def _failed(result: dict) -> bool:
    """Upstream's error judgement: its reason is ``Error: ...``."""
    reason = result.get("reason")
    return isinstance(reason, str) and reason.startswith("Error: ")


# httpcore's pool matches every waiting request against every connection on each change: quadratic
# in its size (64 calls in flight spend most of their time there). Pools of this size stay cheap.
CONNECTIONS_PER_CLIENT = 8
_DONE = object()


async def _ask_all(chunks: Iterator[list[Call]], api_key: str | None, concurrency: int, policy: RetryPolicy,
                   on_answer: Callable[[Answer], None], tally: Tally) -> None:
    import ssl

    import certifi
    import httpx

    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    queue: asyncio.Queue = asyncio.Queue(maxsize=2 * concurrency)

    async def produce() -> None:
        # the next chunk of calls is read in a thread: its texts come from disk while calls are in flight
        while (chunk := await asyncio.to_thread(next, chunks, None)) is not None:
            for call in chunk:
                await queue.put(call)
        for _ in range(concurrency):
            await queue.put(_DONE)

    give_up = max(policy.give_up_after, 2 * concurrency)
    give_up_first = max(policy.give_up_unanswered_first, 2 * concurrency)

    async def work(client) -> None:
        while (call := await queue.get()) is not _DONE:
            answer = await _ask(client, call, policy, tally)
            tally.done += 1
            tally.errors += answer.errored
            tally.answered += not answer.unanswered
            tally.unanswered += answer.unanswered
            tally.odd_scores += answer.odd_score
            tally.tokens += (answer.prompt_tokens or 0) + (answer.completion_tokens or 0)
            tally.unanswered_in_a_row = tally.unanswered_in_a_row + 1 if answer.unanswered else 0
            on_answer(answer)
            never = tally.answered == 0 and tally.unanswered_in_a_row >= give_up_first
            if never or tally.unanswered_in_a_row >= give_up:
                raise JudgeUnavailable(
                    f"the judge left {tally.unanswered_in_a_row} calls in a row unanswered"
                    + (" and has answered none" if never else f" after {policy.attempts} attempts each")
                    + f" (last: {tally.last_error}): nothing more is asked now")

    verify = ssl.create_default_context(cafile=certifi.where())  # one for all clients: loading it takes 30 ms
    limits = httpx.Limits(max_connections=CONNECTIONS_PER_CLIENT, max_keepalive_connections=CONNECTIONS_PER_CLIENT)
    clients = [httpx.AsyncClient(limits=limits, verify=verify, headers=headers)
               for _ in range(-(-concurrency // CONNECTIONS_PER_CLIENT))]
    tasks = [asyncio.create_task(produce())] + [
        asyncio.create_task(work(clients[i // CONNECTIONS_PER_CLIENT])) for i in range(concurrency)]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for client in clients:
            await client.aclose()


def ask_all(chunks: Iterable[list[Call]], *, api_key: str | None, concurrency: int,
            on_answer: Callable[[Answer], None], policy: RetryPolicy = RetryPolicy(), tally: Tally | None = None) -> Tally:
    """Ask every call (given a chunk at a time), ``concurrency`` at a time; ``on_answer`` gets each
    answer as it arrives. Raises ``JudgeRefused`` (the calls in flight dropped) on 401, 403 or 404."""
    tally = tally or Tally()
    asyncio.run(_ask_all(iter(chunks), api_key, concurrency, policy, on_answer, tally))
    return tally
