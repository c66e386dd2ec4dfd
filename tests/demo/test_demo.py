"""The README's main job runs end to end and shows what it promises."""

from __future__ import annotations

import io

import pytest

PNG = b"\x89PNG\r\n\x1a\n"
BUDGET = 30.0


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    pytest.importorskip("matplotlib")
    from budget_extras.demo import run_demo

    png = tmp_path_factory.mktemp("demo") / "frontier.png"
    out = io.StringIO()
    rows = run_demo(budget=BUDGET, rounds=60, plot=png, out=out)
    return {r["model"].split(" (")[0]: r for r in rows}, out.getvalue(), png


@pytest.mark.fork  # the demo's fast row trains with the fork's cegb_budget
def test_demo_rows_are_plain_topk_and_train_to_budget(demo):
    rows, _, _ = demo
    assert list(rows) == ["LightGBM", "best top-k by gain", "train_to_budget", "train_to_budget, fast"]
    assert rows["train_to_budget"]["status"] == "SUCCESS"
    fast = rows["train_to_budget, fast"]
    assert fast["status"] == "SUCCESS" and fast["valid_cost"] <= BUDGET
    # the short ranking model, then at most four candidates at the one budget (the capped model, with
    # small trees too, and the top-k subsets: docs/train_to_budget.md, "Fast search")
    assert fast["trainings"] <= 2 + 4 < rows["train_to_budget"]["trainings"]


def test_budgeted_model_fits_the_budget_and_beats_topk_on_validation(demo):
    rows, _, _ = demo
    plain, topk, tb = rows["LightGBM"], rows["best top-k by gain"], rows["train_to_budget"]
    # plain LightGBM pays for most tests (about 63 per patient): the budget binds
    assert plain["valid_cost"] > 1.5 * BUDGET and plain["mean_cost"] > 1.5 * BUDGET
    assert topk["valid_cost"] <= BUDGET and tb["valid_cost"] <= BUDGET
    # chosen on validation: the test patients pay about the same (5% slack for the new rows)
    assert tb["mean_cost"] <= 1.05 * BUDGET
    # the top-k subsets are candidates of the search, so it is at least as accurate on validation
    assert tb["valid_accuracy"] >= topk["valid_accuracy"]
    # and on thyroid it buys plain LightGBM's accuracy (within a point) at under half its cost
    assert tb["accuracy"] >= plain["accuracy"] - 0.01 and tb["mean_cost"] < 0.5 * plain["mean_cost"]
    assert tb["trainings"] > topk["trainings"] > plain["trainings"] == 1


def test_demo_prints_the_rows_and_draws_the_frontier(demo):
    rows, text, png = demo
    for row in rows.values():
        line = next(ln for ln in text.splitlines() if ln.startswith(row["model"]))
        assert f"{row['accuracy']:.4f}" in line and f"{row['mean_cost']:.2f}" in line
        assert f"{row['valid_accuracy']:.4f}" in line and f"{row['valid_cost']:.2f}" in line
    assert f"{rows['train_to_budget']['trainings']} LightGBM trainings" in text
    assert str(png) in text
    assert png.read_bytes()[:8] == PNG and png.stat().st_size > 10_000


def test_demo_cli_passes_its_options(monkeypatch, tmp_path):
    import budget_extras.demo as demo_module

    seen = {}
    monkeypatch.setattr(demo_module, "run_demo", lambda **kw: seen.update(kw) or [])
    assert demo_module.main(["--budget", "40", "--rounds", "20", "--plot", str(tmp_path / "f.png")]) == 0
    assert seen == {"budget": 40.0, "rounds": 20, "plot": str(tmp_path / "f.png")}
    assert demo_module.main(["--no-plot"]) == 0
    assert seen == {"budget": 30.0, "rounds": 150, "plot": None}
    monkeypatch.chdir(tmp_path)
    assert demo_module.main([]) == 0
    assert seen["plot"] == "thyroid_frontier.png"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rounds", "0"], "--rounds must be a positive integer, got 0"),
        (["--budget", "-1"], "--budget must be a positive finite number, got -1.0"),
        (["--plot", "frontier.pdf"], "must name a .png file"),
        (["--plot", "notes.png"], "not a PNG image"),
    ],
)
def test_demo_cli_rejects_bad_arguments(argv, message, capsys, monkeypatch, tmp_path):
    from budget_extras.demo import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.png").write_text("my notes")
    with pytest.raises(SystemExit):
        main(argv)
    assert message in capsys.readouterr().err
    assert (tmp_path / "notes.png").read_text() == "my notes"  # an input is never overwritten


def test_run_demo_rejects_bad_arguments():
    from budget_extras.demo import run_demo

    with pytest.raises(ValueError, match=r"'budget' argument must be a positive finite number\. Got 0"):
        run_demo(budget=0)
    with pytest.raises(ValueError, match=r"'plot' argument must name a \.png file"):
        run_demo(plot="frontier.txt")
