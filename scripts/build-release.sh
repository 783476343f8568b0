#!/usr/bin/env bash
# Builds the release programs (phoned, watchd and linkctl unless products are named) the way
# scripts/run-local.sh runs them and scripts/bench.sh measures them, in .build/static (or
# $WATCHLINK_RELEASE_BUILD_PATH), and prints their directory on stdout.
# Usage: scripts/build-release.sh [PRODUCT...]
#   WATCHLINK_RELEASE_WITHOUT="exclusivity order" builds without the named flags (each or
#   both), to measure what they buy (scripts/bench/ab.py); give such a build its own
#   WATCHLINK_RELEASE_BUILD_PATH.
#
# The daemons' speed flags are here, not in Package.swift: SwiftPM refuses a package whose
# library products carry unsafe flags as a dependency taken by version, and these flags are
# for the daemons' own release build only (docs/performance.md has what each buys):
# - no run-time exclusivity checks (debug builds, which run the tests, keep them);
# - on Linux, each function in an ELF section of its own, linked by the toolchain's lld with
#   the functions every message runs through side by side, in the order of
#   Sources/hot-functions.order (written by scripts/bench/hot_functions.py).
set -euo pipefail
cd "$(dirname "$0")/.."

products=("$@")
[ ${#products[@]} -gt 0 ] || products=(phoned watchd linkctl)

# The Swift runtime linked statically: less memory, faster start.
without=" ${WATCHLINK_RELEASE_WITHOUT:-} "
for flag in $without; do
  case "$flag" in exclusivity|order) ;; *) echo "build-release.sh: WATCHLINK_RELEASE_WITHOUT: unknown '$flag' (exclusivity, order)" >&2; exit 2 ;; esac
done
args=(-c release --static-swift-stdlib --build-path "${WATCHLINK_RELEASE_BUILD_PATH:-.build/static}")
[[ "$without" == *" exclusivity "* ]] || args+=(-Xswiftc -enforce-exclusivity=unchecked)
if [ "$(uname -s)" = Linux ] && [[ "$without" != *" order "* ]]; then
  args+=(-Xswiftc -Xfrontend -Xswiftc -function-sections
         -Xswiftc -use-ld=lld
         -Xlinker "--symbol-ordering-file=$PWD/Sources/hot-functions.order" -Xlinker --no-warn-symbol-ordering)
fi

for product in "${products[@]}"; do
  swift build "${args[@]}" --product "$product" >&2
done
swift build "${args[@]}" --show-bin-path
