"""Datasets and cost schemes of the accuracy-cost frontier harness (``benchmarks/train_to_budget/frontier.py``).

Every loader reads ``--data-dir`` (the shared data folder) and returns a :class:`Dataset`: all rows
pooled (numeric features, categorical strings as integer codes, missing as NaN), the task and the
real costs where the data has them. :func:`split` draws one seed's train / validation / test rows
(after capping the pool by subsampling); :func:`cost_schemes` gives the uniform and the tiered
(or real) cost schemes as :class:`budget_extras.FeatureCosts`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.cegb.cegb_curves import THYROID_NAMES, load_heart_frame

TIERS = (1.0, 5.0, 10.0)


@dataclass
class Dataset:
    """Pooled rows of one dataset.

    ``real_costs`` / ``groups``: the dataset's own per-feature costs and group ids (-1: none),
    or None when it has none (then the tiered scheme is used).
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    names: list[str]
    task: str  # "binary" or "multiclass"
    real_costs: np.ndarray | None = None
    groups: np.ndarray | None = None
    note: str = ""
    n_classes: int = field(init=False)

    def __post_init__(self) -> None:
        self.X = np.asarray(self.X, dtype=np.float64)
        self.y = np.asarray(self.y).astype(np.int64)
        self.n_classes = int(self.y.max()) + 1


def _codes(frame: pd.DataFrame) -> np.ndarray:
    cols = []
    for c in frame.columns:
        col = frame[c]
        if not pd.api.types.is_numeric_dtype(col):
            codes = col.astype("category").cat.codes.to_numpy().astype(float)
            codes[codes < 0] = np.nan
            cols.append(codes)
        else:
            cols.append(pd.to_numeric(col).to_numpy(float))
    return np.column_stack(cols)


def load_thyroid(data_dir: Path) -> Dataset:
    d = data_dir / "thyroid_costs"
    rows = np.vstack([np.loadtxt(d / "ann-train.data"), np.loadtxt(d / "ann-test.data")])
    costs = {}
    for line in (d / "ann-thyroid.cost").read_text().split("\n"):
        if ":" in line:
            k, v = line.split(":")
            costs[k.strip()] = float(v)
    costs["FTI"] = costs["TT4"] + costs["T4U"]
    groups = np.full(len(THYROID_NAMES), -1)
    groups[[THYROID_NAMES.index(n) for n in ("TT4", "T4U", "FTI")]] = 0
    return Dataset("thyroid", rows[:, :-1], rows[:, -1].astype(int) - 1, list(THYROID_NAMES), "multiclass",
                   np.array([costs[n] for n in THYROID_NAMES]), groups,
                   "3 classes; Turney costs, FTI = TT4 + T4U (one group with them)")


def load_heart(data_dir: Path) -> Dataset:
    X, y, names, cost = load_heart_frame(data_dir)
    groups = np.full(len(names), -1)
    groups[[names.index(n) for n in ("exang", "oldpeak", "slope")]] = 0
    return Dataset("heart", X, y, names, "binary", cost, groups,
                   "Turney costs (USD); exang, oldpeak, slope one group (exercise test)")


def load_covertype(data_dir: Path) -> Dataset:
    d = pd.read_csv(data_dir / "covertype" / "covertype_sample_397k.csv.gz")
    d = d[d.Cover_Type.isin([1, 2])].reset_index(drop=True)
    y = (d.pop("Cover_Type").to_numpy() == 2).astype(int)
    return Dataset("covertype", _codes(d), y, list(d.columns), "binary",
                   note="classes 1 vs 2; compact 12 columns (wilderness and soil as codes)")


def load_magic(data_dir: Path) -> Dataset:
    d = pd.read_csv(data_dir / "magic04" / "magic04.data", header=None)
    y = (d.pop(10) == "g").astype(int).to_numpy()
    return Dataset("magic", d.to_numpy(float), y, [f"f{i}" for i in range(10)], "binary", note="gamma vs hadron")


