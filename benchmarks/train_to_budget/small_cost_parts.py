"""What one cross-validated budget costs on small tables: every LightGBM training by kind, and the floor.

The lean search's one-budget call with its cross-validated choice (``search="lean"``,
``choose="auto"``, 40% of the plain model's validation cost), as ``small_data.py --search lean
--budgets one`` runs it, with every LightGBM training counted by kind and its CPU time read:

* ``plain``: plain LightGBM on every training row (it ranks the features);
* ``proxy``: the search's candidates (the lean proxies: a share of the rounds), by family
  (``topk``: the top-k subsets; ``lazy``: every CEGB family);
* ``greedy``: greedy forward selection's fits (none with the lean defaults);
* ``fold fit``: a configuration trained on one fold's fit rows (``every round``, or ``stopped
  early`` where LightGBM stopped before the last round: no split left, a constant model the first time);
* ``cv refit``: a pick trained on every pooled row.

Beside the trainings: the measurements of the candidates on the validation rows, the fold fits'
predictions on their held-out rows, the refits' costs on the pooled rows, the model texts, the
binning of the training rows and of the pool (with the fork, a fold fit's trees are read by
``LGBM_BoosterGetTreeArrays`` instead of its model text; ``--model-text`` reads the text, as with
upstream LightGBM). Each part is timed exclusively (a training inside
a measured step counts as training only); ``rest`` is the search's CPU time outside every part.
Nothing in the search changes: the functions are wrapped for the call and restored.

From the parts, per table: a fold fit's CPU (training, and training with its held-out
predictions) as a multiple of one plain training (binning included, the median of three in the
same process), and the floor of a cross-validated choice: ``F`` folds (15 below 1,000 pooled rows,
5 above) times the fewest configurations the choice can cross-validate (the pick, its top-k
rival and the constant model of the noise warning), plus the pick's refit on the pooled rows.

    python -m benchmarks.train_to_budget.small_cost_parts --data-dir ../shared/data
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from benchmarks._runner import parse, script_parser
from benchmarks.train_to_budget.small_data import ROUNDS, cell_setup

TABLES = "heart,magic500,higgs1500,magic1500,adult1500,letter1500,adult_rare5000,magic5000,thyroid"
#: The fewest configurations a cross-validated choice can hold: the pick, its top-k rival, the constant model.
S_MIN = 3


class Parts:
    """Exclusive CPU time and calls of the wrapped functions, by label (a stack of the running ones)."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._stack: list[list[Any]] = []  # [label, CPU of the calls inside it]

    def wrap(self, fn: Callable[..., Any], label: str | Callable[[Any], str]) -> Callable[..., Any]:
        """Return ``fn`` timed under ``label`` (a callable: the label from ``fn``'s result, read after it)."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            frame = [None, 0.0]
            self._stack.append(frame)
            t0 = time.process_time()
            try:
                out = fn(*args, **kwargs)
            finally:
                dt = time.process_time() - t0
                self._stack.pop()
            name = label(out) if callable(label) else label
            self.cpu[name] += dt - frame[1]
            self.calls[name] += 1
            if self._stack:
                self._stack[-1][1] += dt
            return out

        return timed


def _training_kind(rounds: int) -> Callable[[Any], str]:
    """Return the labeller of one ``lightgbm.train`` call: its kind, read from the calling frames."""

    def kind(booster: Any) -> str:
        f = sys._getframe(2)
        while f is not None:
            name = f.f_code.co_name
            if name == "_fit_fold":
                return "fold fit " + ("(every round)" if booster.current_iteration() >= rounds else "(stopped early)")
            if name == "refit" and f.f_code.co_filename.endswith("_cv.py"):
                return "cv refit"
            if name == "_greedy_score":
                return "greedy"
            if name == "_train_one":
                s, spec = f.f_locals["self"], f.f_locals["spec"]
                group = next((g for g in ("topk", "lazy") if spec.family.startswith(g)), spec.family)
                return (f"proxy: {group}" if s.proxy else "plain" if spec.family == "all" else "full-round candidate")
            f = f.f_back
        return "other training"

    return kind


def _context() -> str:
    """Return what the running step serves: a fold fit, a cv refit, or the search's candidates."""
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_name == "_fit_fold":
            return "fold fits"
        if f.f_code.co_name == "refit" and f.f_code.co_filename.endswith("_cv.py"):
            return "cv refits"
        f = f.f_back
    return "candidates"


