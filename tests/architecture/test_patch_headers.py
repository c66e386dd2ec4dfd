"""The header of every fork patch speaks one vocabulary: What, Why, Drop when, Forwarded with a reason."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PATCHES = sorted((Path(__file__).parents[2] / "lightgbm-cegb" / "patches").glob("[0-9][0-9][0-9][0-9]-*.patch"))
#: ``Forwarded: no (why it is not sent)``, ``Forwarded: not-needed (why upstream has no use for it)``
#: or the address of the upstream pull request.
FORWARDED = re.compile(r"^Forwarded: (?:(?:no|not-needed) \(\S.*\)|https://\S+)$")
#: A number in the project's own tracker ("issue N item M") means nothing to a reader of the series;
#: upstream references keep their repository ("microsoft/LightGBM#4591", "upstream issues #4286").
TRACKER = re.compile(r"lightgbm-cegb (?:issue|hostile-input)|\bissue \d+|\bitems? \d+", re.IGNORECASE)


def _header(path: Path) -> str:
    """The commit message of a patch: everything before the diffstat's ``---`` line."""
    text = path.read_text()
    return text[: text.index("\n---\n")]


def _field_lines(header: str, field: str) -> list[str]:
    return [line for line in header.splitlines() if line.startswith(f"{field}:")]


def test_the_series_is_found() -> None:
    assert len(PATCHES) >= 27


@pytest.mark.parametrize("path", PATCHES, ids=lambda p: p.name[:4])
def test_header_has_each_field_once(path: Path) -> None:
    header = _header(path)
    for field in ("What", "Why", "Drop when", "Forwarded"):
        assert len(_field_lines(header, field)) == 1, f"{path.name}: expected one '{field}:' line"
    assert "When to drop:" not in header, f"{path.name}: the series says 'Drop when:'"


@pytest.mark.parametrize("path", PATCHES, ids=lambda p: p.name[:4])
def test_forwarded_gives_a_reason(path: Path) -> None:
    (line,) = _field_lines(_header(path), "Forwarded")
    expected = "'Forwarded: no (reason)', 'Forwarded: not-needed (reason)' or a URL"
    assert FORWARDED.match(line), f"{path.name}: {line!r}: expected {expected}"


@pytest.mark.parametrize("path", PATCHES, ids=lambda p: p.name[:4])
def test_header_cites_no_tracker_number(path: Path) -> None:
    found = TRACKER.findall(_header(path))
    assert found == [], f"{path.name}: describe the behaviour instead of {found}"


@pytest.mark.parametrize(
    "line,ok",
    [
        ("Forwarded: no (upstreamable: a segfault of upstream 4.7.0; not sent yet)", True),
        ("Forwarded: not-needed (fork-only feature)", True),
        ("Forwarded: https://github.com/microsoft/LightGBM/pull/1", True),
        ("Forwarded: no", False),
        ("Forwarded: not-needed", False),
        ("Forwarded: not-yet", False),
        ("Forwarded: no ()", False),
    ],
)
def test_forwarded_rule_refuses_a_bare_value(line: str, ok: bool) -> None:
    assert bool(FORWARDED.match(line)) is ok
