"""metric=cegb_cost: the mean per-row prediction cost of the model so far, on every dataset evaluated.

Oracle: ``budget_extras.cost_report`` of the model truncated to each iteration, on the same rows
(raw values: a walk independent of the metric's walk by bins): mean acquisition + evaluation cost
per row plus the model's coupled cost.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp

from budget_extras import FeatureCosts, TreeEnsemble, cost_report

from .scenarios import BASE

LAZY = [1.0, 2.0, 0.5, 3.0, 1.5, 2.5]
COUPLED = [0.0, 5.0, 0.0, 0.0, 2.0, 0.0]
GROUPS = [None, None, "panel", "panel", None, None]
SPLIT = [0.1, 0.0, 0.2, 0.05, 0.0, 0.3]
CAT = 5  # a categorical feature: codes 0..5 in training, an unseen code 9 in the validation rows


def _make(rng, n, classes):
    X = rng.normal(size=(n, len(LAZY)))
    X[rng.random(n) < 0.1, 1] = np.nan
    X[:, CAT] = rng.integers(0, 6, size=n)
    signal = 1.2 * X[:, 0] + np.nan_to_num(X[:, 1]) * X[:, 2] + np.sin(2 * X[:, 3]) + 0.8 * (X[:, CAT] % 3 == 1)
    signal += 0.5 * X[:, 4] + 0.3 * rng.normal(size=n)
    if classes == 0:
        return X, signal
    cuts = np.quantile(signal, np.linspace(0, 1, classes + 1)[1:-1])
    return X, np.searchsorted(cuts, signal).astype(float)


def _task(classes):
    rng = np.random.default_rng(11 + classes)
    X, y = _make(rng, 700, classes)
    Xv, yv = _make(rng, 400, classes)
    Xv[:7, CAT] = 9  # a category the training rows never had
    Xv[7:12, CAT] = np.nan
    objective = {0: {"objective": "regression"}, 2: {"objective": "binary"},
                 3: {"objective": "multiclass", "num_class": 3}}[classes]
    return objective, (X, y), (Xv, yv)


@pytest.fixture(scope="module", params=[0, 2, 3], ids=["regression", "binary", "multiclass"])
def task(request):
    return _task(request.param)


@pytest.fixture(scope="module")
def binary():
    return _task(2)


def _costs(**kwargs):
    spec = {"lazy": LAZY, "coupled": COUPLED, "groups": GROUPS}
    spec.update(kwargs)
    return FeatureCosts(spec.pop("lazy"), **spec)


def _train(lgb, objective, train, valid, rounds=12, callbacks=(), init_model=None, **params):
    (X, y), (Xv, yv) = train, valid
    full = {**BASE, **objective, "num_leaves": 7, "learning_rate": 0.3, "min_data_in_leaf": 10, "cegb_tradeoff": 0.002,
            "metric": "cegb_cost", **params}
    dtrain = lgb.Dataset(X, y, categorical_feature=[CAT])
    evals: dict = {}
    valid_sets = [dtrain, lgb.Dataset(Xv, yv, reference=dtrain)]
    booster = lgb.train(full, dtrain, rounds, init_model=init_model, valid_sets=valid_sets,
                        valid_names=["train", "valid"], callbacks=[lgb.record_evaluation(evals), *callbacks])
    return booster, evals


def _expected(booster, X, costs, iteration):
    report = cost_report(TreeEnsemble.from_booster(booster, num_iteration=iteration), X, costs, feature_counts=False)
    return float(report.total_cost.mean()) + report.coupled_cost


def _check_curve(booster, evals, train, valid, costs):
    for name, X in (("train", train[0]), ("valid", valid[0])):
        curve = evals[name]["cegb_cost"]
        assert len(curve) == booster.current_iteration()
        expected = [_expected(booster, X, costs, it) for it in range(1, len(curve) + 1)]
        assert curve == pytest.approx(expected, rel=1e-9, abs=1e-12), name
    assert curve[-1] > 0.0


@pytest.mark.parametrize("sampling", [{}, {"bagging_fraction": 0.6, "bagging_freq": 1}], ids=["all-rows", "bagging"])
def test_metric_equals_cost_report_after_every_iteration(lgb, task, sampling):
    """Lazy costs with a group, coupled costs, a categorical feature (an unseen category and NaN in the
    validation rows), NaN in a numerical feature: each iteration's value is cost_report's."""
    objective, train, valid = task
    costs = _costs()
    booster, evals = _train(lgb, objective, train, valid, cegb_cost_file=costs, **sampling)
    ens = TreeEnsemble.from_booster(booster)
    assert (ens.feature[~ens.is_leaf] == CAT).any(), "the model should split on the categorical feature"
    _check_curve(booster, evals, train, valid, costs)


@pytest.mark.parametrize("boosting", [{"boosting": "dart", "drop_rate": 0.3},
                                      {"boosting": "rf", "bagging_fraction": 0.6, "bagging_freq": 1}],
                         ids=["dart", "rf"])
def test_dart_and_random_forest(lgb, binary, boosting):
    objective, train, valid = binary
    costs = _costs()
    booster, evals = _train(lgb, objective, train, valid, cegb_cost_file=costs, **boosting)
    _check_curve(booster, evals, train, valid, costs)


def test_sparse_rows(lgb, binary):
    """Rows given as a sparse matrix (most values zero) are routed through the sparse bins."""
    objective, (X, y), (Xv, yv) = binary
    rng = np.random.default_rng(3)
    sparse = []
    for A in (X, Xv):
        A = A.copy()
        A[:, :CAT][rng.random((A.shape[0], CAT)) < 0.7] = 0.0
        sparse.append(sp.csr_matrix(A))
    costs = _costs()
    train, valid = (sparse[0], y), (sparse[1], yv)
    booster, evals = _train(lgb, objective, train, valid, cegb_cost_file=costs)
    _check_curve(booster, evals, train, valid, costs)


def test_split_costs_count_per_evaluated_split(lgb, task):
    """cegb_penalty_split + cegb_penalty_feature_split[f] per split on each row's paths (cost_report's split costs)."""
    objective, train, valid = task
    costs = _costs(split=np.asarray(SPLIT) + 0.01)
    booster, evals = _train(lgb, objective, train, valid, cegb_cost_file=_costs(split=SPLIT), cegb_penalty_split=0.01)
    _check_curve(booster, evals, train, valid, costs)


def test_cost_file_with_tree_cost(lgb, task, tmp_path):
    """A cost file's tree column counts once per tree, as in cost_report."""
    objective, train, valid = task
    path = tmp_path / "costs.csv"
    rows = [f"Column_{f},{LAZY[f]},{COUPLED[f]},{SPLIT[f]},{GROUPS[f] or ''},0.25" for f in range(len(LAZY))]
    path.write_text("feature,lazy,coupled,split,group,tree\n" + "\n".join(rows) + "\n")
    costs = FeatureCosts.from_csv(path)
    assert costs.tree == 0.25
    booster, evals = _train(lgb, objective, train, valid, rounds=6, cegb_cost_file=str(path))
    _check_curve(booster, evals, train, valid, costs)


