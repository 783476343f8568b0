#!/usr/bin/env bash
# Builds the libFuzzer targets (Sources/Fuzz) with --sanitize=fuzzer in .build/fuzz and runs
# each for SECONDS (default 60), seeded from Fuzz/corpus/<target>. Exits non-zero when a target
# crashes; the reproducer is left in .build/fuzz/artifacts/<target>/.
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

status=0
for target in "${targets[@]}"; do
    name=$target
    work="$build_path/corpus/$name"
    artifacts="$build_path/artifacts/$name/"
    mkdir -p "$work" "$artifacts"
    log="$build_path/$name.log"
    echo "fuzz: $target for ${seconds}s (corpus Fuzz/corpus/$name, log $log)"
    if SWIFT_BACKTRACE=enable=no "$bin_dir/$target" "$work" "Fuzz/corpus/$name" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -artifact_prefix="$artifacts" -print_final_stats=1 >"$log" 2>&1; then
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
        echo "fuzz: $target ok: ${execs:-?} runs, ${rate:-?}/s, corpus $(ls "$work" | wc -l) inputs"
    else
        status=1
        echo "fuzz: $target FAILED; reproducer in $artifacts; last lines of $log:" >&2
        tail -n 40 "$log" >&2
    fi
done
exit $status
