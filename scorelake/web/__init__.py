"""The viewer: ``scorelake view``'s web app over the Python API, and its pages."""

from __future__ import annotations

import secrets
from urllib.parse import urlencode

import scorelake
from scorelake.transforms.names import RECORDED
from scorelake.web._app import check_token, is_loopback, make_app, only_hosts


def serve(wh: scorelake.Warehouse, host: str = "127.0.0.1", port: int = 8765, token: str | None = None,
          policy: str = RECORDED, review: bool = False, say=print) -> None:
    """Serve the viewer over ``wh`` until interrupted. Off the loopback address, and on every address
    when it takes reviews (any page open in the browser can send a request to localhost), a token is
    required (a random one when not given, at least 16 characters when given); ``say`` gets the
    address to open (its token moves to a session cookie on the first visit)."""
    import uvicorn

    wh.policy_id(policy)  # a missing warehouse or policy is said now, not on the first page
    check_token(token)
    if (review or not is_loopback(host)) and not token:
        token = secrets.token_urlsafe(24)
    query = urlencode({k: v for k, v in (("token", token), ("policy", policy)) if v and v != RECORDED})
    address = f"http://{host if ':' not in host else f'[{host}]'}:{port}/" + (f"?{query}" if query else "")
    say(f"serving {wh.location} on {address} (Ctrl-C stops it)")
    if review:
        say(f"taking reviews: the review queue is {address.split('?')[0]}review?token={token}")
    app = make_app(wh, token, policy=policy, review=review)
    if host not in ("0.0.0.0", "::"):  # bound to one address: the names it answers as are known
        names = {host if ":" not in host else f"[{host}]", "localhost", "127.0.0.1", "[::1]"}
        app = only_hosts(app, {n.lower() for name in names for n in (name, f"{name}:{port}")})
    uvicorn.run(app, host=host, port=port, log_level="warning")


__all__ = ["is_loopback", "make_app", "only_hosts", "serve"]
