#!/bin/bash
# Ignorant (OA) and lazy-informed (AA-lazy) EER of one anonymizer on a corpus's test split.
# usage: experiments/embedding_attackers.sh CORPUS OUT METHOD [NAME=VALUE ...]
#   e.g. experiments/embedding_attackers.sh runs/corpus runs/gaussian embedding generator=gaussian
set -euo pipefail
corpus=$1/data; out=$2; method=$3; shift 3
params=()
for p in "$@"; do params+=(--param "$p"); done
for set in test_enrolls test_trials_f test_trials_m; do
  voxanon anonymize --quiet --method "$method" "${params[@]}" --jobs 1 "$corpus/$set" "$out/$set"
done
voxanon evaluate privacy --quiet --oa --aa-lazy --enroll "$corpus/test_enrolls" \
  --trials "$corpus/test_trials_f" "$corpus/test_trials_m" --anon-enroll "$out/test_enrolls" \
  --anon-trials "$out/test_trials_f" "$out/test_trials_m" --cache "$out/emb_cache" --out "$out/privacy.json"
