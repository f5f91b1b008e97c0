"""Every third-party module the package imports is a declared dependency (pyproject's
``[project] dependencies``; an extra does not count: a plain ``pip install`` does not bring it), not
one that happens to arrive through another package. What a plain install can import, module by
module, is checked on a real install by ``tests/user_install.py`` (``.ci/run``)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions

from tests.conftest import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(extra: str | None = None) -> set[str]:
    """The distributions a plain install brings (or, with ``extra``, that extra's)."""
    given = PYPROJECT["project"]["optional-dependencies"][extra] if extra else PYPROJECT["project"]["dependencies"]
    return {_normal(re.split(r"[\s<>=!~;\[(]", d, maxsplit=1)[0]) for d in given}


def imported_modules() -> dict[str, list[str]]:
    """Each top-level module name the package's source imports (absolute imports) -> where."""
    found: dict[str, list[str]] = {}
    for folder in set(PYPROJECT["tool"]["setuptools"]["package-dir"].values()):
        for path in sorted((REPO / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.split(".")[0], []).append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


# The extras a path of the package needs, each imported only inside that path's functions, which say
# what to install when it is missing (flows.runtime.require_dask, pipeline._otlp.require_otlp, and
# the Inspect reader's refusal of a zstd archive)
OPTIONAL = {"dask": {"distributed", "prefect_dask"}, "inspect": {"zstandard"}, "otlp": {"opentelemetry"}}


def test_every_third_party_import_is_a_declared_dependency():
    """...or one of an optional path's extra (``OPTIONAL``), imported only inside its functions (a
    plain install imports every module)."""
    owners = packages_distributions()
    of = lambda module: {_normal(d) for d in owners.get(module, [])}  # noqa: E731
    modules = imported_modules()
    optional = {extra: {module for module in modules if of(module) & declared(extra)} for extra in OPTIONAL}
    assert optional == OPTIONAL
    extras = set().union(*OPTIONAL.values())
    undeclared = {module: where for module, where in modules.items()
                  if module not in sys.stdlib_module_names and module != "scorelake"
                  and not of(module) & declared() and module not in extras}
    assert not undeclared, f"imported but not declared in pyproject.toml's dependencies: {undeclared}"
    for folder in set(PYPROJECT["tool"]["setuptools"]["package-dir"].values()):
        for path in (REPO / folder).rglob("*.py"):
            for node in ast.parse(path.read_text()).body:  # a module's own statements: what importing it runs
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                assert not {n.split(".")[0] for n in names} & extras, f"{path}:{node.lineno} imports an extra's module"


def test_the_check_sees_the_imports_it_must_judge():
    modules = imported_modules()
    for module in ("polars", "duckdb", "deltalake", "prefect", "starlette", "uvicorn", "certifi", "arro3"):
        assert module in modules, module
    assert "numpy" not in modules and "pandas" not in modules  # the extras' modules are never imported at all


def test_every_package_of_the_source_tree_is_in_the_wheel():
    """A folder of modules that pyproject.toml does not list is left out of the wheel: the
    installed package then fails to import it (the checkout, an editable install, does not)."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed, roots = set(config["packages"]), config["package-dir"]
    found = set()
    for package, folder in roots.items():
        for init in (REPO / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(REPO / folder)
            found.add(".".join([package, *relative.parts]))
    assert found - listed == set()
