#!/usr/bin/env bash
# Which variable of the host's environment, dropped by the zygote's allowlist
# (harness/zygoteenv.go), makes level2 slower? One device call: level2 bench with
# the allowlist alone, with every dropped name passed (KERNELGATE_PASS_ENV), then a
# bisection over the dropped names while the half passed keeps the full speed.
# ROUNDS bisection steps at most (default 5). Builds nothing; prints a table last.
set -uo pipefail
cd "$(dirname "$0")/../.."
export KERNELGATE_PYTHON=${KERNELGATE_PYTHON:-python3} PYTHONUNBUFFERED=1
out=${OUT:-/tmp/kg-out}; mkdir -p "$out"
dropped=$(python3 - <<'PY'
import json, os
allow = set(json.load(open("harness/testdata/env/allowlist.json"))["allowlist"])
print(",".join(sorted(k for k in os.environ if k not in allow and not k.startswith("KERNELGATE_"))))
PY
)
echo "dropped: $dropped" | tee "$out/dropped.txt"
rate() {  # rate TAG PASS_ENV -> evals/s
  KERNELGATE_PASS_ENV="$2" KERNELGATE_SHARE_REFERENCE=on timeout "${LIMIT:-120}" bin/kernelgate bench --tasks datasets/level2 \
    --kernels datasets/solutions/level2 --repeat "${REPEAT:-3}" --json > "$out/b-$1.json" 2> /dev/null
  python3 -c 'import json,sys; b=json.load(open(sys.argv[1])); print("%.3f" % b["evals_per_s"])' "$out/b-$1.json" 2>/dev/null || echo 0
}
line() { printf '%-10s %8s  %s\n' "$1" "$2" "$3" | tee -a "$out/table.txt"; }
none=$(rate none ""); line none "$none" "(allowlist alone)"
all=$(rate all "$dropped"); line all "$all" "(every dropped name)"
none2=$(rate none2 ""); line none2 "$none2" "(allowlist alone, again)"
set -- $(echo "$dropped" | tr ',' ' ')
for step in $(seq "${ROUNDS:-5}"); do
  [ $# -le 1 ] && break
  half=$(( $# / 2 )); a=$(echo "$@" | tr ' ' '\n' | head -n $half | paste -sd,); b=$(echo "$@" | tr ' ' '\n' | tail -n +$((half + 1)) | paste -sd,)
  r=$(rate "s$step" "$a"); line "s$step" "$r" "$a"
  # the half that keeps most of the gain over the allowlist holds the variable
  if python3 -c "import sys; n=($none+$none2)/2; sys.exit(0 if $r - n > ($all - n) / 2 else 1)"; then
    set -- $(echo "$a" | tr ',' ' ')
  else
    set -- $(echo "$b" | tr ',' ' ')
  fi
done
echo "left: $*" | tee -a "$out/table.txt"
echo; cat "$out/table.txt"
