#!/usr/bin/env bash
# Install what HEMRA needs on a fresh machine: bubblewrap for the host sandbox
# (Debian package), a Docker engine with local base images (scripts/setup-docker.sh)
# and a virtual environment with HEMRA and its test tools.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v bwrap >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get install -y bubblewrap >/dev/null 2>&1 || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y bubblewrap >/dev/null; }
  else
    echo "HEMRA's host sandbox needs bubblewrap (bwrap); install it with your package manager" >&2
    exit 1
  fi
fi

# The Docker sandbox: an engine, the offline base image and the bundled tasks' FROM.
if [ "${HEMRA_SKIP_DOCKER_SETUP:-}" = "" ]; then
  if command -v apt-get >/dev/null 2>&1 || docker info >/dev/null 2>&1; then
    bash scripts/setup-docker.sh
  else
    echo "note: no apt-get and no Docker engine here; the docker sandbox needs one (see docs/sandboxes.md)" >&2
  fi
fi

# Browser tests of the trace viewer: Debian's chromium driven by playwright-core (npm).
if [ "${HEMRA_SKIP_BROWSER_SETUP:-}" = "" ]; then
  if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get install -y chromium >/dev/null 2>&1 || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y chromium >/dev/null; }
  fi
  if command -v npm >/dev/null 2>&1 && [ ! -d tests/gateway/browser/node_modules/playwright-core ]; then
    (cd tests/gateway/browser && npm ci --silent --no-audit --no-fund)
  fi
fi

bash scripts/build-npm.sh

PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[dev]"
