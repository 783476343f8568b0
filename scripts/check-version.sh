#!/usr/bin/env bash
# Checks that everything that names WatchLink's version names the one in
# Sources/Shared/LinkControl/WatchLinkVersion.swift: the newest release of CHANGELOG.md, every
# `from: "X.Y.Z"` of the README, docs/ and the DocC catalogs, and what the built phoned, watchd
# and linkctl print for --version. Run by scripts/test.sh after its build.
# Usage: scripts/check-version.sh [directory of the built programs]
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(scripts/version.sh)
bin_dir=${1:-$(swift build --show-bin-path)}
problems=()

release=$(scripts/changelog.sh release | cut -d' ' -f1)
[ "$release" = "$version" ] || problems+=("CHANGELOG.md's newest release is $release")

mentions=0
while IFS= read -r line; do
    mentions=$((mentions + 1))
    [[ "$line" == *"from: \"$version\""* ]] || problems+=("${line%%:*}:$(cut -d: -f2 <<<"$line") takes $(grep -oE 'from: "[^"]*"' <<<"$line")")
done < <(grep -rnE 'from: "[^"]*"' README.md docs Sources --include='*.md')
grep -q "from: \"$version\"" README.md || problems+=("README.md has no .package(url: ..., from: \"$version\")")

for program in phoned watchd linkctl; do
    printed=$("$bin_dir/$program" --version 2>&1) || true
    [ "$printed" = "$program $version" ] || problems+=("$bin_dir/$program --version prints '$printed'")
done

if [ ${#problems[@]} -gt 0 ]; then
    echo "check-version: the version is $version (WatchLinkVersion.swift), but:" >&2
    printf '  %s\n' "${problems[@]}" >&2
    exit 1
fi
echo "check-version: $version in CHANGELOG.md, $mentions documented 'from:' and phoned, watchd and linkctl --version"
