"""Choosing on small, noisy tables: ``train_to_budget``'s choice rules against a careful top-k pick.

For every small table (heart and thyroid with their real costs; Adult, MAGIC, Higgs and Letter
subsampled to 500, 1,500 and 5,000 rows with tiered costs 1 / 5 / 10; Adult with its positives
thinned to about 6%, ``adult_rare``), over repeated stratified splits (train 50% / validation
25% / test 25%) and at 20 / 40 / 60% of the plain model's validation cost, it compares on the
test rows:

* ``valid``: the search's candidates chosen on the validation rows (``choose="valid"``);
* ``cv``: the same candidates shortlisted and chosen by 5-fold cross-validation over the training
  and validation rows, refit on all of them (``choose="cv"``, ``rule="best"``);
* ``cv_1se``: the same with the one-standard-error rule (``rule="1se"``);
* ``topk``: a careful top-k pick: features ordered by the plain model's gain and by gain / cost,
  features the budget cannot buy for every row left out, every prefix trained, the best on the
  validation rows within the budget.

One search per split serves every budget and both rules (``budgets=``, ``keep_boosters=True``):
the rules' picks are read off the cross-validated candidates and refit here on the pooled rows,
as ``train_to_budget`` refits its own pick. Scores: test AUC (binary), accuracy (thyroid).
Each cell prints the mean test score and the paired mean difference against ``topk`` with its
standard error over the splits; the CPU time of the search is printed as a multiple of one plain
training (one thread, same parameters). With ``choose="cv"`` a second table compares ``cv`` with
``valid`` directly (paired difference, SE) with the CPU time of each: the search alone (``valid``)
and the search with its cross-validation and refits (``cv``; the cross-validation's share of the
search's CPU time is its share of the stages' seconds).

``--choose auto`` (or ``valid``) runs the search as a user's default call makes it (on tables
above 20,000 pooled rows: chosen on the validation rows, no cross-validation; ``cv`` columns
empty); ``--proxy-rows`` passes ``proxy_rows`` (``none``: never proxies). A table name is a loader
with an optional row cap (``adult`` every row, ``covertype80000``: 80,000 rows drawn).

    python -m benchmarks.train_to_budget.small_data --data-dir ../shared/data
    python -m benchmarks.train_to_budget.small_data --data-dir ../shared/data --tables heart,magic1500 --seeds 5
    python -m benchmarks.train_to_budget.small_data --data-dir ../shared/data --tables adult,covertype80000 \
        --choose auto --out benchmarks/results/small_data_mid.json
"""

from __future__ import annotations

import json
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from benchmarks._runner import parse, script_parser
from benchmarks.train_to_budget import _data as fdata

ROUNDS = 100
FRACTIONS = (0.2, 0.4, 0.6)
TABLES = ["heart", "thyroid", "adult_rare1500", "adult_rare5000"] + [
    f"{n}{c}" for n in ("adult", "magic", "higgs", "letter") for c in (500, 1500, 5000)]


def load_table(data_dir: Path, table: str) -> tuple[fdata.Dataset, int]:
    """Return the pooled dataset and the row cap of ``table`` (e.g. ``magic1500``)."""
    name = table.rstrip("0123456789")
    cap = int(table[len(name):] or 10**9)
    if name == "adult_rare":
        ds = fdata.load_adult(data_dir)
        keep = (ds.y == 0) | (np.random.default_rng(7).random(ds.y.size) < 0.2)
        ds = fdata.Dataset("adult_rare", ds.X[keep], ds.y[keep], ds.names, "binary", note="positives thinned to ~6%")
        return ds, cap
    return fdata.LOADERS[name](data_dir), cap


def params_for(ds: fdata.Dataset) -> dict[str, Any]:
    p: dict[str, Any] = {"learning_rate": 0.1, "num_leaves": 15, "verbosity": -1, "seed": 0, "num_threads": 1}
    if ds.task == "multiclass":
        p.update(objective="multiclass", num_class=ds.n_classes)
    else:
        p["objective"] = "binary"
    return p