def test_rollback_and_continued_training_recount(lgb, task):
    """A rolled-back iteration is no longer counted; a continued model counts its first model's trees."""
    objective, train, valid = task
    costs = _costs()
    (X, y), (Xv, yv) = train, valid
    params = dict(BASE, **objective, num_leaves=7, learning_rate=0.3, min_data_in_leaf=10, cegb_tradeoff=0.002,
                  metric="cegb_cost", cegb_cost_file=costs)
    dtrain = lgb.Dataset(X, y, categorical_feature=[CAT], free_raw_data=False)
    booster = lgb.Booster(params, dtrain)
    booster.add_valid(lgb.Dataset(Xv, yv, reference=dtrain), "valid")
    for _ in range(6):
        booster.update()
    assert booster.eval_valid()[0][2] == pytest.approx(_expected(booster, Xv, costs, 6), rel=1e-9)
    booster.rollback_one_iter()
    booster.rollback_one_iter()
    assert booster.eval_valid()[0][2] == pytest.approx(_expected(booster, Xv, costs, 4), rel=1e-9)
    booster.update()
    assert booster.eval_valid()[0][2] == pytest.approx(_expected(booster, Xv, costs, 5), rel=1e-9)
    # rolled back and regrown (other trees, maybe at the removed trees' addresses) between two evaluations
    booster.rollback_one_iter()
    booster.reset_parameter({"cegb_tradeoff": 0.0, "num_leaves": 15})
    booster.update()
    assert booster.eval_valid()[0][2] == pytest.approx(_expected(booster, Xv, costs, 5), rel=1e-9)
    booster.reset_parameter({"cegb_tradeoff": 0.002, "num_leaves": 7})

    evals: dict = {}
    more = lgb.train(params, dtrain, 3, init_model=booster, valid_sets=[lgb.Dataset(Xv, yv, reference=dtrain)],
                     valid_names=["valid"], callbacks=[lgb.record_evaluation(evals)])
    assert more.current_iteration() == 8
    assert evals["valid"]["cegb_cost"] == pytest.approx([_expected(more, Xv, costs, it) for it in (6, 7, 8)],
                                                        rel=1e-9)


