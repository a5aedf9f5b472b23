#!/usr/bin/env bash
# Installs what building and testing Lathe needs and a fresh Debian machine lacks: cmake and libclang
# (llama.cpp is built by cmake; its Rust bindings are generated with libclang) and tmux (the terminal
# UI's end-to-end tests drive the real binary in a tmux pane). A no-op when they are already there.
set -euo pipefail

missing=()
for package in cmake libclang-dev tmux; do
  if command -v dpkg-query >/dev/null 2>&1; then
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
  elif [ "$package" != libclang-dev ]; then
    command -v "$package" >/dev/null 2>&1 || missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-build-deps: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-build-deps: installing ${missing[*]} (apt-get)" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
