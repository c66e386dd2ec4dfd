"""What metric=cegb_cost adds per iteration to a training evaluated on a large validation set.

A model is trained once (metrics ``l2`` and ``cegb_cost``); then, repeatedly (min and median over
repeats), the validation set is added to it (``Booster.add_valid``: LightGBM routes every row through
every tree to compute its scores) and evaluated once (``eval_valid``: ``cegb_cost`` walks every row
through every tree, as it walks one new tree per iteration while training). Both divided by the
number of trees: the metric's time per iteration against LightGBM's own score update on the same
rows. For comparison, measuring the model the other way once: ``budget_extras.cost_report`` (the
model saved, parsed and every row re-predicted). Gate: the metric equals that report.

    python -m benchmarks.cegb.cegb_cost_metric_speed [--rows 20000] [--valid-rows 100000] [--cols 50]
        [--leaves 31] [--rounds 100] [--repeats 5] [--threads 1] [--quick]

Writes benchmarks/results/cegb_cost_metric_speed.json (not committed: the numbers are copied into
docs/cegb.md). ``--quick``: 5,000 training rows, 20,000 validation rows, 20 rounds, one repeat.
"""

from __future__ import annotations

import statistics
import sys
import time

import lightgbm as lgb

from benchmarks._runner import parse, script_parser, synthetic_regression, write_results
from budget_extras import TreeEnsemble, cost_report


def _add_and_eval(booster, train, Xv, yv):
    """Seconds to add the validation rows (LightGBM scores them) and to evaluate them once; the values."""
    valid = lgb.Dataset(Xv, yv, reference=train)
    valid.construct()  # binning outside the timed part
    start = time.perf_counter()
    booster.add_valid(valid, "valid")
    added = time.perf_counter()
    values = {name: value for _, name, value, _ in booster.eval_valid()}
    done = time.perf_counter()
    return added - start, done - added, values


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__doc__, result_name="cegb_cost_metric_speed", data=False,
                           quick={"rows": 5_000, "valid_rows": 20_000, "rounds": 20, "repeats": 1})
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--valid-rows", type=int, default=100_000)
    parser.add_argument("--cols", type=int, default=50)
    parser.add_argument("--leaves", type=int, default=31)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parse(parser, argv)

    X, y, base, lazy = synthetic_regression(args.rows + args.valid_rows, args.cols, leaves=args.leaves,
                                            threads=args.threads)
    X, Xv, y, yv = X[: args.rows], X[args.rows :], y[: args.rows], y[args.rows :]
    params = dict(base, cegb_tradeoff=1e-4, cegb_penalty_feature_lazy=lazy, metric=["l2", "cegb_cost"])
    train = lgb.Dataset(X, y, free_raw_data=False)
    score_ms, metric_ms = [], []
    for _ in range(args.repeats):  # each repeat trains the same model, without a validation set
        booster = lgb.train(params, train, args.rounds, keep_training_booster=True)
        trees = booster.num_trees()
        add_s, eval_s, values = _add_and_eval(booster, train, Xv, yv)
        if "cegb_cost" not in values:
            parser.error(f"needs a lightgbm-cegb build with metric=cegb_cost (found lightgbm {lgb.__version__}, "
                         f"whose metrics gave {sorted(values)})")
        score_ms.append(add_s / trees * 1e3)
        metric_ms.append(eval_s / trees * 1e3)
    start = time.perf_counter()
    report = cost_report(TreeEnsemble.from_booster(booster), Xv, lazy, feature_counts=False)
    report_seconds = time.perf_counter() - start
    expected = float(report.total_cost.mean()) + report.coupled_cost
    got = values["cegb_cost"]
    gate = abs(got - expected) <= 1e-9 * max(1.0, expected)

    print(f"{args.rows} training rows, {args.valid_rows} validation rows, {args.cols} features, "
          f"{args.leaves} leaves, {trees} trees, {args.threads} thread(s), {args.repeats} repeats")
    print(f"{'per tree (= per iteration) on the validation rows':52s} {'min ms':>8s} {'median ms':>10s}")
    for name, t in (("LightGBM's score update (add_valid)", score_ms), ("metric cegb_cost (eval_valid)", metric_ms)):
        print(f"{name:52s} {min(t):8.3f} {statistics.median(t):10.3f}")
    print(f"one cost_report of the final model on the validation rows: {report_seconds:.3f} s")
    print(f"gate (cegb_cost == cost_report, {got:.6f} vs {expected:.6f}): {'OK' if gate else 'FAILED'}")
    write_results(args.out, {
        "settings": {k: getattr(args, k) for k in ("rows", "valid_rows", "cols", "leaves", "rounds", "repeats",
                                                    "threads")},
        "trees": trees, "score_update_ms_per_tree": score_ms, "cegb_cost_ms_per_tree": metric_ms,
        "cost_report_seconds": report_seconds, "cegb_cost": got, "cost_report_cost": expected, "gate": gate,
    }, "lightgbm", "numpy")
    return 0 if gate else 1


if __name__ == "__main__":
    sys.exit(main())
