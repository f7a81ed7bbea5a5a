#!/usr/bin/env bash
# Installs whatever the web build needs and is missing, then serves the app at
# http://127.0.0.1:8080 (Trunk rebuilds on every change) with the certificate issuer beside it
# on 127.0.0.1:8081 (Trunk forwards /api/ and /.well-known/ to it). The issuer's data (SQLite
# file, signing key) lives in .gradlab-data/ (or $GRADLAB_DATA_DIR). Extra arguments go to
# `trunk serve`.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_web_toolchain
say "building the issuer"
cargo build --locked --bin gradlab
data_dir="${GRADLAB_DATA_DIR:-$ROOT/.gradlab-data}"
target/debug/gradlab issuer serve --listen 127.0.0.1:8081 --data-dir "$data_dir" \
  --public-url http://127.0.0.1:8080 &
issuer_pid=$!
trap 'kill "$issuer_pid" 2>/dev/null' EXIT
say "serving the app at http://127.0.0.1:8080"
trunk serve "$@"
