"""The benchmarks' shared runner: every script's options and results file."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import _runner


def _parser():
    parser = _runner.script_parser("doc", result_name="demo", quick={"rows": 10, "datasets": ["heart"]})
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--datasets", nargs="+", default=["heart", "magic"])
    return parser


def test_a_full_run_writes_the_committed_results_file() -> None:
    args = _runner.parse(_parser(), [])
    assert args.out == _runner.RESULTS / "demo.json"
    assert (args.rows, args.datasets, args.quick) == (1000, ["heart", "magic"], False)
    assert args.data_dir == _runner.DATA_DIR
    assert not hasattr(args, "_quick") and not hasattr(args, "_result_file")


def test_a_quick_run_is_small_and_never_overwrites_a_recorded_result() -> None:
    args = _runner.parse(_parser(), ["--quick"])
    assert args.out == _runner.RESULTS / "quick" / "demo.json"
    assert (args.rows, args.datasets) == (10, ["heart"])


def test_a_quick_run_keeps_what_the_command_line_says(tmp_path: Path) -> None:
    args = _runner.parse(_parser(), ["--quick", "--rows", "55", "--out", str(tmp_path / "x.json")])
    assert (args.rows, args.datasets, args.out) == (55, ["heart"], tmp_path / "x.json")


def test_scripts_without_data_take_no_data_dir() -> None:
    parser = _runner.script_parser(None, result_name="demo", data=False, suffix=".jsonl")
    args = _runner.parse(parser, [])
    assert not hasattr(args, "data_dir") and args.out.name == "demo.jsonl"


def test_common_parser_is_the_script_parser_with_training_sizes() -> None:
    args = _runner.parse(_runner.common_parser("doc", result_name="demo", repeats=5), ["--quick"])
    assert (args.rows, args.rounds, args.repeats) == (20_000, 10, 1)
    assert args.out == _runner.RESULTS / "quick" / "demo.json"


def test_results_record_the_command_and_environment(tmp_path: Path) -> None:
    out = tmp_path / "sub" / "r.json"
    _runner.write_results(out, {"rows": [1, 2], "versions": {"mine": "1"}}, "numpy")
    record = json.loads(out.read_text())
    assert record["command"].startswith("python -m ")
    assert record["rows"] == [1, 2]
    assert record["versions"] == {"mine": "1"}  # the payload's own keys win
    assert record["hardware"]["cpus"] >= 1
