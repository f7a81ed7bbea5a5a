#!/usr/bin/env bash
# Trunk's post-build hook of index.html's build (Trunk.toml), on the build being staged:
# 1. builds the app's second document, pages.html (every page but the Lab, with its own wasm),
#    and puts it beside the Lab's, so that `trunk build` and `trunk serve` always give both
#    documents (Trunk.pages.toml has no hook, so this build does not call itself);
# 2. in a release build, writes a gzip twin of each file a browser fetches (`app_bg.wasm.gz`,
#    `shakespeare/hamlet.txt.gz`),
#    which `gradlab issuer serve --dist` sends to browsers that accept gzip (the SCORM package
#    leaves the twins out).
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
if [ "${#release[@]}" -gt 0 ]; then
  find "$TRUNK_STAGING_DIR" -maxdepth 1 -type f \( -name '*.wasm' -o -name '*.js' -o -name '*.css' -o -name '*.html' \) \
    -exec gzip -9 --keep --force --no-name {} \;
  # The tiny GPT's plays, fetched by its page.
  find "$TRUNK_STAGING_DIR/shakespeare" -maxdepth 1 -type f -name '*.txt' -exec gzip -9 --keep --force --no-name {} \;
fi
