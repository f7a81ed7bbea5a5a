# Shared helpers of the set-up scripts: each installs a tool only when it is missing or at the
# wrong version, so a second run takes seconds.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"

TRUNK_VERSION_PREFIX="trunk 0.21."
TRUNK_REQUIREMENT="~0.21"

say() { printf '\033[1m==> [%s] %s\033[0m\n' "$(date -u +%H:%M:%S)" "$*"; }

# The wasm-bindgen CLI must equal the crate version pinned in Cargo.toml / Cargo.lock.
wasm_bindgen_version() {
  sed -n 's/^wasm-bindgen = { *version *= *"=\([0-9.]*\)".*/\1/p; s/^wasm-bindgen = "=\([0-9.]*\)"/\1/p' "$ROOT/Cargo.toml" | head -n1
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# ensure_apt PACKAGE...: installs the Debian packages that are not installed yet.
ensure_apt() {
  local missing=()
  for package in "$@"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    say "installing ${missing[*]}"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

ensure_wasm_target() {
  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    say "adding the wasm32-unknown-unknown target"
    rustup target add wasm32-unknown-unknown
  fi
}

# cargo_install CRATE VERSION: tries the crate's own lock file first, then a fresh resolution
# (a locked dependency can be missing from the registry mirror).
cargo_install() {
  cargo install "$1" --version "$2" --locked || cargo install "$1" --version "$2"
}

ensure_trunk() {
  if ! trunk --version 2>/dev/null | grep -q "^$TRUNK_VERSION_PREFIX"; then
    say "installing trunk $TRUNK_REQUIREMENT (about 10 minutes on 2 cores)"
    cargo_install trunk "$TRUNK_REQUIREMENT"
  fi
}

ensure_wasm_bindgen() {
  local version
  version="$(wasm_bindgen_version)"
  if ! wasm-bindgen --version 2>/dev/null | grep -q " $version\$"; then
    say "installing wasm-bindgen-cli $version"
    cargo_install wasm-bindgen-cli "$version"
  fi
}

# wasm-opt for release builds (Trunk runs it on the bundle and finds it on PATH): Binaryen 132
# from npm, as tools/package-lock.json pins; Debian's binaryen 108 breaks wasm-bindgen's output.
ensure_wasm_opt() {
  local wanted installed
  wanted="$(sed -n 's/.*"binaryen": *"\([0-9.]*\)".*/\1/p' "$ROOT/tools/package.json")"
  installed="$(sed -n 's/^  "version": *"\([0-9.]*\)".*/\1/p' "$ROOT/tools/node_modules/binaryen/package.json" 2>/dev/null || true)"
  if [ ! -x "$ROOT/tools/node_modules/.bin/wasm-opt" ] || [ "$wanted" != "$installed" ]; then
    say "installing wasm-opt (Binaryen, from npm)"
    (cd "$ROOT/tools" && npm ci --no-audit --no-fund)
  fi
  export PATH="$ROOT/tools/node_modules/.bin:$PATH"
}

ensure_web_toolchain() {
  ensure_wasm_target
  ensure_trunk
  ensure_wasm_bindgen
}

# A real LTI 1.3 platform for the LTI tests: PyPI's lti1p3platform (pinned with its dependencies
# in e2e/lti-platform/requirements.txt) in a throwaway virtual environment under target/.
ensure_lti_platform() {
  local venv="$ROOT/target/lti-platform-venv"
  if ! "$venv/bin/python" -c 'import lti1p3platform' 2>/dev/null; then
    say "installing the LTI 1.3 test platform (lti1p3platform) into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$ROOT/e2e/lti-platform/requirements.txt"
  fi
  export GRADLAB_LTI_PYTHON="$venv/bin/python"
}

# Prints how many tests skipped part of their work knowingly, and which (see tests/common).
report_skipped_tests() {
  local file="$1"
  if [ -s "$file" ]; then
    say "$(sort -u "$file" | wc -l) tests skipped their GPU or PostgreSQL half knowingly:"
    sort -u "$file" | sed 's/^/  /'
  else
    say "no test skipped its GPU or PostgreSQL half"
  fi
}
