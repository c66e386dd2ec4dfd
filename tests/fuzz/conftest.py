"""Fixtures of the fuzz tests: a small model text and a LightGBM worker process."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

import lightgbm as lgb
import numpy as np
import pytest

from ._worker import LightGBMWorker


@pytest.fixture(scope="package")
def worker() -> Iterator[LightGBMWorker]:
    w = LightGBMWorker()
    yield w
    w.close()


@pytest.fixture(scope="package")
def model_text() -> str:
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 4))
    X[:, 3] = rng.integers(0, 6, 300)
    X[rng.random(300) < 0.1, 0] = np.nan
    y = (np.nan_to_num(X[:, 0]) + (X[:, 3] % 2) > 0.3).astype(float)
    b = lgb.train({"objective": "binary", "num_leaves": 5, "verbose": -1, "min_data_in_leaf": 5,
                   "min_data_per_group": 5, "cat_smooth": 1.0, "num_threads": 1},
                  lgb.Dataset(X, y, categorical_feature=[3]), num_boost_round=4)
    return b.model_to_string()


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Fail (instead of hanging) when the block runs longer than ``seconds``."""

    def boom(signum: int, frame: object) -> None:
        raise TimeoutError(f"the loader ran longer than {seconds} s (a walk that does not end?)")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
