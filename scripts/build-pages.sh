#!/usr/bin/env bash
# Trunk's post-build hook of index.html's build (Trunk.toml): builds the app's second document,
# pages.html (every page but the Lab, with its own wasm), and puts it beside the Lab's in the
# build being staged, so that `trunk build` and `trunk serve` always give both documents.
# Trunk.pages.toml has no hook, so this build does not call itself.
set -euo pipefail
: "${TRUNK_STAGING_DIR:?run by Trunk as a post_build hook}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/target/pages-dist"
release=()
[ "${TRUNK_PROFILE:-debug}" = release ] && release=(--release)
cd "$root"
rm -rf "$out"
trunk build "${release[@]}" --config Trunk.pages.toml --dist "$out" --html-output pages.html pages.html
# The stylesheet is the same file (same hash) in both builds.
cp -f "$out"/* "$TRUNK_STAGING_DIR"/
