#!/usr/bin/env bash
# Installs whatever the web build needs and is missing, then builds and serves the app at
# http://127.0.0.1:8080 (Trunk rebuilds on every change). Extra arguments go to `trunk serve`.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_web_toolchain
say "serving the app at http://127.0.0.1:8080"
exec trunk serve "$@"
