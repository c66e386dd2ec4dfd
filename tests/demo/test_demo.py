"""The README's main job runs end to end and shows what it promises."""

from __future__ import annotations

import io

import pytest


def test_demo_prints_accuracy_and_cost_for_plain_and_cegb():
    lgb = pytest.importorskip("lightgbm")
    from budget_extras.demo import run_demo

    out = io.StringIO()
    rows = run_demo(rounds=30, tradeoffs=(0.005,), out=out)
    text = out.getvalue()
    labels = [r["model"] for r in rows]
    assert labels[0].startswith("LightGBM") and any(label.startswith("CEGB") for label in labels)
    if "+cegb" in lgb.__version__:
        assert any("groups" in label for label in labels)
    plain, cegb = rows[0], rows[1]
    assert plain["accuracy"] > 0.95 and cegb["accuracy"] > 0.95
    # the cost penalty buys fewer tests per patient than plain LightGBM
    assert 0 < cegb["mean_cost"] < plain["mean_cost"]
    for row in rows:
        assert f"{row['accuracy']:.4f}" in text and f"{row['mean_cost']:.2f}" in text


def test_demo_cli_rejects_bad_arguments(capsys):
    from budget_extras.demo import main

    with pytest.raises(SystemExit):
        main(["--rounds", "0"])
    assert "--rounds must be a positive integer, got 0" in capsys.readouterr().err
