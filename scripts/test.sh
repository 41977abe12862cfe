#!/usr/bin/env bash
# Sets up (if needed) and runs the whole test suite, real models included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check hearthd tests bench samples
.venv/bin/mypy hearthd
.venv/bin/python -m pytest -q "$@"
