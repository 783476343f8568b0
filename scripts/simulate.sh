#!/usr/bin/env bash
# Runs the deterministic simulation of the pair (docs/durability.md, "The simulator"): worlds
# of a phone and a watch drawn from seeds, each with its workload, crashes, link cuts and disk
# faults, then a final phase in which everything must drain; every world is checked.
#
# Usage: scripts/simulate.sh [--seeds N | --seconds S] [--seed S] [--check-determinism K]
#        scripts/simulate.sh --seed S            (one world, every event of it printed: a replay)
# Prints the seeds, schedules, schedules a second, steps and frames per schedule and the rare
# states reached. A failing seed is printed with the command that replays it.
# Environment: SIMULATE_CONFIGURATION=debug builds and runs the debug build (no release build).
# Exit status: 0 when every world passed, 1 when one failed, 2 on a setup error.
set -euo pipefail
cd "$(dirname "$0")/.."

configuration=${SIMULATE_CONFIGURATION:-release}
if [ "$configuration" = release ]; then
    # Its own build path, so that the debug build of the tests is left as it is.
    build_path=.build/simulator
else
    build_path=.build
fi
swift build -c "$configuration" --build-path "$build_path" --product linksim >&2 || exit 2
binary="$build_path/$configuration/linksim"

progress=$(mktemp "${TMPDIR:-/tmp}/linksim-progress.XXXXXX")
trap 'rm -f "$progress"' EXIT
status=0
"$binary" --progress "$progress" "$@" || status=$?
if [ "$status" -gt 2 ]; then
    # A trap or a signal: the world that was running names itself in the progress file.
    seed=$(head -1 "$progress" 2>/dev/null || true)
    echo "simulate.sh: linksim died (exit $status) in seed ${seed:-?}"
    [ -z "$seed" ] || echo "replay it with its trace: scripts/simulate.sh --seed $seed"
    exit 1
fi
exit "$status"