def _in_context(what: str) -> Callable[[Any], str]:
    return lambda _: f"{_context()}: {what}"


def _no_tree_arrays(booster: Any) -> None:
    """``_compat.tree_arrays`` of upstream LightGBM: no arrays, the model text is read."""
    return None


@contextmanager
def instrumented(parts: Parts, rounds: int, model_text: bool = False) -> Iterator[None]:
    """Wrap LightGBM's training and the search's measuring steps for the call; restore them after.

    Trainings are labelled by kind; LightGBM's predictions and model texts by what they serve
    (candidates on the validation rows, fold fits on their held-out rows, refits on the pooled
    rows); the rest of each measurement (the leaf paths read from the trees' arrays or the model
    text, the cost and score arithmetic) by its step. ``model_text``: the fold fits are measured
    from their model texts even where the fork gives the trees' arrays.
    """
    import lightgbm as lgb

    from budget_extras.cegb import _cv, _measure, _scoring, _search, _train_to_budget

    targets = [
        (lgb, "train", _training_kind(rounds)),
        (lgb.Booster, "model_to_string", _in_context("model texts")),
        (lgb.Booster, "model_from_string", _in_context("model texts")),
        (_measure, "tree_arrays", _in_context("tree arrays (the fork's LGBM_BoosterGetTreeArrays)")),
        (_measure, "predict", _in_context("LightGBM predictions")),
        (_scoring, "booster_predict", _in_context("LightGBM predictions")),
        (_search.Search, "measure", "candidates: the rest of measuring (leaf paths, costs, score)"),
        (_search.Search, "_train_one", "candidates: the rest"),
        (_cv, "_fit_fold", "fold fits: the rest of measuring (leaf paths, costs, score)"),
        (_cv, "refit", "cv refits: the rest of measuring"),
        (_cv, "make_pool", "pooling and the folds' Datasets"),
        (_train_to_budget, "_construct", "binning the training rows"),
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in targets]
    try:
        for owner, name, label in targets:
            untimed = model_text and (owner, name) == (_measure, "tree_arrays")  # no arrays: the text is read
            setattr(owner, name, _no_tree_arrays if untimed else parts.wrap(getattr(owner, name), label))
        yield
    finally:
        for owner, name, fn in saved:
            setattr(owner, name, fn)


def run_cell(args: tuple[Any, ...]) -> dict:
    """One table and seed: the lean one-budget cross-validated search, its parts timed."""
    import lightgbm as lgb

    from budget_extras import train_to_budget

    data_dir, table, seed, search, options, model_text = args
    ds, sp, fc, params, _, plain_cpu, full_cost = cell_setup(data_dir, table, seed)
    budget = 0.4 * full_cost
    parts = Parts()
    with instrumented(parts, ROUNDS, model_text), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        r = train_to_budget(params, lgb.Dataset(sp.X_train, sp.y_train, feature_name=ds.names), budget=budget,
                            valid_set=(sp.X_valid, sp.y_valid), costs=fc, num_boost_round=ROUNDS, progress=False,
                            choose="auto", search=search, options=options)
        search_cpu = time.process_time() - t0
    cvs = [c for c in r.frontier if c.folds > 0]
    rest = search_cpu - sum(parts.cpu.values())
    return {"table": table, "seed": seed, "rows": int(len(sp.y_train) + len(sp.y_valid)), "search": search,
            "options": options, "model_text": model_text, "plain_cpu": plain_cpu, "search_cpu": search_cpu,
            "search_trainings": search_cpu / plain_cpu, "folds": cvs[0].folds if cvs else 0, "n_cv": len(cvs),
            "n_cv_constant": sum(c.constant for c in cvs), "chosen": r.chosen.family,
            "parts": {k: {"calls": parts.calls[k], "cpu": parts.cpu[k]} for k in parts.cpu}
            | {"rest": {"calls": 0, "cpu": rest}}}


