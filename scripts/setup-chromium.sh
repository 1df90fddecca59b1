#!/usr/bin/env bash
# Headless Chromium for the dashboard's browser test (gateway/ui/browser_test.go):
# Debian's package. `make setup` runs this: nothing to do when a Chromium is on PATH,
# else it installs one with apt-get (as root, which CI is). Without root or apt it
# says how and, outside CI, lets setup go on (the test then skips; in CI it fails).
set -euo pipefail

for c in chromium chromium-browser google-chrome; do
    if command -v "$c" >/dev/null 2>&1; then
        exit 0
    fi
done

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup-chromium: installing Debian's chromium (the dashboard's browser test needs it)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium >/dev/null
    command -v chromium >/dev/null 2>&1 || { echo "setup-chromium: chromium installed but not on PATH" >&2; exit 1; }
    exit 0
fi

echo "setup-chromium: no Chromium on PATH; install it (Debian: apt-get install chromium) for gateway/ui's browser test" >&2
if [ "${CI:-}" = true ] || [ "${KERNELGATE_REQUIRE_PYTHON:-}" = 1 ]; then
    exit 1
fi
