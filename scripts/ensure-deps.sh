#!/usr/bin/env bash
# Installs the system libraries WatchLink builds against, where they are missing.
# Debian/Ubuntu: libssl-dev (OpenSSL), libsqlite3-dev, libnghttp2-dev, pkg-config, python3-venv,
# the sqlite3 shell, which the integration tests use to damage databases, the openssl command,
# chromium, in which the trace tests check linkctl's HTML picture of a trace, and fuse3 (the
# libfuse3 library and fusermount3) for the power-loss file system of the durability tests.
# macOS: Homebrew openssl@3, sqlite, libnghttp2.
set -euo pipefail

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if command -v pkg-config >/dev/null 2>&1; then
  pkg-config --exists libcrypto || missing+=(libssl-dev)
  pkg-config --exists sqlite3 || missing+=(libsqlite3-dev)
  pkg-config --exists libnghttp2 || missing+=(libnghttp2-dev)
fi
command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
# The push unit tests check the endpoint's certificates with the openssl command.
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# The trace tests load linkctl's HTML picture of a trace in a real browser (headless).
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
# The durability tests keep the daemons' state on a FUSE file system (Linux only).
if [ "$(uname -s)" = Linux ]; then
  if ! command -v fusermount3 >/dev/null 2>&1 || ! { ldconfig -p 2>/dev/null || /sbin/ldconfig -p; } | grep -q 'libfuse3\.so'; then
    missing+=(fuse3)
  fi
fi
# The push tests run Python clients from a virtual environment.
if ! python3 -c "import venv, ensurepip" >/dev/null 2>&1; then
  missing+=(python3-venv)
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if command -v apt-get >/dev/null 2>&1; then
  echo "ensure-deps: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
elif command -v brew >/dev/null 2>&1; then
  brew install pkg-config openssl@3 sqlite libnghttp2
  # chromium: the trace tests look for Google Chrome or Chromium (WATCHLINK_CHROMIUM) and skip without one.
else
  echo "ensure-deps: please install: ${missing[*]}" >&2
  exit 1
fi
