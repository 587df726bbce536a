#!/usr/bin/env bash
# Trains the Mind Mappings surrogates shipped with Mapwright: the default
# session's architecture (Eyeriss-like) for every problem family the sample
# networks use (stride-1 and stride-2 convolutions, depthwise ones included;
# GEMM; batched GEMM). Deterministic for a seed: rerun it after a change to the
# cost model, the map space's encoding or the samples, and commit the files.
#   resources/surrogates/make.sh [path/to/mapwright-cli]
set -euo pipefail
cd "$(dirname "$0")/../.."
cli=${1:-build/app/mapwright-cli}
arch=samples/architectures/eyeriss_like.json
rm -f resources/surrogates/*.surrogate
for target in "resnet50 layer2.1.conv2" "resnet50 conv1" "transformer_block qkv_projection" \
              "transformer_block attention_scores"; do
    set -- $target
    "$cli" train-surrogate --arch "$arch" --workload "samples/networks/$1.json" --layer "$2" \
        --seed 1 --threads 2 --model-dir resources/surrogates
done
du -ch resources/surrogates/*.surrogate | tail -1
