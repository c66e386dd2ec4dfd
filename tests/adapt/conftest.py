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
