"""The time floor of pruning a boosted model post hoc, in trainings of the model.

Usage::

    python -m benchmarks.budgetprune.gbdt_prune_floor --data-dir ../shared/data [--datasets thyroid heart adult magic]
        [--quick] [--out benchmarks/results/gbdt_prune_floor.json]

Same data, costs and model as ``benchmarks/budgetprune/gbdt_prune.py`` (200 trees, one thread). Any method
that drops features and refits the leaf values must at least (1) read the model, (2) refit the
leaf values once on the training rows and (3) measure the cost of the result on the validation
rows to know that it meets the budget. Each step is timed with the fastest tool at hand, median
of 5 repeats, against the median of 3 trainings:

* read: ``TreeEnsemble.from_booster`` (``model_to_string`` and the parse into arrays);
* refit: LightGBM's own C++ ``Booster.refit(X_train, y_train, decay_rate=0)`` (one pass of the
  training rows through every tree, new leaf values), not the package's refit;
* measure: ``cost_report`` of the model on the validation rows (the features on each row's paths).

The sum is a lower bound on the fit time of such a method in this package; where it exceeds two
trainings, a fit time of at most two trainings is out of reach on that dataset. ``--quick``: heart only.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._runner import parse, script_parser, write_results
from benchmarks.budgetprune.gbdt_prune import prepare, train
from budget_extras import TreeEnsemble, cost_report


def _median_time(fn: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run(name: str, data_dir: Path) -> dict[str, Any]:
    """Time training, reading, one C++ refit and one validation cost measurement of one dataset's model."""
    splits, costs, n_class, booster, _, _ = prepare(name, data_dir)
    (Xa, ya), (Xb, _), _ = splits
    t_train = _median_time(lambda: train(Xa, ya, n_class), 3)
    ens = TreeEnsemble.from_booster(booster)
    cost_map = costs.reindex(list(ens.feature_names)).to_dict()
    steps = {
        "read": _median_time(lambda: TreeEnsemble.from_booster(booster), 5),
        "refit_cxx": _median_time(lambda: booster.refit(Xa, np.asarray(ya), decay_rate=0.0), 5),
        "measure": _median_time(lambda: cost_report(ens, Xb, cost_map), 5),
    }
    floor = sum(steps.values())
    out = {"dataset": name, "train_rows": len(Xa), "valid_rows": len(Xb), "train_seconds": t_train,
           "seconds": steps, "floor_seconds": floor, "floor_trainings": floor / t_train}
    print(f"{name}: training {t_train:.3f} s; read {steps['read']:.3f}, C++ refit {steps['refit_cxx']:.3f}, "
          f"measure {steps['measure']:.3f} s; floor {floor:.3f} s = {floor / t_train:.2f} trainings", flush=True)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = script_parser(__doc__, result_name="gbdt_prune_floor", quick={"datasets": ["heart"]})
    ap.add_argument("--datasets", nargs="+", default=["thyroid", "heart", "adult", "magic"])
    args = parse(ap, argv)
    results = [run(name, args.data_dir) for name in args.datasets]
    write_results(args.out, {"results": results}, "numpy", "lightgbm")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
