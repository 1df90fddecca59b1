#!/usr/bin/env bash
# Makes .venv-trainers: the harness's Python environment (.venv, or KERNELGATE_PYTHON's:
# torch, triton, pytest, pyarrow) plus the trainers in tests/trainers/requirements*.txt,
# for the e2e tests.
#
# A second venv, not more packages in the first: a trainer's dependencies can never
# move the harness's pins. It sees the harness venv's packages through a .pth file
# (pip counts them as installed, so torch is not downloaded twice) and is built once
# per (requirements, harness venv) in the user cache, outside the clone.
set -euo pipefail
cd "$(dirname "$0")/../.."
base=${KERNELGATE_PYTHON:-.venv/bin/python}   # the harness's interpreter, as make passes it
[ -x "$base" ] || command -v "$base" >/dev/null || { echo "setup-trainers: no harness Python at $base: run make setup first" >&2; exit 1; }
base_site=$("$base" -c 'import site; print(site.getsitepackages()[0])')
base_site=$(readlink -f "$base_site")
reqs=(tests/trainers/requirements.txt tests/trainers/requirements-nodeps.txt)
hash=$( (grep -hv -e '^#' -e '^$' "${reqs[@]}"; echo "$base_site") | sha256sum | cut -c1-16)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/kernelgate
venv=$cache/trainers-$hash
if [ ! -f "$venv/.complete" ]; then
  echo "setup-trainers: creating $venv"
  rm -rf "$venv"
  mkdir -p "$cache"
  "$base" -m venv "$venv"   # the harness's Python version: its packages are shared
  site=$("$venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')
  echo "$base_site" > "$site/kernelgate-harness.pth"
  "$venv/bin/pip" install --disable-pip-version-check -q -r "${reqs[0]}"
  "$venv/bin/pip" install --disable-pip-version-check -q --no-deps -r "${reqs[1]}"
  "$venv/bin/python" -c 'import torch, trl, verl, openrlhf, pytest; from trl import GRPOTrainer'
  touch "$venv/.complete"
fi
ln -sfn "$venv" .venv-trainers
echo "setup-trainers: .venv-trainers -> $venv"
