"""Hostile values of the CEGB parameters, fork side: each refused with an error naming it.

Before: group ids were coerced silently (``[0.5, 0.5]`` -> group 0, ``[0, 4294967296]`` -> groups
0 and 0, dict ids ``1e19`` and ``2e19`` -> one group through an overflowing cast, cost-file
``1e30`` likewise; the CLI read ``0.5`` as 0); a bad vector entry reported ``stod``; a bad
``cegb_tradeoff`` reported ``Unknown token abc in data file``; a pandas Series naming a feature
twice kept the last value. Each case is now an error naming the parameter, the feature (or entry)
and the value, in Python and in C++ (config parsing, cost file).
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

NAMES = ["f0", "f1"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 2))
    return X, X[:, 0] + 0.1 * rng.normal(size=300)


def _train(lgb, data, **params):
    X, y = data
    full = {"objective": "l2", "verbose": -1, "num_leaves": 4, "cegb_tradeoff": 0.5,
            "cegb_penalty_feature_lazy": [1.0, 1.0], **params}
    return lgb.train(full, lgb.Dataset(X, y, feature_name=NAMES), num_boost_round=2)


GROUP_MSG = r"must be an integer group id in 0\.\.2147483647 \(or -1 for no group\)"


@pytest.mark.parametrize(
    "groups, err, pattern",
    [([0.5, 0.5], ValueError, rf"group of feature '#0' in 'cegb_feature_group' {GROUP_MSG}\. Got 0\.5"),
     (["a", "b"], TypeError, rf"group of feature '#0' in 'cegb_feature_group' {GROUP_MSG}\. Got 'a'"),
     ([0, 4294967296], ValueError, rf"group of feature '#1' in 'cegb_feature_group' {GROUP_MSG}\. Got 4294967296"),
     ([0, -2], ValueError, r"group of feature '#1' .* Got -2"),
     ([0, float("nan")], ValueError, r"group of feature '#1' .* Got nan"),
     (np.array([0.0, 0.5]), ValueError, r"group of feature '#1' .* Got 0\.5"),
     ({"f0": 1e19, "f1": 2e19}, ValueError, rf"group of feature 'f0' in 'cegb_feature_group' {GROUP_MSG}\. Got 1e\+19"),
     ({"f0": 0.5}, ValueError, r"group of feature 'f0' .* Got 0\.5"),
     ({"f0": True}, TypeError, r"group of feature 'f0' .* Got True")],
)
def test_python_refuses_non_integer_and_out_of_range_groups(lgb, data, groups, err, pattern):
    with pytest.raises(err, match=pattern):
        _train(lgb, data, cegb_feature_group=groups)


def test_valid_groups_still_work(lgb, data):
    """Integral floats, -1 (no group) and a dict are accepted; equal specifications, equal models."""
    a = _train(lgb, data, cegb_feature_group=[1.0, -1])
    b = _train(lgb, data, cegb_feature_group={"f0": 1, "f1": -1})
    c = _train(lgb, data, cegb_feature_group=np.array([1, -1]))
    assert a.model_to_string() == b.model_to_string() == c.model_to_string()


@pytest.mark.parametrize(
    "text, pattern",
    [("0.5,0.5", r"entry 0 is '0\.5'"),
     ("a,b", r"entry 0 is 'a'"),
     ("0,4294967296", r"entry 1 is '4294967296'"),
     ("0,-2", r"entry 1 is '-2'"),
     ("1e3,0", r"entry 0 is '1e3'")],
)
def test_cpp_refuses_bad_positional_group_ids(lgb, data, text, pattern):
    """What the CLI and other bindings pass: the string itself (Python's check bypassed)."""
    X, y = data
    with pytest.raises(lgb.basic.LightGBMError,
                       match=rf"^Parameter cegb_feature_group should be a comma-separated list of integer "
                             rf"group ids in 0\.\.2147483647 \(or -1 for no group\), one per feature; {pattern}"):
        lgb.Dataset(X, y, params={"verbose": -1, "cegb_feature_group": text}).construct()


@pytest.mark.parametrize("value, shown", [("f0:1e19,f1:2e19", "1e\\+19"), ("f0:0.5", "0\\.5"),
                                          ("f0:-2", "-2")])
def test_cpp_refuses_bad_named_group_ids(lgb, data, value, shown):
    # the Python layer passes a string unchanged: C++ sees the name:value text
    with pytest.raises(lgb.basic.LightGBMError, match=rf"cegb_feature_group for feature f0 {GROUP_MSG}, got {shown}"):
        _train(lgb, data, cegb_feature_group=value)


@pytest.mark.parametrize("cell", ["1e30", "0.5", "4294967296", "lab"])
def test_cost_file_group_cells_are_text_labels(lgb, data, tmp_path, cell):
    """The file's group column holds labels (docs/cegb.md): any text is a group of its own."""
    path = tmp_path / "costs.csv"
    path.write_text(f"feature,lazy,group\nf0,1,{cell}\nf1,1,1\n")
    from_file = _train(lgb, data, cegb_penalty_feature_lazy=None, cegb_cost_file=str(path))
    positional = _train(lgb, data, cegb_feature_group=[0, 1])
    assert from_file.model_to_string().split("\nparameters:")[0] == positional.model_to_string().split(
        "\nparameters:")[0]


def test_cli_refuses_a_fractional_group(data, tmp_path):
    exe = shutil.which("lightgbm")
    assert exe, "the fork's lightgbm CLI must be on PATH"
    X, y = data
    csv = tmp_path / "train.csv"
    np.savetxt(csv, np.column_stack([y, X]), delimiter=",", fmt="%.17g")
    proc = subprocess.run([exe, "task=train", f"data={csv}", "num_iterations=2", "objective=l2", "verbose=-1",
                           "cegb_tradeoff=0.5", "cegb_penalty_feature_lazy=1,1", "cegb_feature_group=0.5,0.5",
                           f"output_model={tmp_path / 'm.txt'}"], capture_output=True, text=True, timeout=120)
    assert proc.returncode > 0
    out = proc.stdout + proc.stderr
    assert "Parameter cegb_feature_group should be a comma-separated list of integer group ids" in out, out
    assert "entry 0 is '0.5'" in out


@pytest.mark.parametrize(
    "param, value, pattern",
    [("cegb_tradeoff", "abc", r"^Parameter cegb_tradeoff should be of type double, got 'abc'$"),
     ("cegb_tradeoff", "1.5x", r"^Parameter cegb_tradeoff should be of type double, got '1\.5x'$"),
     ("cegb_penalty_split", "cheap", r"^Parameter cegb_penalty_split should be of type double, got 'cheap'$"),
     ("cegb_penalty_feature_lazy", [1.0, "abc"],
      r"^Parameter cegb_penalty_feature_lazy should be a comma-separated list of doubles \(one per feature\), "
      r"entry 1 is 'abc'$"),
     ("cegb_penalty_feature_coupled", "1,x", r"^Parameter cegb_penalty_feature_coupled .* entry 1 is 'x'$"),
     ("cegb_penalty_feature_split", "y,0.1", r"^Parameter cegb_penalty_feature_split .* entry 0 is 'y'$"),
     # every double parameter, not only CEGB's (upstream: "Unknown token abc in data file" / "stod")
     ("learning_rate", "abc", r"^Parameter learning_rate should be of type double, got 'abc'$"),
     ("lambda_l1", "1.5abc", r"^Parameter lambda_l1 should be of type double, got '1\.5abc'$"),
     ("label_gain", "0,1,x", r"^Parameter label_gain should be a comma-separated list of doubles, entry 2 is 'x'$")],
)
def test_bad_numbers_name_the_parameter(lgb, data, param, value, pattern):
    """Checked before upstream's parsers; words upstream reads as numbers (nan, inf, na) still pass."""
    X, y = data
    params = {"verbose": -1, param: value}
    with pytest.raises(lgb.basic.LightGBMError, match=pattern) as info:
        lgb.Dataset(X, y, params=params).construct()
    assert "stod" not in str(info.value) and "Unknown token" not in str(info.value)


def test_numbers_upstream_accepts_still_pass(lgb, data):
    X, y = data
    lgb.Dataset(X, y, params={"verbose": -1, "learning_rate": " 0.5 ", "lambda_l1": "1e-3",
                              "cegb_penalty_feature_lazy": "1, 2", "label_gain": "0,1,3"}).construct()


def test_numeric_feature_key_out_of_range_is_an_unknown_feature(lgb, data):
    """A 0-based index key too large for stoll reported 'stoll'."""
    with pytest.raises(lgb.basic.LightGBMError, match=r"unknown feature '99999999999999999999'"):
        _train(lgb, data, cegb_penalty_feature_lazy="99999999999999999999:1")


@pytest.mark.parametrize("param", ["cegb_penalty_feature_lazy", "cegb_feature_group"])
def test_series_naming_a_feature_twice_is_refused(lgb, data, param):
    pd = pytest.importorskip("pandas")
    twice = pd.Series([1, 2], index=["f0", "f0"])
    with pytest.raises(ValueError, match=rf"'{param}' names feature\(s\) 'f0' more than once"):
        _train(lgb, data, **{param: twice})
    # the name:value text form was already refused in C++
    with pytest.raises(lgb.basic.LightGBMError, match="feature 'f0' is given twice"):
        _train(lgb, data, **{param: "f0:1,f0:2"})


def _unknown_key_message(key: str, nearest: str) -> str:
    return rf"Unknown parameter {key}: not a CEGB parameter \(did you mean {nearest}\?\)"


@pytest.mark.parametrize(
    "key, nearest",
    [("cegb_penalty_feature_lazzy", "cegb_penalty_feature_lazy"),
     ("cegb_tradof", "cegb_tradeoff"),
     ("cegb_budgte", "cegb_budget"),
     ("CEGB_budget", "cegb_budget"),
     ("cegb_penalty_feature_coupeld", "cegb_penalty_feature_coupled")],
)
def test_misspelled_cegb_key_is_refused_with_the_nearest_name(lgb, data, key, nearest):
    """verbose=-1 as in the quick start: upstream's "Unknown parameter" warning would not even show."""
    X, y = data
    params = {"objective": "l2", "verbose": -1, "cegb_tradeoff": 0.5, key: [5.0, 5.0]}
    with pytest.raises(lgb.basic.LightGBMError, match=_unknown_key_message(key, nearest)):
        lgb.train(params, lgb.Dataset(X, y), num_boost_round=2)


def test_misspelled_cegb_key_is_refused_by_the_sklearn_api(lgb, data):
    X, y = data
    model = lgb.LGBMClassifier(n_estimators=2, verbose=-1, cegb_tradeoff=0.5,
                               cegb_penalty_feature_lazzy=[5.0, 5.0])
    with pytest.raises(lgb.basic.LightGBMError,
                       match=_unknown_key_message("cegb_penalty_feature_lazzy", "cegb_penalty_feature_lazy")):
        model.fit(X, (y > np.median(y)).astype(int))


def test_unknown_non_cegb_keys_and_cegb_aliases_still_train(lgb, data):
    """Only cegb_* keys are refused: other unknown keys keep upstream's warning."""
    X, y = data
    booster = lgb.train({"objective": "l2", "verbose": -1, "my_own_key": 3, "cegb_tradeoff": 0.5,
                         "cegb_penalty_feature_lazy": [1.0, 1.0]}, lgb.Dataset(X, y), num_boost_round=2)
    assert booster.num_trees() == 2


def test_cli_config_file_refuses_a_misspelled_cegb_key(data, tmp_path):
    exe = shutil.which("lightgbm")
    assert exe, "the fork's lightgbm CLI must be on PATH"
    X, y = data
    csv = tmp_path / "train.csv"
    np.savetxt(csv, np.column_stack([y, X]), delimiter=",", fmt="%.17g")
    conf = tmp_path / "train.conf"
    conf.write_text(f"task = train\ndata = {csv}\nnum_iterations = 2\nobjective = l2\nverbose = -1\n"
                    f"cegb_tradeoff = 0.5\ncegb_penalty_feature_lazzy = 5,5\noutput_model = {tmp_path / 'm.txt'}\n")
    cases = {("cegb_penalty_feature_lazzy", "cegb_penalty_feature_lazy"): [f"config={conf}"],
             # a command-line key too; the first unknown key in alphabetical order is named
             ("cegb_budgte", "cegb_budget"): [f"config={conf}", "cegb_budgte=1"]}
    for (key, nearest), args in cases.items():
        proc = subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)
        out = proc.stdout + proc.stderr
        assert proc.returncode > 0, out
        assert f"Unknown parameter {key}: not a CEGB parameter (did you mean {nearest}?)" in out, out
        assert not (tmp_path / "m.txt").exists()


def test_cegb_with_quantized_gradients_is_refused(lgb, data):
    """Upstream (and the fork before) could stop on "Check failed: (best_split_info.left_count) > (0)"."""
    X, y = data
    params = {"objective": "l2", "verbose": -1, "use_quantized_grad": True, "cegb_tradeoff": 0.5}
    for cegb in ({"cegb_penalty_feature_lazy": [1.0, 1.0]}, {"cegb_penalty_split": 0.1},
                 {"cegb_tradeoff": 0.0, "cegb_budget": 1.0, "cegb_penalty_feature_lazy": [1.0, 1.0]}):
        with pytest.raises(lgb.basic.LightGBMError,
                           match=r"^Cost-efficient gradient boosting \(cegb_\* parameters\) is not supported with "
                                 r"use_quantized_grad=true"):
            lgb.train({**params, **cegb}, lgb.Dataset(X, y), num_boost_round=2)
    # CEGB off (tradeoff 0, no budget): quantized training as upstream
    off = lgb.train({**params, "cegb_tradeoff": 0.0, "cegb_penalty_feature_lazy": [1.0, 1.0]}, lgb.Dataset(X, y), 2)
    assert off.num_trees() == 2
