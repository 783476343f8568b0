#!/usr/bin/env bash
# The PowerAuth guides' code (Tests/PowerAuth2APITests, Tests/PowerAuth2ForWatchAPITests: the
# documents' Swift as written) compiles against PowerAuth2 and PowerAuth2ForWatch with exactly
# the warnings the same code gives against the real SDK: the unused bindings of the documents'
# own lines, listed in Tests/PowerAuthDocWarnings.txt. A new warning (a member that is not
# discardable, a "will never be executed" case of an enum that should be extensible, a
# deprecation) fails, and so does a listed one that is gone.
# Usage: scripts/check-doc-code.sh [build path]
set -euo pipefail
cd "$(dirname "$0")/.."

build_path=${1:-.build}
expected=Tests/PowerAuthDocWarnings.txt
sources=(Tests/PowerAuth2APITests/*.swift Tests/PowerAuth2ForWatchAPITests/*.swift)
work=$(mktemp -d "${TMPDIR:-/tmp}/wl-doccode.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Warnings are printed only when a file compiles: make them compile again.
touch "${sources[@]}"
swift build --build-path "$build_path" --build-tests 2>&1 | tee "$work/build.log" >/dev/null || {
    cat "$work/build.log" >&2
    echo "check-doc-code: the build failed" >&2
    exit 1
}
# "/path/Tests/Target/File.swift:12:17: warning: message [#group]" -> "Target/File.swift:12: message"
grep -E "/Tests/PowerAuth2(ForWatch)?APITests/[^:]+\.swift:[0-9]+:[0-9]+: warning: " "$work/build.log" |
  sed -E 's|^.*/Tests/([^:]+):([0-9]+):[0-9]+: warning: (.*)$|\1:\2: \3|; s| \[#[^]]*\]$||' |
  sort -u > "$work/actual.txt"
if ! diff -u <(grep -v '^#' "$expected" | sed '/^$/d' | sort -u) "$work/actual.txt" > "$work/diff.txt"; then
    echo "check-doc-code: the guides' code warns otherwise than $expected lists (- listed, + now):" >&2
    cat "$work/diff.txt" >&2
    exit 1
fi
echo "check-doc-code: $(wc -l < "$work/actual.txt") warnings, each one the documents' own (unused bindings), as against the SDK"
