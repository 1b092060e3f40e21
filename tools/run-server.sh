#!/usr/bin/env bash
# Install the project into .venv (first run only) and start alloc-server with
# its embedded defaults: bare metal API on 127.0.0.1:6385, Placement API on
# 127.0.0.1:8778, one conductor, SQLite under ~/.local/share/alloc_framework.
# Arguments are passed to alloc-server (for example --config-file).
set -eu
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/alloc-server ]; then
    python3 -m venv .venv
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -r requirements.txt
    .venv/bin/python -m pip install -q --no-deps -e .
fi
exec .venv/bin/alloc-server "$@"
