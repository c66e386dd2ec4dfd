"""The main job: train thyroid models to a per-patient test budget, with real test costs.

Run ``python -m budget_extras.demo`` (``bash run.sh demo`` installs everything first).

On the UCI thyroid data embedded in this package, with P. Turney's per-test costs (TT4, T4U
and FTI bought together: FTI is computed from them), it splits the training patients into
training and validation rows (2:1, stratified), and compares the models on the test patients:

* plain LightGBM (no cost penalty);
* the best top-k feature subset at the budget: features ranked by the plain model's gain, a
  model trained on the top k for every k, and the most accurate on validation among those whose
  mean per-patient VALIDATION cost fits the budget;
* ``train_to_budget``: the most accurate of its candidates (plain, top-k subsets, greedy
  forward selection, CEGB's lazy costs, smaller trees) whose mean validation cost fits the
  budget, chosen on the same validation rows as the top-k pick (``choose="valid"``; by default
  a table this size is chosen by cross-validation). Its top-k grid holds every k, so the top-k
  choice above is one of its candidates;
* with the fork, ``train_to_budget(search="fast")``: the fork's learner budget (``cegb_budget``,
  also with small trees) and top-k subsets within the budget, about four trainings.

For each it prints validation and test accuracy and the mean cost per patient actually paid (the
tests on the patient's paths through all trees, each paid once), the trainings it took and
their seconds, and it draws the search's candidates, Pareto front and choice
(``BudgetTrainResult.plot``) to a PNG.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .core._params import is_integer, is_real

__all__ = ["main", "run_demo"]

DEFAULT_PLOT = "thyroid_frontier.png"
#: The first line of the printed table.
HEADER = (
    f"{'model':28s} {'valid acc':>9s} {'valid cost':>10s} {'test acc':>9s} {'test cost':>9s} {'features':>8s} "
    f"{'trainings':>9s} {'seconds':>7s}"
)
PARAMS: dict[str, Any] = {
    "objective": "multiclass",
    "num_class": 3,
    "num_leaves": 15,
    "learning_rate": 0.1,
    "min_data_in_leaf": 5,
    "verbose": -1,
    "seed": 1,
    "num_threads": 1,
}


def _measure(booster: Any, X: np.ndarray, y: np.ndarray, costs: Any) -> tuple[float, float, int]:
    """Accuracy, mean per-row cost and the number of features any row pays for."""
    from .core._ensemble import TreeEnsemble
    from .core._report import cost_report

    accuracy = float((np.asarray(booster.predict(X)).argmax(axis=1) == y).mean())
    report = cost_report(TreeEnsemble.from_booster(booster), X, costs)
    used = int(np.asarray(report.acquired.sum(axis=0)).ravel().astype(bool).sum())
    return accuracy, float(report.total_cost.mean()), used


def _check_plot_path(plot: str | os.PathLike[str] | None) -> Path | None:
    """Refuse, before any work, a plot path that is not a new or earlier ``.png`` file."""
    if plot is None:
        return None
    path = Path(plot)
    if path.suffix.lower() != ".png":
        raise ValueError(f"The 'plot' argument must name a .png file. Got {str(path)!r}.")
    if path.is_dir():
        raise ValueError(f"The 'plot' argument must name a file, not a directory. Got {str(path)!r}.")
    if path.exists() and path.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(
            f"The 'plot' argument names an existing file that is not a PNG image: {str(path)!r}; "
            "refusing to overwrite it."
        )
    if not path.resolve().parent.is_dir():
        raise ValueError(f"The 'plot' argument's folder does not exist: {str(path.parent)!r}.")
    return path


def _save_plot(result: Any, path: Path, budget: float) -> None:
    """Draw ``result.plot()`` into ``path`` (written to a temporary file, then renamed into place)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, 4.5), layout="constrained")
    ax = result.plot(ax=fig.subplots())
    ax.set_title(f"train_to_budget on thyroid (3 classes), budget {budget:g} per patient")
    fd, tmp = tempfile.mkstemp(suffix=".png", dir=path.resolve().parent)
    os.close(fd)
    try:
        fig.savefig(tmp, format="png", dpi=110)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _best_topk(
    lgb: Any, plain: Any, train: Any, valid: tuple[np.ndarray, np.ndarray], costs: Any, budget: float, rounds: int
) -> tuple[Any, int, int, float]:
    """Top-k by the plain model's gain, every k trained; the best on validation within ``budget``.

    Returns the chosen booster (None if no k fits), its k, the trainings run and their seconds.
    """
    from .core._status import fits_budget

    gain = np.asarray(plain.feature_importance("gain"), dtype=np.float64)
    used = np.flatnonzero(gain > 0)
    order = used[np.argsort(-gain[used], kind="stable")]
    best: tuple[float, int, Any] | None = None
    start = time.perf_counter()
    for k in range(1, order.size + 1):
        sub = sorted(int(i) for i in order[:k])
        booster = (
            plain
            if k == order.size
            else lgb.train({**PARAMS, "interaction_constraints": [sub]}, train, num_boost_round=rounds)
        )
        accuracy, cost, _ = _measure(booster, *valid, costs)
        if fits_budget(cost, budget) and (best is None or accuracy > best[0]):  # ties: the smaller k
            best = (accuracy, k, booster)
    seconds = time.perf_counter() - start
    if best is None:
        return None, 0, order.size - 1, seconds
    return best[2], best[1], order.size - 1, seconds


