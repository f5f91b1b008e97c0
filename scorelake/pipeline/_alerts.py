"""The scheduled refresh's alerts: a gate's regression POSTed to a webhook, each call within a total
deadline (a webhook that hangs or trickles its answer cannot hold a flow run), retried with backoff,
and an alert not delivered kept in an outbox file and sent with the next run (oldest first).

At least once, in order, never twice by two runs: a run adds its alerts to the outbox under a short
lock, and one run at a time delivers (another that finds delivery under way leaves its alerts to
it). An alert goes out of the outbox only once the webhook took it, or refused it for good (a 4xx
answer other than 408, 425, 429) or it cannot be read: those are set aside in a ``.refused`` file
beside the outbox with the reason, and the ones after them go on. One delivery stops at a time
budget; what is left waits for the next run."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import ssl
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

DEADLINE_S = 15.0  # one call, connection to the last byte of the answer
ATTEMPTS = 3
BACKOFF_S = 2.0  # before the second attempt, doubled for each next one
MAX_ANSWER_BYTES = 1 << 20
BUDGET_S = 60.0  # one run's delivery: a long outbox is sent over several runs, not one run held for minutes
RETRYABLE = (408, 425, 429)  # 4xx answers that say "later", not "never"


class NotDelivered(Exception):
    def __init__(self, message: str, for_good: bool = False):
        super().__init__(message)
        self.for_good = for_good  # the webhook refused this alert: sending it again cannot help


@dataclass(frozen=True)
class Delivery:
    sent: int
    kept: int  # in the outbox, for the next run
    last_error: str | None = None
    refused: int = 0  # set aside for good (refused by the webhook, or unreadable): in the .refused file
    busy: bool = False  # another run was delivering: this run's alerts were left to it


def post_json(url: str, payload: dict, deadline_s: float = DEADLINE_S) -> None:
    """POST ``payload`` as JSON; ``NotDelivered`` unless a 2xx answer came whole within ``deadline_s``.
    The call runs in a thread of its own: past the deadline its socket is shut down under it (a
    per-read timeout alone would let an answer trickling a byte at a time go on for ever)."""
    parts = urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    options = {"context": ssl.create_default_context()} if parts.scheme == "https" else {}
    connection = kind(parts.hostname, parts.port, timeout=deadline_s, **options)
    body = json.dumps(payload, default=str).encode()
    outcome: dict = {}

    def call() -> None:
        try:
            connection.connect()
            outcome["socket"] = connection.sock  # kept: the answer reads from it after the connection lets go
            connection.request("POST", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), body,
                               {"Content-Type": "application/json", "User-Agent": "scorelake"})
            response = connection.getresponse()
            response.read(MAX_ANSWER_BYTES)
            outcome["status"] = response.status
        except (OSError, http.client.HTTPException) as exc:
            outcome["error"] = exc

    caller = threading.Thread(target=call, name="scorelake-webhook", daemon=True)
    caller.start()
    caller.join(deadline_s)
    if caller.is_alive():
        if "socket" in outcome:
            try:
                outcome["socket"].shutdown(socket.SHUT_RDWR)  # wakes the read it is blocked in
            except OSError:
                pass
        caller.join(5)
        connection.close()
        raise NotDelivered(f"no whole answer within {deadline_s:g} s")
    connection.close()
    if "error" in outcome:
        raise NotDelivered(str(outcome["error"]) or type(outcome["error"]).__name__)
    status = outcome["status"]
    if not 200 <= status < 300:
        raise NotDelivered(f"the webhook answered HTTP {status}", 400 <= status < 500 and status not in RETRYABLE)


@contextlib.contextmanager
def _locked(path: Path, wait: bool = True):
    """An exclusive lock on ``path`` (made when missing): yields whether it was had (never false when
    ``wait``). Without ``fcntl`` (Windows) no lock: runs are not expected to overlap there."""
    try:
        import fcntl
    except ImportError:
        yield True
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _lines(outbox: Path) -> list[bytes]:
    return outbox.read_bytes().splitlines(keepends=True) if outbox.is_file() else []


def _replace(path: Path, lines: list[bytes]) -> None:
    """``path`` replaced whole by ``lines`` (a temporary file renamed over it), or removed when none."""
    if not lines:
        path.unlink(missing_ok=True)
        return
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "wb") as out:
        out.writelines(lines)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)


def _set_aside(outbox: Path, line: bytes, reason: str) -> None:
    """An alert that will never be delivered, kept with why beside the outbox."""
    entry = {"reason": reason, "alert": line.decode("utf-8", "replace").rstrip("\n")}
    with open(outbox.with_name(outbox.name + ".refused"), "a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")


def _first(outbox: Path) -> tuple[dict | None, int]:
    """Under the outbox's lock: its first alert that can be read, and how many lines before it
    could not be (each set aside)."""
    lines, unreadable = _lines(outbox), 0
    while lines:
        try:
            alert = json.loads(lines[0].decode("utf-8"))
            if isinstance(alert, dict):
                return alert, unreadable
            reason = "unreadable: not a JSON object"
        except ValueError as exc:  # an undecodable byte, or a line cut short by a crash while written
            reason = f"unreadable: {exc}"
        _set_aside(outbox, lines[0], reason)
        lines, unreadable = lines[1:], unreadable + 1
        _replace(outbox, lines)
    return None, unreadable


def deliver(url: str, alerts: list[dict], outbox: Path, deadline_s: float = DEADLINE_S, attempts: int = ATTEMPTS,
            backoff_s: float = BACKOFF_S, budget_s: float = BUDGET_S) -> Delivery:
    """Add ``alerts`` to ``outbox``, then, unless another run is delivering, send its alerts in
    order (those kept from earlier runs first), each tried ``attempts`` times with backoff and taken
    out once delivered or refused for good; the first that cannot be delivered now stops the
    delivery (they arrive in order), as does ``budget_s``. See the module's docstring."""
    guard = outbox.with_name(outbox.name + ".lock")
    if alerts:
        with _locked(guard):
            with open(outbox, "ab") as out:  # kept before the first call: a run killed while sending loses none
                out.writelines((json.dumps(alert, default=str) + "\n").encode() for alert in alerts)
                out.flush()
                os.fsync(out.fileno())
    sent = refused = 0
    error = None
    started = time.monotonic()
    with _locked(outbox.with_name(outbox.name + ".delivering"), wait=False) as delivering:
        if not delivering:
            with _locked(guard):
                return Delivery(0, len(_lines(outbox)), None, 0, busy=True)
        while time.monotonic() - started < budget_s:
            with _locked(guard):
                alert, unreadable = _first(outbox)
            refused += unreadable
            if alert is None:
                break
            outcome = _send(url, alert, deadline_s, attempts, backoff_s)
            if outcome is not None and not outcome.for_good:
                error = str(outcome)
                break
            with _locked(guard):  # only the delivering run takes lines out: the first is still this alert
                lines = _lines(outbox)
                if outcome is not None:
                    _set_aside(outbox, lines[0], str(outcome))
                    refused += 1
                else:
                    sent += 1
                _replace(outbox, lines[1:])
        with _locked(guard):
            kept = len(_lines(outbox))
    if kept and error is None:
        error = f"the delivery stopped after its {budget_s:g} s budget"
    return Delivery(sent, kept, error if kept else None, refused)


def _send(url: str, alert: dict, deadline_s: float, attempts: int, backoff_s: float) -> NotDelivered | None:
    """None once the webhook took ``alert``; else why not (``for_good``: at the first refusal)."""
    tried = 0
    while True:
        try:
            post_json(url, alert, deadline_s)
            return None
        except NotDelivered as exc:
            tried += 1
            if exc.for_good or tried >= attempts:
                return exc
            time.sleep(backoff_s * 2 ** (tried - 1))
