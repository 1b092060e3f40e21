#!/usr/bin/env bash
# Install the browser of the dashboard's browser tests: Chromium and its
# chromedriver from the distribution's packages (Debian: chromium,
# chromium-driver; /usr/bin/chromium and /usr/bin/chromedriver).
#
# Does nothing when both are there. Installs them when running as root on
# a system with apt-get; otherwise says what is missing and exits 0: the
# browser tests then skip with that reason (with CI=true they fail).
set -eu
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "WARNING: /usr/bin/chromium or /usr/bin/chromedriver is missing;" \
         "run 'apt-get install -y chromium chromium-driver' as root" \
         "(the dashboard's browser tests are skipped without them)" >&2
    exit 0
fi
echo "Installing chromium and chromium-driver (the dashboard's browser tests)" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends chromium chromium-driver \
        >/dev/null; then
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends chromium chromium-driver \
        >/dev/null
fi