def test_continued_training_from_a_model_file_counts_the_loaded_trees(lgb, task, tmp_path):
    """Trees read from a model file keep no leaf parents: the metric walks their child links (this crashed)."""
    objective, train, valid = task
    costs = _costs()
    first, _ = _train(lgb, objective, train, valid, rounds=4, cegb_cost_file=costs)
    path = tmp_path / "first.txt"
    first.save_model(path)
    # a loaded Booster carries its costs as trained (per-feature parameters): give them the same way
    for init, given in ((str(path), {"cegb_cost_file": costs}),
                        (lgb.Booster(model_file=str(path)), costs.to_cegb_params())):
        more, evals = _train(lgb, objective, train, valid, rounds=3, init_model=init, **given)
        assert more.current_iteration() == 7
        for name, X in (("train", train[0]), ("valid", valid[0])):
            expected = [_expected(more, X, costs, it) for it in (5, 6, 7)]
            assert evals[name]["cegb_cost"] == pytest.approx(expected, rel=1e-9, abs=1e-12), name


def test_no_costs_is_an_error(lgb, task):
    objective, train, valid = task
    with pytest.raises(lgb.basic.LightGBMError, match="metric cegb_cost needs CEGB costs"):
        _train(lgb, objective, train, valid, rounds=1)


def test_zero_costs_cost_zero(lgb, task):
    objective, train, valid = task
    _, evals = _train(lgb, objective, train, valid, rounds=3, cegb_penalty_feature_lazy=[0.0] * len(LAZY))
    assert evals["valid"]["cegb_cost"] == [0.0, 0.0, 0.0]


def test_linear_trees_are_refused(lgb, task):
    objective, train, valid = task
    with pytest.raises(lgb.basic.LightGBMError, match="cegb_cost does not support linear_tree"):
        _train(lgb, objective, train, valid, rounds=1, linear_tree=True, cegb_penalty_feature_lazy=LAZY)


@pytest.mark.parametrize("first_metric_only", [False, True])
def test_early_stopping_skips_the_cost(lgb, binary, first_metric_only):
    """With cegb_cost listed first, early stopping follows binary_logloss: the cost, which only grows, stops nothing."""
    objective, train, valid = binary
    stop = lgb.early_stopping(3, first_metric_only=first_metric_only, verbose=False)
    booster, evals = _train(lgb, objective, train, valid, rounds=60, callbacks=[stop], learning_rate=0.05,
                            metric=["cegb_cost", "binary_logloss"], cegb_penalty_feature_lazy=LAZY)
    loss = evals["valid"]["binary_logloss"]
    assert booster.best_iteration == int(np.argmin(loss)) + 1
    assert booster.best_iteration > 4  # a stop on the cost would keep iteration 1
    cost = evals["valid"]["cegb_cost"]
    assert cost == sorted(cost) and cost[-1] > cost[0]


