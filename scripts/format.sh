#!/usr/bin/env bash
# Formats the Swift code of Sources, Tests and Examples (or the files named) with the
# toolchain's `swift format` and the project's .swift-format; with --check it changes nothing
# and fails on any finding, as scripts/test.sh runs it. A file kept as its authors wrote it (a
# copy of a guide's or a documentation page's code, NOTICE) says `// swift-format-ignore-file`
# on its first line.
# Usage: scripts/format.sh [--check] [FILE...]
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
if [ "${1:-}" = "--check" ]; then check=true; shift; fi
[ $# -gt 0 ] || set -- Sources Tests Examples
if $check; then
    findings=$(swift format lint --strict --parallel --recursive "$@" 2>&1) || {
        echo "$findings" >&2
        echo "format: $(grep -c ': error: ' <<<"$findings") findings; scripts/format.sh formats the code" >&2
        exit 1
    }
    echo "format: no findings"
else
    swift format format --in-place --parallel --recursive "$@"
fi
