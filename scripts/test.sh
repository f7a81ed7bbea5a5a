#!/usr/bin/env bash
# Installs what the tests need and is missing, then runs every check CI runs: formatting,
# clippy (native and wasm) with -D warnings, all Rust tests, the release web build and the
# end-to-end tests in headless Chromium.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/postgres.sh"
cd "$ROOT"
# A clean build gains nothing from incremental compilation's bookkeeping (CI always starts clean).
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

ensure_apt chromium chromium-driver mesa-vulkan-drivers libvulkan1 postgresql unzip
ensure_web_toolchain
ensure_lti_platform
# Playwright, scorm-again (the LMS side of the SCORM tests) and axe-core, as package-lock.json pins.
if [ ! -d e2e/node_modules/playwright-core ] || [ ! -d e2e/node_modules/scorm-again ] || [ ! -d e2e/node_modules/axe-core ]; then
  say "installing the end-to-end test packages"
  (cd e2e && npm ci --no-audit --no-fund)
fi

say "rustfmt"
cargo fmt --all -- --check
say "clippy (native)"
cargo clippy --workspace --all-targets --locked -- -D warnings
say "clippy (wasm32)"
cargo clippy --target wasm32-unknown-unknown --workspace --lib --bins --test browser_webgpu --test browser_components --locked -- -D warnings
start_test_postgres
say "cargo test"
# A test that skips its GPU or PostgreSQL half knowingly (GRADLAB_SKIP_*_TESTS=1) says so here.
export GRADLAB_SKIPPED_TESTS_FILE="$ROOT/target/skipped-tests.txt"
mkdir -p "$ROOT/target"
rm -f "$GRADLAB_SKIPPED_TESTS_FILE"
status=0
cargo test --workspace --locked || status=$?
report_skipped_tests "$GRADLAB_SKIPPED_TESTS_FILE"
[ "$status" -eq 0 ] || exit "$status"
say "in-browser tests (wasm32, WebGPU in headless Chromium)"
CHROMEDRIVER=/usr/bin/chromedriver cargo test --target wasm32-unknown-unknown --test browser_webgpu --test browser_components --locked
say "release web build"
ensure_wasm_opt
trunk build --release
say "end-to-end tests (headless Chromium)"
(cd e2e && npm test)
say "all checks passed"
