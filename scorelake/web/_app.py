"""The viewer (``scorelake view``): a local, read-only web app over the warehouse (Starlette, which comes with
Prefect), each page a few queries of the Python API pushed to DuckDB (a run page is one page of
its scenarios, however many the run has). Off the loopback address every request must carry the
token (``?token=`` or ``Authorization: Bearer``)."""

from __future__ import annotations

import hmac
import threading
from ipaddress import ip_address

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

import scorelake
from scorelake.transforms.errors import NotFound, ScorelakeError
from scorelake.transforms.names import RECORDED, SCENARIO_SORTS
from scorelake.transforms.render import explain
from scorelake.web import _pages as pages

PAGE_SIZE = 100


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def make_app(wh: scorelake.Warehouse, token: str | None = None, page_size: int = PAGE_SIZE,
             policy: str = RECORDED) -> Starlette:
    """The app over ``wh`` (read-only: GET pages only), pages under ``policy`` unless a page asks for
    another. With ``token`` set, a request without it is refused."""
    default_policy = policy
    lock = threading.Lock()  # one DuckDB connection's worth of work at a time

    def guarded(render):
        def endpoint(request: Request) -> Response:
            if token:
                given = request.query_params.get("token") or request.headers.get("authorization", "").removeprefix(
                    "Bearer ")
                if not hmac.compare_digest(given.encode(), token.encode()):
                    return PlainTextResponse("a token is required (?token=... or Authorization: Bearer ...)", 401)
            policy = request.query_params.get("policy") or default_policy
            try:
                with lock, wh.connection():
                    policies = wh.policies()["name"].to_list()
                    body = render(request, policy)
            except NotFound as exc:
                return PlainTextResponse(str(exc), 404)
            except ScorelakeError as exc:
                return PlainTextResponse(str(exc), 400)
            title = request.url.path.rstrip("/").rsplit("/", 1)[-1] or "runs"
            return HTMLResponse(pages.page(title, body, policy, policies, token))

        return endpoint

    def runs(request: Request, policy: str) -> str:
        return pages.runs_page(wh.runs(), wh.rates(policy=policy), policy, token)

    def run(request: Request, policy: str) -> str:
        run_id = request.path_params["run"]
        q = request.query_params
        try:
            offset = max(int(q.get("offset") or 0), 0)
        except ValueError:
            offset = 0
        query = {"failed": q.get("failed") == "1", "domain": q.get("domain") or None, "signal": q.get("signal") or None,
                 "sort": q.get("sort") or "position", "offset": offset}
        rows = wh.run_scenarios(run_id, policy, failed_only=query["failed"], domain=query["domain"],
                                signal=query["signal"], sort=query["sort"], limit=page_size, offset=offset)
        domains = wh.rates(run=run_id, policy=policy)["domain"].to_list()
        return pages.run_page(run_id, rows, domains, SCENARIO_SORTS, query, policy, token, page_size)

    def scenario(request: Request, policy: str) -> str:
        run_id, name = request.path_params["run"], request.path_params["scenario"]
        return pages.scenario_page(explain(wh.evidence(run_id, name, policy), limit=2000), run_id, policy,
                                   token)

    def compare(request: Request, policy: str) -> str:
        a, b = request.query_params.get("a"), request.query_params.get("b")
        if not a or not b:
            raise scorelake.InvalidArgument("give two runs: /compare?a=RUN&b=RUN")
        return pages.compare_page(a, b, wh.compare(a, b, policy), policy, token)

    return Starlette(routes=[
        Route("/", guarded(runs)),
        Route("/runs/{run}", guarded(run)),
        Route("/runs/{run}/scenarios/{scenario:path}", guarded(scenario)),  # a tau2 task id may hold a /
        Route("/compare", guarded(compare)),
    ])
