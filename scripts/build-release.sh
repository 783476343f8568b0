#!/usr/bin/env bash
# Builds the release programs (phoned, watchd and linkctl unless products are named) the way
# scripts/run-local.sh runs them and scripts/bench.sh measures them, in .build/static (or
# $WATCHLINK_RELEASE_BUILD_PATH), and prints their directory on stdout.
# Usage: scripts/build-release.sh [PRODUCT...]
#   WATCHLINK_RELEASE_WITHOUT=exclusivity builds with the run-time exclusivity checks, to
#   measure what turning them off buys (scripts/bench/ab.py); give such a build its own
#   WATCHLINK_RELEASE_BUILD_PATH.
#
# The daemons' one speed flag is here, not in Package.swift: SwiftPM refuses a package whose
# library products carry unsafe flags as a dependency taken by version, and the flag is for
# the daemons' own release build only. Without run-time exclusivity checks a round trip is
# 4-10% faster, one-way 64 B messages 20% (docs/performance.md); debug builds, which run the
# tests, keep the checks.
set -euo pipefail
cd "$(dirname "$0")/.."

products=("$@")
[ ${#products[@]} -gt 0 ] || products=(phoned watchd linkctl)

without=" ${WATCHLINK_RELEASE_WITHOUT:-} "
for flag in $without; do
  case "$flag" in exclusivity) ;; *) echo "build-release.sh: WATCHLINK_RELEASE_WITHOUT: unknown '$flag' (exclusivity)" >&2; exit 2 ;; esac
done
# The Swift runtime linked statically: less memory, faster start.
args=(-c release --static-swift-stdlib --build-path "${WATCHLINK_RELEASE_BUILD_PATH:-.build/static}")
[[ "$without" == *" exclusivity "* ]] || args+=(-Xswiftc -enforce-exclusivity=unchecked)

for product in "${products[@]}"; do
  swift build "${args[@]}" --product "$product" >&2
done
swift build "${args[@]}" --show-bin-path
