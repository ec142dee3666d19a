#!/usr/bin/env bash
# Integration tests of the real tfctl binary: the examples run and print the
# right values, JSON output has the documented shape, feeds work by value and
# from .npy files, graph files round-trip through the stock capnp tool, and
# every kind of bad input ends with `error: CODE:` naming the culprit and the
# right exit status — never a crash or a hang. Output is TAP, for meson.
#
#   TFCTL=build/cli/tfctl SRC_ROOT=. bash tests/cli/cli_test.sh
set -u

TFCTL=${TFCTL:?set TFCTL to the tfctl binary}
SRC=${SRC_ROOT:?set SRC_ROOT to the source tree}
SCHEMA="$SRC/schemas/graph.capnp"
EX="$SRC/examples/graphs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

count=0
failures=0
out="" err="" rc=0

# tfctl ARGS...: runs the binary; sets $out, $err and $rc.
tfctl() {
  "$TFCTL" "$@" >"$work/stdout" 2>"$work/stderr" </dev/null
  rc=$?
  out=$(cat "$work/stdout")
  err=$(cat "$work/stderr")
}

pass() { count=$((count + 1)); echo "ok $count - $1"; }
fail() {
  count=$((count + 1)); failures=$((failures + 1))
  echo "not ok $count - $1"
  shift
  local line
  for line in "$@"; do echo "#   $line"; done
  echo "#   exit status: $rc"
  echo "#   stdout: ${out//$'\n'/$'\n'#           }"
  echo "#   stderr: ${err//$'\n'/$'\n'#           }"
}

# expect_out DESC EXPECTED -- ARGS...: exit 0 and stdout exactly EXPECTED.
expect_out() {
  local desc=$1 expected=$2
  shift 3
  tfctl "$@"
  if [[ $rc -eq 0 && "$out" == "$expected" ]]; then pass "$desc"; else fail "$desc" "expected stdout: $expected"; fi
}

# expect_contains DESC NEEDLE -- ARGS...: exit 0 and NEEDLE in stdout.
expect_contains() {
  local desc=$1 needle=$2
  shift 3
  tfctl "$@"
  if [[ $rc -eq 0 && "$out" == *"$needle"* ]]; then pass "$desc"; else fail "$desc" "expected in stdout: $needle"; fi
}

# expect_error DESC STATUS CODE CULPRIT -- ARGS...: exit STATUS, and stderr has
# `error: CODE:` and names CULPRIT.
expect_error() {
  local desc=$1 status=$2 code=$3 culprit=$4
  shift 5
  tfctl "$@"
  if [[ $rc -eq $status && "$err" == *"error: $code: "* && "$err" == *"$culprit"* ]]; then
    pass "$desc"
    echo "#   ${err%%$'\n'*}"
  else
    fail "$desc" "expected exit $status, stderr with 'error: $code:' naming '$culprit'"
  fi
}

# graph NAME: writes stdin to $work/NAME.txt.
graph() { cat >"$work/$1.txt"; }