def test_early_stopping_on_the_cost_alone_is_an_error(lgb, binary):
    objective, train, valid = binary
    with pytest.raises(ValueError, match="other than cegb_cost"):
        _train(lgb, objective, train, valid, rounds=5, callbacks=[lgb.early_stopping(2, verbose=False)],
               cegb_penalty_feature_lazy=LAZY)


def test_early_stopping_with_only_the_training_set_is_disabled(lgb, binary):
    """As upstream: only the training data evaluated disables early stopping (a warning), with cegb_cost too."""
    objective, (X, y), _ = binary
    params = {**BASE, **objective, "num_leaves": 7, "metric": "cegb_cost", "cegb_tradeoff": 0.002,
              "cegb_penalty_feature_lazy": LAZY}
    train = lgb.Dataset(X, y)
    with pytest.warns(UserWarning, match="Only training set found"):
        booster = lgb.train(params, train, 6, valid_sets=[train], callbacks=[lgb.early_stopping(2, verbose=False)])
    assert booster.current_iteration() == 6


def test_cv_with_early_stopping(lgb, binary):
    objective, train, _ = binary
    X, y = train
    params = dict(BASE, **objective, num_leaves=7, learning_rate=0.05, cegb_tradeoff=0.002,
                  metric=["cegb_cost", "binary_logloss"], cegb_penalty_feature_lazy=LAZY)
    result = lgb.cv(params, lgb.Dataset(X, y), num_boost_round=40, nfold=3, stratified=False,
                    callbacks=[lgb.early_stopping(3, verbose=False)])
    cost = result["valid cegb_cost-mean"]
    assert len(cost) == len(result["valid binary_logloss-mean"]) > 4
    assert np.all(np.diff(cost) >= 0) and cost[-1] > 0


def test_cli_reports_the_cost_and_early_stopping_skips_it(lgb, binary, tmp_path):
    """The CLI logs cegb_cost per iteration (cost_report's values) and stops on binary_logloss only."""
    exe = shutil.which("lightgbm")
    assert exe, "the fork's lightgbm CLI must be on PATH"
    _, (X, y), (Xv, yv) = binary
    files = {}
    for name, (A, b) in (("train", (X, y)), ("valid", (Xv, yv))):
        files[name] = tmp_path / f"{name}.csv"
        np.savetxt(files[name], np.column_stack([b, A]), delimiter=",", fmt="%.17g")
    model = tmp_path / "model.txt"
    args = [f"data={files['train']}", f"valid={files['valid']}", "objective=binary", "num_iterations=60",
            "learning_rate=0.05", "num_leaves=7", "metric=cegb_cost,binary_logloss", "early_stopping_round=3",
            "cegb_tradeoff=0.002", "cegb_penalty_feature_lazy=" + ",".join(map(str, LAZY)), "num_threads=1",
            "deterministic=true", "force_row_wise=true", "seed=7", "verbose=1", f"output_model={model}"]
    out = subprocess.run([exe, "task=train", *args], check=True, capture_output=True, text=True, timeout=300).stdout
    logged = {name: [float(line.rsplit(":", 1)[1]) for line in out.splitlines() if f"valid_1 {name} :" in line]
              for name in ("cegb_cost", "binary_logloss")}
    booster = lgb.Booster(model_file=str(model))
    kept = booster.current_iteration()
    assert kept == int(np.argmin(logged["binary_logloss"])) + 1 > 4  # a stop on the cost would keep iteration 1
    expected = [_expected(booster, Xv, LAZY, it) for it in range(1, kept + 1)]
    assert logged["cegb_cost"][:kept] == pytest.approx(expected, rel=1e-5)
