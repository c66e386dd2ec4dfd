import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from budget_extras.adapt._synthetic import make_synthetic2


@pytest.fixture
def rng():
    return np.random.default_rng(20171204)


@pytest.fixture(scope="module")
def binary_problem():
    """A small binary problem with a random-forest f0 (module scope: trained once)."""
    r = np.random.default_rng(7)
    X = r.normal(size=(1200, 6))
    y = ((X[:, 0] > 0.3) ^ (X[:, 1] * X[:, 2] > 0.4)).astype(int)
    f0 = RandomForestClassifier(n_estimators=30, random_state=0).fit(X[:600], y[:600])
    return X[600:1000], y[600:1000], X[1000:], y[1000:], f0


@pytest.fixture(scope="module")
def synthetic2():
    r = np.random.default_rng(3)
    X, y = make_synthetic2(2000, rng=r)
    Xt, yt = make_synthetic2(2000, rng=r)
    f0 = RandomForestClassifier(n_estimators=100, random_state=0).fit(X, y)
    return X, y, Xt, yt, f0


@pytest.fixture(scope="module")
def multiclass_problem():
    """Four classes (string labels) from two informative and two noise features; RF f0."""
    r = np.random.default_rng(11)
    X = r.normal(size=(1500, 5))
    idx = (X[:, 0] > 0).astype(int) * 2 + (X[:, 1] + 0.5 * X[:, 2] * X[:, 3] > 0).astype(int)
    y = np.array(["a", "b", "c", "d"])[idx]
    f0 = RandomForestClassifier(n_estimators=30, random_state=0).fit(X[:600], y[:600])
    return X[600:1100], y[600:1100], X[1100:], y[1100:], f0


def _two_groups(n, rng):
    """Feature A separates two halves: A < 0 (label = A < -0.5, A alone suffices) and A > 0 (a 3x3
    checkerboard in A and B that a small cheap model only half learns and f0 knows)."""
    hard = rng.random(n) < 0.5
    a = np.where(hard, rng.uniform(0.02, 1, n), rng.uniform(-1, -0.02, n))
    b = rng.uniform(0, 1, n)
    X = np.column_stack([a, b])
    return X, _two_groups_label(X)


def _two_groups_label(X):
    a, b = X[:, 0], X[:, 1]
    return np.where(a > 0, (np.floor(3 * a) + np.floor(3 * b)) % 2, a < -0.5).astype(int)


def two_groups_f0(X):
    """The expensive model of the two-groups case: right on every row with probability 0.95."""
    p = np.where(_two_groups_label(np.asarray(X, dtype=float)) == 1, 0.95, 0.05)
    return np.column_stack([1 - p, p])


@pytest.fixture(scope="module")
def two_groups():
    """Costs A 1.2, B 0.8: f0 everywhere costs 2.0, the gate on A with an A-only f1 for the easy
    half and f0 for the hard half costs 1.6 at full accuracy."""
    r = np.random.default_rng(0)
    X, y = _two_groups(2000, r)
    Xv, yv = _two_groups(1000, r)
    return X, y, Xv, yv, two_groups_f0


@pytest.fixture(scope="module")
def imbalanced():
    """About 8% positives; RF f0 on separate rows; unit costs on 5 features."""
    r = np.random.default_rng(5)
    X = r.normal(size=(3000, 5))
    y = ((X[:, 0] + 0.7 * X[:, 1] + 0.5 * X[:, 2] * X[:, 3] + 0.5 * r.normal(size=3000)) > 2.0).astype(int)
    f0 = RandomForestClassifier(100, min_samples_leaf=5, random_state=0).fit(X[:1000], y[:1000])
    return X[1000:2000], y[1000:2000], X[2000:], y[2000:], f0
