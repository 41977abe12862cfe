#!/usr/bin/env bash
# The main job on the embedded default models: the English sample, wake word to spoken reply.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/hearthd run --input samples/en_alarm_0730.wav --output reply.wav "$@"
echo "reply written to reply.wav"
