#!/usr/bin/env bash
# What `make test` needs beyond the venv: Debian's Chromium for the browser tests (never a
# Playwright-downloaded build) and Node.js for the JS unit tests. Installed with apt when missing
# and we may install packages; otherwise one line that says what to run, and a non-zero exit so
# the browser suite is never silently skipped.
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  apt=(apt-get)
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  apt=(sudo apt-get)
else
  echo "make test needs ${missing[*]}: run 'sudo apt-get install -y ${missing[*]}' once, then make test again." >&2
  exit 1
fi

echo "installing ${missing[*]} (Debian packages) for the browser and JS tests"
"${apt[@]}" update -qq
DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq "${missing[@]}" >/dev/null
