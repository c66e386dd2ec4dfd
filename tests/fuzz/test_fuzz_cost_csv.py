"""The two readers of a costs CSV accept and refuse the same files, with the same meaning.

The Python reader ``FeatureCosts.from_csv`` and the fork's C++ reader behind
``cegb_cost_file`` read one format (docs/costs.md). Each draw builds a sloppy or hostile CSV text
(documented columns in random order, case and spacing, repeated, unknown or missing columns,
names, indices out of range, repeated features, numbers with signs, NaN, inf, exponents,
garbage, a BOM, CRLF, blank lines, quoted cells, trailing commas, long lines, bytes that are not
UTF-8, the empty file). Properties: neither reader raises anything but its documented error;
both accept or both refuse; when both accept, ``cegb_cost_file=path`` trains the trees that
``cegb_cost_file=FeatureCosts.from_csv(path)`` trains; the file is left as it was.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

lgb = pytest.importorskip("lightgbm")
if "+cegb" not in lgb.__version__:  # pragma: no cover - the suite runs on the fork
    pytest.skip("needs the lightgbm-cegb fork", allow_module_level=True)

from budget_extras import FeatureCosts  # noqa: E402

SETTINGS = settings(deadline=None, max_examples=500, derandomize=True, database=None,
                    phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow])

NAMES = ["f0", "f1", "f2", "f3"]
_rng = np.random.default_rng(11)
X = _rng.normal(size=(200, len(NAMES)))
Y = X[:, 0] + 0.5 * X[:, 1] - 0.3 * X[:, 2] * X[:, 3] + 0.1 * _rng.normal(size=200)
COLUMNS = ["feature", "cost", "lazy", "coupled", "split", "group", "group_cost", "tree"]
NUMBERS = ["0", "1", "2.5", "0.5", "1e3", "1E-2", "-1", "-0", "+3", "nan", "NaN", "inf", "-inf",
           "", " 2 ", "abc", "1,5", "0x10", "1e400", "3.", ".5", "1 2", "\uff11"]
FEATURES = ["f0", "f1", "f2", "f3", "F0", " f1 ", "0", "1", "2", "3", "4", "-1", "99", "x", "",
            "1.0", "+1", "f 0", "é"]


CLEAN_NUMBERS = ["0", "1", "2.5", "0.5", "1e3", "1E-2", "", " 2 ", "+3", "3.", ".5", "-0"]


def _cell(draw: st.DrawFn, column: str, clean: bool) -> str:
    if clean and column not in ("feature", "group"):
        return draw(st.sampled_from(CLEAN_NUMBERS))
    if column == "feature":
        return draw(st.sampled_from(FEATURES))
    if column == "group":
        return draw(st.sampled_from(["", "-1", "a", "b", "0", "1", "A", " a "]))
    return draw(st.sampled_from(NUMBERS))


def _spell(draw: st.DrawFn, column: str, clean: bool) -> str:
    name = column if clean else draw(st.sampled_from([column, column.upper(), column.title()]))
    return draw(st.sampled_from(["", " ", "  "])) + name + draw(st.sampled_from(["", " ", "\t"]))


@st.composite
def csv_texts(draw: st.DrawFn) -> bytes:
    if draw(st.integers(0, 30)) == 0:
        return b""
    clean = draw(st.booleans())  # a clean draw holds a file that both readers should accept
    columns = ["feature"] if clean or draw(st.integers(0, 8)) else []
    columns += draw(st.lists(st.sampled_from(COLUMNS[1:]), max_size=4, unique=clean))
    if clean and "cost" in columns and "lazy" in columns:
        columns.remove("cost")
    if not clean and draw(st.integers(0, 6)) == 0:
        columns.append(draw(st.sampled_from(["weight", "x", "", "cost2"])))
    columns = draw(st.permutations(columns))
    header = [_spell(draw, c, clean) if draw(st.integers(0, 3)) == 0 else c for c in columns]
    lines = [",".join(header)]
    clean_features = draw(st.permutations(
        [draw(st.sampled_from([n, str(i)])) for i, n in enumerate(NAMES)]))
    for row in range(draw(st.integers(0, 6 if not clean else len(NAMES)))):
        cells = [_cell(draw, c, clean) for c in columns]
        if clean:
            cells[columns.index("feature")] = clean_features[row]
        mutation = draw(st.integers(0, 12 if not clean else 40))
        if mutation == 0:
            cells.append("")  # trailing comma
        elif mutation == 1 and cells:
            cells.pop()
        elif mutation == 2 and cells:
            cells[0] = '"' + cells[0] + '"'
        elif mutation == 3 and cells:
            cells[-1] = cells[-1] + " " * 5000 + "1"
        lines.append(",".join(cells))
        if draw(st.integers(0, 8)) == 0:
            lines.append(draw(st.sampled_from(["", "   ", "\t"])))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    text = eol.join(lines) + draw(st.sampled_from(["", eol, eol + eol]))
    data = text.encode("utf-8")
    extra = draw(st.integers(0, 10))
    if extra == 0:
        data = b"\xef\xbb\xbf" + data
    elif extra == 1:
        data = data.replace(b"f1", b"f\xff1", 1)
    elif extra == 2:
        data = data + b"\x00"
    elif extra == 3:
        data = data.replace(b"\n", b"\r")  # old Mac line ends
    elif extra == 4:
        data = data.replace(b"feature", b'"feature"', 1)  # a quoted header cell
    elif extra == 5:
        data = data + b"0,1\n"  # feature 0 again, by index, after its name
    elif extra == 6:
        data = b"# costs\n" + data
    return data


def _python(path: str) -> tuple[bool, FeatureCosts | None, str]:
    try:
        return True, FeatureCosts.from_csv(path, feature_names=NAMES), ""
    except (ValueError, TypeError) as e:
        return False, None, f"{type(e).__name__}: {e}"


def _train(cost_file) -> str:
    params = {"cegb_cost_file": cost_file, "cegb_tradeoff": 0.1, "verbose": -1, "num_threads": 1,
              "deterministic": True, "seed": 1, "num_leaves": 7, "min_data_in_leaf": 5}
    b = lgb.train(params, lgb.Dataset(X, Y, feature_name=NAMES), 3)
    return b.model_to_string().split("parameters:")[0]


def _fork(path: str) -> tuple[bool, str]:
    try:
        return True, _train(path)
    except lgb.basic.LightGBMError as e:
        return False, f"LightGBMError: {e}"


def check(data: bytes, tmp_path_factory) -> None:
    d = tmp_path_factory.mktemp("csv")
    path = str(d / "costs.csv")
    with open(path, "wb") as f:
        f.write(data)
    py_ok, costs, py_msg = _python(path)
    fork_ok, fork_out = _fork(path)
    with open(path, "rb") as f:
        assert f.read() == data
    assert py_ok == fork_ok, (data, py_msg, fork_out)
    if py_ok:
        assert fork_out == _train(costs), data


@SETTINGS
@given(data=csv_texts())
def test_the_two_readers_agree(data: bytes, tmp_path_factory) -> None:
    check(data, tmp_path_factory)
