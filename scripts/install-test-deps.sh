#!/usr/bin/env bash
# Installs what the MCP tests run against: real MCP servers from npm, at pinned versions, into a
# fixed prefix inside the repository (ignored by git): .test-deps/npm (LATHE_TEST_DEPS moves it).
#   @modelcontextprotocol/server-everything   (stdio and streamable HTTP)
#   @modelcontextprotocol/server-filesystem   (stdio)
#   @agentclientprotocol/sdk                  (the official ACP client, driving `lathe acp`)
#   playwright-core                           (drives Debian's chromium against `lathe serve`'s web UI)
#   ws                                        (the WebSocket clients of bench/serve.mjs)
# and Debian's chromium (apt-get) when /usr/bin/chromium is missing,
# and pytest (pip) for the goal tests' check, and a Python virtual environment with Ray
# (PyPI `ray[default]`) for the `lathe batch --executor ray` tests: .test-deps/ray-venv.
# Installs Node.js and npm with apt-get when missing. A no-op when the pinned versions are there.
set -euo pipefail
cd "$(dirname "$0")/.."

EVERYTHING_VERSION=2026.8.31
FILESYSTEM_VERSION=2026.8.31
ACP_SDK_VERSION=2.4.0
PLAYWRIGHT_VERSION=1.65.2
WS_VERSION=8.23.1
prefix="${LATHE_TEST_DEPS:-$PWD/.test-deps}/npm"

installed_version() {
  local manifest="$prefix/node_modules/$1/package.json"
  [ -f "$manifest" ] && node -p "require('$manifest').version" 2>/dev/null || true
}

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "install-test-deps: need root (or sudo) to install nodejs and npm" >&2; exit 1; }
    sudo="sudo"
  fi
  echo "install-test-deps: installing nodejs and npm (apt-get)" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm >/dev/null
fi

# The `lathe serve` tests drive the web UI in Debian's chromium, headless.
if [ ! -x /usr/bin/chromium ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install-test-deps: installing chromium (apt-get)" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi

# The goal tests run a real `python3 -m pytest` as the check.
PYTEST_VERSION=9.2.0
if ! python3 -m pytest --version >/dev/null 2>&1; then
  echo "install-test-deps: installing pytest $PYTEST_VERSION (pip)" >&2
  python3 -m pip install -q --disable-pip-version-check "pytest==$PYTEST_VERSION" >/dev/null 2>&1 ||
    python3 -m pip install -q --user --break-system-packages "pytest==$PYTEST_VERSION" >/dev/null
fi

# The Ray executor tests start a local Ray head from their own virtual environment.
RAY_VERSION=2.60.0
ray_venv="${LATHE_TEST_DEPS:-$PWD/.test-deps}/ray-venv"
if [ "$("$ray_venv/bin/python" -c 'import ray; print(ray.__version__)' 2>/dev/null)" != "$RAY_VERSION" ] ||
   [ ! -x "$ray_venv/bin/ray" ]; then
  echo "install-test-deps: installing ray[default] $RAY_VERSION into $ray_venv (pip)" >&2
  # Debian's python3 makes virtual environments only with python3-venv (ensurepip).
  if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "install-test-deps: installing python3-venv (apt-get)" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
  fi
  rm -rf "$ray_venv"
  python3 -m venv "$ray_venv"
  "$ray_venv/bin/python" -m pip install -q --disable-pip-version-check "ray[default]==$RAY_VERSION" >/dev/null
  "$ray_venv/bin/ray" --version >/dev/null ||
    { echo "install-test-deps: ray missing after pip install" >&2; exit 1; }
fi

if [ "$(installed_version @modelcontextprotocol/server-everything)" = "$EVERYTHING_VERSION" ] &&
   [ "$(installed_version @modelcontextprotocol/server-filesystem)" = "$FILESYSTEM_VERSION" ] &&
   [ "$(installed_version @agentclientprotocol/sdk)" = "$ACP_SDK_VERSION" ] &&
   [ "$(installed_version playwright-core)" = "$PLAYWRIGHT_VERSION" ] &&
   [ "$(installed_version ws)" = "$WS_VERSION" ]; then
  exit 0
fi

echo "install-test-deps: installing the MCP test servers and the ACP client into $prefix (npm)" >&2
mkdir -p "$prefix"
npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
  "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
  "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" \
  "@agentclientprotocol/sdk@$ACP_SDK_VERSION" \
  "playwright-core@$PLAYWRIGHT_VERSION" \
  "ws@$WS_VERSION" >/dev/null
for bin in mcp-server-everything mcp-server-filesystem; do
  [ -x "$prefix/node_modules/.bin/$bin" ] || { echo "install-test-deps: $bin missing after npm install" >&2; exit 1; }
done
for package in @agentclientprotocol/sdk playwright-core ws; do
  [ -f "$prefix/node_modules/$package/package.json" ] ||
    { echo "install-test-deps: $package missing after npm install" >&2; exit 1; }
done