def _knobs(chosen: Any) -> str:
    """Describe a train_to_budget candidate: its family and knobs."""
    details = [f"k={chosen.k}"] if chosen.k is not None else []
    details += [f"tradeoff {chosen.tradeoff:.3g}"] if chosen.tradeoff is not None else []
    details += [f"{chosen.params['num_leaves']} leaves"] if "num_leaves" in chosen.params else []
    return str(chosen.family) + (f" ({', '.join(details)})" if details else "")


def _print_table(
    rows: list[dict[str, Any]], status: str, family: str, k: int | None, budget: float, out: Any
) -> None:
    """Print the models' table and what the search chose."""
    print("\n" + HEADER, file=out)
    for r in rows:
        print(
            f"{r['model']:28s} {r['valid_accuracy']:9.4f} {r['valid_cost']:10.2f} {r['accuracy']:9.4f} "
            f"{r['mean_cost']:9.2f} {r['features_used']:8d} {r['trainings']:9d} {r['seconds']:7.1f}",
            file=out,
        )
    if k is None:
        print(f"(no top-k subset fits budget {budget:g} on validation)", file=out)
    tb = next(r for r in rows if r["model"] == "train_to_budget")
    print(
        f"\ntrain_to_budget: {status}, chose {family} among {tb['candidates']} candidates; "
        f"{tb['trainings']} LightGBM trainings (greedy selection's short proxy fits included) "
        f"in {tb['seconds']:.1f} s.",
        file=out,
    )
    fast = next((r for r in rows if r["model"] == "train_to_budget, fast"), None)
    if fast is not None:
        print(
            f"train_to_budget(search='fast'): {fast['status']}, chose {fast['family']} among its capped models "
            f"(cegb_budget) and top-k subsets; {fast['trainings']} trainings in {fast['seconds']:.1f} s.",
            file=out,
        )
    print(
        "test cost = mean over test patients of the tests on their paths, each paid once (TT4, T4U and FTI "
        "are one purchase); features = those any test patient pays for; every choice made on validation.",
        file=out,
    )


def _search(train: Any, valid: tuple[Any, Any], costs: Any, budget: float, rounds: int, **options: Any) -> Any:
    """Return ``train_to_budget``'s result on the demo's rows (``options``: its keyword arguments)."""
    import pandas as pd

    from .cegb import train_to_budget

    options.setdefault("choose", "valid")  # on the top-k pick's validation rows, so the columns compare
    X_va = pd.DataFrame(valid[0], columns=train.feature_name)  # the columns matched by name
    return train_to_budget(PARAMS, train, budget=budget, valid_set=(X_va, valid[1]), costs=costs,
                           num_boost_round=rounds, progress=False, **options)


