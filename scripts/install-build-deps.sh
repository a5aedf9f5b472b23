#!/usr/bin/env bash
# Installs what building and testing Lathe needs and a fresh Debian machine lacks: cmake and libclang
# (llama.cpp is built by cmake; its Rust bindings are generated with libclang), bubblewrap (the OS
# sandbox of shell commands, exercised by the sandbox tests), tmux (the terminal UI's end-to-end tests
# drive the real binary in a tmux pane), and the commands the tests drive: git, and `script`
# (util-linux, Debian package bsdutils), which gives lathe a real terminal, and python3 (the
# module-cycle check of lathe-core). Then runs
# scripts/install-test-deps.sh (Node.js and the MCP servers the MCP tests run against). A no-op when
# they are already there.
set -euo pipefail
here="$(dirname "$0")"

missing=()
for package in cmake libclang-dev bubblewrap tmux; do
  if command -v dpkg-query >/dev/null 2>&1; then
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
  elif [ "$package" != libclang-dev ]; then
    binary=$([ "$package" = bubblewrap ] && echo bwrap || echo "$package")
    command -v "$binary" >/dev/null 2>&1 || missing+=("$package")
  fi
done
command -v git >/dev/null 2>&1 || missing+=(git)
command -v script >/dev/null 2>&1 || missing+=(bsdutils)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "install-build-deps: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  echo "install-build-deps: installing ${missing[*]} (apt-get)" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

"$here/install-test-deps.sh"
