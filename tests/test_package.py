"""scorelake as users install it: a wheel built from the checkout, installed into a fresh venv,
used from a directory outside the checkout; and a warehouse copied or moved elsewhere."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

import scorelake
from scorelake.cli import app
from tests.conftest import BASELINE, CONFORMANCE, REPO

pytestmark = [pytest.mark.slow]

runner = CliRunner()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """The wheel and the sdist, built the standard way (PEP 517, in an isolated build environment)."""
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(dist), str(REPO)],
                   check=True, capture_output=True, text=True, timeout=600)
    return {"wheel": next(dist.glob("scorelake-*.whl")), "sdist": next(dist.glob("scorelake-*.tar.gz"))}


def test_the_wheel_holds_one_package_named_scorelake_with_its_sql(built):
    names = zipfile.ZipFile(built["wheel"]).namelist()
    assert {n.split("/")[0] for n in names} == {"scorelake", f"{built['wheel'].name.split('-py3')[0]}.dist-info"}
    for part in ("scorelake/cli/_app.py", "scorelake/storage/_views.py",
                 "scorelake/sql/marts/domain_rates.sql", "scorelake/sql/queries/policy.sql"):
        assert part in names
    sdist = tarfile.open(built["sdist"]).getnames()
    assert any(n.endswith("sql/staging/stg_runs.sql") for n in sdist)


def fresh_venv(root: Path, wheel: Path) -> Path:
    """A new venv with only the wheel installed in it (its dependencies are taken from the test
    environment's site-packages, listed after the venv's own, rather than downloaded again)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    site = Path(subprocess.run([str(root / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(root / "bin" / "python"), "install", "--quiet",
                    "--no-deps", str(wheel)], check=True, capture_output=True, text=True, timeout=300)
    return root / "bin"


def test_installed_from_the_wheel_it_works_outside_the_checkout(built, tmp_path):
    bin_dir = fresh_venv(tmp_path / "venv", built["wheel"])
    work = tmp_path / "work"
    shutil.copytree(CONFORMANCE / BASELINE, work / "data" / "runs" / BASELINE)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "PREFECT_HOME": str(tmp_path / "prefect")}

    def run(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run([str(bin_dir / "scorelake"), *args], cwd=work, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done

    assert "1 ingested" in run("ingest").stderr
    assert (work / "data" / "warehouse" / "scorelake.duckdb").exists()
    assert "(policy recorded)" in run("rates").stdout
    assert run("summary", BASELINE).stdout == (CONFORMANCE / BASELINE / "all_summary.txt").read_text()
    assert run("sql", "select count(*) as n from scenario_scores", "-f", "csv").stdout == "n\n14\n"

    code = textwrap.dedent(f"""
        import importlib.util, scorelake
        wh = scorelake.open("data/warehouse")
        print(wh.scenarios(run="{BASELINE}").height, len(set(wh.rates()["domain"]) - {{"(all)"}}),
              importlib.util.find_spec("flows"), importlib.util.find_spec("transforms"),
              scorelake.__file__.startswith("{tmp_path / 'venv'}"))
    """)
    done = subprocess.run([str(bin_dir / "python"), "-c", code], cwd=work, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["14", "8", "None", "None", "True"]


def test_a_copied_or_moved_warehouse_works_where_it_lands(tmp_path):
    original = scorelake.open(tmp_path / "original")
    original.ingest(CONFORMANCE / BASELINE)
    copy = tmp_path / "copied"
    shutil.copytree(original.location, copy)
    wh = scorelake.open(copy)
    assert wh.summary(BASELINE) == (CONFORMANCE / BASELINE / "all_summary.txt").read_text()
    allowed = wh.sql("SELECT current_setting('allowed_paths') AS paths")["paths"][0]
    assert len(allowed) and all(path.startswith(str(copy)) for path in allowed)  # only its own files

    checked = runner.invoke(app, ["check", "-w", str(copy)])
    assert checked.exit_code == 0, checked.output  # consistent: a moved warehouse reads its own files
    assert "moved or copied here" in checked.output and "consistent" in checked.output

    moved = tmp_path / "moved"
    copy.rename(moved)
    for args in (["rates"], ["summary", BASELINE], ["history"], ["policies"], ["log"]):
        done = runner.invoke(app, [*args, "-w", str(moved)])
        assert done.exit_code == 0, (args, done.output)
    assert runner.invoke(app, ["compact", "-w", str(moved)]).exit_code == 0  # rebuilds the view database
    checked = runner.invoke(app, ["check", "-w", str(moved)])
    assert checked.exit_code == 0 and "consistent" in checked.output, checked.output
