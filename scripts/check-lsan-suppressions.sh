#!/usr/bin/env bash
# Checks that each suppression of scripts/lsan-suppressions.txt still names a function: its
# pattern is part of a symbol of the built phoned or watchd, or of the Swift runtime library
# they load. A function renamed or moved would otherwise leave its suppression matching
# nothing, and the false report it was written for would fail the next ASan run far from the
# change. Run by scripts/test.sh after its build (the symbols are the same in every build).
# Usage: scripts/check-lsan-suppressions.sh [directory of the built programs]
set -euo pipefail
cd "$(dirname "$0")/.."

bin_dir=${1:-$(swift build --show-bin-path)}
symbols=$(mktemp "${TMPDIR:-/tmp}/watchlink-symbols.XXXXXX")
trap 'rm -f "$symbols"' EXIT

objects=("$bin_dir/phoned" "$bin_dir/watchd")
# The runtime the daemons load (a debug or sanitizer build links it dynamically).
runtime=$(ldd "$bin_dir/phoned" | awk '/libswiftCore\.so/ { print $3 }')
[ -z "$runtime" ] || objects+=("$runtime")
for object in "${objects[@]}"; do
    nm "$object" >>"$symbols" 2>/dev/null || true
done
[ -s "$symbols" ] || { echo "check-lsan-suppressions: no symbols read from ${objects[*]}" >&2; exit 1; }

checked=0
stale=()
while IFS= read -r pattern; do
    checked=$((checked + 1))
    grep -qF -- "$pattern" "$symbols" || stale+=("$pattern")
done < <(sed -n 's/^leak://p' scripts/lsan-suppressions.txt)

if [ ${#stale[@]} -gt 0 ]; then
    echo "check-lsan-suppressions: these suppressions of scripts/lsan-suppressions.txt name no symbol of ${objects[*]} (renamed? name the function that allocates now):" >&2
    printf '  leak:%s\n' "${stale[@]}" >&2
    exit 1
fi
echo "check-lsan-suppressions: each of the $checked suppressions names a symbol of the daemons or the Swift runtime"
