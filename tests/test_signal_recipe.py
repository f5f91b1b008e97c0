"""The manual's "Adding a signal" (docs/development.md) is the recipe: applied word for word to a copy
of the package, the new signal of scorelake's own is scored, rated and listed where a policy lists
it, and every verdict and summary of upstream's baseline session stays as upstream wrote it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.slow]

# the package as a wheel lays it out: flows/, transforms/ and sql/ inside scorelake/
LAYOUT = {"scorelake": "scorelake", "flows": "scorelake/flows", "transforms": "scorelake/transforms",
          "sql": "scorelake/sql"}


def recipe() -> tuple[str, str]:
    """The manual's two blocks (docs/development.md, "Adding a signal"): the rule and its declaration."""
    page = (REPO / "docs" / "development.md").read_text()
    section = page[page.index("### Adding a signal"):]
    section = section[:section.index("\n## ")] if "\n## " in section else section
    rule, declaration = re.findall(r"```py\n(.*?)```", section, re.S)
    return rule, declaration


def package_with_the_recipe(root: Path) -> Path:
    for source, target in LAYOUT.items():
        shutil.copytree(REPO / source, root / target, ignore=shutil.ignore_patterns("__pycache__"))
    rule, declaration = recipe()
    rules = root / "scorelake" / "transforms" / "signal_rules.py"
    rules.write_text(rules.read_text() + "\n\n" + rule)
    registry = root / "scorelake" / "transforms" / "registry.py"
    text = registry.read_text()
    end = text.index("\n)\n", text.index("SIGNALS: tuple[SignalDecl, ...] = ("))
    registry.write_text(text[:end + 1] + declaration + text[end + 1:])
    return root


def test_a_signal_added_by_the_readme_recipe_is_scored_and_leaves_upstreams_verdicts_alone(tmp_path):
    package = package_with_the_recipe(tmp_path / "package")
    code = textwrap.dedent(f"""
        import polars as pl
        import scorelake
        from typer.testing import CliRunner
        from scorelake.cli import app
        from scorelake.storage import Store
        from scorelake.transforms.scoring import Policy, Signal
        from tests.conftest import BASELINE, CONFORMANCE, upstream_metrics
        from tests.test_conformance import upstream_verdicts, scored_rows

        assert scorelake.__file__.startswith({str(package)!r}), scorelake.__file__
        assert Signal.AGENT_ANSWERED == "agent_answered"
        where = {str(tmp_path / "wh")!r}
        wh = scorelake.open(where)
        wh.ingest(CONFORMANCE / BASELINE)
        got = scored_rows(Store(where), BASELINE, Policy())
        for m in upstream_metrics(BASELINE):
            expected = upstream_verdicts(m)
            assert {{k: got[m["scenario_name"]][k] for k in expected}} == expected, m["scenario_name"]
        runner = CliRunner()
        summary = runner.invoke(app, ["summary", BASELINE, "-w", where])
        assert summary.stdout_bytes == (CONFORMANCE / BASELINE / "all_summary.txt").read_bytes()

        domain = wh.scenarios(run=BASELINE)["domain"][0]
        done = runner.invoke(app, ["rescore", "--policy", "answered", "--whitelist",
                                   f"{{domain}}=clean_exit,agent_answered", "-w", where])
        assert done.exit_code == 0, done.output
        scored = wh.scenarios(run=BASELINE, policy="answered").filter(pl.col("domain") == domain)
        assert scored["agent_answered"].drop_nulls().len() == scored.height
        for row in scored.iter_rows(named=True):  # listed: in the breakdown, and counted
            assert "agent_answered" in row["passed"] + row["failed"] + row["not_applicable"], row
        by_signal = wh.rates(by="signal", policy="answered")
        assert "agent_answered" in by_signal["signal"].to_list()
        print("ok")
    """)
    env = {**os.environ, "PYTHONPATH": f"{package}{os.pathsep}{REPO}", "PREFECT_API_URL": ""}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.stdout.strip().endswith("ok"), done.stderr[-3000:]
