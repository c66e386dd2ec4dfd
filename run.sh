#!/usr/bin/env bash
# lightgbm-cegb: one entry point.
#
#   bash run.sh demo      install everything (first time) and run the main job on the embedded
#                         thyroid data with real test costs
#   bash run.sh test      install everything (first time) and run the test suite
#   bash run.sh install   only install: .venv with the fork (lightgbm package, lib_lightgbm,
#                         `lightgbm` CLI) and budget_extras; .venv-upstream with upstream's wheel
#
# Re-running is incremental: the fork is rebuilt only where its sources changed.
# Environment: PYTHON (interpreter used to create the venvs, default python3),
#              LGBM_CEGB_JOBS (parallel compile jobs, default: number of cores).
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
cd "$root"
py=${PYTHON:-python3}
venv="$root/.venv"
upstream_venv="$root/.venv-upstream"

log() { echo "[run.sh] $*"; }

system_packages() {
  # A C++ compiler with OpenMP, git, and patch tools. Installed through apt when missing.
  local missing=()
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  command -v git >/dev/null 2>&1 || missing+=(git)
  command -v ccache >/dev/null 2>&1 || missing+=(ccache)
  "$py" -c "import venv, ensurepip" >/dev/null 2>&1 || missing+=(python3-venv)
  if [ ${#missing[@]} -gt 0 ]; then
    if command -v apt-get >/dev/null 2>&1; then
      log "apt-get install ${missing[*]}"
      local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
      $sudo apt-get update -qq >/dev/null && $sudo apt-get install -y -qq "${missing[@]}" >/dev/null \
        || log "warning: apt-get could not install ${missing[*]}"
    else
      log "warning: please install ${missing[*]}"
    fi
  fi
}

install() {
  system_packages
  if [ ! -x "$venv/bin/python" ]; then
    log "creating $venv"
    "$py" -m venv "$venv"
  fi
  log "installing the build tools into .venv"
  "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
  # the fork's build (scikit-build-core) and budget_extras' (setuptools), both without isolation;
  # narwhals is the fork's own runtime dependency (build.sh installs its wheel with --no-deps)
  "$venv/bin/python" -m pip install -q "setuptools>=77" wheel "cmake>=3.28" ninja "scikit-build-core>=0.11" narwhals
  log "preparing the fork's sources (pinned LightGBM sdist + patch series)"
  bash lightgbm-cegb/scripts/prepare.sh
  log "building the fork"
  PYTHON="$venv/bin/python" bash lightgbm-cegb/scripts/build.sh
  # budget_extras with the dependencies pyproject.toml lists; after the fork, which already
  # satisfies its `lightgbm` requirement (so pip fetches no upstream wheel)
  log "installing budget_extras and its Python dependencies (pyproject.toml) into .venv"
  "$venv/bin/python" -m pip install -q --no-build-isolation -e ".[test,plot,lint]"
  if [ ! -x "$upstream_venv/bin/python" ] || ! "$upstream_venv/bin/python" -c \
      "import lightgbm, sys; sys.exit(lightgbm.__version__ != '4.7.0')" >/dev/null 2>&1; then
    log "creating $upstream_venv with the upstream LightGBM 4.7.0 wheel (parity oracle)"
    "$py" -m venv "$upstream_venv"
    "$upstream_venv/bin/python" -m pip install -q lightgbm==4.7.0 numpy scipy pandas scikit-learn
  fi
}

case "${1:-}" in
  install)
    install
    ;;
  demo)
    install
    shift
    PATH="$venv/bin:$PATH" "$venv/bin/python" -m budget_extras.demo "$@"
    ;;
  test)
    install
    shift
    # Benchmark-only extras: the frontier smoke tests check our walks of CatBoost's and XGBoost's
    # models against their own scores. xgboost without its optional GPU (nccl) dependency.
    if ! "$venv/bin/python" -c "import catboost, xgboost" >/dev/null 2>&1; then
      log "installing the benchmark extras (catboost, xgboost) for the frontier smoke tests"
      "$venv/bin/python" -m pip install -q catboost
      "$venv/bin/python" -m pip install -q --no-deps xgboost
    fi
    log "running the tests"
    # pytest.main, then os._exit with its status: the result is final once pytest returns. Ending
    # there skips the interpreter's teardown and the C++ static destructors, where the LLVM inside
    # llvmlite's wheels (an assertion build) once aborted a suite that had passed (exit 134,
    # StringMap "Didn't find key?"), a failure of nothing under test.
    PATH="$venv/bin:$PATH" "$venv/bin/python" -c \
      'import os, sys, pytest; rc = int(pytest.main(sys.argv[1:])); sys.stdout.flush(); sys.stderr.flush(); os._exit(rc)' \
      tests -q "$@"
    ;;
  *)
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
