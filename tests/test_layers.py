"""The house reads top to bottom: each floor imports only the floors below it, and no modules import
each other in a circle (docs/development.md, "Layout of the code")."""

from __future__ import annotations

import ast
from pathlib import Path

import scorelake

PACKAGE = Path(scorelake.__file__).resolve().parent.parent
# Top floor first; a module belongs to the first floor one of whose prefixes it starts with.
FLOORS = (
    ("scorelake.cli", "scorelake.web", "scorelake.__main__"),
    ("scorelake._api", "scorelake.__init__", "scorelake._csv", "scorelake._sample"),
    ("scorelake._services",),
    ("scorelake.flows",),
    ("scorelake.pipeline",),
    ("scorelake.judge_client", "scorelake.present"),
    ("scorelake.storage",),
    # transforms/: pure transforms and the source readers, wholly below the warehouse
    ("scorelake.transforms.sources", "scorelake.transforms.scoring", "scorelake.transforms.judging",
     "scorelake.transforms.analysis", "scorelake.transforms.voice"),
    ("scorelake.transforms.columns", "scorelake.transforms.results", "scorelake.transforms.names",
     "scorelake.transforms.registry", "scorelake.transforms.signal_rules", "scorelake.transforms.errors",
     "scorelake.transforms.keys",
     "scorelake.transforms.__init__"),
)


def modules() -> dict[str, Path]:
    """Every module of the installed package by dotted name (a package by its ``__init__``)."""
    import scorelake.flows
    import scorelake.transforms

    roots = {"scorelake": Path(scorelake.__file__).parent, "scorelake.flows": Path(scorelake.flows.__file__).parent,
             "scorelake.transforms": Path(scorelake.transforms.__file__).parent}
    found = {}
    for prefix, root in roots.items():
        for path in root.rglob("*.py"):
            rel = path.relative_to(root).with_suffix("")
            if prefix == "scorelake" and rel.parts[0] in ("flows", "transforms"):
                continue
            found[".".join((prefix, *rel.parts))] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path], top_level_only: bool) -> set[str]:
    """The package's modules ``name`` imports (``from pkg import mod`` resolved to the module)."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else ast.walk(tree)
    found = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("scorelake"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in known or f"{sub}.__init__" in known else node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("scorelake")}
    resolved = set()
    for target in found:
        resolved.add(target if target in known else f"{target}.__init__")
    return {t for t in resolved if t in known and t != name}


def floor(name: str) -> int:
    bare = name.removesuffix(".__init__")
    if bare == "scorelake":
        return 1
    for index, prefixes in enumerate(FLOORS):
        if any(bare == p or bare.startswith(p + ".") or name == p for p in prefixes):
            return index
    raise AssertionError(f"{name} is on no floor")


def test_every_import_points_down_or_along_its_floor():
    known = modules()
    upward = [f"{name} (floor {floor(name)}) imports {target} (floor {floor(target)})"
              for name, path in known.items() for target in imports(name, path, known, top_level_only=False)
              if floor(target) < floor(name)]
    assert upward == []


def test_no_modules_import_each_other_in_a_circle():
    known = modules()
    graph = {name: imports(name, path, known, top_level_only=True) for name, path in known.items()}
    # a package's __init__ only hands its modules' names on: an arrow into it stands for them
    circles, index, low, stack, on_stack, counter = [], {}, {}, [], set(), [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert circles == []
