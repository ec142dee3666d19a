#!/usr/bin/env bash
# Walkthrough 6: reduce-sum over two workers. 1000 ones are fed at the
# master (the chief), split in two; each worker sums its half on its own task
# and logs the partial sum in its own log (Print); the total comes back.
source "$(dirname "$0")/lib.sh"
cluster_spec chief=1 worker=2
start_cluster
# 1000 ones as a literal list (the feed's dtype is the placeholder's: float32).
ones="[$(printf '1,%.0s' $(seq 1 999))1]"
out=$("$TFCTL" submit "$here/06_reduce_sum.txt" --target "$(address chief 0)" \
      --feed "x=$ones" --fetch total --output json --trace-file "$run_dir/trace.json")
echo "$out"
expect "$out" '"values": 1000.0'
# Each partial sum was computed, and logged, on its own worker.
for w in 0 1; do
  log=$(cat "$run_dir/worker-$w.log")
  expect "$log" "partial sum on worker $w: [500]"
  echo "worker $w log: $(grep -o "partial sum on worker $w: .*" "$run_dir/worker-$w.log")"
done
# ... and not on the chief.
if grep -q "partial sum" "$run_dir/chief-0.log"; then
  echo "FAILED: a partial sum was logged on the chief" >&2
  exit 1
fi
# The trace file is Chrome trace JSON (chrome://tracing, Perfetto): one
# process per device, one complete event per node, each where it was placed
# (the fed x is replaced by the feed, so it does not run).
python3 - "$run_dir/trace.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
devices = {e["pid"]: e["args"]["name"] for e in events
           if e["ph"] == "M" and e["name"] == "process_name"}
where = {}
for e in events:
    if e["ph"] != "X":
        continue
    assert isinstance(e["ts"], int) and isinstance(e["dur"], int) and e["dur"] >= 0, e
    assert e["pid"] in devices, f"event {e['name']} has no process_name for pid {e['pid']}"
    where[e["name"]] = devices[e["pid"]]
chief = "/job:chief/replica:0/task:0/device:CPU:0"
worker = "/job:worker/replica:0/task:{}/device:CPU:0"
expected = {"halves": chief, "total": chief,
            "sum0": worker.format(0), "print0": worker.format(0),
            "sum1": worker.format(1), "print1": worker.format(1)}
for node, device in expected.items():
    assert where.get(node) == device, f"{node}: expected on {device}, the trace says {where.get(node)}"
print(f"trace: {len(where)} nodes on {len(devices)} devices, each where it was placed")
PY
