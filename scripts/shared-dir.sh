#!/usr/bin/env bash
# Prints the folder of the data handed to the project (its reference documents, the PowerAuth
# SDK's published vectors and the real code's transcripts), which the repository does not hold:
# $WATCHLINK_SHARED_DIR when set; else `shared` beside the checkout; else, for a clone of a
# local repository (a CI clone of the working copy), `shared` beside that repository.
# Prints nothing when none is there; the tests that read it then say where they looked.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${WATCHLINK_SHARED_DIR:-}" ]; then echo "$WATCHLINK_SHARED_DIR"; exit 0; fi
if [ -d ../shared/reference ]; then (cd ../shared && pwd); exit 0; fi
origin=$(git remote get-url origin 2>/dev/null || true)
origin=${origin#file://}
if [ -n "$origin" ] && [ -d "$origin/../shared/reference" ]; then (cd "$origin/../shared" && pwd); fi
