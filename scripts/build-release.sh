#!/usr/bin/env bash
# Builds the release programs (phoned, watchd and linkctl unless products are named) the way
# scripts/run-local.sh runs them and scripts/bench.sh measures them, in .build/static (or
# $WATCHLINK_RELEASE_BUILD_PATH), and prints their directory on stdout.
# Usage: scripts/build-release.sh [PRODUCT...]
#   WATCHLINK_RELEASE_WITHOUT="exclusivity single-thread lto" (any of them) builds without that
#   speed flag, to measure what it buys (scripts/bench/ab.py); give such a build its own
#   WATCHLINK_RELEASE_BUILD_PATH.
#
# The daemons' speed flags are here, not in Package.swift: SwiftPM refuses a package whose
# library products carry unsafe flags as a dependency taken by version, and the flags are for
# the daemons' own release build only; debug builds, which run the tests, have neither.
# - No run-time exclusivity checks: a round trip is 4-10% faster, one-way 64 B messages 20%.
# - Reference counting without atomic instructions (-assume-single-threaded): phoned and
#   watchd run one thread (the integration test DaemonThreadTests checks it), so a retain or
#   release needs no locked instruction; one-way 132 B messages 10-13% more a second. Only the
#   daemons: linkctl reads its control socket on a thread of its own, so the other products
#   are built apart without it (in the build path's "-tools" sibling) and copied beside them.
# - Link-time optimization of the daemons (LLVM's full LTO: the modules' code optimized as one
#   program, small functions of one module inlined into another): 7-13% fewer instructions a
#   message on the link. Its debug information is DWARF 4, which valgrind (callgrind, the
#   instruction counts of scripts/bench/instructions.py) reads; the LTO linker writes DWARF 5
#   otherwise. It makes a rebuild after a change relink for about a minute a daemon.
# docs/performance.md has the measurements.
set -euo pipefail
cd "$(dirname "$0")/.."

products=("$@")
[ ${#products[@]} -gt 0 ] || products=(phoned watchd linkctl)

without=" ${WATCHLINK_RELEASE_WITHOUT:-} "
for flag in $without; do
  case "$flag" in exclusivity | single-thread | lto) ;; *)
    echo "build-release.sh: WATCHLINK_RELEASE_WITHOUT: unknown '$flag' (exclusivity, single-thread, lto)" >&2
    exit 2
    ;;
  esac
done
path=${WATCHLINK_RELEASE_BUILD_PATH:-.build/static}
# The Swift runtime linked statically: less memory, faster start.
common=(-c release --static-swift-stdlib)
[[ "$without" == *" exclusivity "* ]] || common+=(-Xswiftc -enforce-exclusivity=unchecked)
daemons=("${common[@]}" --build-path "$path")
# WATCHLINK_ONE_THREAD makes the APIs that hand work to other threads unavailable in it.
[[ "$without" == *" single-thread "* ]] || daemons+=(-Xswiftc -Xfrontend -Xswiftc -assume-single-threaded -Xswiftc -DWATCHLINK_ONE_THREAD)
[[ "$without" == *" lto "* ]] || daemons+=(--experimental-lto-mode=full -Xswiftc -dwarf-version=4 -Xcc -gdwarf-4)
tools=("${common[@]}" --build-path "$path-tools")

bin=$(swift build "${daemons[@]}" --show-bin-path)
for product in "${products[@]}"; do
  case "$product" in
    phoned | watchd) swift build "${daemons[@]}" --product "$product" >&2 ;;
    *)
      swift build "${tools[@]}" --product "$product" >&2
      mkdir -p "$bin"
      cp "$(swift build "${tools[@]}" --show-bin-path)/$product" "$bin/$product"
      ;;
  esac
done
echo "$bin"