def _part(r: dict, name: str) -> tuple[int, float]:
    p = r["parts"].get(name, {"calls": 0, "cpu": 0.0})
    return int(p["calls"]), float(p["cpu"])


def floor(rows: list[dict]) -> dict[str, float]:
    """Return one table's fold-fit and refit multiples and the floor of a cross-validated choice (means over seeds)."""
    per = []
    for r in rows:
        n_fit, fit = _part(r, "fold fit (every round)")
        n_const, const = _part(r, "fold fit (stopped early)")
        pred = sum(_part(r, k)[1] for k in r["parts"] if k.startswith("fold fits:"))
        n_pred = n_fit + n_const
        n_ref, ref = _part(r, "cv refit")
        ref_cost = sum(_part(r, k)[1] for k in r["parts"] if k.startswith("cv refits:"))
        m_fit = fit / max(1, n_fit) / r["plain_cpu"]
        m_pred = pred / max(1, n_pred) / r["plain_cpu"]
        m_const = const / max(1, n_const) / r["plain_cpu"] if n_const else m_fit
        m_refit = (ref + ref_cost) / max(1, n_ref) / r["plain_cpu"]
        folds = r["folds"]
        cv_floor = folds * ((S_MIN - 1) * (m_fit + m_pred) + m_const + m_pred)
        training = folds * ((S_MIN - 1) * m_fit + m_const)
        per.append({"folds": folds, "fold_fit": m_fit, "fold_fit_measured": m_fit + m_pred, "fold_constant": m_const,
                    "refit": m_refit, "cv_floor": cv_floor, "cv_floor_training": training,
                    "floor": cv_floor + m_refit, "search": r["search_trainings"], "n_cv": r["n_cv"],
                    "cv_now": (fit + const + pred) / r["plain_cpu"]})
    return {k: float(np.mean([p[k] for p in per])) for k in per[0]}


#: The docs' grouping of the parts: (row, which parts it sums, which parts' calls it counts as trainings).
GROUPS: list[tuple[str, Callable[[str], bool], Callable[[str], bool] | None]] = [
    ("plain model (binning included)", lambda k: k in ("plain", "binning the training rows"), lambda k: k == "plain"),
    ("proxies: training", lambda k: k.startswith("proxy"), lambda k: k.startswith("proxy")),
    ("greedy selection fits", lambda k: k == "greedy", lambda k: k == "greedy"),
    ("proxies: measuring on the validation rows", lambda k: k.startswith("candidates:"), None),
    ("fold fits: training", lambda k: k.startswith("fold fit "), lambda k: k.startswith("fold fit ")),
    ("fold fits: measuring on the held-out rows", lambda k: k.startswith("fold fits:"), None),
    ("pooling, the folds' Datasets", lambda k: k.startswith("pooling"), None),
    ("refit of the pick on the pooled rows, its cost there", lambda k: k.startswith(("cv refit", "cv refits:")),
     lambda k: k == "cv refit"),
    ("the rest", lambda k: k == "rest", None),
]


def _totals(rows: list[dict], tables: list[str], search: str, plain_head: str, plain: str) -> None:
    """Print the last two rows of a table: the search and one plain training (ms), means per table.

    ``search`` and ``plain`` format the two numbers; ``plain_head`` is the second row's first cell.
    """
    def mean(t: str, key: str) -> float:
        return float(np.mean([r[key] for r in rows if r["table"] == t]))

    print("| the search | " + " | ".join(search.format(mean(t, "search_trainings")) for t in tables) + " |")
    print(plain_head + " " + " | ".join(plain.format(1e3 * mean(t, "plain_cpu")) for t in tables) + " |")
    print()


