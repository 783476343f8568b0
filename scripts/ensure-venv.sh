#!/usr/bin/env bash
# Makes the Python environment the tests use (.venv, or $WATCHLINK_VENV): the push tests'
# clients (Tests/PushClients/requirements.txt) and the power-loss file system's FUSE binding
# (Tests/PowerLoss/requirements.txt), reused while the pins are unchanged. Prints its python.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${WATCHLINK_VENV:-.venv}
requirements=(Tests/PushClients/requirements.txt Tests/PowerLoss/requirements.txt)
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! cat "${requirements[@]}" | cmp -s - "$venv/.watchlink-requirements"; then
  "$venv/bin/python" -m pip install --disable-pip-version-check -q $(printf -- '-r %s ' "${requirements[@]}") >&2
  cat "${requirements[@]}" > "$venv/.watchlink-requirements"
fi
echo "$PWD/$venv/bin/python"
