#!/usr/bin/env bash
# Builds the libFuzzer targets (Sources/Fuzz) with --sanitize=fuzzer in .build/fuzz and runs
# each for SECONDS (default 60), seeded from Fuzz/corpus/<target>, as many at once as there are
# cores. Exits non-zero when a target crashes; the reproducer is left in
# .build/fuzz/artifacts/<target>/.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
build_path=${WATCHLINK_FUZZ_BUILD_PATH:-.build/fuzz}

# A fuzz target is a directory of Sources/Fuzz with a ReplayMain.swift (its Package.swift
# target of the same name), seeded from Fuzz/corpus/<target>.
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for dir in Sources/Fuzz/*/; do
        [ -f "$dir/ReplayMain.swift" ] && targets+=("$(basename "$dir")")
    done
fi
for target in "${targets[@]}"; do
    [ -f "Sources/Fuzz/$target/ReplayMain.swift" ] || { echo "fuzz.sh: no fuzz target $target in Sources/Fuzz" >&2; exit 2; }
    [ -d "Fuzz/corpus/$target" ] || { echo "fuzz.sh: $target has no seed corpus, Fuzz/corpus/$target" >&2; exit 2; }
done

scripts/ensure-deps.sh >/dev/null

for target in "${targets[@]}"; do
    swift build --build-path "$build_path" --sanitize=fuzzer --product "$target"
done
bin_dir=$(swift build --build-path "$build_path" --sanitize=fuzzer --show-bin-path)

# Runs one target and prints its outcome; 1 when it crashed.
run() {
    local target=$1
    local work="$build_path/corpus/$target" artifacts="$build_path/artifacts/$target/" log="$build_path/$target.log"
    mkdir -p "$work" "$artifacts"
    if SWIFT_BACKTRACE=enable=no "$bin_dir/$target" "$work" "Fuzz/corpus/$target" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -artifact_prefix="$artifacts" -print_final_stats=1 >"$log" 2>&1; then
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
        echo "fuzz: $target ok: ${execs:-?} runs, ${rate:-?}/s, corpus $(ls "$work" | wc -l) inputs"
    else
        echo "fuzz: $target FAILED; reproducer in $artifacts; last lines of $log:" >&2
        tail -n 40 "$log" >&2
        return 1
    fi
}

# A target runs on one core: as many run at once as there are cores, each for SECONDS.
jobs=$(nproc)
status=0
for ((first = 0; first < ${#targets[@]}; first += jobs)); do
    batch=("${targets[@]:first:jobs}")
    pids=()
    for target in "${batch[@]}"; do
        echo "fuzz: $target for ${seconds}s (corpus Fuzz/corpus/$target, log $build_path/$target.log)"
        run "$target" >"$build_path/$target.outcome" 2>&1 &
        pids+=($!)
    done
    for i in "${!batch[@]}"; do
        wait "${pids[$i]}" || status=1
        cat "$build_path/${batch[$i]}.outcome"
    done
done
exit $status
