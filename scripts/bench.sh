#!/usr/bin/env bash
# Builds WatchLink (release) and the C references, then prints the benchmark table:
# every figure beside its reference, measured in the same run. See docs/performance.md.
# Usage: scripts/bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-deps.sh
# Release daemons link the Swift runtime statically: only the pages they use are loaded.
release=(-c release --static-swift-stdlib --build-path .build/static)
swift build "${release[@]}" --product phoned >&2
swift build "${release[@]}" --product watchd >&2
bin=$(swift build "${release[@]}" --show-bin-path)
ref=$(mktemp -d /tmp/wlref-XXXXXX)
trap 'rm -rf "$ref"' EXIT
cc -O2 -o "$ref/unix_frames" scripts/bench/unix_frames.c
cc -O2 -o "$ref/sqlite_commits" scripts/bench/sqlite_commits.c $(pkg-config --cflags --libs sqlite3)
python3 scripts/bench/run.py --bin "$bin" --ref "$ref" "$@"