def run_demo(
    *, budget: float = 30.0, rounds: int = 150, plot: str | os.PathLike[str] | None = DEFAULT_PLOT, out: Any = None
) -> list[dict[str, Any]]:
    """Train plain LightGBM, the best top-k subset and ``train_to_budget`` (full and fast); print and return the table.

    Parameters
    ----------
    budget : float, default=30.0
        Mean test cost per patient allowed (the full panel of tests costs 76.11; TSH alone 22.78).
    rounds : int, default=150
        Boosting rounds of every model.
    plot : path, default="thyroid_frontier.png"
        Where to draw the search's frontier (``BudgetTrainResult.plot``); a ``.png`` file that is
        new or an earlier PNG (any other existing file is refused). None: no picture.
    out : file-like, optional
        Where to print (default: standard output).

    Returns
    -------
    list of dict
        One row per model: ``model``, ``valid_accuracy``, ``valid_cost``, ``accuracy`` and
        ``mean_cost`` (test), ``features_used`` (test), ``trainings`` and ``seconds``; the
        ``train_to_budget`` rows (``"train_to_budget"``, with the fork also
        ``"train_to_budget, fast"``) also ``family``, ``status`` and ``candidates``.

    Raises
    ------
    ValueError
        If ``budget`` or ``rounds`` is not positive, or ``plot`` is refused.
    """
    import lightgbm as lgb
    from sklearn.model_selection import train_test_split

    from .datasets import load_thyroid

    if not is_real(budget) or not np.isfinite(budget) or budget <= 0:
        raise ValueError(f"The 'budget' argument must be a positive finite number. Got {budget!r}.")
    if not is_integer(rounds) or rounds < 1:
        raise ValueError(f"The 'rounds' argument must be a positive integer. Got {rounds!r}.")
    plot_path = _check_plot_path(plot)
    if plot_path is not None:
        from .plotting._mpl import matplotlib

        matplotlib()  # a missing matplotlib stops here, before any training
    out = out or sys.stdout
    data = load_thyroid()
    names = list(data.feature_names)
    costs = data.costs
    X_tr, X_va, y_tr, y_va = train_test_split(
        data.X_train, data.y_train, test_size=1 / 3, stratify=data.y_train, random_state=0
    )
    X_te, y_te = data.X_test, data.y_test
    is_fork = "+cegb" in getattr(lgb, "__version__", "")
    print(f"lightgbm {lgb.__version__}{' (lightgbm-cegb fork)' if is_fork else ''}", file=out)
    print(
        f"thyroid: {len(y_tr)} training, {len(y_va)} validation and {len(y_te)} test patients, {len(names)} "
        f"features; the full panel of tests costs {costs.row_cost(np.ones((1, len(names)), bool))[0]:.2f}, "
        f"budget {budget:g} per patient",
        file=out,
        flush=True,
    )
    train = lgb.Dataset(X_tr, y_tr, feature_name=names, free_raw_data=False)

    rows: list[dict[str, Any]] = []

    def add(label: str, booster: Any, trainings: int, seconds: float, **extra: Any) -> None:
        va_acc, va_cost, _ = _measure(booster, X_va, y_va, costs)
        te_acc, te_cost, used = _measure(booster, X_te, y_te, costs)
        rows.append(
            {
                "model": label,
                "valid_accuracy": va_acc,
                "valid_cost": va_cost,
                "accuracy": te_acc,
                "mean_cost": te_cost,
                "features_used": used,
                "trainings": trainings,
                "seconds": seconds,
                **extra,
            }
        )

    start = time.perf_counter()
    plain = lgb.train(PARAMS, train, num_boost_round=rounds)
    add("LightGBM (no cost penalty)", plain, 1, time.perf_counter() - start)

    topk, k, n_topk, topk_seconds = _best_topk(lgb, plain, train, (X_va, y_va), costs, float(budget), rounds)
    if topk is not None:
        add(f"best top-k by gain (k={k})", topk, n_topk, topk_seconds)

    n_used = int((np.asarray(plain.feature_importance("gain")) > 0).sum())
    result = _search(lgb.Dataset(X_tr, y_tr, feature_name=names), (X_va, y_va), costs, float(budget), rounds,
                     k_grid=list(range(1, max(2, n_used))))
    family = _knobs(result.chosen)
    add(
        "train_to_budget",
        result.booster,
        int(result.nfev),
        float(result.seconds["total"]),
        family=family,
        status=result.status.name,
        candidates=len(result.frontier),
    )

    if is_fork:  # the fork's learner budget: about four trainings per budget
        fast = _search(lgb.Dataset(X_tr, y_tr, feature_name=names), (X_va, y_va), costs, float(budget), rounds,
                       search="fast")
        add("train_to_budget, fast", fast.booster, int(fast.nfev), float(fast.seconds["total"]),
            family=_knobs(fast.chosen), status=fast.status.name, candidates=len(fast.frontier))

    _print_table(rows, result.status.name, family, None if topk is None else k, float(budget), out)
    if plot_path is not None:
        _save_plot(result, plot_path, float(budget))
        print(
            f"frontier (every candidate's validation cost and accuracy, the Pareto front, the choice): {plot_path}",
            file=out,
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point of ``python -m budget_extras.demo``.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status.
    """
    parser = argparse.ArgumentParser(
        prog="python -m budget_extras.demo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=30.0,
        help="mean test cost allowed per patient (default 30; all tests cost 76.11)",
    )
    parser.add_argument("--rounds", type=int, default=150, help="boosting rounds per model (default 150)")
    parser.add_argument(
        "--plot",
        default=DEFAULT_PLOT,
        metavar="FILE.png",
        help=f"where to draw the frontier (default ./{DEFAULT_PLOT}; an existing file must be a PNG)",
    )
    parser.add_argument("--no-plot", action="store_true", help="draw no picture (no matplotlib needed)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be a positive integer, got {args.rounds}")
    if not np.isfinite(args.budget) or args.budget <= 0:
        parser.error(f"--budget must be a positive finite number, got {args.budget}")
    plot = None if args.no_plot else args.plot
    try:
        _check_plot_path(plot)
    except ValueError as exc:
        parser.error(f"--plot: {exc}")
    run_demo(budget=args.budget, rounds=args.rounds, plot=plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
