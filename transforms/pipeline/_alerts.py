"""The scheduled refresh's alerts: a gate's regression POSTed to a webhook, each call within a total
deadline (a webhook that hangs or trickles its answer cannot hold a flow run), retried with backoff,
and an alert not delivered kept in an outbox file and sent with the next run (oldest first)."""

from __future__ import annotations

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


class NotDelivered(Exception):
    pass


@dataclass(frozen=True)
class Delivery:
    sent: int
    kept: int  # in the outbox, for the next run
    last_error: str | None = None


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
    if not 200 <= outcome["status"] < 300:
        raise NotDelivered(f"the webhook answered HTTP {outcome['status']}")


def _read_outbox(outbox: Path) -> list[dict]:
    if not outbox.is_file():
        return []
    kept = []
    for line in outbox.read_text(encoding="utf-8").splitlines():
        try:
            kept.append(json.loads(line))
        except ValueError:  # a line cut short by a crash while it was written: nothing to send
            continue
    return kept


def _write_outbox(outbox: Path, alerts: list[dict]) -> None:
    """The outbox replaced whole (a temporary file renamed over it), or removed when empty."""
    if not alerts:
        outbox.unlink(missing_ok=True)
        return
    outbox.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=outbox.parent, prefix=f".{outbox.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.writelines(json.dumps(alert, default=str) + "\n" for alert in alerts)
    os.replace(temporary, outbox)


def deliver(url: str, alerts: list[dict], outbox: Path, deadline_s: float = DEADLINE_S, attempts: int = ATTEMPTS,
            backoff_s: float = BACKOFF_S) -> Delivery:
    """Send the alerts kept in ``outbox`` from earlier runs, then ``alerts``, in order, each tried
    ``attempts`` times with backoff; what is not delivered (that one and the ones after it, so that
    they arrive in order) is kept in ``outbox`` for the next run."""
    pending = _read_outbox(outbox) + alerts
    _write_outbox(outbox, pending)  # kept before the first call: a run killed while sending loses none
    sent, error = 0, None
    for alert in pending:
        for attempt in range(attempts):
            try:
                post_json(url, alert, deadline_s)
                break
            except NotDelivered as exc:
                error = str(exc)
                if attempt < attempts - 1:
                    time.sleep(backoff_s * 2 ** attempt)
        else:
            break
        sent += 1
        _write_outbox(outbox, pending[sent:])
    return Delivery(sent, len(pending) - sent, error if sent < len(pending) else None)
