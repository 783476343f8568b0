#!/usr/bin/env bash
# Puts Mermaid's own parser (mermaid.min.js 11.16.0, from the PyPI package artoo-mermaid,
# which vendors it for offline use) at .build/tools/mermaid/mermaid.min.js, where it is missing.
# The trace tests load it in headless Chromium to parse `linkctl trace --mermaid` output with
# Mermaid itself (docs/trace.md). npm is not needed; the wheel's SHA-256 is checked.
set -euo pipefail
cd "$(dirname "$0")/.."

target=.build/tools/mermaid
[ -f "$target/mermaid.min.js" ] && exit 0
wheel_sha256=fa6d2c8c0fbc4be09a456bfdd62f92eb85e44299a02460b1f4fd4f200a19f01d
mkdir -p "$target"
work=$(mktemp -d "${TMPDIR:-/tmp}/watchlink-mermaid.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The package asks for Python 3.12; only its JavaScript file is used, so any Python fetches it.
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
    artoo-mermaid==11.16.0 -d "$work" >&2
wheel=$(ls "$work"/artoo_mermaid-11.16.0-*.whl)
echo "$wheel_sha256  $wheel" | sha256sum --check --quiet -
python3 - "$wheel" "$target/mermaid.min.js" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    data = wheel.read("artoo_mermaid/assets/mermaid.min.js")
open(sys.argv[2], "wb").write(data)
PY
echo "ensure-mermaid: $target/mermaid.min.js" >&2
