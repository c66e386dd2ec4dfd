"""BudgetPrune on a boosted model: a budget only a constant meets is refused, the re-linearized
surrogate is exact at its pruning, scoring=, the iteration cap and the progress bar."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from budget_extras import BudgetPrune, Status
from budget_extras.budgetprune import _setup as setup_mod
from budget_extras.budgetprune._error_terms import gbdt_surrogate_error, mean_loss
from budget_extras.budgetprune._leaves import pruned_leaf_map, raw_from_leaves

COSTS = [5.0, 1.0, 1.0, 1.0, 1.0]


@pytest.fixture(scope="module")
def imbalanced():
    """A 20-tree GBDT on 11% positives; the expensive feature 0 carries most of the signal."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 5))
    s = 1.5 * X[:, 0] + X[:, 1] + 0.7 * X[:, 2] + rng.normal(size=1500)
    y = (s > 2.6).astype(int)
    params = {
        "objective": "binary",
        "num_leaves": 4,
        "learning_rate": 0.2,
        "verbose": -1,
        "num_threads": 1,
        "min_data_in_leaf": 5,
    }
    model = lgb.train(params, lgb.Dataset(X[:1000], y[:1000]), 20)
    return model, X[:1000], y[:1000], X[1000:], y[1000:]


def test_gbdt_budget_that_only_a_constant_meets_is_refused_not_returned(imbalanced):
    # before: budget=5 returned the constant model (cost 0, validation accuracy = the majority
    # share, AUC 0.5) without a word; now the floor refuses it, naming the metric and the floor
    model, X, y, Xv, yv = imbalanced
    with pytest.raises(ValueError, match=r"scores roc_auc=0\.5 .*below the floor min_score=0\.7"):
        BudgetPrune(model, budget=5.0, method="program", costs=COSTS, scoring="roc_auc", bisect_steps=8,
                    progress=False).fit(X, y, X_valid=Xv, y_valid=yv)
    with pytest.raises(ValueError, match=r"accuracy=.*below the floor"):
        BudgetPrune(model, budget=5.0, method="program", costs=COSTS, bisect_steps=8, progress=False).fit(
            X, y, X_valid=Xv, y_valid=yv)
    bp = BudgetPrune(model, budget=5.0, method="program", costs=COSTS, min_score=None, bisect_steps=8,
                     progress=False).fit(X, y, X_valid=Xv, y_valid=yv)
    assert bp.min_score_ is None and bp.result_.acquisition_term <= 5.0  # min_score=None accepts it


def test_relinearized_surrogate_is_exact_at_the_pruning_it_is_taken_around(imbalanced):
    # the error term of pruning P under the surrogate taken around P is n_trees x the true
    # training loss of P (the one-shot surrogate around the full model is not: it ignores that
    # the other trees are collapsed too)
    model, X, y, _Xv, _yv = imbalanced
    bp = BudgetPrune(model, lam=0.02, costs=COSTS, relinearize=0, min_score=None, progress=False).fit(X, y)
    forest, tr = bp.setup_.ensemble, bp.setup_.train_leaves
    pmap = pruned_leaf_map(forest, bp.collapsed_)[tr]
    raw = raw_from_leaves(forest, pmap)
    err = gbdt_surrogate_error(forest, model, None, y.astype(float), tr, raw=raw, own=forest.value[pmap])
    leaf_mask = bp.result_.leaf_mask
    true = mean_loss(forest, y, raw)
    assert float(err @ leaf_mask) == pytest.approx(forest.n_trees * true, rel=1e-9)
    assert abs(float(bp.setup_.problem.node_error @ leaf_mask) - forest.n_trees * true) > 1e-3


def test_scoring_auc_and_accuracy_choose_differently_on_imbalanced_data(imbalanced):
    model, X, y, Xv, yv = imbalanced
    kw = dict(budget=8.0, method="program", costs=COSTS, min_score=None, bisect_steps=10, progress=False)
    acc = BudgetPrune(model, **kw).fit(X, y, X_valid=Xv, y_valid=yv)
    auc = BudgetPrune(model, scoring="roc_auc", **kw).fit(X, y, X_valid=Xv, y_valid=yv)
    assert acc.result_.acquisition_term <= 8.0 and auc.result_.acquisition_term <= 8.0
    assert not np.array_equal(acc.collapsed_, auc.collapsed_)
    a_acc = roc_auc_score(yv, acc.decision_function(Xv))
    a_auc = roc_auc_score(yv, auc.decision_function(Xv))
    assert auc.score_ == pytest.approx(a_auc) and a_auc > a_acc
    assert acc.score_ == pytest.approx(np.mean(acc.predict(Xv) == yv))
    # a callable scorer and the aliases work too
    ll = BudgetPrune(model, scoring="log_loss", **kw).fit(X, y, X_valid=Xv, y_valid=yv)
    assert ll.score_ < 0
    cal = BudgetPrune(model, scoring=lambda e, X_, y_: roc_auc_score(y_, e.decision_function(X_)), **kw)
    assert cal.fit(X, y, X_valid=Xv, y_valid=yv).score_ == pytest.approx(auc.score_)


def test_iteration_cap_names_the_lambda(imbalanced):
    model, X, y, _Xv, _yv = imbalanced
    with pytest.warns(UserWarning, match=r"solve at lam=0\.003 .*max_iter=1"):
        bp = BudgetPrune(
            model, lam=0.003, costs=COSTS, max_iter=1, gap_tol=0.0, min_score=None, relinearize=0, progress=False
        ).fit(X, y)
    assert bp.result_.status == Status.LIMIT
    assert "Iteration limit (1) reached at lam=0.003" in bp.result_.message


def test_progress_bar_shown_when_asked_or_when_slow_and_not_when_off(imbalanced, capsys, monkeypatch):
    model, X, y, _Xv, _yv = imbalanced
    kw = dict(lam=0.003, costs=COSTS, min_score=None)
    BudgetPrune(model, progress=False, **kw).fit(X, y)
    assert "BudgetPrune" not in capsys.readouterr().err
    BudgetPrune(model, progress=True, **kw).fit(X, y)
    assert "BudgetPrune" in capsys.readouterr().err
    monkeypatch.setattr(setup_mod, "_PROGRESS_AFTER_S", -1.0)  # auto: as if the fit ran past 2 s
    BudgetPrune(model, progress=None, **kw).fit(X, y)
    assert "BudgetPrune" in capsys.readouterr().err
