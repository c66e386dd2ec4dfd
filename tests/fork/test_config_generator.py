"""lightgbm-cegb/scripts/gen_config_auto.py: our equivalent of upstream's .ci/parameter-generator.py.

Oracle: on the pristine pinned sdist it must reproduce upstream's src/io/config_auto.cpp byte for byte.
Needs only the sdist that `bash lightgbm-cegb/scripts/prepare.sh` downloads (no build, no compiler).
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "lightgbm-cegb" / "scripts" / "gen_config_auto.py"
UPSTREAM = ROOT / "lightgbm-cegb" / "UPSTREAM"
CONFIG_H = "include/LightGBM/config.h"
CONFIG_AUTO = "src/io/config_auto.cpp"


def _pin() -> dict[str, str]:
    lines = UPSTREAM.read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_config_auto", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module


gen = _load_generator()


@pytest.fixture(scope="module")
def upstream_files() -> dict[str, bytes]:
    """config.h and config_auto.cpp of the pinned sdist (read once per module: gunzip is the slow part)."""
    pin = _pin()
    sdist = ROOT / "build" / "cache" / f"lightgbm-{pin['version']}.tar.gz"
    if not sdist.is_file():
        pytest.fail(f"pinned sdist {sdist} not found: run `bash lightgbm-cegb/scripts/prepare.sh` once "
                    "(it downloads and verifies it)")
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    assert digest == pin["sha256"], f"{sdist} is not the pinned sdist (sha256 {digest} != {pin['sha256']})"
    prefix = f"lightgbm-{pin['version']}/"
    wanted = {prefix + CONFIG_H: CONFIG_H, prefix + CONFIG_AUTO: CONFIG_AUTO}
    files: dict[str, bytes] = {}
    with tarfile.open(sdist) as tar:
        for member in tar:
            if member.name in wanted:
                extracted = tar.extractfile(member)
                assert extracted is not None
                files[wanted[member.name]] = extracted.read()
    missing = set(wanted.values()) - set(files)
    assert not missing, f"{sorted(missing)} missing from {sdist}"
    return files


@pytest.fixture
def pristine(upstream_files: dict[str, bytes], tmp_path: Path) -> Path:
    """A work tree holding upstream's config.h and config_auto.cpp, straight from the sdist."""
    tree = tmp_path / "tree"
    for rel, data in upstream_files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_bytes(data)
    return tree


def _run(tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(GENERATOR), str(tree)], capture_output=True, text=True,
                          timeout=60)


def _diff(expected: str, actual: str) -> str:
    return "".join(list(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                             "upstream", "generated"))[:60])


def test_reproduces_upstream_config_auto_byte_for_byte(pristine: Path) -> None:
    upstream = (pristine / CONFIG_AUTO).read_bytes()
    proc = _run(pristine)
    assert proc.returncode == 0, proc.stderr
    generated = (pristine / CONFIG_AUTO).read_bytes()
    assert generated == upstream, "generated config_auto.cpp differs from upstream's:\n" + _diff(
        upstream.decode(), generated.decode())


def test_body_is_generated_not_copied(pristine: Path) -> None:
    """Without an existing config_auto.cpp only the header comment (then ours) can differ."""
    upstream = (pristine / CONFIG_AUTO).read_text()
    (pristine / CONFIG_AUTO).unlink()
    assert _run(pristine).returncode == 0
    generated = (pristine / CONFIG_AUTO).read_text()
    assert generated.startswith(gen.DEFAULT_HEADER)
    body = upstream[upstream.index("*/\n") + 3:]
    assert generated[len(gen.DEFAULT_HEADER):] == body, _diff(body, generated[len(gen.DEFAULT_HEADER):])


NEW_PARAMS = """
  // desc = lightgbm-cegb test flag (generator test)
  bool cegb_test_flag = false;

  // alias = cegb_test_ids, cegb_test_id_list
  // desc = lightgbm-cegb test vector (generator test)
  std::vector<int> cegb_test_ids_vec;

  // check = >=0.0
  // check = <=1.0
  // desc = lightgbm-cegb test weight (generator test)
  double cegb_test_weight = 0.5;

  // [no-save]
  // desc = not written into models
  std::string cegb_test_unsaved = "";
"""
ANCHOR = "  std::vector<double> cegb_penalty_feature_coupled;\n"


def _add_params(tree: Path, block: str = NEW_PARAMS) -> None:
    config_h = tree / CONFIG_H
    text = config_h.read_text()
    assert text.count(ANCHOR) == 1
    config_h.write_text(text.replace(ANCHOR, ANCHOR + block))