# A float32 Const node in text form: const NAME SHAPE VALUES.
const() {
  echo "( name = \"$1\", op = \"Const\", attrs = [ (name = \"dtype\", value = (type = float32)),
    (name = \"value\", value = (tensor = (dtype = float32, shape = $2, floatVal = $3))) ] )"
}

# write_npy FILE DESCR SHAPE FORTRAN BODY: a version 1.0 .npy file; BODY is
# printf escapes. The header is padded, as numpy pads it, so that the body
# starts at a multiple of 64 bytes.
write_npy() {
  local header len
  header=$(printf "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" "$2" "$4" "$3")
  len=$(( (${#header} + 11 + 63) / 64 * 64 - 10 ))
  header=$(printf "%-$((len - 1))s" "$header")
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((len % 256)))\\x$(printf %02x $((len / 256)))"
    printf '%s\n' "$header"; printf "$5"; } >"$1"
}

# --- The examples -----------------------------------------------------------

expect_out "hello.txt runs and prints y" \
  "y = float32[2, 2] [[20 23] [44 51]]" -- run "$EX/hello.txt" --fetch y

expect_out "several fetches print in the order asked, ports included" \
  "$(printf 'product:0 = float32[2, 2] [[19 22] [43 50]]\na = float32[2, 2] [[1 2] [3 4]]')" \
  -- run "$EX/hello.txt" --fetch product:0 --fetch a

expect_out "--output json is exactly the documented shape" \
  '{"fetches": {"y": {"dtype": "float32", "shape": [2, 2], "values": [[20.0, 23.0], [44.0, 51.0]]}}}' \
  -- run "$EX/hello.txt" --fetch y --output json

expect_contains "--trace lists each node under its device" \
  "/job:localhost/replica:0/task:0/device:CPU:0" -- run "$EX/hello.txt" --fetch y --trace
if [[ "$out" == *"product (MatMul)"* && "$out" == *"y = float32"* ]]; then
  pass "--trace names the nodes it ran"
else
  fail "--trace names the nodes it ran" "expected 'product (MatMul)'"
fi

tfctl run "$EX/hello.txt" --fetch y --trace --output json
if [[ $rc -eq 0 && "$out" == '{"fetches": {"y": '*'"trace": [{"device": "/job:localhost/replica:0/task:0/device:CPU:0", "nodes": ['*'"node": "product", "op": "MatMul"'* ]]; then
  pass "--trace --output json adds a trace per device"
else
  fail "--trace --output json adds a trace per device"
fi

tfctl run "$EX/hello.txt" --fetch y --trace-file "$work/trace.json"
trace=$(cat "$work/trace.json" 2>/dev/null)
if [[ $rc -eq 0 && "$out" == "y = float32[2, 2] [[20 23] [44 51]]" &&
      "$trace" == '{"traceEvents": [{"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "/job:localhost/replica:0/task:0/device:CPU:0"}}'* &&
      "$trace" == *'"name": "thread_name"'* && "$trace" == *'"name": "product", "cat": "MatMul", "ph": "X"'* ]]; then
  pass "--trace-file writes a Chrome trace with named threads and the fetches still print"
else
  fail "--trace-file writes a Chrome trace with named threads and the fetches still print" "trace: ${trace:0:300}"
fi
# A GPU request that cannot be met (CUDA_VISIBLE_DEVICES="" hides any GPU) is
# an error naming the node, unless --allow-soft-placement runs it on the CPU.
sed 's|( name = "product", op = "MatMul", inputs = \["a", "b"\] )|( name = "product", op = "MatMul", inputs = ["a", "b"], device = "/gpu:0" )|' \
  "$EX/hello.txt" >"$work/hello_gpu.txt"
export CUDA_VISIBLE_DEVICES=""
expect_error "a GPU request without a GPU is refused, naming the node" 1 INVALID_ARGUMENT \
  "node 'product' (MatMul) asks for /device:GPU:0" -- run "$work/hello_gpu.txt" --fetch y
if [[ "$err" == *"--allow-soft-placement"* ]]; then
  pass "the refusal names --allow-soft-placement"
else
  fail "the refusal names --allow-soft-placement" "stderr: $err"
fi
expect_out "--allow-soft-placement runs it on the CPU" "y = float32[2, 2] [[20 23] [44 51]]" \
  -- run "$work/hello_gpu.txt" --fetch y --allow-soft-placement
unset CUDA_VISIBLE_DEVICES

expect_error "--trace-file that cannot be written" 1 INVALID_ARGUMENT "$work/no/dir/trace.json" \
  -- run "$EX/hello.txt" --fetch y --trace-file "$work/no/dir/trace.json"

expect_out "a placeholder fed by value" \
  "y = float32[2, 1] [[5] [11]]" -- run "$EX/placeholder.txt" --feed 'x=[[1, 2], [3, 4]]' --fetch y

write_npy "$work/x.npy" '<f4' '(2, 2)' False '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40'
expect_out "a placeholder fed from a .npy file" \
  "y = float32[2, 1] [[5] [11]]" -- run "$EX/placeholder.txt" --feed "x=@$work/x.npy" --fetch y

expect_out "variables count up over --steps after --init" \
  "increment = int32[] 5" -- run "$EX/variables.txt" --init init --fetch increment --steps 5

expect_out "a queue hands back what was enqueued" \
  "dequeue = float32[3] [1 2 3]" -- run "$EX/queue.txt" --fetch dequeue

expect_out "graph validate counts the nodes" "ok: 5 nodes" -- graph validate "$EX/hello.txt"

# "-" for FILE: the graph on stdin (the tfctl helper reads /dev/null).
out=$("$TFCTL" graph validate - <"$EX/hello.txt" 2>"$work/stderr"); rc=$?; err=$(cat "$work/stderr")
if [[ $rc -eq 0 && "$out" == "ok: 5 nodes" ]]; then pass "graph validate - reads stdin"
else fail "graph validate - reads stdin" "expected stdout: ok: 5 nodes"; fi

expect_contains "graph show lists op and inputs" "product  MatMul  -       a, b" -- graph show "$EX/hello.txt"

expect_contains "ops lists the registry with docs" "MatMul" -- ops
expect_contains "ops --output json is one object" '{"ops": [' -- ops --output json

# --- inf, -inf and NaN in JSON, and back through --feed -------------------------

# q = [1, -1, 0] / [0, 0, 0]; p, a placeholder, comes back out as out.
graph non_finite <<EOF
(nodes = [ $(const num '[3]' '[1, -1, 0]'), $(const zero '[3]' '[0]'),
  ( name = "q", op = "Div", inputs = ["num", "zero"] ),
  ( name = "p", op = "Placeholder", attrs = [ (name = "dtype", value = (type = float32)),
    (name = "shape", value = (shape = (dims = [3]))) ] ),
  ( name = "out", op = "Identity", inputs = ["p"] ) ])
EOF
non_finite_json='{"dtype": "float32", "shape": [3], "values": ["inf", "-inf", "nan"]}'
expect_out "--output json writes inf, -inf and NaN as \"inf\", \"-inf\", \"nan\"" \
  "{\"fetches\": {\"q\": $non_finite_json}}" -- run "$work/non_finite.txt" --fetch q --output json
values=$(sed -nE 's/.*"values": (\[[^]]*\]).*/\1/p' <<<"$out")
expect_out "the JSON values fed back with --feed come out the same" \
  "{\"fetches\": {\"out\": $non_finite_json}}" \
  -- run "$work/non_finite.txt" --feed "p=$values" --fetch out --output json
expect_out "--feed takes Infinity, -Infinity and NaN as JSON tools write them" \
  "out = float32[3] [inf -inf nan]" \
  -- run "$work/non_finite.txt" --feed 'p=[Infinity, -Infinity, NaN]' --fetch out

# --- Round trips with the stock capnp tool -----------------------------------

tfctl graph decode "$EX/hello.txt" -o "$work/hello.decoded.txt"
if [[ $rc -eq 0 ]] && capnp encode "$SCHEMA" GraphDef <"$work/hello.decoded.txt" >"$work/hello.stock.bin" 2>"$work/capnp.err"; then
  pass "tfctl's text form re-encodes with the stock capnp encode"
else
  fail "tfctl's text form re-encodes with the stock capnp encode" "$(cat "$work/capnp.err" 2>/dev/null)"
fi
expect_out "a graph encoded by the stock tool runs" \
  "y = float32[2, 2] [[20 23] [44 51]]" -- run "$work/hello.stock.bin" --fetch y

capnp encode "$SCHEMA" GraphDef <"$EX/hello.txt" >"$work/hello.direct.bin"
expect_out "the hand-written example encodes with the stock tool and runs" \
  "y = float32[2, 2] [[20 23] [44 51]]" -- run "$work/hello.direct.bin" --fetch y

tfctl graph encode "$EX/hello.txt" -o "$work/hello.bin"
if [[ $rc -eq 0 ]] && capnp decode "$SCHEMA" GraphDef <"$work/hello.bin" >"$work/hello.stockdecoded.txt" 2>"$work/capnp.err"; then
  pass "tfctl's binary form decodes with the stock capnp decode"
else
  fail "tfctl's binary form decodes with the stock capnp decode" "$(cat "$work/capnp.err" 2>/dev/null)"
fi
expect_out "the stock tool's text form runs" \
  "y = float32[2, 2] [[20 23] [44 51]]" -- run "$work/hello.stockdecoded.txt" --fetch y

tfctl graph decode "$work/hello.bin"
if [[ $rc -eq 0 && "$out" == "$(cat "$work/hello.decoded.txt")" ]]; then
  pass "decode(encode(g)) equals decode(g)"
else
  fail "decode(encode(g)) equals decode(g)"
fi

# --- Default attrs and graph versions ----------------------------------------

# encode and decode write graph files: an attr equal to its default is left
# out (so older tfds, whose op may lack it, take the file), others kept.
cat >"$work/defaults.txt" <<'EOF'
(nodes = [
  (name = "a", op = "Const", attrs = [
     (name = "dtype", value = (type = float32)),
     (name = "value", value = (tensor = (dtype = float32, shape = [2, 2], floatVal = [1])))]),
  (name = "y", op = "MatMul", inputs = ["a", "a"], attrs = [
     (name = "transpose_a", value = (b = false)), (name = "transpose_b", value = (b = true))])
])
EOF
tfctl graph encode "$work/defaults.txt" -o "$work/defaults.bin"
tfctl graph show "$work/defaults.bin"
if [[ $rc -eq 0 && "$out" != *transpose_a* && "$out" == *"transpose_b = true"* ]]; then
  pass "graph encode leaves out attrs equal to their default and keeps the others"
else
  fail "graph encode leaves out attrs equal to their default and keeps the others"
fi
tfctl graph decode "$work/defaults.txt"
if [[ $rc -eq 0 && "$out" != *transpose_a* && "$out" == *transpose_b* ]]; then
  pass "graph decode leaves out attrs equal to their default and keeps the others"
else
  fail "graph decode leaves out attrs equal to their default and keeps the others"
fi

expect_contains "graph show prints a file without versions as producer 0" \
  "versions: producer 0, min consumer 0" -- graph show "$EX/hello.txt"
sed 's/^(nodes = \[/(versions = (producer = 9, minConsumer = 8), nodes = [/' \
  "$work/defaults.txt" >"$work/future.txt"
expect_contains "graph show prints a file's versions" "versions: producer 9, min consumer 8" \
  -- graph show "$work/future.txt"
expect_error "a graph that needs a newer tfd names both versions" 1 FAILED_PRECONDITION \
  "needs tfd graph version 8 or newer" -- graph validate "$work/future.txt"
expect_error "tfctl run refuses it too" 1 FAILED_PRECONDITION "graph version 8" \
  -- run "$work/future.txt" --fetch y

# --- Bad graph files ----------------------------------------------------------

head -c 40 "$work/hello.bin" >"$work/truncated.bin"
expect_error "a truncated binary file" 1 INVALID_ARGUMENT "truncated.bin" -- run "$work/truncated.bin" --fetch y

# The segment table of a truncated message, patched to claim what is left:
# the binary reader itself must refuse the dangling pointers.
{ printf '\x00\x00\x00\x00\x04\x00\x00\x00'; head -c 32 "$work/hello.bin" | tail -c 32; } >"$work/cut.bin"
expect_error "a binary message cut short inside" 1 INVALID_ARGUMENT "cut.bin" -- graph validate "$work/cut.bin"

RANDOM=42
for _ in $(seq 512); do printf "\\x$(printf %02x $((RANDOM % 256)))"; done >"$work/random.bin"
expect_error "random bytes" 1 INVALID_ARGUMENT "random.bin" -- run "$work/random.bin" --fetch y
{ printf '\x00\x00\x00\x00\x40\x00\x00\x00'; head -c 512 "$work/random.bin"; } >"$work/random_words.bin"
expect_error "random words behind a valid segment table" 1 INVALID_ARGUMENT "random_words.bin" \
  -- graph show "$work/random_words.bin"

printf '(nodes = [(name = "a" op = "Const")])\n' >"$work/syntax.txt"
expect_error "text with a syntax error" 1 INVALID_ARGUMENT "syntax.txt" -- graph validate "$work/syntax.txt"

expect_error "a missing file" 1 NOT_FOUND "nowhere.txt" -- run "$work/nowhere.txt" --fetch y

graph unknown_op <<EOF
(nodes = [ ( name = "mystery", op = "Frobnicate" ) ])
EOF
expect_error "an unknown op" 1 NOT_FOUND "Frobnicate" -- run "$work/unknown_op.txt" --fetch mystery

graph missing_attr <<EOF
(nodes = [ ( name = "c", op = "Const", attrs = [ (name = "value", value = (tensor = (dtype = float32, shape = [], floatVal = [1]))) ] ) ])
EOF
expect_error "a missing attr" 1 INVALID_ARGUMENT "dtype" -- graph validate "$work/missing_attr.txt"

graph mistyped_attr <<EOF
(nodes = [ ( name = "c", op = "Const", attrs = [ (name = "dtype", value = (i = 3)),
  (name = "value", value = (tensor = (dtype = float32, shape = [], floatVal = [1]))) ] ) ])
EOF
expect_error "a mistyped attr" 1 INVALID_ARGUMENT "'dtype'" -- run "$work/mistyped_attr.txt" --fetch c

graph missing_node <<EOF
(nodes = [ $(const a '[2]' '[1, 2]'), ( name = "sum", op = "Add", inputs = ["a", "nowhere"] ) ])
EOF
expect_error "an input naming a missing node" 1 INVALID_ARGUMENT "nowhere" -- graph validate "$work/missing_node.txt"

graph missing_port <<EOF
(nodes = [ $(const a '[2]' '[1, 2]'), ( name = "sum", op = "Add", inputs = ["a", "a:3"] ) ])
EOF
expect_error "an input naming a missing port" 1 INVALID_ARGUMENT "output 3 of 'a'" -- run "$work/missing_port.txt" --fetch sum

graph cycle <<EOF
(nodes = [ ( name = "x", op = "Identity", inputs = ["y"] ), ( name = "y", op = "Identity", inputs = ["x"] ) ])
EOF
expect_error "a cycle" 1 INVALID_ARGUMENT "cycle" -- graph validate "$work/cycle.txt"

graph dtype_mismatch <<EOF
(nodes = [ $(const a '[2]' '[1, 2]'),
  ( name = "i", op = "Const", attrs = [ (name = "dtype", value = (type = int32)),
    (name = "value", value = (tensor = (dtype = int32, shape = [2], int32Val = [1, 2]))) ] ),
  ( name = "sum", op = "Add", inputs = ["a", "i"] ) ])
EOF
expect_error "a dtype mismatch" 1 INVALID_ARGUMENT "sum" -- run "$work/dtype_mismatch.txt" --fetch sum

graph shape_mismatch <<EOF
(nodes = [ $(const a '[2, 3]' '[1]'), $(const b '[2, 3]' '[1]'),
  ( name = "mm", op = "MatMul", inputs = ["a", "b"] ) ])
EOF
expect_error "a shape mismatch found by inference" 1 INVALID_ARGUMENT "mm" -- graph validate "$work/shape_mismatch.txt"
if [[ "$err" == *"[2, 3]"* ]]; then pass "the shape mismatch shows the shapes"; else fail "the shape mismatch shows the shapes"; fi

graph huge_fill <<EOF
(nodes = [ ( name = "dims", op = "Const", attrs = [ (name = "dtype", value = (type = int64)),
    (name = "value", value = (tensor = (dtype = int64, shape = [2], int64Val = [100000000000, 100000000000]))) ] ),
  $(const v '[]' '[0]'),
  ( name = "big", op = "Fill", inputs = ["dims", "v"], attrs = [ (name = "index_type", value = (type = int64)) ] ) ])
EOF
expect_error "Fill with a huge declared shape" 1 INVALID_ARGUMENT "big" -- run "$work/huge_fill.txt" --fetch big

graph huge_placeholder <<EOF
(nodes = [ ( name = "p", op = "Placeholder", attrs = [ (name = "dtype", value = (type = float32)),
    (name = "shape", value = (shape = (dims = [100000000000, 100000000000]))) ] ),
  ( name = "neg", op = "Neg", inputs = ["p"] ) ])
EOF
expect_error "a placeholder with a huge declared shape" 1 INVALID_ARGUMENT "p" -- run "$work/huge_placeholder.txt" --feed 'p=[1.0]' --fetch neg

# A value list shorter than its shape is repeated, so these few bytes ask for
# 1 GB and 16 GB: refused before anything is allocated.
for n in 250000000 4000000000; do
  graph "const_$n" <<EOF
(nodes = [ $(const big "[$n]" '[1]') ])
EOF
  expect_error "a graph constant of float32[$n] from one value" 1 INVALID_ARGUMENT \
    "node 'big' attr 'value': tensor float32[$n] takes" -- graph validate "$work/const_$n.txt"
  if [[ "$err" == *"(--max-graph-tensor-bytes)"* ]]; then pass "the refusal names the limit's flag"; else fail "the refusal names the limit's flag"; fi
done

graph short_content <<EOF
(nodes = [ ( name = "short", op = "Const", attrs = [ (name = "dtype", value = (type = float32)),
    (name = "value", value = (tensor = (dtype = float32, shape = [1073741826, 2],
                                        content = 0x"00112233445566778899aabbccddeeff"))) ] ) ])
EOF
expect_error "8 GiB of shape with 16 bytes of content" 1 INVALID_ARGUMENT \
  "needs 8589934608 content bytes, got 16" -- graph validate "$work/short_content.txt"

graph huge_one_hot <<EOF
(nodes = [ ( name = "indices", op = "Const", attrs = [ (name = "dtype", value = (type = int64)),
    (name = "value", value = (tensor = (dtype = int64, shape = [2], int64Val = [0, 1]))) ] ),
  ( name = "depth", op = "Const", attrs = [ (name = "dtype", value = (type = int32)),
    (name = "value", value = (tensor = (dtype = int32, shape = [], int32Val = [2000000000]))) ] ),
  $(const on '[]' '[1]'), $(const off '[]' '[0]'),
  ( name = "hot", op = "OneHot", inputs = ["indices", "depth", "on", "off"] ) ])
EOF
expect_error "OneHot asking for a 16 GB output" 1 RESOURCE_EXHAUSTED "node 'hot' (OneHot)" -- run "$work/huge_one_hot.txt" --fetch hot

# --- Bad feeds, fetches and waits ----------------------------------------------

expect_error "a feed of the wrong shape" 1 INVALID_ARGUMENT "[3]" -- run "$EX/placeholder.txt" --feed 'x=[1, 2, 3]' --fetch y
expect_error "a feed of the wrong dtype" 1 INVALID_ARGUMENT "int32" -- run "$EX/placeholder.txt" --feed 'x=int32:[[1, 2]]' --fetch y
expect_error "a ragged feed" 1 INVALID_ARGUMENT "ragged" -- run "$EX/placeholder.txt" --feed 'x=[[1, 2], [3]]' --fetch y
write_npy "$work/f.npy" '<f4' '(1, 2)' True '\x00\x00\x80\x3f\x00\x00\x00\x40'
expect_error "a Fortran-order .npy feed" 1 INVALID_ARGUMENT "f.npy" -- run "$EX/placeholder.txt" --feed "x=@$work/f.npy" --fetch y
write_npy "$work/c.npy" '<c8' '(1,)' False '\x00\x00\x80\x3f\x00\x00\x00\x40'
expect_error "a .npy feed of an unsupported dtype" 1 INVALID_ARGUMENT "<c8" -- run "$EX/placeholder.txt" --feed "x=@$work/c.npy" --fetch y
expect_error "a fetch of a missing node" 1 NOT_FOUND "nope" -- run "$EX/hello.txt" --fetch nope
expect_error "a feed of a missing node" 1 NOT_FOUND "nope" -- run "$EX/hello.txt" --feed 'nope=1' --fetch y
expect_error "a dequeue from an empty queue ends at the deadline" 1 DEADLINE_EXCEEDED "empty_q" \
  -- run "$EX/queue.txt" --target lonely_dequeue --timeout 1

# --- Usage errors exit 2 -------------------------------------------------------

expect_error "an unknown command" 2 INVALID_ARGUMENT "frob" -- frob
expect_error "no command" 2 INVALID_ARGUMENT "missing command" --
expect_error "an unknown flag" 2 INVALID_ARGUMENT "bogus" -- run "$EX/hello.txt" --fetch y --bogus
expect_error "a missing FILE" 2 INVALID_ARGUMENT "FILE" -- run --fetch y
expect_error "a flag without its value" 2 INVALID_ARGUMENT "steps" -- run "$EX/hello.txt" --fetch y --steps
expect_error "nothing to fetch or run" 2 INVALID_ARGUMENT "--fetch" -- run "$EX/hello.txt"
expect_error "a --feed without =" 2 INVALID_ARGUMENT "NAME=VALUE" -- run "$EX/placeholder.txt" --feed x --fetch y
expect_error "an unknown graph action" 2 INVALID_ARGUMENT "frob" -- graph frob "$EX/hello.txt"
expect_error "an unknown --output" 2 INVALID_ARGUMENT "yaml" -- ops --output yaml

# --- Hostile values: usage errors (exit 2) at once, naming what is wrong -----
# Each --timeout 1 keeps a regression (a dial until the deadline) short.

for target in 127.0.0.1:99999 127.0.0.1:-5 :31001 127.0.0.1: 127.0.0.1:abc; do
  expect_error "--target $target is refused before anything is dialled" 2 INVALID_ARGUMENT \
    "--target: address '$target'" -- wait cluster --target "$target" --timeout 1
done
expect_error "every command checks --target" 2 INVALID_ARGUMENT "--target: address '127.0.0.1:99999'" \
  -- submit "$EX/hello.txt" --fetch y --target 127.0.0.1:99999 --timeout 1
expect_error "a spec's port over 65535" 2 INVALID_ARGUMENT "job 'ps' task 0: address '127.0.0.1:99999'" \
  -- status --cluster '{"ps": ["127.0.0.1:99999"]}' --timeout 1
expect_error "start refuses a malformed spec before launching" 2 INVALID_ARGUMENT \
  "--cluster: cluster spec: job 'ps' task 0: address '127.0.0.1:99999'" \
  -- start --cluster '{"ps": ["127.0.0.1:99999"]}' --run-dir "$work/never-started"
expect_error "a spec's port that is no number" 2 INVALID_ARGUMENT "port 'abc'" \
  -- status --cluster '{"ps": ["127.0.0.1:abc"]}' --timeout 1
expect_error "one address for two tasks" 2 INVALID_ARGUMENT "job 'worker' task 0: address '127.0.0.1:1' is also job 'ps' task 0's" \
  -- status --cluster '{"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:1"]}' --timeout 1
expect_error "a job name TensorFlow's device names cannot hold" 2 INVALID_ARGUMENT "job name 'a/b'" \
  -- status --cluster '{"a/b": ["127.0.0.1:1"]}' --timeout 1
expect_error "a spec of no tasks" 2 INVALID_ARGUMENT "no tasks" -- status --cluster '{}' --timeout 1
expect_error "a spec of no tasks, for vars list" 2 INVALID_ARGUMENT "no tasks" \
  -- vars list --cluster '{}' --timeout 1
for spec in '[]' '["127.0.0.1:1"]' null 3; do
  expect_error "--cluster $spec is a spec of the wrong kind, not a file name" 2 INVALID_ARGUMENT \
    "must be a JSON object of jobs" -- status --cluster "$spec" --timeout 1
done
expect_error "two keys naming one task" 2 INVALID_ARGUMENT "job 'ps' names task 0 twice" \
  -- vars list --cluster '{"ps": {"0": "127.0.0.1:1", "00": "127.0.0.1:2"}}' --timeout 1
truncate -s 2G "$work/huge.json"
expect_error "a 2 GiB spec file is refused unread" 2 INVALID_ARGUMENT "'$work/huge.json' is 2147483648 bytes" \
  -- status --cluster "$work/huge.json" --timeout 1
{ printf '{"ps": ["127.0.0.1:1"],\n \x01\xff'; head -c 100000 /dev/zero | tr '\0' 'x'; } >"$work/binary.json"
expect_error "a spec that is not JSON: where, and a short excerpt" 2 INVALID_ARGUMENT "line 2, column 2" \
  -- status --cluster "$work/binary.json" --timeout 1
if [[ ${#err} -lt 600 && "$err" != *xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx* ]]; then
  pass "the error quotes the bad spec in part"
else
  fail "the error quotes the bad spec in part" "stderr of ${#err} bytes"
fi
expect_error "train --timeout 0" 2 INVALID_ARGUMENT "--timeout must be a positive" \
  -- train "$EX/hello.txt" --target 127.0.0.1:1 --timeout 0
expect_error "wait --timeout=-1" 2 INVALID_ARGUMENT "--timeout must be a positive" \
  -- wait cluster --target 127.0.0.1:1 --timeout=-1
expect_error "train --progress-every=-1" 2 INVALID_ARGUMENT "--progress-every" \
  -- train "$EX/hello.txt" --target 127.0.0.1:1 --timeout 1 --progress-every=-1
expect_error "train --steps 0, as run's" 2 INVALID_ARGUMENT "--steps must be at least 1" \
  -- train "$EX/hello.txt" --target 127.0.0.1:1 --timeout 1 --steps 0
expect_error "a float feed beyond float32's range, not a silent inf" 1 INVALID_ARGUMENT \
  "'1e400' is out of range for float32" -- run "$EX/placeholder.txt" --feed 'x=[[1e400, 2]]' --fetch y
deep="x=$(head -c 60000 /dev/zero | tr '\0' '[')$(head -c 60000 /dev/zero | tr '\0' ']')"
expect_error "a feed nested too deeply" 1 INVALID_ARGUMENT "nested deeper than 32" \
  -- run "$EX/placeholder.txt" --feed "$deep" --fetch y
if [[ ${#err} -lt 600 ]]; then
  pass "its error quotes the 120 KB value in part"
else
  fail "its error quotes the 120 KB value in part" "stderr of ${#err} bytes"
fi

# A usage error under --output json: its error object on stdout as well, for
# a script that reads stdout; without it, stdout stays empty.
tfctl status --cluster '{"ps": ["127.0.0.1:1"]}' --timeout -1 --output json
if [[ $rc -eq 2 && "$out" == '{"error": {"code": "INVALID_ARGUMENT", "message": "--timeout must be a positive number of seconds", "usage": "tfctl status --cluster SPEC [options]"}}' ]]; then
  pass "a usage error under --output json prints its error object on stdout"
else fail "a usage error under --output json prints its error object on stdout"; fi
tfctl vars list --target 127.0.0.1:1 --bogus --output=json
if [[ $rc -eq 2 && "$out" == '{"error": {"code": "INVALID_ARGUMENT", "message": "unrecognised option '"'--bogus'"'", "usage": '* ]]; then
  pass "so does an unknown flag under --output=json"
else fail "so does an unknown flag under --output=json"; fi
tfctl status --cluster '{"ps": ["127.0.0.1:1"]}' --timeout -1
if [[ $rc -eq 2 && -z "$out" && "$err" == *"--timeout must be a positive"* ]]; then
  pass "without --output json a usage error leaves stdout empty"
else fail "without --output json a usage error leaves stdout empty"; fi

# --- tfctl wait: exit 3 at the deadline, the target's own included ----------

expect_error "wait cluster for a target nothing listens at: exit 3 at the deadline" 3 UNAVAILABLE \
  "cannot reach 127.0.0.1:1" -- wait cluster --target 127.0.0.1:1 --timeout 0.5

# --- tfctl version: a command like the others -------------------------------

tfctl version
if [[ $rc -eq 0 && "$out" == "tfctl "[0-9]* && "$out" != *$'\n'* ]]; then
  pass "tfctl version prints the version"
else
  fail "tfctl version prints the version"
fi
expect_error "tfctl version --bogus" 2 INVALID_ARGUMENT "bogus" -- version --bogus
expect_error "tfctl version extra" 2 INVALID_ARGUMENT "positional" -- version extra
tfctl version --help
own=$out
tfctl help version
if [[ $rc -eq 0 && "$out" == "$own" && "$out" == "usage: tfctl version"* && "$out" == *"--help"* ]]; then
  pass "tfctl version --help and tfctl help version print version's help"
else
  fail "tfctl version --help and tfctl help version print version's help" "version --help: $own"
fi

# --- --help: every option with what it does ---------------------------------

for cmd in graph run ops submit train wait status health vars start stop checkpoint; do
  tfctl "$cmd" --help
  # An option line without a description ends in "arg" or in the option.
  bare=$(grep -E '^  -[^ ]' <<<"$out" | grep -E '( arg|\])? *$' | grep -vE '  [^ -].*[a-z]' || true)
  if [[ $rc -eq 0 && "$out" == "usage: tfctl $cmd"* && "$out" == *"--help"* &&
        $(grep -cE '^  -' <<<"$out") -ge 2 && -z "$bare" ]]; then
    pass "tfctl $cmd --help lists its options with descriptions"
  else
    fail "tfctl $cmd --help lists its options with descriptions" "options without a description: $bare"
  fi
done
tfctl submit --help
if [[ "$out" == *"--step-timeout"*"seconds one step may take"* && "$out" == *"--token-file"* ]]; then
  pass "submit --help describes its own and the connection options"
else
  fail "submit --help describes its own and the connection options"
fi
# `tfctl help CMD` is CMD's help, word for word; positionals are arguments.
for cmd in graph run ops submit train wait status health vars start stop checkpoint; do
  tfctl "$cmd" --help
  own=$out
  tfctl help "$cmd"
  if [[ $rc -eq 0 && "$out" == "$own" && "$out" == "usage: tfctl $cmd"* ]]; then
    pass "tfctl help $cmd prints what tfctl $cmd --help does"
  else
    fail "tfctl help $cmd prints what tfctl $cmd --help does" "tfctl $cmd --help: ${own:0:200}"
  fi
done
tfctl train --help
if [[ "$out" == "usage: tfctl train FILE "* && "$out" == *$'arguments:\n  FILE '*"the graph file"* &&
      "$out" != *"--file"* ]]; then
  pass "tfctl train --help shows FILE as an argument, not as --file"
else
  fail "tfctl train --help shows FILE as an argument, not as --file"
fi
tfctl vars --help
if [[ "$out" == *$'arguments:\n  ACTION '*$'\n  NAME '* && "$out" != *"--action"* && "$out" != *"--name"* ]]; then
  pass "tfctl vars --help shows ACTION and NAME as arguments"
else
  fail "tfctl vars --help shows ACTION and NAME as arguments"
fi
tfctl help
if [[ $rc -eq 0 && "$out" == *"  tfctl health "* && "$out" == *"tfctl help COMMAND"* ]]; then
  pass "tfctl help lists the commands"
else
  fail "tfctl help lists the commands"
fi
expect_error "tfctl help of an unknown command" 2 INVALID_ARGUMENT "unknown command 'nosuch'" -- help nosuch
expect_error "tfctl help of two commands" 2 INVALID_ARGUMENT "help takes one command" -- help run train
expect_error "a positional argument given as an option" 2 INVALID_ARGUMENT "'--file'" \
  -- submit --file "$EX/hello.txt" --fetch y --target 127.0.0.1:1
expect_error "a missing positional argument is named as such" 2 INVALID_ARGUMENT "missing FILE" \
  -- submit --fetch y --target 127.0.0.1:1
expect_error "an unknown flag of a cluster command" 2 INVALID_ARGUMENT "bogus" -- status --cluster '{"w":["127.0.0.1:1"]}' --bogus

echo "1..$count"
[[ $failures -eq 0 ]]
