"""The viewer (``scorelake view``): a local web app over the warehouse (Starlette, which comes with
Prefect), each page a few queries of the Python API pushed to DuckDB (a run page is one page of
its scenarios, however many the run has). Read-only unless it takes reviews (``review``): then
every request must carry the token, and a review is a POST from one of its own pages (same origin),
with a reviewer's name. Off the loopback address every request must carry the token: in the
address once (``?token=``; then a session cookie holds it and the address is given again without
it), or ``Authorization: Bearer``. Every answer carries the security headers (``SECURITY_HEADERS``)."""

from __future__ import annotations

import hmac
import threading
from ipaddress import ip_address
from urllib.parse import parse_qs, parse_qsl, quote, unquote, urlencode

import polars as pl
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

import scorelake
from scorelake._csv import csv_text
from scorelake.transforms.errors import NotFound, ScorelakeError, WarehouseBusy
from scorelake.transforms.names import RECORDED, SCENARIO_SORTS, SIGNALS
from scorelake.transforms.registry import ITEM_SIGNALS
from scorelake.transforms.voice import speech_timeline
from scorelake.present import explain
from scorelake.web import _pages as pages
from scorelake.web._voice import voice_page, voice_section

PAGE_SIZE = 100
SEARCH_LIMIT = 200  # scenarios a search page lists


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


REVIEWER_COOKIE = "scorelake_reviewer"
SESSION_COOKIE = "scorelake_session"  # the token, once an address carried it: links never do
MIN_TOKEN_CHARS = 16
# every answer: never cached, never framed, never sniffed, no Referer to another site (a run's name),
# and nothing loaded or sent but from the viewer itself. (Not no-referrer: under it a browser sends a
# form's POST with ``Origin: null``, and a review could not be told from one sent by another site.)
SECURITY_HEADERS = (
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"content-security-policy", b"default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' "
     b"'unsafe-inline'; img-src 'self' data:; media-src 'self'; frame-ancestors 'none'; form-action 'self'; "
     b"base-uri 'none'"),
)
MAX_FORM_BYTES = 64 * 1024  # a review form: a note of 2,000 characters and its fields
MAX_OFFSET = 10**12  # a page offset (DuckDB takes a 64-bit one; a larger one is a bad request, not an error)


def _token_given(request: Request, form: dict | None = None) -> str:
    return ((form or {}).get("token") or request.query_params.get("token")
            or request.headers.get("authorization", "").removeprefix("Bearer "))


def _same_origin(request: Request) -> bool:
    """A write comes from a page of this app: its Origin (or, without one, its Referer) is this
    server's own address, and the browser does not call it cross-site."""
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return False
    origin = request.headers.get("origin")
    if origin is not None:
        return origin == own
    referer = request.headers.get("referer", "")
    return referer == own or referer.startswith(own + "/")


