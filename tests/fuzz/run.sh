#!/usr/bin/env bash
# Fuzzes every input format for SECONDS each (libFuzzer, ASan + UBSan), from
# seeds made of the samples, tests/data and tests/fuzz/seeds, with the
# regression inputs of tests/fuzz/regressions replayed first; prints
# executions and coverage per harness. A finding is kept as
# BUILD/fuzz-findings/HARNESS-crash-* (add it to tests/fuzz/regressions/HARNESS
# once fixed) and fails the run.
#   usage: tests/fuzz/run.sh BUILD_DIR SECONDS [HARNESS...]
# BUILD_DIR is configured with -DCMAKE_CXX_COMPILER=clang++ -DMAPWRIGHT_FUZZ=ON.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
seconds=$2
shift 2
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(architecture workload mapping constraints session timeloop timeloop_nodes template onnx sweep)

seeds=$build/fuzz-seeds-$$ # one per run: runs may go side by side
trap 'rm -rf "$seeds"' EXIT
mkdir -p "$seeds"/{architecture,workload,mapping,constraints,session,timeloop,timeloop_nodes,template,onnx,sweep} "$build/fuzz-findings"
cp "$root"/samples/architectures/*.json "$seeds/architecture/"
cp "$root"/samples/networks/*.json "$root"/samples/workloads/*.json "$seeds/workload/"
for f in "$root"/tests/data/workloads/*.json; do cp "$f" "$seeds/workload/data-$(basename "$f")"; done
cp "$root"/samples/mappings/*.json "$root"/tests/fuzz/seeds/mapping/*.json "$seeds/mapping/"
cp "$root"/samples/constraints/*.json "$seeds/constraints/"
cp "$root"/samples/sessions/*.json "$seeds/session/"
cp "$root"/tests/data/onnx/*.onnx "$seeds/onnx/"
cp "$root"/tests/fuzz/seeds/sweep/*.json "$seeds/sweep/"
# The exercises' node lists and rendered top files (tests/parity/exercises.py fuzz-seeds).
cp "$root"/tests/fuzz/seeds/timeloop_nodes/*.yaml "$seeds/timeloop_nodes/"
cp "$root"/tests/fuzz/seeds/template/*.yaml "$seeds/template/"
# A Timeloop case is one input: its files, each after a line "#FILE" (fuzz_timeloop.cpp):
# the processed input.yaml with the ERT, and the files as users write them.
for case in "$root"/tests/data/timeloop-tutorial/*/; do
  name=$(basename "$case")
  { cat "$case/input.yaml"; printf '\n#FILE\n'; cat "$case/ERT.yaml"; } > "$seeds/timeloop/$name.yaml"
  user=$root/tests/data/timeloop-user/$name
  { for f in "$user"/*.yaml; do cat "$f"; printf '\n#FILE\n'; done; cat "$case/ERT.yaml"; } \
      > "$seeds/timeloop/user-$name.yaml"
done

# Harnesses run side by side, one per core (FUZZ_JOBS overrides): each still
# fuzzes for SECONDS of its own, on a core of its own.
jobs=${FUZZ_JOBS:-$(nproc)}
fuzz_one() {
  local h=$1 corpus=$build/fuzz-corpus/$1 log=$build/fuzz-findings/$1.log
  mkdir -p "$corpus" "$root/tests/fuzz/regressions/$h"
  "$build/tests/fuzz/fuzz_$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$build/fuzz-findings/$h-" \
      $( [ "$h" = onnx ] || echo -dict="$root/tests/fuzz/$(case $h in timeloop*|template) echo yaml;; *) echo json;; esac).dict" ) \
      "$corpus" "$seeds/$h" "$root/tests/fuzz/regressions/$h" > "$log" 2>&1
  echo $? > "$log.status"
}
for h in "${harnesses[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  fuzz_one "$h" &
done
wait

failed=0
printf '%-24s %12s %10s %8s %8s %8s  %s\n' harness executions "per s" cov ft corpus result
for h in "${harnesses[@]}"; do
  log=$build/fuzz-findings/$h.log
  status=$(cat "$log.status" 2>/dev/null || echo 1)
  runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -o '[0-9]*$')
  rate=$(grep -Eo 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -o '[0-9]*$')
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*')
  ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*')
  corp=$(echo "$last" | grep -o 'corp: [0-9]*' | grep -o '[0-9]*')
  result=ok
  if [ "$status" -ne 0 ]; then result="FINDING (see $log)"; failed=1; fi
  printf '%-24s %12s %10s %8s %8s %8s  %s\n' "fuzz_$h" "${runs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
done
exit $failed
