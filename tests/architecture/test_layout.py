"""The package layout of docs/architecture.md, checked against the files and on the import statements."""

from __future__ import annotations

import ast
import importlib
import re
import warnings
from pathlib import Path

import pytest

import budget_extras

PKG = Path(budget_extras.__file__).parent
DOCS = Path(__file__).resolve().parents[2] / "docs"
#: Which subpackages each subpackage may import (besides itself). Dependencies point one way:
#: cli -> methods -> core.
#: ``plotting`` imports nothing of budget_extras (it reads results by their attributes), so the
#: results' ``plot()`` / ``to_frame()`` methods in core and cegb may delegate to it.
ALLOWED = {
    "plotting": set(),
    "core": {"plotting"},
    "datasets": {"core"},
    "budgetprune": {"core"},
    "qwyc": {"core"},
    "adapt": {"core"},
    "cstc": {"core"},
    "cegb": {"core", "plotting"},
    "cli": {"core", "budgetprune", "qwyc", "adapt", "cstc", "cegb", "datasets", "plotting", ""},
    "demo": {"core", "datasets", "cegb", "qwyc", "plotting"},  # the main job sits on top, as cli does
    "_compat": set(),
}
#: Leaf modules every subpackage may import: the version, and LightGBM's private API behind one door.
SHARED = {"__version__", "_compat"}


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every budget_extras module an import statement of ``path`` names, resolved to absolute form."""
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    package = parts[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            names = [mod] if node.module else [f"{mod}.{a.name}" for a in node.names]
            out += [(n, node.lineno) for n in names]
        elif isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
    return [(n, line) for n, line in out if n == "budget_extras" or n.startswith("budget_extras.")]


def _subpackage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


FILES = sorted(p for p in PKG.rglob("*.py") if p.name != "__init__.py" or p.parent != PKG)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PKG)))
def test_dependencies_point_one_way(path: Path) -> None:
    rel = path.relative_to(PKG)
    own = rel.parts[0] if len(rel.parts) > 1 else rel.stem
    for module, line in _imports(path):
        sub = _subpackage(module)
        if sub == own or sub in SHARED:
            continue
        assert sub in ALLOWED[own], f"{rel}:{line} imports {module}: {own} may import only {sorted(ALLOWED[own])}"


def test_no_flat_private_modules_left() -> None:
    flat = sorted(p.name for p in PKG.glob("_*.py") if p.name not in {"__init__.py", "_compat.py"})
    assert flat == [], f"modules belong in a subpackage: {flat}"


def test_top_level_exports_user_names_only() -> None:
    assert set(budget_extras.__all__) >= {"TreeEnsemble", "FeatureCosts", "cost_report", "BudgetPrune", "QWYC",
                                           "AdaptGBRT", "CSTC", "train_to_budget"}
    for name in ("lp_highs", "build_problem", "solve_primal_dual", "QWYCPlan"):
        assert name not in budget_extras.__all__


#: Building blocks public in their subpackage only (never served from the top level).
SUBPACKAGE_NAMES = {
    "AdaptLin": "adapt",
    "L1GateBaseline": "adapt",
    "CSTCCostReport": "cstc",
    "CSTCResult": "cstc",
    "PruneProblem": "budgetprune",
    "PruneResult": "budgetprune",
    "FeatureDropResult": "budgetprune",
    "build_problem": "budgetprune",
    "lp_highs": "budgetprune",
    "solve_primal_dual": "budgetprune",
    "QWYCPlan": "qwyc",
    "read_qwyc_plan": "qwyc",
    "write_qwyc_plan": "qwyc",
}


@pytest.mark.parametrize("name,sub", sorted(SUBPACKAGE_NAMES.items()))
def test_building_blocks_live_in_their_subpackage_only(name: str, sub: str) -> None:
    module = importlib.import_module(f"budget_extras.{sub}")
    assert name in module.__all__ and getattr(module, name) is not None
    assert not hasattr(budget_extras, name)


def test_unknown_attribute_is_an_attribute_error() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="no_such_name"):
            budget_extras.no_such_name  # noqa: B018


def _core_graph() -> dict[str, set[str]]:
    """Module -> the core modules it imports (every import statement: top level, local, TYPE_CHECKING)."""
    core = PKG / "core"
    graph: dict[str, set[str]] = {}
    for path in sorted(core.glob("*.py")):
        mod = f"budget_extras.core.{path.stem}" if path.stem != "__init__" else "budget_extras.core"
        deps = set()
        for name, _ in _imports(path):
            parts = name.split(".")
            # `from . import _x` names budget_extras.core._x; `from ._x import y` names budget_extras.core._x
            while parts and ".".join(parts) not in {f"budget_extras.core.{p.stem}" for p in core.glob("*.py")}:
                parts.pop()
            if len(parts) == 3 and ".".join(parts) != mod:
                deps.add(".".join(parts))
        graph[mod] = deps
    return graph


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_find_cycle_finds_one() -> None:
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_core_imports_have_no_cycle() -> None:
    # the representation knows nothing of the predictor and exporter; they import it
    graph = _core_graph()
    assert "budget_extras.core._predict" in graph["budget_extras.core._ensemble"]
    assert _find_cycle(graph) is None, " -> ".join(_find_cycle(graph) or [])


def test_representation_imports_no_algorithm() -> None:
    deps = _core_graph()["budget_extras.core._representation"]
    allowed = {"budget_extras.core._builder", "budget_extras.core._parse", "budget_extras.core._parse_dump",
               "budget_extras.core._validation"}
    assert deps <= allowed, sorted(deps)


def test_lightgbm_private_api_only_in_compat() -> None:
    # LightGBM's private names (lightgbm.basic._ConfigAliases, _LIB, ...) go through budget_extras._compat
    offenders = []
    for path in FILES:
        if path.name == "_compat.py" and path.parent == PKG:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lightgbm"):
                offenders += [f"{path.relative_to(PKG)}:{node.lineno}" for a in node.names if a.name.startswith("_")]
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                base = node.value
                if isinstance(base, ast.Attribute) and base.attr == "basic":
                    offenders.append(f"{path.relative_to(PKG)}:{node.lineno}")
    assert offenders == [], f"use budget_extras._compat instead: {offenders}"


#: One entry of the layout block: the tree drawing (``├── ``, ``└── ``, ``│   ``), then the name.
ENTRY = re.compile(r"^((?:[│ ]   )*)[├└]── (\S+)")


def _layout_block(text: str) -> str:
    """The fenced block of a page that draws the package (its first line is ``budget_extras/``)."""
    blocks = re.findall(r"^```[^\n]*\n(budget_extras/\n.*?)^```", text, re.M | re.S)
    assert len(blocks) <= 1, "one layout block per page"
    return blocks[0] if blocks else ""


def _listed_paths(block: str) -> list[str]:
    """Every path the tree drawing names, relative to the package (``core/``, ``core/_parse.py``, ...)."""
    stack: list[str] = []
    paths = []
    for line in block.splitlines()[1:]:
        m = ENTRY.match(line)
        if not m:
            continue  # a description's continuation line
        depth = len(m.group(1)) // 4
        stack[depth:] = [m.group(2)]
        paths.append("".join(stack))
    return paths


def _package_paths() -> list[str]:
    """Every module and subpackage of budget_extras (a subpackage's ``__init__.py`` is its folder)."""
    files = [p.relative_to(PKG) for p in PKG.rglob("*.py")]
    mods = [p.as_posix() for p in files if p.name != "__init__.py" or p.parent == Path(".")]
    subs = [f"{p.parent.as_posix()}/" for p in files if p.name == "__init__.py" and p.parent != Path(".")]
    return sorted(mods + subs)


def test_layout_drawing_is_read_as_paths() -> None:
    block = "\n".join(
        [
            "budget_extras/",
            "├── core/   the core",
            "│   ├── _a.py   a",
            "│   │           more",
            "│   └── _b.py",
            "└── demo.py",
        ]
    )
    assert _listed_paths(block) == ["core/", "core/_a.py", "core/_b.py", "demo.py"]


def test_architecture_layout_lists_every_module_once() -> None:
    listed = _listed_paths(_layout_block((DOCS / "architecture.md").read_text(encoding="utf-8")))
    twice = sorted({p for p in listed if listed.count(p) > 1})
    assert twice == [], f"docs/architecture.md lists {twice} more than once"
    actual = _package_paths()
    assert sorted(listed) == actual, (
        f"docs/architecture.md's layout: missing {sorted(set(actual) - set(listed))}, "
        f"stale {sorted(set(listed) - set(actual))}"
    )


def test_layout_is_drawn_once_and_linked_elsewhere() -> None:
    pages = {p.name: p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md"))}
    drawn = [name for name, text in pages.items() if _layout_block(text)]
    assert drawn == ["architecture.md"], f"the package layout is drawn in {drawn}; draw it in architecture.md only"
    assert "](architecture.md#package-layout)" in pages["budget_extras_contract.md"]
