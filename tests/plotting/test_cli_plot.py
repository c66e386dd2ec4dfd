"""``--plot FILE`` of ``budget-extras report`` and ``train``: the image is written, its data are the library's."""

from __future__ import annotations

import sys

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

import budget_extras.cli._plot as cli_plot
import budget_extras.cli._report
import budget_extras.cli._train  # noqa: F401  (patched below)
from budget_extras import FeatureCosts, TreeEnsemble, cost_report
from budget_extras.cli._main import main

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 4))
    y = (X[:, 0] + 0.5 * X[:, 2] + 0.5 * rng.normal(size=500) > 0).astype(int)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df.insert(2, "y", y)
    df.iloc[:350].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[350:].to_csv(tmp_path / "valid.csv", index=False)
    (tmp_path / "costs.csv").write_text("feature,cost,group\na,3,\nb,1,lab\nc,2,lab\nd,1,\n")
    (tmp_path / "train.conf").write_text(
        "data=train.csv\nheader=true\nlabel_column=name:y\nobjective=binary\nnum_leaves=5\n"
        "min_data_in_leaf=10\nnum_iterations=8\nnum_threads=1\nverbose=-1\n"
    )
    params = {"objective": "binary", "num_leaves": 5, "verbose": -1}
    feats = ["a", "b", "c", "d"]
    lgb.train(params, lgb.Dataset(df.iloc[:350][feats], y[:350]), num_boost_round=6).save_model(
        str(tmp_path / "model.txt")
    )
    return tmp_path, df


@pytest.fixture
def figures(monkeypatch):
    saved = []
    original = cli_plot.save_figure

    def capture(fig, path, out):
        saved.append(fig)
        original(fig, path, out)

    monkeypatch.setattr(cli_plot, "save_figure", capture)
    for mod in ("budget_extras.cli._report", "budget_extras.cli._train"):
        monkeypatch.setattr(sys.modules[mod], "save_figure", capture)
    return saved


def test_report_plot(files, figures, capsys):
    d, df = files
    argv = ["report", "--model", str(d / "model.txt"), "--data", str(d / "valid.csv"), "--costs", str(d / "costs.csv")]
    assert main([*argv, "--plot", str(d / "cost.png")]) == 0, capsys.readouterr()
    assert (d / "cost.png").read_bytes()[:8] == PNG
    ens = TreeEnsemble.from_model_file(d / "model.txt")
    costs = FeatureCosts.from_csv(d / "costs.csv", feature_names=ens.feature_names)
    rep = cost_report(ens, df.iloc[350:][list(ens.feature_names)], costs)
    (fig,) = figures
    share, rows = fig.axes
    ff = rep.feature_frame()
    ff = ff[ff["share_paying"] > 0].sort_values("share_paying", ascending=False, kind="stable")
    np.testing.assert_allclose([p.get_height() for p in share.patches], ff["share_paying"])
    lines = {ln.get_gid(): ln.get_xdata()[0] for ln in rows.lines}
    assert lines["mean"] == pytest.approx(rep.total_cost.mean())
    assert not [p.name for p in d.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("name", ["cost.txt", "cost"])
def test_report_plot_refuses_unknown_format(files, capsys, name):
    d, _ = files
    argv = ["report", "--model", str(d / "model.txt"), "--data", str(d / "valid.csv"), "--plot", str(d / name)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--plot" in err and "image format" in err
    assert not (d / name).exists()


def test_plot_without_matplotlib(files, capsys, monkeypatch):
    d, _ = files
    for name in [m for m in sys.modules if m.split(".")[0] == "matplotlib"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    argv = ["report", "--model", str(d / "model.txt"), "--data", str(d / "valid.csv"), "--plot", str(d / "c.png")]
    assert main(argv) == 2
    assert "pip install budget-extras[plot]" in capsys.readouterr().err
    assert not (d / "c.png").exists()


def test_train_plot(files, figures, capsys):
    d, _ = files
    argv = [
        "train", "--config", str(d / "train.conf"), "--budget", "3", "--valid", str(d / "valid.csv"),
        "--costs", str(d / "costs.csv"), "-o", str(d / "m.txt"), "--json", str(d / "r.json"),
        "--plot", str(d / "frontier.png"), "--quiet",
    ]
    assert main(argv) in (0, 1), capsys.readouterr()
    assert (d / "frontier.png").read_bytes()[:8] == PNG
    import json

    rep = json.loads((d / "r.json").read_text())
    (fig,) = figures
    (ax,) = fig.axes
    pts = np.concatenate([c.get_offsets() for c in ax.collections if str(c.get_gid()).startswith("candidates:")])
    want = np.array([[c["cost"], c["score"]] for c in rep["frontier"] if not c["proxy"]])
    np.testing.assert_allclose(np.sort(pts, axis=0), np.sort(want, axis=0))
    (chosen,) = [c for c in ax.collections if c.get_gid() == "chosen"]
    np.testing.assert_allclose(chosen.get_offsets(), [[rep["cost"], rep["score"]]])


def _report_argv(d, plot):
    return ["report", "--model", str(d / "model.txt"), "--data", str(d / "valid.csv"), "--plot", str(plot)]


def test_plot_into_an_unwritable_directory_names_plot_and_the_path(files, capsys, monkeypatch):
    """A directory where no file can be created (read-only, /proc, ...) is named with --plot, not a temporary file."""
    d, _ = files
    import budget_extras.cli._io as cli_io

    def refuse(dir=None, prefix="", suffix=""):  # what a read-only directory answers, as for a root user
        raise PermissionError(13, "Permission denied", f"{dir}/{prefix}abcd{suffix}")

    monkeypatch.setattr(cli_io.tempfile, "mkstemp", refuse)
    assert main(_report_argv(d, d / "cost.png")) == 2
    err = capsys.readouterr().err
    assert f"--plot {str(d / 'cost.png')!r}" in err and "Permission denied" in err
    assert ".tmp" not in err


def test_plot_that_cannot_be_written_names_plot_and_the_path(files, capsys, monkeypatch):
    """A failed image write (a full disk) names --plot and the path given, and leaves no file behind."""
    d, _ = files
    from matplotlib.figure import Figure

    def full(self, fname, **kwargs):
        raise OSError(28, "No space left on device", fname)

    monkeypatch.setattr(Figure, "savefig", full)
    assert main(_report_argv(d, d / "cost.png")) == 2
    err = capsys.readouterr().err
    assert f"--plot {str(d / 'cost.png')!r}: cannot write the image: No space left on device" in err
    assert ".tmp" not in err
    assert not (d / "cost.png").exists()
    assert not [p.name for p in d.iterdir() if p.name.endswith(".tmp")]