class Viewer:
    """The viewer's handlers over ``wh``: pages under ``policy`` unless a page asks for another, a
    request without ``token`` (when set) refused; with ``review``, the queue and the review form."""

    def __init__(self, wh: scorelake.Warehouse, token: str | None, page_size: int, policy: str, review: bool):
        self.wh, self.token, self.page_size, self.default_policy, self.review = wh, token, page_size, policy, review
        self.lock = threading.Lock()  # one DuckDB connection's worth of work at a time
        # the navigation's review counts, kept while the warehouse version (and policy, reviewer) stays:
        # worked out again on every page they would cost a queue's query each (0.3 s at 100,000 scenarios)
        self._nav: tuple[tuple, pages.ReviewNav, pl.DataFrame] | None = None

    def admitted(self, request: Request, form: dict | None = None) -> bool:
        """No token set, or the request carries it: in its session cookie, its address, its form or
        an ``Authorization: Bearer`` header."""
        given = (request.cookies.get(SESSION_COOKIE, ""), _token_given(request, form))
        return not self.token or any(hmac.compare_digest(one.encode(), self.token.encode()) for one in given)

    def not_found(self, exc: NotFound) -> Response:
        """A 404 that says what is missing, not where the warehouse lives on the server."""
        return PlainTextResponse(str(exc).replace(str(self.wh.location), "the warehouse"), 404)

    def framed(self, render):
        """An endpoint answering ``render(request, policy)``'s body inside the page frame: the token
        checked, a missing thing a 404, a bad request a 400."""
        def endpoint(request: Request) -> Response:
            if not self.admitted(request):
                return HTMLResponse(pages.token_page(self.review), 401)
            policy = request.query_params.get("policy") or self.default_policy
            try:
                with self.lock, self.wh.connection():
                    policies = self.wh.policies()["name"].to_list()
                    body = render(request, policy)
                    nav = self._review_nav(request, policy) if self.review else None
            except NotFound as exc:
                return self.not_found(exc)
            except ScorelakeError as exc:
                return PlainTextResponse(str(exc), 400)
            title = request.url.path.rstrip("/").rsplit("/", 1)[-1] or "runs"
            return HTMLResponse(pages.page(title, body, policy, policies, nav))

        return endpoint

    def _review_state(self, request: Request, policy: str) -> tuple[pages.ReviewNav, pl.DataFrame]:
        """The navigation's review counts and each reviewer's progress, worked out again only when
        the warehouse version (or the policy, or the reviewer) changed."""
        reviewer = unquote(request.cookies.get(REVIEWER_COOKIE, ""))
        key = (policy, reviewer, self.wh.version())
        if self._nav is None or self._nav[0] != key:
            progress = self.wh.review_progress()
            of = {r["reviewer"]: r for r in progress.iter_rows(named=True)}
            queue = self.wh.review_queue("errors", policy=policy)
            nav = pages.ReviewNav(queue.filter(pl.col("reviews") == 0).height,
                                  (of.get("(all)") or {}).get("disagreeing") or 0, reviewer,
                                  (of.get(reviewer) or {}).get("scenarios") or 0)
            self._nav = key, nav, progress
        return self._nav[1], self._nav[2]

    def _review_nav(self, request: Request, policy: str) -> pages.ReviewNav:
        return self._review_state(request, policy)[0]

    # ---- pages: (request, policy) -> the page's body ------------------------------------------------
    def runs(self, request: Request, policy: str) -> str:
        wh = self.wh
        with wh.connection():
            return pages.runs_page(wh.runs(), wh.rates(policy=policy), policy, wh.headlines(policy=policy))

    def search(self, request: Request, policy: str) -> str:
        q = request.query_params.get("q") or None
        found = self.wh.search(q, policy=policy, limit=SEARCH_LIMIT) if q else None
        return pages.search_page(q, found, policy, SEARCH_LIMIT)

    def run(self, request: Request, policy: str) -> str:
        run_id = request.path_params["run"]
        q = request.query_params
        offset = _integer(q.get("offset"), 0)
        if not 0 <= offset <= MAX_OFFSET:
            raise scorelake.InvalidArgument(f"offset {q.get('offset')}: between 0 and {MAX_OFFSET}")
        query = {"failed": q.get("failed") == "1", "domain": q.get("domain") or None, "signal": q.get("signal") or None,
                 "sort": q.get("sort") or "position", "offset": offset, "q": q.get("q") or None}
        rows = self.wh.run_scenarios(run_id, policy, failed_only=query["failed"], domain=query["domain"],
                                     signal=query["signal"], sort=query["sort"], limit=self.page_size, offset=offset,
                                     q=query["q"])
        domains = [d for d in self.wh.rates(run=run_id, policy=policy)["domain"] if d != "(all)"]
        return pages.run_page(run_id, rows, domains, SCENARIO_SORTS, query, policy, self.page_size)

    def latency(self, request: Request, policy: str) -> str:
        run_id = request.path_params["run"]
        return pages.latency_page(run_id, self.wh.latency([run_id]), self.wh.latency_histogram(run_id),
                                  self.wh.slowest_exchanges(run_id), policy)

    def voice(self, request: Request, policy: str) -> str:
        run_id = request.path_params["run"]
        return voice_page(run_id, self.wh.voice([run_id]), self.wh.voice([run_id], by="scenario", policy=policy),
                          policy)

    def judge_scores(self, request: Request, policy: str) -> str:
        run_id = request.path_params["run"]
        return pages.judge_scores_page(run_id, self.wh.judge_scores(run_id, policy), policy)

    def flaky(self, request: Request, policy: str) -> str:
        run_id = request.path_params["run"]
        return pages.flaky_page(run_id, self.wh.flaky(run_id, policy=policy), policy)

    def scenario(self, request: Request, policy: str) -> str:
        run_id, name = request.path_params["run"], request.path_params["scenario"]
        evidence = self.wh.evidence(run_id, name, policy)
        reviewer, queue = unquote(request.cookies.get(REVIEWER_COOKIE, "")), request.query_params.get("queue")
        forms = (pages.review_section(_review_rows(evidence), evidence.reviews, run_id, name, policy, reviewer, queue)
                 if self.review else "")
        audio = (f"/runs/{pages.segment(run_id)}/audio/{pages.segment(name)}"
                 if self.wh.recording(run_id, name) else None)
        voice = self.wh.voice_of(run_id, name)  # read once: its timeline is measured from the same row
        timeline = None if voice is None else speech_timeline(voice)
        return pages.scenario_page(explain(evidence, limit=2000), run_id, policy, voice_section(voice, timeline, audio),
                                   forms, pages.Saved.parse(request.query_params.get("saved")), reviewer, queue)

    def audio(self, request: Request) -> Response:
        """A scenario's recording, where its run's folder on this machine holds one: the file as it is,
        in the ranges a player asks for (Starlette's FileResponse answers Range)."""
        if not self.admitted(request):
            return PlainTextResponse("a token is needed", 401)
        try:
            with self.lock, self.wh.connection():
                path = self.wh.recording(request.path_params["run"], request.path_params["scenario"])
        except NotFound as exc:
            return self.not_found(exc)
        if path is None:
            return PlainTextResponse("no recording of this scenario on this machine", 404)
        return FileResponse(path, media_type="audio/wav")

    def compare(self, request: Request, policy: str) -> str:
        a, b = request.query_params.get("a"), request.query_params.get("b")
        runs = self.wh.runs()["run_id"].to_list()
        maps = self.wh.task_maps()["map_name"].to_list()
        if not a or not b:  # pick them: the last two runs preselected
            return ("<h1>Compare two runs</h1>"
                    + pages.compare_picker(runs, a or (runs[-2:-1] or [None])[0], b or (runs[-1:] or [None])[0],
                                           policy, maps))
        task_map = request.query_params.get("map") or None
        return pages.compare_page(a, b, self.wh.compare(a, b, policy, task_map=task_map), policy, runs, maps)

    def queue(self, request: Request, policy: str) -> str:
        params = _queue_params(request)
        return pages.queue_page(self._queue_of(params, policy), params, self.wh.runs()["run_id"].to_list(), policy,
                                self._review_state(request, policy)[1])

    def _queue_of(self, params: dict, policy: str):
        pair = [params["a"], params["b"]]  # two judges (disagree) or two runs, the earlier first (changed)
        return self.wh.review_queue(params["pick"], params["run"], policy,
                                    judges=pair if params["pick"] == "disagree" else [],
                                    between=pair if params["pick"] == "changed" else [], seed=params["seed"],
                                    per_domain=params["per_domain"], budget=params["budget"])

    # ---- endpoints that answer themselves ----------------------------------------------------------
    def next_in_queue(self, request: Request) -> Response:
        """The first scenario of the queue nobody has reviewed (other than the one skipped)."""
        if not self.admitted(request):
            return HTMLResponse(pages.token_page(self.review), 401)
        policy = request.query_params.get("policy") or self.default_policy
        params = _queue_params(request)
        skipped = request.query_params.get("skip")
        try:
            with self.lock, self.wh.connection():
                found = self._queue_of(params, policy)
        except ScorelakeError as exc:
            return PlainTextResponse(str(exc), 400)
        left = [r for r in found.iter_rows(named=True) if not r["reviews"]
                and f"{r['run_id']}/{r['scenario_name']}" != skipped]
        query = pages.queue_query(params, policy)
        saved = request.query_params.get("saved")  # what the review before this step saved, said on the next page
        if not left:
            return RedirectResponse(f"/review?{query}", 303)
        r = left[0]
        return RedirectResponse(f"/runs/{pages.segment(r['run_id'])}/scenarios/{pages.segment(r['scenario_name'])}?"
                                + urlencode({"policy": policy, "queue": query,
                                             **({"saved": saved} if saved else {})}), 303)

    async def record(self, request: Request) -> Response:
        """A review from one of the app's own pages: stored, then back to the page (or on to the next).
        What can be refused before the body is read is (its declared length, a wrong token in the
        address or header), and the body is read only up to a form's size."""
        declared = request.headers.get("content-length", "0")
        if not declared.isdigit() or int(declared) > MAX_FORM_BYTES:
            return PlainTextResponse("not saved: the form is too large", 413)
        if _token_given(request) and not self.admitted(request):
            return PlainTextResponse("not saved: a token is required", 401)
        body = await _body_within(request, MAX_FORM_BYTES)
        if body is None:
            return PlainTextResponse("not saved: the form is too large", 413)
        form = {k: v[-1] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
        if not self.admitted(request, form):
            return PlainTextResponse("not saved: a token is required", 401)
        if not _same_origin(request):
            return PlainTextResponse("not saved: a review is sent from this viewer's own pages", 403)
        reviewer = (form.get("reviewer") or "").strip()
        if not reviewer:
            return PlainTextResponse("not saved: give your name (reviewer)", 400)
        run_id, name, policy = form.get("run", ""), form.get("scenario", ""), form.get("policy") or self.default_policy
        given_assertion = (form.get("assertion") or "").strip()
        if given_assertion and not given_assertion.isdigit():
            return PlainTextResponse(f"not saved: assertion: the number of an NL assertion or DB predicate "
                                     f"(got {given_assertion[:40]!r})", 400)
        assertion = int(given_assertion) if given_assertion else None

        undo = form.get("undo") == "1"

        def store() -> None:
            with self.lock:
                if undo:
                    self.wh.undo_review(run_id, name, form.get("signal", ""), assertion=assertion, reviewer=reviewer)
                else:
                    self.wh.review(run_id, name, form.get("signal", ""), form.get("verdict"), assertion=assertion,
                                   reviewer=reviewer, note=(form.get("note") or "").strip() or None)

        try:
            await run_in_threadpool(store)
        except WarehouseBusy as exc:
            return PlainTextResponse(f"not saved: {exc}", 503)
        except ScorelakeError as exc:
            return PlainTextResponse(f"not saved: {exc}", 400)
        queue_query = form.get("queue") or ""
        saved = pages.Saved(run_id, name, form.get("signal", ""), assertion,
                            "undone" if undo else str(form.get("verdict")).lower()).param()
        if form.get("onward") and queue_query and not undo:
            target = f"/review/next?{queue_query}&{urlencode({'saved': saved})}"
        else:
            target = (f"/runs/{pages.segment(run_id)}/scenarios/{pages.segment(name)}?"
                      + urlencode({"policy": policy, "saved": saved,
                                   **({"queue": queue_query} if queue_query else {})})
                      + "#review")
        response = RedirectResponse(target, 303)
        # quoted: a cookie holds ASCII, a reviewer's name may be 李雷 or 🦊
        response.set_cookie(REVIEWER_COOKIE, quote(reviewer, safe=""), max_age=365 * 86400, samesite="strict",
                            httponly=True)
        return response

    def _csv(self, request: Request, make) -> Response:
        """A CSV download of ``make()``'s rows (the token checked, a bad request a 400)."""
        if not self.admitted(request):
            return HTMLResponse(pages.token_page(self.review), 401)
        try:
            with self.lock, self.wh.connection():
                text = csv_text(make())
        except NotFound as exc:
            return self.not_found(exc)
        except ScorelakeError as exc:
            return PlainTextResponse(str(exc), 400)
        return Response(text, media_type="text/csv; charset=utf-8")

    def run_csv(self, request: Request) -> Response:
        """Every scenario of a run that the run page's filters leave, as CSV (not one page of them)."""
        q = request.query_params
        policy = q.get("policy") or self.default_policy
        return self._csv(request, lambda: self.wh.run_scenarios(
            request.path_params["run"], policy, failed_only=q.get("failed") == "1", domain=q.get("domain") or None,
            signal=q.get("signal") or None, sort=q.get("sort") or "position", limit=MAX_OFFSET,
            q=q.get("q") or None).drop("matching"))

    def reviews_csv(self, request: Request) -> Response:
        """Every review ever made (``standing`` saying which stand), as CSV."""
        return self._csv(request, lambda: self.wh.reviews(history=True))

    def routes(self) -> list[Route]:
        """The route table's routes: pages in the frame, the rest as they are; review ones only with review."""
        return [Route(path, self.framed(getattr(self, handler)) if framed else getattr(self, handler), methods=[method])
                for path, handler, method, framed, review_only in ROUTES if self.review or not review_only]


# The viewer's addresses: (path, Viewer handler, method, in the page frame, only when it takes reviews).
ROUTES = (
    ("/", "runs", "GET", True, False),
    ("/runs/{run}", "run", "GET", True, False),
    ("/runs/{run}/latency", "latency", "GET", True, False),
    ("/runs/{run}/flaky", "flaky", "GET", True, False),
    ("/runs/{run}/voice", "voice", "GET", True, False),
    ("/runs/{run}/judge", "judge_scores", "GET", True, False),
    ("/runs/{run}/export.csv", "run_csv", "GET", False, False),
    ("/runs/{run}/audio/{scenario:path}", "audio", "GET", False, False),
    ("/runs/{run}/scenarios/{scenario:path}", "scenario", "GET", True, False),  # a tau2 task id may hold a /
    ("/compare", "compare", "GET", True, False),
    ("/search", "search", "GET", True, False),
    ("/review", "queue", "GET", True, True),
    ("/review", "record", "POST", False, True),
    ("/review/next", "next_in_queue", "GET", False, True),
    ("/review/export.csv", "reviews_csv", "GET", False, True),
)


def make_app(wh: scorelake.Warehouse, token: str | None = None, page_size: int = PAGE_SIZE,
             policy: str = RECORDED, review: bool = False) -> Starlette:
    """The app over ``wh``, pages under ``policy`` unless a page asks for another. With ``token``
    set, a request without it is refused. Read-only (GET pages) unless ``review``: then scenario
    pages carry review forms, ``/review`` is the queue, and a POST to it records a review (the token
    and a same-origin request required)."""
    if review and not token:
        raise ValueError("a viewer that takes reviews needs a token")
    check_token(token)
    return _guarded(Starlette(routes=Viewer(wh, token, page_size, policy, review).routes()), token)


def check_token(token: str | None) -> None:
    """``InvalidArgument`` for a token a guess could find (shorter than ``MIN_TOKEN_CHARS``)."""
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise scorelake.InvalidArgument(f"--token: at least {MIN_TOKEN_CHARS} characters (got {len(token)}); "
                                        "leave it out for a random one")


def _session_cookie(token: str) -> tuple[bytes, bytes]:
    """The Set-Cookie header that keeps ``token`` for this browser's session."""
    response = Response()
    response.set_cookie(SESSION_COOKIE, token, httponly=True, samesite="strict")
    return next(header for header in response.raw_headers if header[0] == b"set-cookie")


def _guarded(app, token: str | None):
    """``app`` with the security headers on every answer and, with ``token``, the right one in an
    address kept in a session cookie (HttpOnly, SameSite=Strict); a browser's visit to such an
    address is sent on to the same address without it, so that no link, history entry or log line
    holds it after the first visit (a script's request, which keeps no cookie, is answered as asked)."""
    async def guarded(scope, receive, send):
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [value for key, value in query if key == "token"]
        if not (token and given and hmac.compare_digest(given[-1].encode(), token.encode())):
            await app(scope, receive, _adding(send, SECURITY_HEADERS))
            return
        send = _adding(send, (*SECURITY_HEADERS, _session_cookie(token)))
        if scope["method"] == "GET" and dict(scope["headers"]).get(b"sec-fetch-mode") == b"navigate":  # a browser
            rest = urlencode([(key, value) for key, value in query if key != "token"])
            target = scope.get("raw_path", scope["path"].encode()).decode("latin-1") + (f"?{rest}" if rest else "")
            await RedirectResponse(target, 303)(scope, receive, send)
            return
        await app(scope, receive, send)  # a script's request: answered where it asked, the cookie given too

    return guarded


def _adding(send, headers):
    """ASGI ``send`` with ``headers`` added to the answer's start."""
    async def sending(message):
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *headers]}
        await send(message)

    return sending


