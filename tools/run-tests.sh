#!/usr/bin/env bash
# Run the whole test suite: on SQLite, then the functional tests (those
# that use a database) on PostgreSQL and MariaDB.
#
# A fresh machine needs nothing but python3: the script makes a virtualenv
# in .venv and installs the project and its test requirements into it
# (set ALLOC_USE_CURRENT_PYTHON=1 to use the python on PATH instead, as tox
# does). PostgreSQL and MariaDB are used where reachable; with CI=true an
# unreachable server fails the run instead of being skipped.
#
# PostgreSQL and MariaDB run only the functional tests that exercise a
# database dialect: those not marked ``dialect_neutral`` (listed by
# tools/dialect_tests.py; see tests/base.py).
#
# The dashboard's browser tests need Chromium and chromedriver from the
# distribution: tools/install-browser.sh installs them when missing and
# running as root; without them those tests are skipped, or fail with
# CI=true. Their screenshots go to $ALLOC_TEST_ARTIFACTS (default
# .test-artifacts/).
#
# Extra arguments are passed to ``stestr run`` (a test filter, for
# example), on every backend.
set -eu
cd "$(dirname "$0")/.."
started=$(date +%s)

if [ "${ALLOC_USE_CURRENT_PYTHON:-0}" != 1 ]; then
    if [ ! -x .venv/bin/python ]; then
        python3 -m venv .venv
    fi
    # shellcheck disable=SC1091
    . .venv/bin/activate
    {
        python -m pip install -q --upgrade pip
        python -m pip install -q -r requirements.txt -r test-requirements.txt
        python -m pip install -q --no-deps -e .
    } 2> >(grep -v "is neither a file nor a directory" >&2)
fi

./tools/install-browser.sh || echo "WARNING: could not install the browser"

# A new stestr repository knows no durations: seed it with those of the
# slow tests, so that its first run spreads them over the workers.
if [ ! -d .stestr ]; then
    stestr init >/dev/null
    python tools/seed_test_times.py | stestr load >/dev/null 2>&1 \
        || echo "WARNING: could not seed test durations"
fi

backends=${ALLOC_TEST_BACKENDS:-"sqlite postgresql mysql"}
# Two workers more than cores: many tests wait (on a child process, an
# emulated BMC, a conductor's periodic) and leave a core idle meanwhile.
# On 2 cores the PostgreSQL run took 225 s with 3 workers, 199 s with 4
# and 167 s with 5; 4 keeps the timing-sensitive tests' margins.
concurrency=${ALLOC_TEST_CONCURRENCY:-$(( $(nproc) + 2 ))}
passed=0; failed=0; skipped=0; rc=0
failures=$(mktemp)
# The ids of the dialect tests, listed once for every server backend
# (listing imports every test module: seconds of CPU).
ids=$(mktemp)
listed=

reachable() {
    python - "$1" <<'PY'
import sys
sys.path.insert(0, '.')
from tests import base
base.BACKEND = sys.argv[1]
p = base._Provisioned.get()
if p.error:
    print(p.error)
    sys.exit(1)
PY
}

for backend in $backends; do
    echo "=== tests on $backend"
    if ! ALLOC_TEST_DB_BACKEND=$backend reachable "$backend"; then
        if [ "${CI:-}" = true ]; then
            echo "ERROR: $backend is required in CI but is unreachable"
            rc=1; failed=$((failed + 1)); continue
        fi
        echo "WARNING: skipping $backend: server unreachable"
        continue
    fi
    log=$(mktemp)
    set +e
    # tests/unit and the dialect-neutral functional tests need no other
    # database: they run once, with SQLite.
    filters=("$@")
    if [ "$backend" != sqlite ] && [ ${#filters[@]} -eq 0 ]; then
        if [ -z "$listed" ]; then
            python tools/dialect_tests.py "$ids" || : > "$ids"
            listed=1
        fi
        if [ ! -s "$ids" ]; then
            echo "ERROR: could not list the tests to run on $backend"
            rc=1; failed=$((failed + 1)); rm -f "$log"; continue
        fi
        filters=(--load-list "$ids")
    fi
    ALLOC_TEST_DB_BACKEND=$backend stestr run --concurrency "$concurrency" "${filters[@]}" 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    set -e
    [ "$status" -eq 0 ] || rc=1
    p=$(sed -n 's/^ - Passed: \([0-9]*\).*/\1/p' "$log" | tail -1)
    f=$(sed -n 's/^ - Failed: \([0-9]*\).*/\1/p' "$log" | tail -1)
    s=$(sed -n 's/^ - Skipped: \([0-9]*\).*/\1/p' "$log" | tail -1)
    if [ -z "$p" ] && [ "$status" -ne 0 ]; then failed=$((failed + 1)); fi
    # Keep the names of the failed tests for the summary at the end, where
    # they are seen even when only the tail of the output is kept.
    sed -n 's/^{[0-9]*} \(.*\) \[.*\] \.\.\. FAILED$/\1/p' "$log" \
        | sed "s/^/  $backend: /" >> "$failures"
    passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0})); skipped=$((skipped + ${s:-0}))
    rm -f "$log"
done
rm -f "$ids"

elapsed=$(( $(date +%s) - started ))
printf 'wall time: %dm%02ds\n' $((elapsed / 60)) $((elapsed % 60))
if [ -s "$failures" ]; then
    echo "failed tests:"
    cat "$failures"
fi
rm -f "$failures"
echo "total: $passed passed, $failed failed, $skipped skipped"
exit $rc
