"""CostReport.to_frame / feature_frame and the cost plots: the plotted numbers are the report's."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest

from budget_extras import FeatureCosts, TreeEnsemble, cost_report
from budget_extras.plotting import plot_cost_report, plot_feature_share, plot_row_costs


@pytest.fixture(scope="module")
def report():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = (X[:, 0] + X[:, 1] - X[:, 3] > 0).astype(int)
    b = lgb.train({"objective": "binary", "verbose": -1, "num_leaves": 7}, lgb.Dataset(X, y), num_boost_round=8)
    costs = FeatureCosts([1.0, 2.0, 3.0, 4.0, 5.0], groups=[None, "lab", "lab", None, None], group_cost={"lab": 4.5})
    return cost_report(TreeEnsemble.from_booster(b), X, costs)


def test_to_frame_is_per_row(report):
    df = report.to_frame()
    assert len(df) == report.n_rows and df.index.name == "row"
    np.testing.assert_array_equal(df["total_cost"], report.total_cost)
    np.testing.assert_array_equal(df["acquisition_cost"], report.acquisition_cost)
    np.testing.assert_array_equal(df["eval_cost"], report.eval_cost)
    np.testing.assert_array_equal(df["trees_evaluated"], report.trees_evaluated)
    np.testing.assert_array_equal(df["splits_evaluated"], report.splits_evaluated)
    np.testing.assert_array_equal(df["features_used"], report.used.toarray().sum(axis=1))


def test_feature_frame_is_per_feature(report):
    ff = report.feature_frame()
    assert list(ff.index) == list(report.feature_names)
    np.testing.assert_allclose(ff["share_used"], report.used.toarray().mean(axis=0))
    np.testing.assert_allclose(ff["share_paying"], report.acquired.toarray().mean(axis=0))
    assert ff["group"].tolist() == [None, "lab", "lab", None, None]
    np.testing.assert_array_equal(ff["unit_cost"], [1.0, 4.5, 4.5, 4.0, 5.0])
    # one acquisition unit per group: the units' mean cost is the mean acquisition cost
    units = ff.drop_duplicates("group").loc[lambda d: d["group"].notna()]
    singles = ff[ff["group"].isna()]
    total = units["mean_cost"].sum() + singles["mean_cost"].sum()
    assert total == pytest.approx(report.acquisition_cost.mean())
    assert (ff["share_paying"] >= ff["share_used"]).all()


def test_feature_share_bars_are_the_report(report):
    ax = plot_feature_share(report)
    heights = [p.get_height() for p in ax.patches if p.get_gid() == "feature_share"]
    ff = report.feature_frame()
    ff = ff[ff["share_paying"] > 0].sort_values("share_paying", ascending=False, kind="stable")
    np.testing.assert_allclose(heights, ff["share_paying"])
    assert [t.get_text() for t in ax.get_xticklabels()] == list(ff.index)


def test_row_cost_histogram_is_the_report(report):
    ax = plot_row_costs(report, bins=10)
    assert {p.get_gid() for p in ax.patches} == {"row_costs"}
    counts = [p.get_height() for p in ax.patches]
    want, edges = np.histogram(report.total_cost, bins=10)
    np.testing.assert_array_equal(counts, want)
    np.testing.assert_allclose([p.get_x() for p in ax.patches], edges[:-1])
    lines = {ln.get_gid(): ln.get_xdata()[0] for ln in ax.lines}
    assert lines["mean"] == pytest.approx(report.total_cost.mean())
    assert lines["p90"] == pytest.approx(np.percentile(report.total_cost, 90))


def test_two_panels_and_method(report):
    axes = report.plot(bins=5)
    assert axes.shape == (2,)
    assert len(axes[1].patches) == 5
    assert axes[0].get_ylabel() == "share of rows paying"
    import matplotlib.pyplot as plt

    _, given = plt.subplots(1, 2)
    out = plot_cost_report(report, given)
    assert out[0] is given[0] and out[1] is given[1]
    with pytest.raises(ValueError, match="two Axes"):
        plot_cost_report(report, given[0])


def test_top_limits_the_bars(report):
    ax = plot_feature_share(report, top=2)
    assert len(ax.patches) == 2
    with pytest.raises(ValueError, match="'top' parameter of plot_feature_share"):
        plot_feature_share(report, top=0)


def test_top_is_an_integer_by_the_parameter_tables_rule(report):
    """A bool is not a number of bars; a numpy integer is."""
    assert len(plot_feature_share(report, top=np.int64(2)).patches) == 2
    for bad in (True, np.bool_(True), 2.0, "2"):
        with pytest.raises(TypeError, match=r"'top' parameter of plot_feature_share must be an integer >= 1 or None"):
            plot_feature_share(report, top=bad)


def test_refuses_what_is_not_a_report():
    with pytest.raises(TypeError, match=r"must be a budget_extras\.CostReport"):
        plot_cost_report(object())
