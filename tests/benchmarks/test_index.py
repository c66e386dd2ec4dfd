"""benchmarks/README.md indexes the area folders: every script, its command, results files and doc sections."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
RESULTS = BENCH / "results"
INDEX = BENCH / "README.md"
AREAS = ("cegb", "train_to_budget", "qwyc", "budgetprune", "adapt", "cstc", "core")
#: ``[page.md § Title](../docs/page.md#anchor)`` in the "Recorded in" column (and the prose).
DOC_LINK = re.compile(r"\]\(\.\./(docs/[\w.-]+\.md)#([\w-]+)\)")
RESULT_NAME = re.compile(r"`([\w.-]+\.jsonl?|[\w.-]+/)`( \(written when run\))?")
#: A benchmark path or ``-m`` module named in prose or code: ``benchmarks/qwyc/qwyc.py``, ``benchmarks.qwyc.qwyc``.
CITED_PATH = re.compile(r"(?<![\w/.])benchmarks/((?:[\w]+/)*[\w]+\.py)")
CITED_MODULE = re.compile(r"-m (benchmarks(?:\.\w+)+)")


@dataclass(frozen=True)
class Row:
    script: str
    area: str
    command: str
    results: str
    recorded: str


def _rows(text: str) -> list[Row]:
    """The rows of the index table (lines ``| `area/script.py` | area | ... |`` below ``| Script |``)."""
    rows = []
    for line in text.split("\n| Script |", 1)[1].splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 6, f"benchmarks/README.md: a row needs 6 cells, got {len(cells)}: {line[:80]}"
        rows.append(Row(cells[0].strip("`"), cells[1], cells[3], cells[4], cells[5]))
    return rows


def _scripts(bench: Path) -> list[str]:
    """Every Python file under ``bench`` but the package markers, as paths relative to it."""
    return sorted(p.relative_to(bench).as_posix() for p in bench.rglob("*.py") if p.name != "__init__.py")


def _module(script: str) -> str:
    """``qwyc/qwyc.py`` -> ``benchmarks.qwyc.qwyc``."""
    return "benchmarks." + script.removesuffix(".py").replace("/", ".")


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    """The anchors of a markdown page's headings, outside fenced blocks."""
    out, fenced = set(), False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#+ ", line):
            out.add(_slug(line.lstrip("#")))
    return out


