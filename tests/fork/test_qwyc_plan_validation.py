"""The fork's QWYC plan reader validates every qwyc_* field against the model at load
(docs/qwyc_model_format.md, "What a valid plan is"; docs/hardening.md).

Before this check a binary model whose header said ``qwyc_mode=multiclass_margin`` loaded, and
``QWYCPlan::Run`` partial-sorted a one-element vote vector up to ``begin() + 2`` (heap reads and
writes out of bounds in ``GBDT::PredictRaw``) and predicted garbage. Every malformed field is now
a LightGBMError naming the key; valid plans still predict exactly the plan of the specification.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

N_ITER = 6


def _train(lgb, kind):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(600, 4))
    score = X[:, 0] + 0.5 * X[:, 1]
    if kind == "binary":
        y, params = (score > 0).astype(float), {"objective": "binary"}
    else:
        y, params = np.digitize(score, [-0.5, 0.5]).astype(float), {"objective": "multiclass", "num_class": 3}
    booster = lgb.train({**params, "verbose": -1, "num_leaves": 7, "seed": 1}, lgb.Dataset(X, y), N_ITER)
    return booster, X


@pytest.fixture(scope="module")
def binary(lgb):
    return _train(lgb, "binary")


@pytest.fixture(scope="module")
def multiclass(lgb):
    return _train(lgb, "multiclass")


def _plan_lines(mode, R=N_ITER, **over):
    """qwyc_* lines of a valid identity-order plan; over[key] = None drops a line, a str replaces it."""
    lines = {
        "qwyc_version": "1",
        "qwyc_mode": mode,
        "qwyc_num_positions": str(R),
        "qwyc_decision_threshold": "0.0",
        "qwyc_alpha": "0.01",
    }
    if mode == "multiclass_margin":
        lines["qwyc_eps_margin"] = " ".join(["0.5"] * (R - 1) + ["inf"])
    else:
        lines["qwyc_eps_neg"] = " ".join(["-0.5"] * (R - 1) + ["-inf"])
        pos = "inf" if mode == "binary_negative_only" else "0.5"
        lines["qwyc_eps_pos"] = " ".join([pos] * (R - 1) + ["inf"])
    lines["qwyc_original_iteration"] = " ".join(map(str, range(R)))
    lines.update(over)
    return [f"{k}={v}" for k, v in lines.items() if v is not None]


def _with_plan(booster, lines, extra=()):
    text = booster.model_to_string()
    assert "\ntree_sizes=" in text
    return text.replace("\ntree_sizes=", "\n" + "\n".join([*lines, *extra]) + "\ntree_sizes=", 1)


BINARY_CASES = [
    # (id, overrides of _plan_lines, extra lines, key the error must name)
    ("version", {"qwyc_version": "3"}, (), "qwyc_version"),
    ("mode_unknown", {"qwyc_mode": "bogus"}, (), "qwyc_mode"),
    ("mode_missing", {"qwyc_mode": None}, (), "qwyc_mode"),
    ("positions_short", {"qwyc_num_positions": "5"}, (), "qwyc_num_positions"),
    ("positions_zero", {"qwyc_num_positions": "0"}, (), "qwyc_num_positions"),
    ("positions_negative", {"qwyc_num_positions": "-6"}, (), "qwyc_num_positions"),
    ("positions_garbage", {"qwyc_num_positions": "6abc"}, (), "qwyc_num_positions"),
    ("positions_float", {"qwyc_num_positions": "6.0"}, (), "qwyc_num_positions"),
    ("positions_huge", {"qwyc_num_positions": "99999999999999999999"}, (), "qwyc_num_positions"),
    ("threshold_nan", {"qwyc_decision_threshold": "nan"}, (), "qwyc_decision_threshold"),
    ("threshold_inf", {"qwyc_decision_threshold": "inf"}, (), "qwyc_decision_threshold"),
    ("threshold_text", {"qwyc_decision_threshold": "zero"}, (), "qwyc_decision_threshold"),
    ("threshold_missing", {"qwyc_decision_threshold": None}, (), "qwyc_decision_threshold"),
    ("alpha_text", {"qwyc_alpha": "abc"}, (), "qwyc_alpha"),
    ("neg_short", {"qwyc_eps_neg": "-1 -1 -1 -1 -1"}, (), "qwyc_eps_neg"),
    ("neg_long", {"qwyc_eps_neg": "-1 -1 -1 -1 -1 -1 -1"}, (), "qwyc_eps_neg"),
    ("neg_nan", {"qwyc_eps_neg": "-1 nan -1 -1 -1 -1"}, (), "qwyc_eps_neg"),
    ("neg_text", {"qwyc_eps_neg": "-1 x -1 -1 -1 -1"}, (), "qwyc_eps_neg"),
    ("neg_above_threshold", {"qwyc_eps_neg": "-1 0.25 -1 -1 -1 -1"}, (), "qwyc_eps_neg"),
    ("neg_plus_inf", {"qwyc_eps_neg": "-1 inf -1 -1 -1 -1"}, (), "qwyc_eps_neg"),
    ("neg_missing", {"qwyc_eps_neg": None}, (), "qwyc_eps_neg"),
    ("pos_below_threshold", {"qwyc_eps_pos": "1 1 -0.1 1 1 1"}, (), "qwyc_eps_pos"),
    ("pos_minus_inf", {"qwyc_eps_pos": "1 1 -inf 1 1 1"}, (), "qwyc_eps_pos"),
    ("pos_nan", {"qwyc_eps_pos": "1 1 nan 1 1 1"}, (), "qwyc_eps_pos"),
    ("order_duplicate", {"qwyc_original_iteration": "0 1 2 3 4 4"}, (), "qwyc_original_iteration"),
    ("order_out_of_range", {"qwyc_original_iteration": "0 1 2 3 4 6"}, (), "qwyc_original_iteration"),
    ("order_negative", {"qwyc_original_iteration": "0 1 2 3 4 -1"}, (), "qwyc_original_iteration"),
    ("order_short", {"qwyc_original_iteration": "0 1 2 3 4"}, (), "qwyc_original_iteration"),
    ("order_float", {"qwyc_original_iteration": "0 1 2 3 4 5.0"}, (), "qwyc_original_iteration"),
    ("order_missing", {"qwyc_original_iteration": None}, (), "qwyc_original_iteration"),
    ("margin_in_binary_plan", {}, ("qwyc_eps_margin=1 1 1 1 1 1",), "qwyc_eps_margin"),
    ("unknown_key", {}, ("qwyc_foo=1",), "qwyc_foo"),
    ("duplicate_key", {}, ("qwyc_mode=binary_two_sided",), "qwyc_mode"),
]


@pytest.mark.parametrize("case", BINARY_CASES, ids=[c[0] for c in BINARY_CASES])
def test_malformed_binary_plan_is_refused_naming_the_key(lgb, binary, case):
    _, over, extra, key = case
    booster, _ = binary
    text = _with_plan(booster, _plan_lines("binary_two_sided", **over), extra)
    with pytest.raises(lgb.basic.LightGBMError, match=rf"^{key}\b"):
        lgb.Booster(model_str=text)


def test_negative_only_plan_needs_infinite_eps_pos(lgb, binary):
    booster, _ = binary
    lgb.Booster(model_str=_with_plan(booster, _plan_lines("binary_negative_only")))  # valid
    text = _with_plan(booster, _plan_lines("binary_negative_only", qwyc_eps_pos="inf 1 inf inf inf inf"))
    with pytest.raises(lgb.basic.LightGBMError, match=r"^qwyc_eps_pos: qwyc_mode=binary_negative_only expects inf"):
        lgb.Booster(model_str=text)


def test_plan_keys_without_version_are_refused(lgb, binary):
    booster, _ = binary
    text = _with_plan(booster, _plan_lines("binary_two_sided", qwyc_version=None))
    with pytest.raises(lgb.basic.LightGBMError, match=r"QWYC plan: the model file has qwyc_\w+ but no qwyc_version"):
        lgb.Booster(model_str=text)


MULTICLASS_CASES = [
    ("margin_negative", {"qwyc_eps_margin": "0.5 -0.1 0.5 0.5 0.5 inf"}, (), "qwyc_eps_margin"),
    ("margin_minus_inf", {"qwyc_eps_margin": "0.5 -inf 0.5 0.5 0.5 inf"}, (), "qwyc_eps_margin"),
    ("margin_nan", {"qwyc_eps_margin": "0.5 nan 0.5 0.5 0.5 inf"}, (), "qwyc_eps_margin"),
    ("margin_short", {"qwyc_eps_margin": "0.5 0.5"}, (), "qwyc_eps_margin"),
    ("margin_missing", {"qwyc_eps_margin": None}, (), "qwyc_eps_margin"),
    ("positions_are_iterations", {"qwyc_num_positions": str(3 * N_ITER)}, (), "qwyc_num_positions"),
    ("binary_keys_in_multiclass_plan", {}, ("qwyc_eps_neg=-1 -1 -1 -1 -1 -1",), "qwyc_eps_neg"),
]


@pytest.mark.parametrize("case", MULTICLASS_CASES, ids=[c[0] for c in MULTICLASS_CASES])
def test_malformed_multiclass_plan_is_refused_naming_the_key(lgb, multiclass, case):
    _, over, extra, key = case
    booster, _ = multiclass
    text = _with_plan(booster, _plan_lines("multiclass_margin", **over), extra)
    with pytest.raises(lgb.basic.LightGBMError, match=rf"^{key}\b"):
        lgb.Booster(model_str=text)


@pytest.mark.parametrize("mode", ["binary_two_sided", "binary_negative_only"])
def test_binary_mode_on_a_multiclass_model_is_refused(lgb, multiclass, mode):
    booster, _ = multiclass
    text = _with_plan(booster, _plan_lines(mode))
    pattern = rf"^qwyc_mode: {mode} needs a model with num_tree_per_iteration=1, .* has num_tree_per_iteration=3"
    with pytest.raises(lgb.basic.LightGBMError, match=pattern):
        lgb.Booster(model_str=text)


def test_multiclass_mode_on_a_binary_model_is_refused_not_run(lgb, binary, tmp_path):
    """The heap overflow: a binary model carrying a multiclass_margin plan. Run in a subprocess
    (a regression would corrupt the heap of the test process): the fork refuses the file at load,
    naming qwyc_mode, what it expects and what the model has."""
    booster, X = binary
    path = tmp_path / "mismatch.txt"
    path.write_text(_with_plan(booster, _plan_lines("multiclass_margin")))
    np.save(tmp_path / "X.npy", X)
    code = textwrap.dedent(f"""
        import numpy as np, lightgbm as lgb
        X = np.load({str(tmp_path / "X.npy")!r})
        try:
            b = lgb.Booster(model_file={str(path)!r})
        except lgb.basic.LightGBMError as e:
            print("REFUSED:", e)
        else:
            print("LOADED", b.predict(X, raw_score=True, pred_early_stop=True)[:3])
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert ("REFUSED: qwyc_mode: multiclass_margin needs a model with num_tree_per_iteration >= 2 "
            "(a multiclass model), this model has num_tree_per_iteration=1") in proc.stdout, proc.stdout


