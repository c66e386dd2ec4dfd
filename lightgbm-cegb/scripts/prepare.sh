#!/usr/bin/env bash
# Fetch the pinned LightGBM sdist, verify its sha256, unpack it into a git work tree,
# add our whole-file sources (lightgbm-cegb/src -> src/, python-package/lightgbm -> lightgbm/)
# and apply the numbered patch series with `git am`.
#
# Usage: lightgbm-cegb/scripts/prepare.sh [WORK_TREE]   (default: build/lightgbm-src)
#
# Idempotent: an existing work tree whose base matches the pin is reset and re-patched
# only with --force; otherwise it is left alone (so local commits are never lost).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)        # lightgbm-cegb/
root=$(cd "$here/.." && pwd)                   # repository root
force=0
if [ "${1:-}" = "--force" ]; then force=1; shift; fi
work=${1:-$root/build/lightgbm-src}
cache=${LGBM_CEGB_CACHE:-$root/build/cache}

# shellcheck disable=SC1091
version=$(sed -n 's/^version=//p' "$here/UPSTREAM")
sha=$(sed -n 's/^sha256=//p' "$here/UPSTREAM")
fork_version=$(sed -n 's/^fork_version=//p' "$here/UPSTREAM")
sdist="$cache/lightgbm-$version.tar.gz"

mkdir -p "$cache"
if [ ! -f "$sdist" ] || ! echo "$sha  $sdist" | sha256sum -c --status; then
  echo "prepare: fetching lightgbm==$version sdist from PyPI"
  rm -f "$sdist"
  python3 -m pip download "lightgbm==$version" --no-binary lightgbm --no-deps -d "$cache" -q
fi
if ! echo "$sha  $sdist" | sha256sum -c --status; then
  echo "prepare: sha256 mismatch for $sdist (expected $sha, got $(sha256sum "$sdist" | cut -d' ' -f1))" >&2
  exit 1
fi

# Fingerprint of everything the work tree is made from: pin, patches, whole files.
# shellcheck source=lightgbm-cegb/scripts/fingerprint.sh
source "$here/scripts/fingerprint.sh"
fingerprint=$(cegb_fingerprint "$root")
if [ -d "$work/.git" ]; then
  recorded=$(cat "$work/.git/cegb-fingerprint" 2>/dev/null || true)
  if [ $force = 0 ]; then
    if [ "$recorded" = "$fingerprint $(git -C "$work" rev-parse HEAD)" ] && [ -z "$(git -C "$work" status --porcelain)" ]; then
      echo "prepare: $work is up to date"
      exit 0
    fi
    if [ "${recorded%% *}" = "$fingerprint" ]; then
      echo "prepare: $work has local edits on top of the patch series; keeping them (regen-patches.sh saves them)"
      exit 0
    fi
    if [ -n "$recorded" ] && [ "${recorded#* }" = "$(git -C "$work" rev-parse HEAD)" ] && [ -z "$(git -C "$work" status --porcelain)" ]; then
      echo "prepare: the patch series changed; re-creating $work"
    else
      echo "prepare: $work has local edits AND the patch series changed: run regen-patches.sh or use --force" >&2
      exit 1
    fi
  fi
  rm -rf "$work"
fi

mkdir -p "$work"
tar xzf "$sdist" -C "$work" --strip-components=1
cd "$work"
git init -q
git config user.name "lightgbm-cegb prepare"
git config user.email "prepare@lightgbm-cegb.invalid"
git config core.autocrlf false
git add -A
git commit -q -m "upstream lightgbm $version sdist" --no-verify
git tag upstream

# Whole files of ours: copied in as one commit, tagged 'overlay'. The patches come after it.
if [ -d "$here/src" ] && [ -n "$(ls -A "$here/src")" ]; then cp -r "$here/src/." "$work/src/"; fi
if [ -d "$root/python-package/lightgbm" ]; then cp -r "$root/python-package/lightgbm/." "$work/lightgbm/"; fi
# The fork's version string.
echo "$fork_version" > lightgbm/VERSION.txt
sed -i "s/^version = \"$version\"/version = \"$fork_version\"/" pyproject.toml
git add -A
git commit -q -m "lightgbm-cegb whole files and version $fork_version" --no-verify --allow-empty
git tag overlay

shopt -s nullglob
patches=("$here"/patches/[0-9][0-9][0-9][0-9]-*.patch)
if [ ${#patches[@]} -gt 0 ]; then
  git am -q --whitespace=nowarn "${patches[@]}"
fi
echo "$fingerprint $(git rev-parse HEAD)" > .git/cegb-fingerprint
echo "prepare: $work ready ($(git rev-list --count overlay..HEAD) patches applied on lightgbm $version)"
