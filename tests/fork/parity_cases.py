"""Training cases for the parity suite: the same code runs on the fork and on upstream LightGBM.

``python parity_cases.py OUT_DIR`` trains every case with the ``lightgbm`` it imports and writes
``<case>.model.txt`` and ``<case>.pred.npy`` (raw scores on the case's data) into OUT_DIR.
Only numpy and lightgbm are needed, so it runs in the upstream wheel's virtual environment.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

COMMON = {"verbose": -1, "num_threads": 2, "deterministic": True, "force_col_wise": True, "seed": 3}


def _data(kind: str, n: int = 1500, d: int = 8, seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] + 0.7 * X[:, 1] * X[:, 2] + 0.4 * np.sin(2 * X[:, 3]) + 0.2 * X[:, 4:].sum(axis=1)
    out: dict[str, Any] = {"X": X}
    if kind == "regression":
        out["y"] = score + 0.1 * rng.normal(size=n)
    elif kind == "binary":
        out["y"] = (score + 0.3 * rng.normal(size=n) > 0).astype(float)
    elif kind == "multiclass":
        out["y"] = np.digitize(score + 0.3 * rng.normal(size=n), [-0.7, 0.0, 0.7]).astype(float)
    elif kind == "rank":
        out["y"] = np.clip(np.round(score + 1.5 + 0.3 * rng.normal(size=n)), 0, 4)
        out["group"] = [50] * (n // 50)
    elif kind == "categorical":
        X[:, 0] = rng.integers(0, 12, size=n)
        X[:, 1] = rng.integers(0, 4, size=n)
        effect = np.array([0.5, -1, 2, 0, 1, -0.5, 0.3, 1.5, -2, 0.8, 0.1, -1.2])
        out["y"] = effect[X[:, 0].astype(int)] + X[:, 1] * 0.3 + X[:, 2] + 0.1 * rng.normal(size=n)
        out["categorical_feature"] = [0, 1]
    elif kind == "missing":
        X[rng.random(size=X.shape) < 0.15] = np.nan
        X[rng.random(size=X.shape) < 0.1] = 0.0
        out["y"] = np.nan_to_num(score) + 0.1 * rng.normal(size=n)
    return out


CASES: dict[str, tuple[str, dict[str, Any], int]] = {
    "regression": ("regression", {"objective": "l2", "num_leaves": 31}, 30),
    "binary": ("binary", {"objective": "binary", "num_leaves": 15}, 30),
    "multiclass": ("multiclass", {"objective": "multiclass", "num_class": 4, "num_leaves": 15}, 15),
    "lambdarank": ("rank", {"objective": "lambdarank", "num_leaves": 15}, 20),
    "rf": ("binary", {"objective": "binary", "boosting": "rf", "bagging_fraction": 0.6, "bagging_freq": 1,
                      "feature_fraction": 0.8}, 20),
    "goss": ("regression", {"objective": "l2", "data_sample_strategy": "goss"}, 30),
    "bagging": ("regression", {"objective": "l2", "bagging_fraction": 0.7, "bagging_freq": 2}, 30),
    "categorical": ("categorical", {"objective": "l2", "num_leaves": 15}, 30),
    "missing": ("missing", {"objective": "l2", "num_leaves": 15}, 30),
    "missing_zero": ("missing", {"objective": "l2", "num_leaves": 15, "zero_as_missing": True}, 30),
    "linear_tree": ("regression", {"objective": "l2", "linear_tree": True, "num_leaves": 8}, 15),
    "dart": ("regression", {"objective": "l2", "boosting": "dart", "drop_rate": 0.2}, 20),
    # Interaction constraints: histograms only for the features a constraint names, the same trees.
    "interaction": ("binary", {"objective": "binary", "num_leaves": 15,
                               "interaction_constraints": [[0, 1, 2], [2, 3], [6]]}, 30),
    "interaction_row_wise": ("regression", {"objective": "l2", "force_col_wise": False, "force_row_wise": True,
                                            "interaction_constraints": [[1, 2, 4], [0, 7]]}, 30),
    "interaction_sampled": ("regression", {"objective": "l2", "feature_fraction": 0.7,
                                           "feature_fraction_bynode": 0.8, "bagging_fraction": 0.7,
                                           "bagging_freq": 1, "interaction_constraints": [[0, 1, 2, 3], [3, 5]]}, 30),
    "interaction_categorical": ("categorical", {"objective": "l2", "num_leaves": 15,
                                                "interaction_constraints": [[0, 2], [1]]}, 30),
    # CEGB on, in configurations that no fix of the fork changes.
    "cegb_split": ("regression", {"objective": "l2", "cegb_penalty_split": 0.05}, 30),
    "cegb_lazy": ("regression", {"objective": "l2", "cegb_tradeoff": 0.1,
                                 "cegb_penalty_feature_lazy": [3, 1, 1, 2, 0.5, 0.5, 1, 1]}, 30),
    "cegb_lazy_multiclass": ("multiclass", {"objective": "multiclass", "num_class": 4, "cegb_tradeoff": 0.1,
                                            "cegb_penalty_feature_lazy": [3, 1, 1, 2, 0.5, 0.5, 1, 1]}, 10),
    "cegb_lazy_interaction": ("regression", {"objective": "l2", "cegb_tradeoff": 0.1,
                                             "cegb_penalty_feature_lazy": [3, 1, 1, 2, 0.5, 0.5, 1, 1],
                                             "interaction_constraints": [[0, 1, 2], [3, 4]]}, 30),
}


def train_case(lgb: Any, name: str) -> tuple[str, np.ndarray, dict[str, Any]]:
    """Train one case; return (model text, raw predictions, data)."""
    kind, params, rounds = CASES[name]
    data = _data(kind)
    ds = lgb.Dataset(data["X"], data["y"], group=data.get("group"),
                     categorical_feature=data.get("categorical_feature", "auto"),
                     params={"verbose": -1})
    booster = lgb.train(dict(COMMON, **params), ds, num_boost_round=rounds)
    return booster.model_to_string(), booster.predict(data["X"], raw_score=True), data


def main(out_dir: str) -> None:
    """Write every case's model and predictions into out_dir."""
    import lightgbm

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name in CASES:
        model, pred, _ = train_case(lightgbm, name)
        (out / f"{name}.model.txt").write_text(model)
        np.save(out / f"{name}.pred.npy", pred)


if __name__ == "__main__":
    main(sys.argv[1])
