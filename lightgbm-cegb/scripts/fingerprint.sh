# Sourced by prepare.sh and regen-patches.sh: a hash of everything the fork's work tree is
# made from (the pin, the patch series, our whole files), so prepare.sh can tell whether an
# existing work tree is current.
cegb_fingerprint() {
  (cd "$1" && { cat lightgbm-cegb/UPSTREAM; { find lightgbm-cegb/patches lightgbm-cegb/src \
    python-package/lightgbm -type f 2>/dev/null || true; } | LC_ALL=C sort | xargs -r sha256sum; } \
    | sha256sum | cut -d' ' -f1)
}
