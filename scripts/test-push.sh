#!/usr/bin/env bash
# Runs the push tests (Tests/PushClients, pytest) against the built phoned: real HTTP/2 clients
# (httpx with h2) and APNs client libraries, in the environment scripts/ensure-venv.sh makes
# (.venv, or $WATCHLINK_VENV).
# Usage: [WATCHLINK_BIN_DIR=DIR] scripts/test-push.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${WATCHLINK_VENV:-.venv}
python=$(scripts/ensure-venv.sh)

# gobiko.apns pins an old HTTP/2 stack (hyper 0.7, h2 2.6) that cannot share that
# environment: it gets one of its own, which the test runs as a separate process.
legacy="$venv-gobiko"
legacy_requirements=Tests/PushClients/gobiko/requirements.txt
if [ ! -x "$legacy/bin/python" ]; then
  python3 -m venv "$legacy"
fi
if ! cmp -s "$legacy_requirements" "$legacy/.watchlink-requirements"; then
  "$legacy/bin/python" -m pip install --disable-pip-version-check -q -r "$legacy_requirements"
  cp "$legacy_requirements" "$legacy/.watchlink-requirements"
fi
export WATCHLINK_GOBIKO_PYTHON="$PWD/$legacy/bin/python"

if [ -z "${WATCHLINK_BIN_DIR:-}" ]; then
  WATCHLINK_BIN_DIR=$(swift build --show-bin-path)
fi
export WATCHLINK_BIN_DIR
export PYTHONDONTWRITEBYTECODE=1
exec "$python" -m pytest -q -p no:cacheprovider Tests/PushClients "$@"