def test_score(ds: fdata.Dataset, booster: Any, X: np.ndarray, y: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    p = booster.predict(X)
    return float((p.argmax(1) == y).mean()) if ds.task == "multiclass" else float(roc_auc_score(y, p))


def careful_topk(ds: fdata.Dataset, sp: fdata.Split, fc: Any, params: dict[str, Any], budgets: list[float]) -> dict:
    """The careful top-k pick at each budget: its test score and validation cost."""
    import lightgbm as lgb

    from budget_extras import TreeEnsemble, cost_report

    train = lgb.Dataset(sp.X_train, sp.y_train, feature_name=ds.names, free_raw_data=False)
    plain = lgb.train(params, train, ROUNDS)
    gain = plain.feature_importance("gain")
    unit = np.array([fc.row_cost(np.eye(len(ds.names), dtype=bool)[[j]])[0] for j in range(len(ds.names))])
    used = np.flatnonzero(gain > 0)
    orders = [used[np.argsort(-gain[used], kind="stable")],
              used[np.argsort(-gain[used] / np.maximum(unit[used], 1e-12), kind="stable")]]
    cache: dict[tuple[int, ...], tuple[float, float, Any]] = {}
    out = {}
    for b in budgets:
        best = None
        for order in orders:
            sub: list[int] = []
            for f in order:
                m = np.zeros((1, len(ds.names)), dtype=bool)
                m[0, [*sub, int(f)]] = True
                if fc.row_cost(m)[0] > b + 1e-9:
                    continue
                sub = sorted([*sub, int(f)])
                key = tuple(sub)
                if key not in cache:
                    bst = lgb.train({**params, "interaction_constraints": [sub]}, train, ROUNDS)
                    cost = float(cost_report(TreeEnsemble.from_booster(bst), sp.X_valid, fc).total_cost.mean())
                    cache[key] = (test_score(ds, bst, sp.X_valid, sp.y_valid), cost, bst)
                v, cost, bst = cache[key]
                if cost <= b + 1e-9 and (best is None or v > best[0]):
                    best = (v, cost, bst, len(sub))
        if best is None:
            out[b] = {"test": float("nan"), "cost": float("nan"), "k": 0}
        else:
            out[b] = {"test": test_score(ds, best[2], sp.X_test, sp.y_test), "cost": best[1], "k": best[3]}
    return out


def _plain(ds: fdata.Dataset, sp: fdata.Split, params: dict[str, Any]) -> tuple[Any, float]:
    """One plain training (binning included) and its CPU time: the median of three (a small table's is ms)."""
    import lightgbm as lgb

    times, plain = [], None
    for _ in range(3):
        t0 = time.process_time()
        plain = lgb.train(params, lgb.Dataset(sp.X_train, sp.y_train, feature_name=ds.names), ROUNDS)
        times.append(time.process_time() - t0)
    return plain, float(np.median(times))


class Cell(NamedTuple):
    """One table and seed made ready for a search: the data, its split, costs and parameters, the plain model."""

    ds: fdata.Dataset
    sp: fdata.Split
    fc: Any
    params: dict[str, Any]
    plain: Any
    plain_cpu: float
    full_cost: float


def cell_setup(data_dir: str | Path, table: str, seed: int) -> Cell:
    """Load ``table``, split it by ``seed``, its costs (real where it has them, else tiered) and the plain model.

    ``full_cost``: the plain model's mean cost on the validation rows, which the budgets are shares of.
    """
    from budget_extras import TreeEnsemble, cost_report

    ds, cap = load_table(Path(data_dir), table)
    sp = fdata.split(ds, seed, cap)
    costs, groups = fdata.cost_schemes(ds).get("real") or fdata.cost_schemes(ds)["tiered"]
    fc = fdata.feature_costs(ds.names, costs, groups)
    params = params_for(ds)
    plain, plain_cpu = _plain(ds, sp, params)
    full_cost = float(cost_report(TreeEnsemble.from_booster(plain), sp.X_valid, fc).total_cost.mean())
    return Cell(ds, sp, fc, params, plain, plain_cpu, full_cost)


def search_arg(search: str) -> Any:
    """Return ``train_to_budget``'s ``search`` for ``search``: the name, or for ``lean_pool`` a strategy.

    ``lean_pool``: the lean search with each budget's pick on the validation rows refit on the
    training and validation rows pooled where ``choose="auto"`` would cross-validate (as
    ``search="fast"`` does), instead of its shortlist cross-validated.
    """
    if search != "lean_pool":
        return search
    from dataclasses import replace

    from budget_extras.cegb._strategies import STRATEGIES

    return replace(STRATEGIES["lean"], cross_validates=False, pool_refit=True)


def run_cell(args: tuple[Any, ...]) -> dict:
    """One table and seed: the search, its three choices and the top-k pick at every budget.

    ``args``: data folder, table, seed, ``choose`` and ``proxy_rows`` of the search, and
    optionally its ``search``, the budgets (``"three"``: 20 / 40 / 60%, ``"one"``: 40% alone) and its
    ``options``.
    """
    import lightgbm as lgb

    from budget_extras import TreeEnsemble, cost_report, train_to_budget
    from budget_extras.cegb import _cv

    data_dir, table, seed, choose, proxy_rows = args[:5]
    search, n_budgets, options = (*args[5:], *("full", "three", None)[len(args) - 5:])
    ds, sp, fc, params, plain, plain_cpu, full_cost = cell_setup(data_dir, table, seed)
    fractions = FRACTIONS if n_budgets == "three" else (0.4,)
    budgets = [f * full_cost for f in fractions]
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = train_to_budget(params, lgb.Dataset(sp.X_train, sp.y_train, feature_name=ds.names),
                            budget=0.4 * full_cost, budgets=budgets, valid_set=(sp.X_valid, sp.y_valid), costs=fc,
                            num_boost_round=ROUNDS, progress=False, choose=choose, keep_boosters=True,
                            proxy_rows=proxy_rows, search=search_arg(search), options=options)
    search_cpu = time.process_time() - t0
    cv_seconds = sum(v for k, v in r.seconds.items() if k.startswith("cv"))
    cvs = [c for c in r.frontier if c.folds > 0]
    # the search's own candidates: with cross-validation every one of them is marked proxy (it only ranks)
    explore = [(c, b) for c, b in zip(r.frontier, r.boosters, strict=True)
               if c.folds == 0 and (bool(cvs) or not c.proxy)]
    Xp, yp = np.vstack([sp.X_train, sp.X_valid]), np.concatenate([sp.y_train, sp.y_valid])
    pooled = lgb.Dataset(Xp, yp, feature_name=ds.names)
    refits: dict[str, Any] = {}
    row = {"table": table, "seed": seed, "rows": int(len(sp.y_train) + len(sp.y_valid)), "plain_cost": full_cost,
           "plain_test": test_score(ds, plain, sp.X_test, sp.y_test), "search_trainings": search_cpu / plain_cpu,
           "n_cv": len(cvs), "plain_cpu": plain_cpu, "search_cpu": search_cpu,
           "cv_share": cv_seconds / max(r.seconds["total"], 1e-12), "choose": choose, "proxy_rows": proxy_rows,
           "search": search, "n_budgets": n_budgets, "options": options,
           "returned_test": test_score(ds, r.booster, sp.X_test, sp.y_test),
           "budgets": {}}
    topk = careful_topk(ds, sp, fc, params, budgets)
    for frac, b in zip(fractions, budgets, strict=True):
        cell = {"topk": topk[b]}
        chosen, booster = r.best_at(b), r.booster_at(b)
        if booster is not None:  # the model train_to_budget returns for this budget
            cell["chosen"] = {"test": test_score(ds, booster, sp.X_test, sp.y_test), "family": chosen.family,
                              "cost": chosen.cost, "folds": chosen.folds}
        fits = [(c, bst) for c, bst in explore if c.cost <= b + 1e-9]
        c, bst = max(fits, key=lambda z: (z[0].score, not z[0].constant, -z[0].cost))
        cell["valid"] = {"test": test_score(ds, bst, sp.X_test, sp.y_test), "family": c.family, "cost": c.cost}
        for rule in ("best", "1se") if cvs else ():
            i = _cv.pick(cvs, b, rule)
            c = cvs[i]
            key = repr(sorted(c.params.items()))
            if key not in refits:
                refits[key] = lgb.train({**params, **c.params}, pooled, ROUNDS)
            test_cost = float(cost_report(TreeEnsemble.from_booster(refits[key]), sp.X_test, fc).total_cost.mean())
            cell["cv" if rule == "best" else "cv_1se"] = {
                "test": test_score(ds, refits[key], sp.X_test, sp.y_test), "family": c.family, "cost": c.cost,
                "test_cost": test_cost, "cv_score": c.score, "cv_se": c.score_se}
        row["budgets"][f"{frac:.1f}"] = cell
    return row


def _fractions(rows: list[dict]) -> list[float]:
    """The budget fractions the rows hold (20 / 40 / 60%, or 40% alone)."""
    return [float(k) for k in rows[0]["budgets"]]


def test_auc_se(data_dir: Path, table: str, seeds: list[int], aucs: list[float]) -> float:
    """Return the standard error of one test AUC on ``table``: Hanley and McNeil's, mean over ``seeds``.

    Each seed's test rows give the class counts, ``aucs`` the AUC at which the variance is read.
    """
    from benchmarks.train_to_budget.frontier_select import auc_se

    ds, cap = load_table(data_dir, table)
    ses = []
    for seed, a in zip(seeds, aucs, strict=True):
        y = fdata.split(ds, seed, cap).y_test
        ses.append(auc_se(a, int(y.sum()), int(y.size - y.sum())))
    return float(np.mean(ses))


def compare(rows: list[dict], base: list[dict], field: str = "returned", data_dir: Path | None = None) -> None:
    """Print ``rows``' search against ``base``'s (same tables and seeds), paired by split.

    Per table: the CPU multiples of one plain training (mean), and the test score of each
    search's model at each budget minus the other's and minus the careful top-k pick's (mean,
    SE). ``field``: ``"returned"``, the model ``train_to_budget`` returns there (``booster_at``);
    ``"cv"``, the cross-validated pick refit here on the pooled rows (in results files that do not
    record the returned models); ``"valid"``, the search's candidates chosen on the validation
    rows (a cross-validated search's choice had it chosen on them). With ``data_dir`` (binary
    tables) also the standard error of one test AUC on the table's test rows at the base's
    scores (:func:`test_auc_se`), and how many cells are within it of the base or above.
    """
    by_key = {(r["table"], r["seed"]): r for r in base}
    pairs = [(r, by_key[(r["table"], r["seed"])]) for r in rows if (r["table"], r["seed"]) in by_key]
    if not pairs:
        return
    print("| table (pooled rows) | splits | budget | CPU: this / base | this - base (SE) | this - top-k (SE) "
          "| SE of a test AUC |")
    print("|---|---|---|---|---|---|---|")
    diffs, auc_ses = [], []
    for table in dict.fromkeys(r["table"] for r, _ in pairs):
        ps = [(a, b) for a, b in pairs if a["table"] == table]
        cpu = (f"{np.mean([a['search_trainings'] for a, _ in ps]):.0f}x / "
               f"{np.mean([b['search_trainings'] for _, b in ps]):.0f}x")
        for frac in _fractions([a for a, _ in ps]):
            k = f"{frac:.1f}"
            mine = np.array([_chosen(a, k) if field == "returned" else _test(a, k, field) for a, _ in ps])
            other = np.array([_chosen(b, k) if field == "returned" else _test(b, k, field) for _, b in ps])
            top = np.array([_test(a, k, "topk") for a, _ in ps])
            m1, s1 = _mean_se(mine - other)
            m2, s2 = _mean_se(mine - top)
            diffs.append((m1, s1))
            auc_ses.append(float("nan") if data_dir is None else
                           test_auc_se(data_dir, table, [b["seed"] for _, b in ps], list(other)))
            print(f"| {table} ({ps[0][0]['rows']:,}) | {len(ps)} | {frac:.0%} | {cpu} | {m1:+.4f} ({s1:.4f}) | "
                  f"{m2:+.4f} ({s2:.4f}) | {auc_ses[-1]:.4f} |")
    within = sum(1 for m, se in diffs if not (m < 0 and abs(m) > (se if np.isfinite(se) else 0)))
    print(f"cells within one SE of the base or above: {within} of {len(diffs)}; "
          f"mean difference {np.nanmean([m for m, _ in diffs]):+.4f}")
    if data_dir is not None:
        near = sum(1 for (m, _), se in zip(diffs, auc_ses, strict=True) if m >= -se)
        print(f"cells within one SE of a test AUC of the base or above: {near} of {len(diffs)}")


def _chosen(r: dict, k: str) -> float:
    """The test score of the model ``train_to_budget`` returns at budget ``k`` (NaN if not recorded)."""
    cell = r["budgets"][k]
    if "chosen" in cell:
        return float(cell["chosen"]["test"])
    return float(r["returned_test"]) if k == "0.4" and "returned_test" in r else float("nan")


def _test(r: dict, k: str, m: str) -> float:
    """The test score of choice ``m`` at budget ``k`` (NaN where the run has no such choice)."""
    return float(r["budgets"][k].get(m, {}).get("test", np.nan))


def _mean_se(d: np.ndarray) -> tuple[float, float]:
    n = int(np.sum(~np.isnan(d)))
    if n == 0:
        return float("nan"), float("nan")
    return float(np.nanmean(d)), float(np.nanstd(d, ddof=1) / np.sqrt(n)) if n > 1 else float("nan")


def summarize(rows: list[dict]) -> None:
    methods = ("valid", "cv", "cv_1se", "topk")
    print(f"{'table':16s} {'budget':>6s} " + " ".join(f"{m:>8s}" for m in methods)
          + "   cv-topk (se)   1se-topk (se)  valid-topk (se)  trainings")
    for table in dict.fromkeys(r["table"] for r in rows):
        rs = [r for r in rows if r["table"] == table]
        for frac in _fractions(rs):
            k = f"{frac:.1f}"
            vals = {m: np.array([_test(r, k, m) for r in rs]) for m in methods}
            line = f"{table:16s} {frac:6.1f} " + " ".join(f"{_mean_se(vals[m])[0]:8.4f}" for m in methods)
            for m in ("cv", "cv_1se", "valid"):
                mean, se = _mean_se(vals[m] - vals["topk"])
                line += f"  {mean:+.4f} ({se:.4f})"
            line += f"  {np.mean([r['search_trainings'] for r in rs]):6.0f}x"
            print(line)
    for m in ("valid", "cv", "cv_1se"):
        d = np.array([_test(r, k, m) - _test(r, k, "topk") for r in rows for k in r["budgets"]])
        if np.any(~np.isnan(d)):
            print(f"mean over every cell, {m} - topk: {np.nanmean(d):+.4f}")


def markdown_valid(rows: list[dict]) -> None:
    """Print the docs table of searches that chose on the validation rows: test scores and their difference."""
    print("| table (training rows) | budget | top-k pick | search | search - top-k (SE) | search CPU |")
    print("|---|---|---|---|---|---|")
    for table in dict.fromkeys(r["table"] for r in rows):
        rs = [r for r in rows if r["table"] == table]
        n_train = round(np.mean([r["rows"] for r in rs]) * 2 / 3)
        for frac in _fractions(rs):
            k = f"{frac:.1f}"
            top = np.array([_test(r, k, "topk") for r in rs])
            own = np.array([_test(r, k, "valid") for r in rs])
            mean, se = _mean_se(own - top)
            print(f"| {table} ({n_train:,}) | {frac:.0%} | {np.nanmean(top):.4f} | {np.nanmean(own):.4f} | "
                  f"{mean:+.4f} ({se:.4f}) | {np.mean([r['search_trainings'] for r in rs]):.0f}x |")


def threshold(rows: list[dict]) -> None:
    """Print ``choose="cv"`` against ``choose="valid"``: paired test difference (SE) and CPU of each.

    CPU as multiples of one plain training: the search alone (what ``valid`` costs) and the search
    with its cross-validation and refits (what ``cv`` costs).
    """
    rows = [r for r in rows if "cv_share" in r and r["n_cv"] > 0]
    if not rows:
        return
    print("| table (pooled rows) | splits | `cv` - `valid` at 20 / 40 / 60% (SE) | CPU `valid` | CPU `cv` |")
    print("|---|---|---|---|---|")
    for table in dict.fromkeys(r["table"] for r in rows):
        rs = [r for r in rows if r["table"] == table]
        cells = []
        for frac in _fractions(rs):
            k = f"{frac:.1f}"
            mean, se = _mean_se(np.array([_test(r, k, "cv") - _test(r, k, "valid") for r in rs]))
            cells.append(f"{mean:+.4f} ({se:.4f})")
        valid_x = np.mean([r["search_cpu"] * (1 - r["cv_share"]) / r["plain_cpu"] for r in rs])
        cv_x = np.mean([r["search_cpu"] / r["plain_cpu"] for r in rs])
        valid_s = np.mean([r["search_cpu"] * (1 - r["cv_share"]) for r in rs])
        cv_s = np.mean([r["search_cpu"] for r in rs])
        print(f"| {table} ({rs[0]['rows']:,}) | {len(rs)} | " + " / ".join(cells)
              + f" | {valid_x:.0f}x ({valid_s:.0f} s) | {cv_x:.0f}x ({cv_s:.0f} s) |")


def markdown(rows: list[dict]) -> None:
    """Print the docs table: per table and budget, each choice's mean test score minus the top-k pick's (SE)."""
    if not any(r["n_cv"] for r in rows):
        markdown_valid(rows)
        return
    print("| table (pooled rows) | budget | top-k pick | `choose=\"cv\"` | `rule=\"1se\"` | `choose=\"valid\"` |")
    print("|---|---|---|---|---|---|")
    for table in dict.fromkeys(r["table"] for r in rows):
        rs = [r for r in rows if r["table"] == table]
        for frac in _fractions(rs):
            k = f"{frac:.1f}"
            top = np.array([_test(r, k, "topk") for r in rs])
            cells = []
            for m in ("cv", "cv_1se", "valid"):
                mean, se = _mean_se(np.array([_test(r, k, m) for r in rs]) - top)
                cells.append(f"{mean:+.4f} ({se:.4f})")
            print(f"| {table} ({rs[0]['rows']}) | {frac:.0%} | {np.nanmean(top):.4f} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> None:
    parser = script_parser(__doc__, result_name="small_data", quick={"tables": "heart", "seeds": 1, "jobs": 1})
    parser.add_argument("--tables", default=",".join(TABLES))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--choose", choices=("cv", "auto", "valid"), default="cv",
                        help="the search's choose (cv: every choice is read off one search)")
    parser.add_argument("--proxy-rows", default="auto", help="the search's proxy_rows: auto, none or a row count")
    parser.add_argument("--search", choices=("full", "lean", "fast", "lean_pool"), default="full",
                        help="the search's search (lean_pool: lean, the validation picks refit on the pooled rows)")
    parser.add_argument("--budgets", choices=("three", "one"), default="three",
                        help="three: 20 / 40 / 60%% in one call; one: 40%% alone")
    parser.add_argument("--options", type=json.loads, default=None, help="the search's options, as JSON")
    parser.add_argument("--compare", type=Path, default=None,
                        help="an earlier --out (same tables and seeds): print this run against it, paired by split")
    parser.add_argument("--compare-field", choices=("returned", "cv", "valid"), default="returned",
                        help="compare the returned models, the cross-validated picks refit here (older files), "
                             "or the choices on the validation rows")
    parser.add_argument("--summary", action="store_true", help="only print the tables of an earlier --out")
    args = parse(parser, argv)
    if args.summary:
        rows = json.loads(args.out.read_text())
        summarize(rows)
        markdown(rows)
        threshold(rows)
        if args.compare is not None:
            compare(rows, json.loads(args.compare.read_text()), args.compare_field, args.data_dir)
        return
    proxy_rows = {"auto": "auto", "none": None}.get(args.proxy_rows.lower(), None)
    if proxy_rows is None and args.proxy_rows.lower() != "none":
        proxy_rows = int(args.proxy_rows)
    cells = [(str(args.data_dir), t, s, args.choose, proxy_rows, args.search, args.budgets, args.options)
             for t in args.tables.split(",") for s in range(args.first_seed, args.first_seed + args.seeds)]
    rows = []
    with ProcessPoolExecutor(args.jobs) as ex:
        for row in ex.map(run_cell, cells):
            rows.append(row)
            print(f"done {row['table']} seed {row['seed']} ({row['search_trainings']:.0f} trainings)", flush=True)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(rows, indent=1))
    summarize(rows)
    markdown(rows)
    threshold(rows)
    if args.compare is not None:
        compare(rows, json.loads(args.compare.read_text()), args.compare_field, args.data_dir)


if __name__ == "__main__":
    main()