def load_higgs(data_dir: Path) -> Dataset:
    d = pd.read_csv(data_dir / "higgs" / "sas_higgs.csv")
    y = d.pop("label").to_numpy().astype(int)
    return Dataset("higgs", _codes(d), y, [str(c) for c in d.columns], "binary", note="10,984-row subset")


ADULT_COLS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
              "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
              "income"]


def load_adult(data_dir: Path) -> Dataset:
    kw = dict(header=None, names=ADULT_COLS, sep=r",\s*", engine="python", na_values="?", skip_blank_lines=True)
    tr = pd.read_csv(data_dir / "adult" / "adult.data", **kw)
    te = pd.read_csv(data_dir / "adult" / "adult.test", skiprows=1, **kw)
    d = pd.concat([tr, te], ignore_index=True).dropna(subset=["income"])
    y = d.pop("income").str.rstrip(".").eq(">50K").astype(int).to_numpy()
    return Dataset("adult", _codes(d), y, [c.replace("-", "_") for c in d.columns], "binary",
                   note="train and test files pooled; categorical columns as codes")


def load_letter(data_dir: Path) -> Dataset:
    d = pd.read_csv(data_dir / "letter" / "letter-recognition.data", header=None)
    y = (d.pop(0).to_numpy() >= "N").astype(int)
    return Dataset("letter", d.to_numpy(float), y, [f"x{i}" for i in range(16)], "binary",
                   note="binary: letter >= 'N'")


LOADERS = {"thyroid": load_thyroid, "heart": load_heart, "magic": load_magic, "adult": load_adult,
           "higgs": load_higgs, "letter": load_letter, "covertype": load_covertype}


@dataclass
class Split:
    X_train: np.ndarray
    y_train: np.ndarray
    X_valid: np.ndarray
    y_valid: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def split(ds: Dataset, seed: int, cap: int, fractions: tuple[float, float] = (0.5, 0.25)) -> Split:
    """One seed's split: subsample the pool to ``cap`` rows, then train / validation / test.

    Stratified by class so that tiny classes appear in every part.
    """
    rng = np.random.default_rng(1000 + seed)
    idx = rng.permutation(len(ds.y))[: min(cap, len(ds.y))]
    parts: list[list[int]] = [[], [], []]
    for c in np.unique(ds.y[idx]):
        rows = idx[ds.y[idx] == c]
        a = round(fractions[0] * len(rows))
        b = a + round(fractions[1] * len(rows))
        for p, r in zip(parts, (rows[:a], rows[a:b], rows[b:]), strict=True):
            p.extend(r.tolist())
    tr, va, te = (np.sort(np.array(p, dtype=np.int64)) for p in parts)
    return Split(ds.X[tr], ds.y[tr], ds.X[va], ds.y[va], ds.X[te], ds.y[te])


def tiered_costs(n_features: int) -> np.ndarray:
    """Tiers 1 / 5 / 10 over a fixed seeded permutation of the features (thirds, rounded)."""
    perm = np.random.default_rng(12345).permutation(n_features)
    tier = np.empty(n_features)
    for i, f in enumerate(perm):
        tier[f] = TIERS[min(3 * i // n_features, 2)]
    return tier


def cost_schemes(ds: Dataset) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """``{"uniform": (costs, None), "tiered" or "real": (costs, groups or None)}``."""
    d = len(ds.names)
    schemes: dict[str, tuple[np.ndarray, np.ndarray | None]] = {"uniform": (np.ones(d), None)}
    if ds.real_costs is not None:
        schemes["real"] = (np.asarray(ds.real_costs, float), ds.groups)
    else:
        schemes["tiered"] = (tiered_costs(d), None)
    return schemes


def feature_costs(names: list[str], costs: np.ndarray, groups: np.ndarray | None):
    """The one cost model: :class:`budget_extras.FeatureCosts` (a group costs its dearest member)."""
    from budget_extras import FeatureCosts

    g = None if groups is None else [int(v) if v >= 0 else None for v in groups]
    return FeatureCosts(lazy=np.asarray(costs, float), groups=g, feature_names=names)
