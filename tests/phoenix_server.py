"""Arize Phoenix, a real OpenTelemetry backend, for the export tests: installed once into a venv of
its own (its hundreds of dependencies kept out of scorelake's test environment; the venv is reused
from ``$SCORELAKE_PHOENIX_VENV`` or ~/.cache), started on free ports with an empty working folder,
and read back through its own client."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

PHOENIX = "arize-phoenix==20.26.1"
VENV = Path(os.environ.get("SCORELAKE_PHOENIX_VENV", Path.home() / ".cache" / "scorelake-tests" / "phoenix-venv"))


def phoenix_python() -> Path:
    """The interpreter of a venv that has Phoenix, made the first time."""
    python = VENV / "bin" / "python"
    ready = VENV / ".installed"
    if not ready.exists() or ready.read_text() != PHOENIX:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", PHOENIX], check=True, timeout=1800)
        ready.write_text(PHOENIX)
    return python


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Phoenix:
    def __init__(self, work: Path):
        self.python = phoenix_python()
        self.port, self.grpc = _free_port(), _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_PORT": str(self.port),
               "PHOENIX_GRPC_PORT": str(self.grpc), "PHOENIX_HOST": "127.0.0.1"}
        self.log = (work / "phoenix.log").open("w")
        self.process = subprocess.Popen([str(self.python), "-m", "phoenix.server.main", "serve"], env=env,
                                        stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"Phoenix did not start: {(work / 'phoenix.log').read_text()[-2000:]}")

    @property
    def traces(self) -> str:
        return f"{self.url}/v1/traces"

    def spans(self) -> list[dict]:
        """Every span Phoenix holds, read through its client (phoenix.client) in its own venv."""
        script = ("import json, sys\nfrom phoenix.client import Client\n"
                  "spans = Client(base_url=sys.argv[1]).spans.get_spans(project_identifier='default', limit=100000)\n"
                  "print(json.dumps(spans, default=str))")
        done = subprocess.run([str(self.python), "-c", script, self.url], capture_output=True, text=True, timeout=300,
                              check=True)
        return json.loads(done.stdout)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
