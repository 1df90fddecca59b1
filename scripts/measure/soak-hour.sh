#!/usr/bin/env bash
# The soak of tests/e2e/test_soak.py for an hour instead of CI's three minutes: the same
# mixed load, restarts, store damage and checks (flat RSS, goroutines and open files in
# each server lifetime; every accepted item logged once), on the bin/kernelgate this tree
# builds. The leak-build test is left out; CI runs it.
#
#   scripts/measure/soak-hour.sh /path/to/summary.json [SECONDS]
#
# SECONDS defaults to 3600; SOAK_SAMPLE_S (default 10 here) sets the sampling period.
# The JSON summary (samples, verdicts, answers by kind, restarts) is copied to the path
# given; the table is printed at the end. Exits with pytest's status.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 1 ]; then
  echo "usage: $0 SUMMARY.json [SECONDS]" >&2
  exit 2
fi
summary=$(realpath -m "$1")
mkdir -p "$(dirname "$summary")"
export CGO_CFLAGS=${CGO_CFLAGS:-"-O2 -Wno-deprecated-declarations"}
export KERNELGATE_PYTHON=${KERNELGATE_PYTHON:-$PWD/.venv/bin/python}
${GO:-go} build -trimpath -o bin/kernelgate ./cmd/kernelgate
SOAK_S=${2:-3600} SOAK_SAMPLE_S=${SOAK_SAMPLE_S:-10} SOAK_SUMMARY=$summary \
  .venv-trainers/bin/python -m pytest -q -s -p no:cacheprovider \
  tests/e2e/test_soak.py -k mixed_load
