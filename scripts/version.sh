#!/usr/bin/env bash
# Prints WatchLink's version, read from the one place it is written:
# Sources/Shared/LinkControl/WatchLinkVersion.swift (docs/releasing.md).
# Usage: scripts/version.sh
set -euo pipefail
cd "$(dirname "$0")/.."

file=Sources/Shared/LinkControl/WatchLinkVersion.swift
version=$(sed -n 's/^ *public static let current = "\(.*\)"$/\1/p' "$file")
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "version.sh: $file has no 'public static let current = \"MAJOR.MINOR.PATCH\"'" >&2
    exit 1
fi
echo "$version"
