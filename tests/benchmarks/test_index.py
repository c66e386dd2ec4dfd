"""benchmarks/README.md indexes the folder: every script, its results files and the doc sections of its numbers."""

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
#: ``[page.md](../docs/page.md) § Section title`` in the "Recorded in" column.
DOC_REF = re.compile(r"\]\(\.\./(docs/[\w.-]+\.md)\) § ([^;]+)")
RESULT_NAME = re.compile(r"`([\w.-]+\.jsonl?|[\w.-]+/)`( \(written when run\))?")


@dataclass(frozen=True)
class Row:
    script: str
    area: str
    command: str
    results: str
    recorded: str


def _rows(text: str) -> list[Row]:
    """The rows of the index table (lines ``| `script.py` | area | ... |``)."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 6, f"benchmarks/README.md: a row needs 6 cells, got {len(cells)}: {line[:80]}"
        rows.append(Row(cells[0].strip("`"), cells[1], cells[3], cells[4], cells[5]))
    return rows


ROWS = _rows(INDEX.read_text())
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py"))


def _headings(page: Path) -> list[str]:
    """The heading texts of a markdown page, outside fenced blocks."""
    out, fenced = [], False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#+ ", line):
            out.append(line.lstrip("#").strip())
    return out


def _importers(module: str) -> set[str]:
    """The benchmark scripts whose import statements name ``module``."""
    found = set()
    for path in BENCH.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            if module in names:
                found.add(path.name)
    return found


def test_the_parser_reads_every_kind_of_row() -> None:
    rows = _rows(
        "| Script | ... |\n|---|\n"
        "| `a.py` | helper | x | imported by `b.py` | none | none (helper) |\n"
        "| `b.py` | qwyc | x | `python benchmarks/b.py` | `b.json`; `b/` (written when run) "
        "| [qwyc.md](../docs/qwyc.md) § Results; [cstc.md](../docs/cstc.md) § Benchmark |\n"
    )
    assert [r.script for r in rows] == ["a.py", "b.py"]
    assert RESULT_NAME.findall(rows[1].results) == [("b.json", ""), ("b/", " (written when run)")]
    assert DOC_REF.findall(rows[1].recorded) == [("docs/qwyc.md", "Results"), ("docs/cstc.md", "Benchmark")]


def test_every_script_is_in_the_index() -> None:
    missing = sorted(set(SCRIPTS) - {r.script for r in ROWS})
    assert missing == [], f"benchmarks/README.md has no row for {missing}"


def test_the_index_names_only_existing_scripts_once() -> None:
    named = [r.script for r in ROWS]
    assert sorted(set(named) - set(SCRIPTS)) == [], "benchmarks/README.md names scripts that do not exist"
    assert len(named) == len(set(named)), f"benchmarks/README.md lists a script twice: {sorted(named)}"


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
    refs = DOC_REF.findall(row.recorded)
    assert refs or row.area == "helper" or "not recorded" in row.recorded, (
        f"{row.script}: name the doc section of its numbers or say 'not recorded', got {row.recorded!r}"
    )
    for page, section in refs:
        headings = _headings(ROOT / page)
        assert any(h.startswith(section.strip()) for h in headings), f"{row.script}: {page} has no section {section!r}"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.script)
def test_commands_run_their_script(row: Row) -> None:
    if row.area == "helper":
        named = set(re.findall(r"`([\w.-]+\.py)`", row.command))
        assert named == _importers(row.script.removesuffix(".py")), f"{row.script}: the importers listed are wrong"
        return
    assert (BENCH / row.script).exists(), f"benchmarks/{row.script} does not exist"
    assert f"`python benchmarks/{row.script}" in row.command, f"{row.script}: the command must run the script"
    source = (BENCH / row.script).read_text()
    if re.search(r"\"--data-dir\"[^)]*required=True", source):
        assert "--data-dir ../shared/data" in row.command, f"{row.script}: its command needs --data-dir"
