"""One ``scoring`` resolution (core/_scoring.py) behind every method: inputs, names, errors."""

from __future__ import annotations

import re
from typing import Any

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.metrics import make_scorer, roc_auc_score

from budget_extras.adapt._scoring import resolve_scoring as adapt_scoring
from budget_extras.budgetprune._scoring import resolve_scoring as prune_scoring
from budget_extras.cegb._scoring import resolve_scoring as cegb_scoring
from budget_extras.core import TreeEnsemble
from budget_extras.core._scoring import SCORING_ALIASES, resolve_scoring, scoring_name
from budget_extras.cstc._estimator import _resolve_scoring as cstc_scoring


@pytest.fixture(scope="module")
def forest() -> TreeEnsemble:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    b = lgb.train({"objective": "binary", "verbose": -1, "num_threads": 1}, lgb.Dataset(X, y), 3)
    return TreeEnsemble.from_booster(b)


def _methods(forest: TreeEnsemble) -> dict[str, Any]:
    """Each method's resolution, called with only ``scoring``."""
    return {
        "train_to_budget": lambda s: cegb_scoring(s, {"objective": "binary"}),
        "BudgetPrune": lambda s: prune_scoring(s, forest),
        "CSTC": lambda s: cstc_scoring(s, "binary"),
        "AdaptGBRT": lambda s: adapt_scoring(s),
    }


@pytest.mark.parametrize(("bad", "exc"), [("no_such_scorer", ValueError), (3, TypeError), ([1], TypeError)])
def test_every_method_refuses_a_bad_value_with_the_one_message(forest, bad, exc):
    messages = {}
    for owner, resolve in _methods(forest).items():
        with pytest.raises(exc) as info:
            resolve(bad)
        messages[owner] = str(info.value).replace(f" of {owner} ", " of <owner> ")
    assert len(set(messages.values())) == 1, messages
    msg = next(iter(messages.values()))
    assert msg.startswith("The 'scoring' parameter of <owner> must be None, a scikit-learn scorer name")
    assert "callable scorer(estimator, X, y)" in msg
    assert f"Got {bad!r}" in msg


@pytest.mark.parametrize("scoring", ["accuracy", "roc_auc", "neg_log_loss", "balanced_accuracy", "auc", "log_loss"])
def test_every_method_accepts_the_same_names(forest, scoring):
    for resolve in _methods(forest).values():
        name, _ = resolve(scoring)
        assert name == SCORING_ALIASES.get(scoring, scoring)


def test_callable_names():
    def my_metric(est: Any, X: Any, y: Any) -> float:
        return 0.0

    assert scoring_name(my_metric) == "my_metric"
    assert scoring_name(make_scorer(roc_auc_score)) == repr(make_scorer(roc_auc_score))

    class Obj:
        def __call__(self, est: Any, X: Any, y: Any) -> float:
            return 0.0

    assert scoring_name(Obj()) == "Obj"


def test_default_and_view():
    calls = []

    def scorer(est: Any, X: Any, y: Any) -> float:
        calls.append(est)
        return 1.5

    name, score = resolve_scoring(None, owner="M", default=("mine", scorer), view=lambda o: ("view", o))
    assert name == "mine" and score(7, None, None) == 1.5 and calls == [("view", 7)]
    name, score = resolve_scoring(None, owner="M", default="r2")
    assert name == "r2"
    with pytest.raises(ValueError, match=re.escape("The 'scoring' parameter of M must be None")):
        resolve_scoring(None, owner="M", default="nope")
