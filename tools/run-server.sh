#!/usr/bin/env bash
# Install the project into .venv (first run only) and start alloc-server with
# its embedded defaults: bare metal API on 127.0.0.1:6385, Placement API on
# 127.0.0.1:8778, one conductor, SQLite under ~/.local/share/alloc_framework.
# Prints the dashboard's URL (http://127.0.0.1:8778/dashboard/).
# Arguments are passed to alloc-server (for example --config-file).
set -eu
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/alloc-server ]; then
    # The installers' own notices (pip's about its indexes, setuptools'
    # about the build) go to a log: the terminal shows the service's lines,
    # and the log's end when the installation fails.
    echo "First run: installing alloc_framework into .venv" \
         "(about a minute; log: .venv/install.log)" >&2
    python3 -m venv .venv
    if ! {
        .venv/bin/python -m pip install --upgrade pip &&
        .venv/bin/python -m pip install -r requirements.txt &&
        .venv/bin/python -m pip install --no-deps -e .
    } > .venv/install.log 2>&1; then
        tail -n 20 .venv/install.log >&2
        echo "Installing into .venv failed: see .venv/install.log" >&2
        exit 1
    fi
fi
if [ $# -eq 0 ]; then
    # The embedded defaults: the Placement API's port serves the dashboard
    # (alloc-server also logs its URL once listening).
    echo "Dashboard: http://127.0.0.1:8778/dashboard/" \
         "(bare metal API http://127.0.0.1:6385, Placement API" \
         "http://127.0.0.1:8778)" >&2
fi
exec .venv/bin/alloc-server "$@"
