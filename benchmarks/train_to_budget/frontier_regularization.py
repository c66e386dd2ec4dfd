"""Can plain LightGBM, regularized and chosen on validation, reach CatBoost's unconstrained score?

The frontier harness's remaining misses of its first target (docs/frontier.md, "Targets") are cells where CatBoost beats
every LightGBM-based candidate at 75-100% of the unconstrained cost. This script trains
unconstrained LightGBM (200 rounds, learning rate 0.05, as the harness) with one regularization
knob changed at a time on the harness's splits, and prints the validation and test AUC (seed
means) and the test AUC of the variant chosen on validation per seed; the same numbers go to
benchmarks/results/frontier_regularization.json (not committed: the tables are in the doc).

    python -m benchmarks.train_to_budget.frontier_regularization --data-dir ../shared/data --datasets magic adult
"""

from __future__ import annotations

from typing import Any

import lightgbm as lgb
import numpy as np
from sklearn.metrics import roc_auc_score

from benchmarks._runner import parse, script_parser, write_results
from benchmarks.train_to_budget import _data as fd

BASE: dict[str, Any] = dict(objective="binary", learning_rate=0.05, num_leaves=31, verbose=-1, num_threads=1,
                            deterministic=True)
VARIANTS: dict[str, dict[str, Any]] = {
    "31 leaves (harness)": {},
    "15 leaves": dict(num_leaves=15),
    "7 leaves": dict(num_leaves=7),
    "lambda_l2 10": dict(lambda_l2=10),
    "min_data_in_leaf 40": dict(min_data_in_leaf=40),
    "path_smooth 10": dict(path_smooth=10),
    "extra_trees": dict(extra_trees=True),
    "feature_fraction 0.7": dict(feature_fraction=0.7),
    "bagging 0.8": dict(bagging_fraction=0.8, bagging_freq=1),
}


def main(argv: list[str] | None = None) -> int:
    ap = script_parser(__doc__.splitlines()[0], result_name="frontier_regularization",
                       quick={"datasets": ["magic"], "seeds": 1})
    ap.add_argument("--datasets", nargs="+", default=["magic", "adult"])
    ap.add_argument("--seeds", type=int, default=3)
    args = parse(ap, argv)
    out: dict[str, Any] = {}
    for name in args.datasets:
        ds = fd.LOADERS[name](args.data_dir)
        if ds.task != "binary":
            raise SystemExit(f"{name}: binary datasets only")
        scores = {k: [] for k in VARIANTS}
        for seed in range(args.seeds):
            s = fd.split(ds, seed, 6000)
            for k, v in VARIANTS.items():
                b = lgb.train({**BASE, **v, "seed": seed}, lgb.Dataset(s.X_train, s.y_train), 200)
                scores[k].append((roc_auc_score(s.y_valid, b.predict(s.X_valid)),
                                  roc_auc_score(s.y_test, b.predict(s.X_test))))
        arr = {k: np.array(v) for k, v in scores.items()}
        chosen = [max(arr, key=lambda k, i=i: arr[k][i, 0]) for i in range(args.seeds)]
        print(f"## {name}\n\n| variant | validation AUC | test AUC |\n|---|---|---|")
        for k, a in arr.items():
            print(f"| {k} | {a[:, 0].mean():.4f} | {a[:, 1].mean():.4f} |")
        test = np.mean([arr[k][i, 1] for i, k in enumerate(chosen)])
        print(f"| chosen on validation per seed ({', '.join(chosen)}) | | {test:.4f} |\n")
        out[name] = {"seeds": args.seeds, "chosen_per_seed": chosen, "chosen_test_auc": float(test),
                     "variants": {k: {"validation_auc": float(a[:, 0].mean()), "test_auc": float(a[:, 1].mean())}
                                  for k, a in arr.items()}}
        write_results(args.out, {"base_params": BASE, "rounds": 200, "datasets": out}, "lightgbm")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
