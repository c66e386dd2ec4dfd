"""Parity with upstream LightGBM 4.7.0: with CEGB off, and with CEGB on in configurations no fix
changes, the fork saves the same model files (ignoring only the version line) and predicts the
same, through the Python API and through the CLI."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from . import parity_cases

HERE = Path(__file__).resolve().parent


def _strip_version(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("version=")]


@pytest.fixture(scope="module")
def upstream_models(upstream_python, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("upstream_models")
    subprocess.run([str(upstream_python), str(HERE / "parity_cases.py"), str(out)], check=True, timeout=900)
    return out


@pytest.mark.parametrize("case", list(parity_cases.CASES))
def test_model_files_identical(lgb, upstream_models, case):
    model, pred, data = parity_cases.train_case(lgb, case)
    upstream_text = (upstream_models / f"{case}.model.txt").read_text()
    assert _strip_version(model) == _strip_version(upstream_text)
    np.testing.assert_array_equal(pred, np.load(upstream_models / f"{case}.pred.npy"))
    # the upstream file loads in the fork and predicts the same
    np.testing.assert_array_equal(lgb.Booster(model_str=upstream_text).predict(data["X"], raw_score=True), pred)


def _cli() -> str:
    exe = shutil.which("lightgbm")
    if exe is None:
        pytest.fail("the fork's `lightgbm` CLI is not on PATH: `bash run.sh test` installs it")
    return exe


def _write_csv(path: Path, X: np.ndarray, y: np.ndarray) -> None:
    np.savetxt(path, np.column_stack([y, X]), delimiter=",", fmt="%.17g")


@pytest.mark.parametrize("case", ["regression", "binary", "multiclass", "cegb_lazy", "missing"])
def test_cli_train_and_predict_agree_with_python(lgb, tmp_path, case):
    kind, params, rounds = parity_cases.CASES[case]
    data = parity_cases._data(kind)
    X, y = data["X"], data["y"]
    csv = tmp_path / "train.csv"
    _write_csv(csv, X, y)
    all_params = dict(parity_cases.COMMON, **params)
    conf_lines = ["task=train", f"data={csv}", f"output_model={tmp_path / 'cli_model.txt'}",
                  f"num_iterations={rounds}", "header=false", "label_column=0"]
    for key, value in all_params.items():
        value = ",".join(map(str, value)) if isinstance(value, list) else value
        value = str(value).lower() if isinstance(value, bool) else value
        conf_lines.append(f"{key}={value}")
    (tmp_path / "train.conf").write_text("\n".join(conf_lines) + "\n")
    subprocess.run([_cli(), f"config={tmp_path / 'train.conf'}"], check=True, cwd=tmp_path,
                   capture_output=True, timeout=300)
    py_booster = lgb.train(all_params, lgb.Dataset(str(csv), params={"header": False, "label_column": 0,
                                                                     "verbose": -1}),
                           num_boost_round=rounds)
    cli_model = (tmp_path / "cli_model.txt").read_text()
    assert cli_model.split("\nparameters:")[0] == py_booster.model_to_string().split("\nparameters:")[0]
    # CLI prediction equals Python prediction on the same file
    subprocess.run([_cli(), "task=predict", f"data={csv}", f"input_model={tmp_path / 'cli_model.txt'}",
                    f"output_result={tmp_path / 'pred.txt'}", "header=false", "label_column=0",
                    "predict_raw_score=true"], check=True, cwd=tmp_path, capture_output=True, timeout=300)
    cli_pred = np.loadtxt(tmp_path / "pred.txt", delimiter="\t")
    np.testing.assert_allclose(cli_pred, py_booster.predict(X, raw_score=True), rtol=1e-12, atol=1e-12)