def _imported(path: Path) -> set[str]:
    """The modules a file imports, ``from a.b import c`` counted as ``a.b`` and ``a.b.c``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return found


def _calls(path: Path) -> set[str]:
    """The names of the functions a file calls by a bare name."""
    tree = ast.parse(path.read_text())
    return {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


ROWS = _rows(INDEX.read_text())
SCRIPTS = _scripts(BENCH)


def test_the_parser_reads_every_kind_of_row() -> None:
    rows = _rows(
        "| `not/a_row.py` | a table above the index |\n\n| Script | ... |\n|---|\n"
        "| `_a.py` | helper | x | imported by `qwyc/b.py` | none | none (helper) |\n"
        "| `qwyc/b.py` | qwyc | x | `python -m benchmarks.qwyc.b` | `b.json`; `b/` (written when run) "
        "| [qwyc.md § Results](../docs/qwyc.md#results); "
        "[cstc.md § B](../docs/cstc.md#benchmark-benchmarkscstccstcpy) |\n"
    )
    assert [r.script for r in rows] == ["_a.py", "qwyc/b.py"]
    assert RESULT_NAME.findall(rows[1].results) == [("b.json", ""), ("b/", " (written when run)")]
    assert DOC_LINK.findall(rows[1].recorded) == [
        ("docs/qwyc.md", "results"), ("docs/cstc.md", "benchmark-benchmarkscstccstcpy")]
    assert _slug(" Benchmark (`benchmarks/cstc/cstc.py`)") == "benchmark-benchmarkscstccstcpy"
    assert _slug("Fast search: the learner's own budget") == "fast-search-the-learners-own-budget"


def test_the_script_list_sees_area_folders(tmp_path: Path) -> None:
    for name in ("__init__.py", "_runner.py", "qwyc/__init__.py", "qwyc/qwyc.py", "train_to_budget/_data.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert _scripts(tmp_path) == ["_runner.py", "qwyc/qwyc.py", "train_to_budget/_data.py"]
    assert _module("qwyc/qwyc.py") == "benchmarks.qwyc.qwyc"


def test_scripts_live_in_area_folders() -> None:
    top = sorted(p.name for p in BENCH.glob("*.py"))
    assert top == ["__init__.py", "_runner.py"], f"benchmarks/ holds only the runner; move {top} to an area folder"
    folders = sorted(p.name for p in BENCH.iterdir() if p.is_dir() and p.name not in {"results", "__pycache__"})
    assert folders == sorted(AREAS), f"area folders {folders}, expected {sorted(AREAS)}"
    for area in AREAS:
        assert (BENCH / area / "__init__.py").exists(), f"benchmarks/{area}/ needs an __init__.py (run with -m)"


def test_every_script_is_in_the_index() -> None:
    missing = sorted(set(SCRIPTS) - {r.script for r in ROWS})
    assert missing == [], f"benchmarks/README.md has no row for {missing}"


def test_the_index_names_only_existing_scripts_once() -> None:
    named = [r.script for r in ROWS]
    assert sorted(set(named) - set(SCRIPTS)) == [], "benchmarks/README.md names scripts that do not exist"
    assert len(named) == len(set(named)), f"benchmarks/README.md lists a script twice: {sorted(named)}"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.script)
def test_the_area_is_the_folder(row: Row) -> None:
    folder, _, name = row.script.rpartition("/")
    if name.startswith("_"):
        assert row.area == "helper", f"{row.script}: a file named _* is a helper"
    else:
        assert row.area == folder, f"{row.script}: area {row.area!r}, its folder is {folder!r}"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.script)
def test_named_results_files_exist(row: Row) -> None:
    for name, on_demand in RESULT_NAME.findall(row.results):
        if not on_demand:
            assert (RESULTS / name).exists(), f"{row.script}: benchmarks/results/{name} does not exist"
    for path in re.findall(r"`(docs/[\w./-]+)`", row.results):
        assert (ROOT / path).exists(), f"{row.script}: {path} does not exist"


def test_every_results_file_has_a_script() -> None:
    claimed = {name for r in ROWS for name, _ in RESULT_NAME.findall(r.results)}
    files = sorted(p.name for p in RESULTS.iterdir() if p.is_file() and p.suffix in {".json", ".jsonl"})
    assert sorted(set(files) - claimed) == [], "results files no row of benchmarks/README.md claims"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.script)
def test_recorded_sections_exist(row: Row) -> None:
    links = DOC_LINK.findall(row.recorded)
    assert links or row.area == "helper" or "not recorded" in row.recorded, (
        f"{row.script}: link the doc section of its numbers or say 'not recorded', got {row.recorded!r}"
    )
    for page, anchor in links:
        assert anchor in _anchors(ROOT / page), f"{row.script}: {page} has no section #{anchor}"


def test_section_links_in_the_prose_exist() -> None:
    for page, anchor in DOC_LINK.findall(INDEX.read_text().split("| Script |", 1)[0]):
        assert anchor in _anchors(ROOT / page), f"benchmarks/README.md: {page} has no section #{anchor}"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.script)
def test_commands_run_their_script(row: Row) -> None:
    if row.area == "helper":
        named = set(re.findall(r"`([\w/]+\.py)`", row.command))
        module = _module(row.script)
        importers = {s for s in SCRIPTS if s != row.script and module in _imported(BENCH / s)}
        assert named == importers, f"{row.script}: the importers listed are wrong"
        return
    assert f"`python -m {_module(row.script)}" in row.command, f"{row.script}: the command must run its module"
    source = (BENCH / row.script).read_text()
    takes_data = "script_parser(" in source and "data=False" not in source
    if takes_data or re.search(r"\"--data-dir\"[^)]*required=True", source):
        assert "--data-dir ../shared/data" in row.command, f"{row.script}: its command needs --data-dir"


def test_every_script_takes_the_runner_options() -> None:
    """Every script parses its options with the runner's script_parser/common_parser (--data-dir, --quick, --out)."""
    own = {s for s in SCRIPTS if not s.rpartition("/")[2].startswith("_")
           and not {"script_parser", "common_parser"} & _calls(BENCH / s)}
    assert own == set(), "these scripts parse their own command line, not through benchmarks/_runner.py"


def test_cited_benchmark_paths_exist() -> None:
    """Docs, READMEs, tests and the scripts cite benchmark files and modules that exist."""
    files = [ROOT / "README.md", INDEX, *(ROOT / "docs").glob("*.md"), *(ROOT / "tests").rglob("*.py"),
             *BENCH.rglob("*.py"), *(ROOT / "docs" / "img").glob("*.py")]
    stale = []
    for f in files:
        text = f.read_text()
        if f == Path(__file__):
            continue
        stale += [f"{f.relative_to(ROOT)}: benchmarks/{p}" for p in CITED_PATH.findall(text)
                  if not (BENCH / p).exists()]
        stale += [f"{f.relative_to(ROOT)}: {m}" for m in CITED_MODULE.findall(text)
                  if not (ROOT / (m.replace(".", "/") + ".py")).exists() and "<" not in m]
    assert stale == [], f"citations of benchmark files that do not exist: {stale}"
