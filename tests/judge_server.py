"""A scripted OpenAI-compatible judge on 127.0.0.1 (uvicorn + Starlette, in a thread of the test
process, or as its own process for the benchmark): each request to ``/v1/chat/completions`` is
answered by a script, a function of the request's payload and how many requests came before for
the same user content. Every request is recorded (payload and Authorization header).

    python -m tests.judge_server --port 8901 --delay 0.1     # the benchmark's: every reply after 100 ms
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Reply:
    status: int = 200
    content: str | None = '{"score": 1.0, "reason": "ok"}'  # the message content of a 200
    body: bytes | None = None  # a raw body instead
    delay: float = 0.0
    headers: dict = field(default_factory=dict)
    usage: dict = field(default_factory=lambda: {"prompt_tokens": 100, "completion_tokens": 20})
    trickle: float = 0.0  # seconds between the body's bytes (a reply that never quite stops coming)


Script = Callable[[dict, int], Reply]  # (payload, earlier requests for this user content) -> reply


def completion(content: str | None, usage: dict | None = None) -> bytes:
    return json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": "scripted",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content}}],
                       "usage": usage or {}}).encode()


def user_content(payload: dict) -> str:
    return payload["messages"][1]["content"]


class JudgeServer:
    def __init__(self, script: Script, port: int = 0):
        self.script = script
        self.requests: list[dict] = []
        self.seen: Counter = Counter()
        self._lock = threading.Lock()
        self._socket = socket.socket()
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socket.bind(("127.0.0.1", port))
        self.port = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1/chat/completions"

    def app(self):
        from starlette.applications import Starlette
        from starlette.responses import Response, StreamingResponse
        from starlette.routing import Route

        async def completions(request):
            payload = json.loads(await request.body())
            with self._lock:
                self.requests.append({"payload": payload, "authorization": request.headers.get("authorization")})
                key = user_content(payload)
                earlier = self.seen[key]
                self.seen[key] += 1
            reply = self.script(payload, earlier)
            if reply.delay:
                await asyncio.sleep(reply.delay)
            body = reply.body if reply.body is not None else (
                completion(reply.content, reply.usage) if reply.status < 400 else b'{"error": {"message": "scripted"}}')
            if reply.trickle:
                async def dribble():
                    for i in range(len(body)):
                        yield body[i:i + 1]
                        await asyncio.sleep(reply.trickle)

                return StreamingResponse(dribble(), status_code=reply.status, headers=reply.headers,
                                         media_type="application/json")
            return Response(body, status_code=reply.status, headers=reply.headers, media_type="application/json")

        return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])

    def __enter__(self) -> JudgeServer:
        import uvicorn

        config = uvicorn.Config(self.app(), log_level="error", lifespan="off", backlog=2048)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the scripted judge did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *_) -> None:
        self._server.should_exit = True
        self._thread.join(10)

    def serve_forever(self) -> None:
        import uvicorn

        uvicorn.Server(uvicorn.Config(self.app(), log_level="error", lifespan="off", backlog=2048)).run(
            sockets=[self._socket])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.1)
    args = parser.parse_args()
    server = JudgeServer(lambda payload, n: Reply(delay=args.delay), args.port)
    print(server.url, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
