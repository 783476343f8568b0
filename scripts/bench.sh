#!/usr/bin/env bash
# Builds WatchLink (release) and the C references, then prints the benchmark table:
# every figure beside its reference, measured in the same run. See docs/performance.md.
# Usage: scripts/bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-deps.sh
# The APNs rows drive the endpoint with h2load and compare it with nghttpd (Debian's nghttp2
# tools), installed here where missing: only the benchmark needs them.
if ! command -v h2load >/dev/null 2>&1 || ! command -v nghttpd >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    sudo_cmd=()
    [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq nghttp2-client nghttp2-server >/dev/null
  elif command -v brew >/dev/null 2>&1; then
    brew install nghttp2
  fi
fi
bin=$(scripts/build-release.sh phoned watchd)
ref=$(mktemp -d /tmp/wlref-XXXXXX)
trap 'rm -rf "$ref"' EXIT
cc -O2 -o "$ref/unix_frames" scripts/bench/unix_frames.c
cc -O2 -o "$ref/control_client" scripts/bench/control_client.c
cc -O2 -o "$ref/sqlite_commits" scripts/bench/sqlite_commits.c $(pkg-config --cflags --libs sqlite3)
python3 scripts/bench/run.py --bin "$bin" --ref "$ref" "$@"
