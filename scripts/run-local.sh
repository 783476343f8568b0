#!/usr/bin/env bash
# Builds WatchLink (release), starts phoned and watchd on the defaults, activates both
# sessions, prints their status and a few linkctl examples, and stops both on Ctrl-C.
# Usage: scripts/run-local.sh [--home DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

home_args=()
if [ "${1:-}" = "--home" ] && [ -n "${2:-}" ]; then
  home_args=(--home "$2")
  export WATCHLINK_HOME="$2"
fi

scripts/ensure-deps.sh
bin=$(scripts/build-release.sh)
linkctl() { "$bin/linkctl" "${home_args[@]}" "$@"; }

pids=()
cleanup() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  echo "stopped phoned and watchd"
}
trap cleanup INT TERM EXIT

"$bin/phoned" "${home_args[@]}" & pids+=($!)
"$bin/watchd" "${home_args[@]}" & pids+=($!)

wait_ready() {
  local side=$1
  for _ in $(seq 1 200); do
    if linkctl "$side" status >/dev/null 2>&1; then return 0; fi
    sleep 0.05
  done
  echo "run-local: $side did not answer status" >&2
  return 1
}
wait_ready phone
wait_ready watch
linkctl phone session.activate >/dev/null
linkctl watch session.activate >/dev/null
for _ in $(seq 1 100); do
  [ "$(linkctl phone status | grep -o '"isReachable":true')" ] && break
  sleep 0.05
done

echo
echo "phone: $(linkctl phone status)"
echo "watch: $(linkctl watch status)"
cat <<'TXT'

Both daemons are running and activated. Try, in another terminal:
  linkctl phone message.send --json '{"message": {"hello": "watch"}, "wantsReply": true}'
  linkctl watch replies.set --json '{"mode": "echo"}'
  linkctl watch app.setState --json '{"state": "background"}'
  linkctl phone link.set --json '{"up": false}'
  linkctl phone events
(linkctl is in .build/static/release/linkctl.) Press Ctrl-C to stop both daemons.
TXT
wait
