#!/usr/bin/env bash
# Build the fork from the prepared work tree and install it into the active Python environment:
#   - one CMake build (Release, OpenMP) compiles LightGBM's sources once and links both
#     lib_lightgbm.so and the `lightgbm` CLI executable;
#   - the Python package is installed as a wheel carrying that lib_lightgbm.so
#     (scikit-build-core with wheel.cmake=false, so nothing is compiled twice);
#   - the CLI is copied next to the environment's python (on PATH when the venv is active).
# Any installed `lightgbm` (upstream's wheel, or an older fork) is uninstalled first.
#
# Usage: lightgbm-cegb/scripts/build.sh [WORK_TREE] [BUILD_DIR]
# Incremental: re-running after editing the work tree rebuilds only what changed (ccache is
# used when installed).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/.." && pwd)
work=${1:-$root/build/lightgbm-src}
bdir=${2:-$root/build/cmake}
py=${PYTHON:-python3}
jobs=${LGBM_CEGB_JOBS:-$(nproc)}

launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
gen=()
if command -v ninja >/dev/null 2>&1; then gen=(-G Ninja); fi
cmake_bin=$($py -c 'import cmake, os; print(os.path.join(cmake.CMAKE_BIN_DIR, "cmake"))' 2>/dev/null || command -v cmake)

if [ ! -f "$bdir/CMakeCache.txt" ]; then
  # The CLI executable is called `lightgbm`, like the sdist's Python package folder: send it elsewhere.
  "$cmake_bin" -S "$work" -B "$bdir" "${gen[@]}" "${launcher[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_CLI=ON -DINSTALL_HEADERS=OFF \
    -DCMAKE_RUNTIME_OUTPUT_DIRECTORY="$bdir/bin" -DCMAKE_LIBRARY_OUTPUT_DIRECTORY="$bdir/lib"
fi
echo "build: compiling lib_lightgbm and the CLI in $bdir ($jobs jobs)"
"$cmake_bin" --build "$bdir" --target _lightgbm lightgbm -j "$jobs"

# Python package: upstream's python sources from the work tree plus the freshly built library.
stage="$bdir/python-stage"
rm -rf "$stage"; mkdir -p "$stage"
cp -r "$work/lightgbm" "$work/pyproject.toml" "$work/README.rst" "$work/LICENSE" "$stage/"
mkdir -p "$stage/lightgbm/lib"
cp "$bdir/lib/lib_lightgbm.so" "$stage/lightgbm/lib/"
# The wheel is kept in $bdir/dist: install it on Dask workers to train with the fork there
# (docs/distributed.md).
rm -rf "$bdir/dist"
$py -m pip wheel -q --no-deps --no-build-isolation -w "$bdir/dist" "$stage" \
  --config-settings=wheel.cmake=false --config-settings=wheel.platlib=true
$py -m pip uninstall -y -q lightgbm >/dev/null 2>&1 || true
$py -m pip install -q --no-deps "$bdir"/dist/lightgbm-*.whl
bindir=$($py -c 'import sys, os; print(os.path.join(sys.prefix, "bin"))')
install -m 755 "$bdir/bin/lightgbm" "$bindir/lightgbm"
echo "build: installed lightgbm $($py -m pip show lightgbm 2>/dev/null | sed -n 's/^Version: //p') (Python) and $bindir/lightgbm (CLI)"
