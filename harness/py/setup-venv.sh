#!/usr/bin/env bash
# Makes .venv point at a Python that has the pinned torch and triton.
#
# KERNELGATE_PYTHON, when it already has them, is used as is (the H200 image's
# python3, say). Otherwise a virtualenv is built once per requirements hash in the
# user cache, outside the clone: the torch wheel and its CUDA libraries are ~5 GB,
# and CI reuses the cached venv from run to run.
set -euo pipefail
cd "$(dirname "$0")/../.."
req=harness/py/requirements.txt
want_torch=$(sed -n 's/^torch==//p' "$req")
want_triton=$(sed -n 's/^triton==//p' "$req")
check='import sys, torch, triton; sys.exit(0 if torch.__version__.split("+")[0] == sys.argv[1] and triton.__version__ == sys.argv[2] else 1)'

if [ -n "${KERNELGATE_PYTHON:-}" ]; then
  if "$KERNELGATE_PYTHON" -c "$check" "$want_torch" "$want_triton" 2>/dev/null; then
    echo "setup: using KERNELGATE_PYTHON=$KERNELGATE_PYTHON (torch $want_torch, triton $want_triton)"
    exit 0
  fi
  echo "setup: KERNELGATE_PYTHON=$KERNELGATE_PYTHON lacks torch==$want_torch / triton==$want_triton; unset it to build the project venv" >&2
  exit 1
fi

cache=${XDG_CACHE_HOME:-$HOME/.cache}/kernelgate
# Keyed by the pins alone: editing a comment must not cost a 5 GB rebuild.
hash=$(grep -v -e '^#' -e '^$' "$req" | sha256sum | cut -c1-16)
venv=$cache/venv-$hash
# The stamp is written last, so a download cut short is redone, never half-used.
if [ ! -f "$venv/.complete" ]; then
  echo "setup: creating $venv (first time: downloads torch, ~5 GB)"
  rm -rf "$venv"
  mkdir -p "$cache"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --disable-pip-version-check -q -r "$req"
  "$venv/bin/python" -c "$check" "$want_torch" "$want_triton"
  touch "$venv/.complete"
fi
ln -sfn "$venv" .venv
echo "setup: .venv -> $venv"
