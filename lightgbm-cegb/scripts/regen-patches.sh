#!/usr/bin/env bash
# Regenerate the patch series and the whole files from the work tree after editing it.
#
# Workflow: edit the work tree made by prepare.sh, commit one commit per patch (message = the
# patch header: What:, Why:, Drop when:, Forwarded: no (reason) or not-needed (reason), as
# tests/architecture/test_patch_headers.py checks; amend or rebase to keep one commit per
# topic), then run this script. Whole files of ours (those under lightgbm-cegb/src and
# python-package/lightgbm) are copied back and excluded from the patches.
#
# Usage: lightgbm-cegb/scripts/regen-patches.sh [WORK_TREE]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/.." && pwd)
work=${1:-$root/build/lightgbm-src}
cd "$work"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "regen-patches: $work has uncommitted changes; commit them first" >&2
  exit 1
fi
# Whole files: everything under src/ that upstream does not have, and python files we own.
mapfile -t ours < <(git diff --name-only --diff-filter=A upstream HEAD -- src lightgbm include)
excludes=()
for f in "${ours[@]}"; do
  case "$f" in
    src/*) mkdir -p "$here/$(dirname "$f")"; cp "$f" "$here/$f" ;;
    include/*) echo "regen-patches: new header $f must live under src/ (include/ is upstream's)" >&2; exit 1 ;;
    lightgbm/*) mkdir -p "$root/python-package/$(dirname "$f")"; cp "$f" "$root/python-package/$f" ;;
  esac
  excludes+=(":(exclude)$f")
done
rm -f "$here"/patches/[0-9][0-9][0-9][0-9]-*.patch
git format-patch -q -N --zero-commit --no-signature -o "$here/patches" overlay..HEAD -- . "${excludes[@]}"
# the work tree now matches the series exactly: record that for prepare.sh
# shellcheck source=lightgbm-cegb/scripts/fingerprint.sh
source "$here/scripts/fingerprint.sh"
echo "$(cegb_fingerprint "$root") $(git rev-parse HEAD)" > .git/cegb-fingerprint
ls "$here/patches"