def _queue_params(request: Request) -> dict:
    q = request.query_params
    return {"pick": q.get("pick") or "errors", "run": q.get("run") or None, "a": q.get("a") or None,
            "b": q.get("b") or None, "seed": _integer(q.get("seed"), 0), "per_domain": _integer(q.get("per_domain"), 5),
            "budget": _integer(q.get("budget"), 50)}


async def _body_within(request: Request, limit: int) -> bytes | None:
    """The request's body, or None once it passes ``limit`` bytes (the rest is never read)."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _integer(value: str | None, default):
    try:
        return int(value) if value not in (None, "") else default
    except ValueError:
        return default


def only_hosts(app, hosts: set[str]):
    """``app`` answering only requests whose Host is one of ``hosts`` (its address, with or without
    the port): a page of another site that reaches it through DNS rebinding names its own host."""
    async def checked(scope, receive, send):
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1").lower()
            if host not in hosts:
                await PlainTextResponse(f"unexpected Host '{host}': this viewer answers as "
                                        f"{' or '.join(sorted(hosts))}", 421)(scope, receive, send)
                return
        await app(scope, receive, send)

    return checked


def _review_rows(evidence) -> list[dict]:
    """What a reviewer can give a verdict on, with its verdict now: each signal that has one (or is
    whitelisted), each NL assertion and DB predicate, and the outcome."""
    s = evidence.scenario
    status = {name: passed for passed, key in ((True, "passed"), (False, "failed")) for name in getattr(s, key) or []}
    verdict = {name: s.columns.get(name) for name in SIGNALS}  # a pass rate's column is named apart: not a verdict
    rows = [{"signal": name, "assertion": None, "label": None,
             "passed": status.get(name, verdict[name] if isinstance(verdict[name], bool) else None)} for name in SIGNALS
            if name in status or isinstance(verdict[name], bool) or name in (s.success_signals or [])]
    for v in evidence.verdicts:
        if v.kind in ITEM_SIGNALS:  # reviewed item by item too
            rows.append({"signal": v.kind, "assertion": v.ordinal, "label": v.label, "passed": v.passed})
    rows.append({"signal": "is_successful", "assertion": None, "label": None, "passed": s.is_successful})
    return rows
