#!/usr/bin/env bash
# Takes WatchLink as an app team does: the checkout as it is (tracked files and new ones not
# ignored) becomes a git repository with a version tag in a temporary directory, and the
# package of Tests/ConsumerPackage depends on it by URL and version, builds its app code (files
# that import only WatchConnectivity, only PushKit and FileProvider, only PowerAuth2 or only
# PowerAuth2ForWatch) with every warning an error, builds phoned and watchd from the dependency
# as README says, and runs its test, which starts a pair of them with WatchLinkTesting. Fails
# when a product cannot be taken by version (an unsafe flag in one of its targets) or app code
# written for Apple's or PowerAuth's modules does not compile against it.
# Usage: scripts/test-consumer.sh
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-deps.sh
version=$(scripts/version.sh)

work=$(mktemp -d "${TMPDIR:-/tmp}/wl-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT

repo="$work/watchlink"
mkdir "$repo"
git ls-files -z --cached --others --exclude-standard |
  tar --null --no-recursion --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$repo"
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" -c user.name=WatchLink -c user.email=watchlink@localhost commit -q -m "WatchLink $version"
git -C "$repo" tag "$version"

consumer="$work/consumer"
cp -R Tests/ConsumerPackage "$consumer"
sed -e "s|@WATCHLINK_URL@|file://$repo|" -e "s|@WATCHLINK_VERSION@|$version|" \
  "$consumer/Package.swift.in" > "$consumer/Package.swift"
rm "$consumer/Package.swift.in"

# SwiftPM keeps its lock files in the temporary directory: this one, removed at the end. The
# dependency cache would keep a clone of every run's repository.
mkdir "$work/tmp"
export TMPDIR="$work/tmp"
echo "test-consumer: building a package that depends on WatchLink $version by URL ($repo)" >&2
build=(swift build --package-path "$consumer" --disable-dependency-cache)
"${build[@]}" --product phoned
"${build[@]}" --product watchd
"${build[@]}" --build-tests
# The test finds the daemons beside its bundle, as a team's tests do, not the checkout's.
env -u WATCHLINK_BIN_DIR swift test --package-path "$consumer" --skip-build
