#!/usr/bin/env bash
# Reads CHANGELOG.md for the other scripts (docs/releasing.md has its shape).
#   scripts/changelog.sh release    the newest release: "VERSION COMMIT" (the 40-digit commit
#                                   of its "Commit:" line, or "-" when it names none yet)
#   scripts/changelog.sh breaking   the intended API breaks of the Unreleased section: the text
#                                   of each "- BREAKING: ..." line, one a line
# Fails when the file does not begin with an Unreleased section followed by a release.
set -euo pipefail
cd "$(dirname "$0")/.."

file=CHANGELOG.md
headings=$(grep -E '^## ' "$file" | head -2)
first=$(sed -n 1p <<<"$headings")
second=$(sed -n 2p <<<"$headings")
[ "$first" = "## [Unreleased]" ] || { echo "changelog.sh: the first section of $file must be '## [Unreleased]', not '$first'" >&2; exit 1; }
if ! [[ "$second" =~ ^'## ['([0-9]+\.[0-9]+\.[0-9]+)'] - '[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]]; then
    echo "changelog.sh: the section after Unreleased in $file must be '## [MAJOR.MINOR.PATCH] - YYYY-MM-DD', not '$second'" >&2
    exit 1
fi
release=${BASH_REMATCH[1]}

# The lines of section number $1 (1: Unreleased, 2: the newest release), without its heading.
section() {
    awk -v want="$1" '/^## / { n++; next } n == want' "$file"
}

case "${1:-}" in
    release)
        commit=$(section 2 | sed -n 's/^Commit: \([0-9a-f]\{40\}\)\b.*/\1/p' | head -1)
        echo "$release ${commit:--}" ;;
    breaking)
        section 1 | sed -n 's/^- BREAKING: //p' ;;
    *)
        echo "usage: scripts/changelog.sh release|breaking" >&2; exit 2 ;;
esac
