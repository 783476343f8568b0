#!/usr/bin/env bash
# Checks that the public API of the library products has not broken since the newest release
# of CHANGELOG.md, with `swift package diagnose-api-breaking-changes`: the module of every
# library product. (The tool compares no other module: not PowerAuthShared, whose types
# PowerAuth2 and PowerAuth2ForWatch re-export, nor LinkJSON, whose values WatchLinkClient takes
# and returns; a change of theirs that app code would see is listed in CHANGELOG.md by hand.)
# The release is found by the commit its changelog section names ("Commit: <hash>"; a clone
# may have no tags), else by its tag. An intended break is listed in the Unreleased section as
# "- BREAKING: <what the check prints after 'API breakage: '>", and passes. The release's API baseline is kept in
# BUILD/api-baseline, so only the first run builds the release.
# Usage: scripts/api-check.sh [--build-path PATH]
set -euo pipefail
cd "$(dirname "$0")/.."

build_path=${WATCHLINK_BUILD_PATH:-.build}
if [ "${1:-}" = "--build-path" ]; then build_path=${2:?--build-path needs a path}; fi

read -r release commit < <(scripts/changelog.sh release)
if [ "$commit" = "-" ]; then
    commit=$(git rev-parse -q --verify "refs/tags/$release^{commit}") || {
        echo "api-check: CHANGELOG.md's release $release names no commit and there is no tag $release (docs/releasing.md)" >&2
        exit 1
    }
fi
if ! git cat-file -e "$commit^{commit}" 2>/dev/null && [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    # A shallow clone has no history: take the release's commit from where it came from.
    git fetch --quiet --no-tags --depth=1 origin "$commit" || true
fi
git cat-file -e "$commit^{commit}" 2>/dev/null || {
    echo "api-check: release $release's commit $commit is not in this clone (git fetch origin $commit)" >&2
    exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/wl-api.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Each listed break, as written and as the tool prints it ("API breakage: " before it).
scripts/changelog.sh breaking | sed 's/^API breakage: //' > "$work/listed.txt"
allowed=$(grep -c . "$work/listed.txt" || true)
{ cat "$work/listed.txt"; sed 's/^/API breakage: /' "$work/listed.txt"; } > "$work/allowed.txt"

echo "api-check: the library products against $release ($commit)" >&2
status=0
swift package --build-path "$build_path" diagnose-api-breaking-changes "$commit" \
    --baseline-dir "$build_path/api-baseline" --breakage-allowlist-path "$work/allowed.txt" \
    > "$work/check.log" 2>&1 || status=$?
# The build's progress is of no interest; what the tool concluded is.
grep -vE '^\[[0-9]+/[0-9]+\]|^Building for|^Build complete|^Write |^Compiling|^Emitting' "$work/check.log" | sed '/^$/d' || true
if [ "$status" -ne 0 ]; then
    echo "api-check: the public API broke since $release. A break that is intended goes in CHANGELOG.md's" >&2
    echo "Unreleased section as '- BREAKING: <the line above, after \"API breakage: \">' (docs/releasing.md)." >&2
    exit "$status"
fi
echo "api-check: no break since $release but the $allowed listed in CHANGELOG.md"
