"""Messages a user can act on, paths with spaces, degenerate data.

Oracles: the upstream wheel (separate venv) for what upstream does, the same model trained
from the costs given as a vector for the path with spaces.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from .scenarios import BASE

FATAL_LINES = textwrap.dedent("""
    import numpy as np, lightgbm as lgb
    X = np.random.default_rng(0).normal(size=(200, 3)); y = X[:, 0]
    try:
        lgb.train({"cegb_tradeoff": -1.0, "cegb_penalty_split": 1.0, "verbose": -1}, lgb.Dataset(X, y), 2)
    except lgb.basic.LightGBMError:
        pass
""")

CONSTANT_RESET = textwrap.dedent("""
    import json, numpy as np, lightgbm as lgb
    X = np.ones((100, 3)); y = np.arange(100.0)
    try:
        b = lgb.Booster({"verbose": -1}, lgb.Dataset(X, y))
        b.update(); b.reset_parameter({"learning_rate": 0.2}); b.update()
        print(json.dumps({"error": None, "pred": float(b.predict(X[:1])[0])}))
    except lgb.basic.LightGBMError as e:
        print(json.dumps({"error": str(e)}))
""")


def _run(python, code):
    proc = subprocess.run([str(python), "-c", code], capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.mark.parametrize("param", ["cegb_tradeoff", "cegb_penalty_split"])
@pytest.mark.parametrize("value", [-1.0, -1e-300, float("nan")])  # LightGBM reads "inf" as 1e308
def test_cegb_scalar_checks_name_the_value(lgb, param, value):
    X = np.random.default_rng(0).normal(size=(200, 3))
    params = dict(BASE, cegb_penalty_feature_lazy=[1.0, 1.0, 1.0], **{param: value})
    with pytest.raises(lgb.basic.LightGBMError) as info:
        lgb.train(params, lgb.Dataset(X, X[:, 0]), 2)
    msg = str(info.value)
    assert msg.startswith(f"{param} must be a finite number >= 0, got ")
    assert "Check failed" not in msg and ".cpp" not in msg


def test_a_fatal_is_printed_once_as_upstream(upstream_python):
    """One "[LightGBM] [Fatal]" line on stderr (then the Python exception), as the upstream wheel."""
    counts = []
    for python in (upstream_python, sys.executable):
        rc, _, err = _run(python, FATAL_LINES)
        assert rc == 0
        counts.append(err.count("[LightGBM] [Fatal]"))
    assert counts == [1, 1]


def test_cost_file_path_with_spaces(lgb, tmp_path):
    folder = tmp_path / "my cost dir"
    folder.mkdir()
    (folder / "costs file.csv").write_text("feature,lazy\n0,1\n1,5\n2,10\n")
    X = np.random.default_rng(0).normal(size=(300, 3))
    y = X[:, 0] + X[:, 2]

    def trees(**costs):
        b = lgb.train(dict(BASE, cegb_tradeoff=0.1, **costs), lgb.Dataset(X, y), 5)
        return b.model_to_string().split("parameters:")[0]

    ref = trees(cegb_penalty_feature_lazy=[1.0, 5.0, 10.0])
    assert trees(cegb_cost_file=str(folder / "costs file.csv")) == ref
    assert trees(cegb_cost_file=folder / "costs file.csv") == ref  # os.PathLike
    with pytest.raises(ValueError, match="'cegb_cost_file' parameter must be a path without"):
        trees(cegb_cost_file=str(tmp_path / 'a"b.csv'))


def test_cli_cost_file_path_with_spaces(lgb, tmp_path):
    import shutil

    exe = shutil.which("lightgbm")
    assert exe, "the fork's lightgbm CLI must be on PATH"
    folder = tmp_path / "my cost dir"
    folder.mkdir()
    (folder / "costs.csv").write_text("feature,lazy\n0,1\n1,5\n2,10\n")
    X = np.random.default_rng(0).normal(size=(300, 3))
    np.savetxt(tmp_path / "train.csv", np.column_stack([X[:, 0] + X[:, 2], X]), delimiter=",")
    conf = tmp_path / "train.conf"
    conf.write_text(f"data = {tmp_path / 'train.csv'}\nnum_iterations = 5\nverbose = -1\ncegb_tradeoff = 0.1\n"
                    f"cegb_cost_file = {folder / 'costs.csv'}\noutput_model = {tmp_path / 'model.txt'}\n")
    proc = subprocess.run([exe, f"config={conf}"], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-1000:]
    ref = lgb.train(dict(BASE, cegb_tradeoff=0.1, cegb_penalty_feature_lazy=[1.0, 5.0, 10.0], num_threads=0),
                    lgb.Dataset(X, X[:, 0] + X[:, 2]), 5)
    cli = lgb.Booster(model_file=str(tmp_path / "model.txt"))
    assert [t["tree_structure"].get("split_feature") for t in cli.dump_model()["tree_info"]] == \
        [t["tree_structure"].get("split_feature") for t in ref.dump_model()["tree_info"]]


def test_parameter_reset_on_constant_features(upstream_python):
    """Every feature constant: upstream's parameter reset fails an internal check; the fork trains on."""
    rc, out, err = _run(upstream_python, CONSTANT_RESET)  # stdout: LightGBM's warnings, then the JSON line
    assert rc == 0 and "Check failed: (train_data->num_features()) > (0)" in json.loads(out.splitlines()[-1])["error"]
    rc, out, err = _run(sys.executable, CONSTANT_RESET)
    assert rc == 0, err[-500:]
    assert json.loads(out.splitlines()[-1]) == {"error": None, "pred": pytest.approx(49.5)}