def test_new_parameters_appear_in_every_section(pristine: Path) -> None:
    upstream = (pristine / CONFIG_AUTO).read_text()
    _add_params(pristine)
    proc = _run(pristine)
    assert proc.returncode == 0, proc.stderr
    out = (pristine / CONFIG_AUTO).read_text()

    def section(start: str) -> str:
        begin = out.index(start)
        return out[begin:out.index("\n}\n", begin)]

    aliases = section("Config::alias_table()")
    assert '  {"cegb_test_ids", "cegb_test_ids_vec"},\n' in aliases
    assert '  {"cegb_test_id_list", "cegb_test_ids_vec"},\n' in aliases

    names = section("Config::parameter_set()")
    expected = '  "cegb_penalty_feature_coupled",\n  "cegb_test_flag",\n  "cegb_test_ids_vec",\n' \
               '  "cegb_test_weight",\n  "cegb_test_unsaved",\n'
    assert expected in names

    extract = section("Config::GetMembersFromString(")
    assert '  GetBool(params, "cegb_test_flag", &cegb_test_flag);\n\n' in extract
    assert ('  if (GetString(params, "cegb_test_ids_vec", &tmp_str)) {\n'
            "    cegb_test_ids_vec = Common::StringToArray<int>(tmp_str, ',');\n  }\n") in extract
    assert ('  GetDouble(params, "cegb_test_weight", &cegb_test_weight);\n'
            "  CHECK_GE(cegb_test_weight, 0.0);\n  CHECK_LE(cegb_test_weight, 1.0);\n\n") in extract
    assert '  GetString(params, "cegb_test_unsaved", &cegb_test_unsaved);\n' in extract
    assert "CHECK_GE(cegb_test_flag" not in extract and "CHECK_GE(cegb_test_ids_vec" not in extract

    save = section("Config::SaveMembersToString()")
    assert '  str_buf << "[cegb_test_flag: " << cegb_test_flag << "]\\n";\n' in save
    assert '  str_buf << "[cegb_test_ids_vec: " << Common::Join(cegb_test_ids_vec, ",") << "]\\n";\n' in save
    assert '  str_buf << "[cegb_test_weight: " << cegb_test_weight << "]\\n";\n' in save
    assert "cegb_test_unsaved" not in save

    p2a = section("Config::parameter2aliases()")
    assert '    {"cegb_test_flag", {}},\n' in p2a
    assert '    {"cegb_test_ids_vec", {"cegb_test_ids", "cegb_test_id_list"}},\n' in p2a
    assert '    {"cegb_test_weight", {}},\n' in p2a

    types = section("Config::ParameterTypes()")
    assert '    {"cegb_test_flag", "bool"},\n' in types
    assert '    {"cegb_test_ids_vec", "vector<int>"},\n' in types
    assert '    {"cegb_test_weight", "double"},\n' in types
    assert '    {"cegb_test_unsaved", "string"},\n' in types

    # Nothing else changed: every difference from upstream's file is an added line about the new params.
    changed = [line for line in difflib.ndiff(upstream.splitlines(), out.splitlines())
               if line[:2] in {"- ", "+ "}]
    assert all(line.startswith("+ ") for line in changed), changed
    assert all("cegb_test" in line or line in {"+ ", "+   }"} for line in changed), changed


@pytest.mark.parametrize(("block", "bad", "message"), [
    ("  int cegb_test_broken = 1\n", 0, "expected a parameter declaration"),
    ("  // check = >=zero\n  double cegb_test_bad_check = 1.0;\n", 0, "'// check = ...' must be"),
    ("  // alias = cegb_penalty_split\n  int cegb_test_dup = 1;\n", 1, "already a name or alias"),
    ("  // descr = typo\n  int cegb_test_typo = 1;\n", 0, "unknown generator comment"),
    ("  float cegb_test_float = 1.0;\n", 0, "type 'float' cannot be extracted"),
    ("  std::vector<std::vector<int>> cegb_test_nested;\n", 0, "unsupported vector type"),
    ("  // desc = no declaration follows\n", 0, "not directly followed by a parameter declaration"),
    ("  // desc = a blank line follows\n\n  int cegb_test_gap = 1;\n", 0, "no blank line in between"),
])
def test_errors_name_the_line_of_config_h(pristine: Path, block: str, bad: int, message: str) -> None:
    _add_params(pristine, block)
    lines = (pristine / CONFIG_H).read_text().splitlines()
    expected_lineno = lines.index(ANCHOR.rstrip("\n")) + 2 + bad
    before = (pristine / CONFIG_AUTO).read_bytes()
    proc = _run(pristine)
    assert proc.returncode == 1, proc.stdout
    assert f"{CONFIG_H}:{expected_lineno}: " in proc.stderr, proc.stderr
    assert message in proc.stderr, proc.stderr
    assert lines[expected_lineno - 1].strip() in proc.stderr, proc.stderr
    assert (pristine / CONFIG_AUTO).read_bytes() == before, "config_auto.cpp must not change on errors"


def test_missing_work_tree_is_a_clear_error(tmp_path: Path) -> None:
    proc = _run(tmp_path)
    assert proc.returncode == 2
    assert "config.h not found" in proc.stderr


def test_patched_config_auto_is_the_generator_output(tmp_path: Path) -> None:
    """The fork's config_auto.cpp (after the patch series) is exactly what the generator writes
    from the fork's config.h: it was regenerated, never edited by hand."""
    work = ROOT / "build" / "lightgbm-src"
    if not (work / CONFIG_H).is_file():
        pytest.fail(f"{work} not found: run `bash lightgbm-cegb/scripts/prepare.sh`")
    tree = tmp_path / "tree"
    for rel in (CONFIG_H, CONFIG_AUTO):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_bytes((work / rel).read_bytes())
    patched = (tree / CONFIG_AUTO).read_text()
    assert "cegb_feature_group" in patched
    proc = _run(tree)
    assert proc.returncode == 0, proc.stderr
    assert (tree / CONFIG_AUTO).read_text() == patched, _diff(patched, (tree / CONFIG_AUTO).read_text())
