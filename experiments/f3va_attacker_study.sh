#!/bin/bash
# The F3-VA paper's attacker study (its Table VI) on a voxanon corpus: ignorant (OA) and lazy-informed
# (AA-lazy) EER of the `f3va` anonymizer (METHOD=f3va: the flow backbone) or of `embedding` with the f3va generator
# (the default: the conv acoustic model) for fixed w and dynamic w ranges.
# usage: [METHOD=f3va] experiments/f3va_attacker_study.sh CORPUS OUT [JOBS] [NAME=VALUE ...]   (CORPUS: a `voxanon data
# synth` folder; NAME=VALUE: further parameters of every run, e.g. model=<checkpoint>)
set -euo pipefail
corpus=$1/data; out=$2; jobs=${3:-2}
method=${METHOD:-embedding}
base=(--method "$method")
if [[ $method == embedding ]]; then base+=(--param generator=f3va); fi
shift $(( $# < 3 ? $# : 3 )); common=("$@")
mkdir -p "$out"
run() {  # run LABEL PARAM...
  local label=$1; shift
  local params=()
  for p in "${common[@]}" "$@"; do params+=(--param "$p"); done
  for set in test_enrolls test_trials_f test_trials_m; do
    voxanon anonymize --quiet "${base[@]}" "${params[@]}" --jobs "$jobs" \
      "$corpus/$set" "$out/$label/$set"
  done
  voxanon evaluate privacy --quiet --oa --aa-lazy --enroll "$corpus/test_enrolls" \
    --trials "$corpus/test_trials_f" "$corpus/test_trials_m" --anon-enroll "$out/$label/test_enrolls" \
    --anon-trials "$out/$label/test_trials_f" "$out/$label/test_trials_m" --cache "$out/emb_cache" \
    --out "$out/$label/privacy.json" > "$out/$label/privacy.txt"
}
# most telling first (w = 0 and 1 are the ends of the paper's trend), so a cut-short run still says something
for w in 0 1 -1 0.5; do run "w=$w" "w=$w"; done
run "w~U[0,0.5]" "w_range=[0,0.5]"
run "w=-0.5" "w=-0.5"
run "w~U[-0.5,0.5]" "w_range=[-0.5,0.5]"
for d in "$out"/w*/; do echo "== $(basename "$d")"; cat "$d/privacy.txt"; done