def _tree_outputs(booster, X):
    """(n, R, K) raw output of every tree, in file order."""
    K = booster.num_model_per_iteration()
    R = booster.num_trees() // K
    out = np.stack([booster.predict(X, raw_score=True, start_iteration=r, num_iteration=1) for r in range(R)], axis=1)
    return out.reshape(len(X), R, K)


def _reference(F, mode, eps_a, eps_b=None):
    """The specification's early exit (docs/qwyc_model_format.md, section 3): scores, trees evaluated."""
    n, R, K = F.shape
    scores = np.zeros((n, K))
    evaluated = np.zeros(n)
    for i in range(n):
        s = np.zeros(K)
        for r in range(R):
            for c in range(K):
                s[c] += F[i, r, c]
            if r == R - 1:
                break
            if mode == "multiclass_margin":
                top = np.sort(s)[::-1]
                if top[0] - top[1] > eps_a[r]:
                    break
            elif s[0] > eps_b[r] or s[0] < eps_a[r]:
                break
        scores[i], evaluated[i] = s, (r + 1) * K
    return scores, evaluated


def _fmt(values):
    return " ".join(repr(float(v)) for v in values)


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_valid_plans_still_predict_exactly(lgb, binary, multiclass, kind):
    booster, X = binary if kind == "binary" else multiclass
    F = _tree_outputs(booster, X)
    rng = np.random.default_rng(0)
    if kind == "binary":
        neg = -np.abs(rng.normal(size=N_ITER)) * 0.8
        pos = np.abs(rng.normal(size=N_ITER)) * 0.8
        neg[2], pos[3] = -np.inf, np.inf  # "never stop on this side"
        lines = _plan_lines("binary_two_sided", qwyc_eps_neg=_fmt(neg), qwyc_eps_pos=_fmt(pos))
        expected, evaluated = _reference(F, "binary", neg, pos)
        expected = expected[:, 0]
    else:
        margin = np.abs(rng.normal(size=N_ITER)) * 0.6
        margin[1] = np.inf
        lines = _plan_lines("multiclass_margin", qwyc_eps_margin=_fmt(margin))
        expected, evaluated = _reference(F, "multiclass_margin", margin)
    assert 1 < len(np.unique(evaluated))  # rows stop at different positions
    fast = lgb.Booster(model_str=_with_plan(booster, lines))
    np.testing.assert_array_equal(fast.predict(X, raw_score=True, pred_early_stop=True), expected)
    got = fast.predict(X, pred_early_stop=True, qwyc_trees_evaluated=True)
    np.testing.assert_array_equal(got if got.ndim == 1 else got[:, 0], evaluated)