def grouped(rows: list[dict]) -> None:
    """Print the parts grouped (:data:`GROUPS`) per table: trainings and CPU in plain trainings (means over seeds)."""
    tables = list(dict.fromkeys(r["table"] for r in rows))
    print("| part: trainings, CPU | " + " | ".join(
        f"{t} ({next(r['rows'] for r in rows if r['table'] == t):,})" for t in tables) + " |")
    print("|---|" + "---|" * len(tables))
    for name, part, counted in GROUPS:
        cells = []
        for t in tables:
            rs = [r for r in rows if r["table"] == t]
            x = np.mean([sum(v["cpu"] for k, v in r["parts"].items() if part(k)) / r["plain_cpu"] for r in rs])
            if counted is None:
                cells.append(f"{x:.1f}x")
                continue
            n = np.mean([sum(v["calls"] for k, v in r["parts"].items() if counted(k)) for r in rs])
            cells.append(f"{n:.0f}: {x:.1f}x")
        print(f"| {name} | " + " | ".join(cells) + " |")
    _totals(rows, tables, "{:.0f}x", "| one plain training |", "{:.0f} ms")


def summarize(rows: list[dict]) -> None:
    """Print the parts grouped, each part per table (calls, CPU in plain trainings) and the floor."""
    grouped(rows)
    labels = list(dict.fromkeys(k for r in rows for k in r["parts"]))
    tables = list(dict.fromkeys(r["table"] for r in rows))
    head = [f"{t} ({next(r['rows'] for r in rows if r['table'] == t):,})" for t in tables]
    print("| part: calls, CPU in plain trainings | " + " | ".join(head) + " |")
    print("|---|" + "---|" * len(tables))
    for label in labels:
        cells = []
        for t in tables:
            rs = [r for r in rows if r["table"] == t]
            calls = np.mean([_part(r, label)[0] for r in rs])
            x = np.mean([_part(r, label)[1] / r["plain_cpu"] for r in rs])
            cells.append(f"{calls:.0f}: {x:.1f}x" if calls else f"{x:.1f}x")
        print(f"| {label} | " + " | ".join(cells) + " |")
    _totals(rows, tables, "{:.1f}x", "| one plain training (ms) |", "{:.0f}")
    print("| table (pooled rows) | folds F | configurations cross-validated | fold fit (measured on its held-out "
          "rows) | constant fold fit | refit | its cross-validation | floor: F x (2 fits + constant), "
          "training only | with the measuring | and the refit |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for t, h in zip(tables, head, strict=True):
        f = floor([r for r in rows if r["table"] == t])
        print(f"| {h} | {f['folds']:.0f} | {f['n_cv']:.1f} | {f['fold_fit']:.2f}x ({f['fold_fit_measured']:.2f}x) | "
              f"{f['fold_constant']:.2f}x | {f['refit']:.2f}x | {f['cv_now']:.1f}x | {f['cv_floor_training']:.1f}x | "
              f"{f['cv_floor']:.1f}x | {f['floor']:.1f}x |")


def main(argv: list[str] | None = None) -> None:
    parser = script_parser(__doc__, result_name="small_cost_parts", quick={"tables": "heart", "seeds": 1})
    parser.add_argument("--tables", default=TABLES)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--search", choices=("full", "lean"), default="lean", help="the search's search")
    parser.add_argument("--options", type=json.loads, default=None, help="the search's options, as JSON")
    parser.add_argument("--model-text", action="store_true",
                        help="measure the fold fits from their model texts (as with upstream LightGBM), "
                             "not the fork's tree arrays")
    parser.add_argument("--summary", action="store_true", help="only print the tables of an earlier --out")
    args = parse(parser, argv)
    if args.summary:
        summarize(json.loads(args.out.read_text()))
        return
    rows = []
    for t in args.tables.split(","):
        for s in range(args.first_seed, args.first_seed + args.seeds):
            rows.append(run_cell((str(args.data_dir), t, s, args.search, args.options, args.model_text)))
            print(f"done {t} seed {s} ({rows[-1]['search_trainings']:.0f} trainings)", flush=True)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(rows, indent=1))
    summarize(rows)


if __name__ == "__main__":
    main()
