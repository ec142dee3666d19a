#!/usr/bin/env bash
# tfd's flags are declared once (daemon/tfd_flags.cc); everything that lists
# them is made from that table. Against the built tfd: docs/cli.md's table is
# what `tfd --help=markdown` writes (like tests/cli/ops_doc_test.sh for
# docs/ops.md), and that table, the built man page and the built bash
# completion each name every flag `tfd --help` lists, the completion with
# an enum flag's values. Output is TAP, for meson.
#
#   SRC_ROOT=. TFD=build/daemon/tfd TFD_MAN=build/deploy/tfd.1 \
#   TFD_COMPLETION=build/deploy/tfd bash tests/deploy/tfd_flags_doc_test.sh
set -u
SRC=$(realpath "${SRC_ROOT:?set SRC_ROOT to the source tree}")
TFD=$(realpath "${TFD:?set TFD to the tfd binary}")
MAN=${TFD_MAN:?set TFD_MAN to the built tfd.1}
COMPLETION=${TFD_COMPLETION:?set TFD_COMPLETION to the built completion for tfd}
source "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The flags of `tfd --help`: "  --name arg  ..." and "  -h [ --help ] ...".
mapfile -t flags < <("$TFD" --help | sed -nE 's/^  (-h \[ )?(--[a-z][a-z0-9-]*).*/\2/p')
if ((${#flags[@]} >= 30)); then
  pass "tfd --help lists ${#flags[@]} flags"
else
  fail "tfd --help lists at least 30 flags, got ${#flags[@]}: ${flags[*]}"
fi

# A bad flag or value: exit status 2, and the error names it.
out=$("$TFD" --no-such-flag 2>&1)
expect "tfd --no-such-flag exits 2" 2 "$?"
expect "tfd --no-such-flag says why" "tfd: error: INVALID_ARGUMENT: unrecognised option '--no-such-flag'" "$out"
out=$(TFD_THREADS=many "$TFD" --cluster '{"ps": ["localhost:1"]}' --job ps --task 0 2>&1)
expect "TFD_THREADS=many exits 2" 2 "$?"
expect "TFD_THREADS=many says why" \
  "tfd: error: INVALID_ARGUMENT: TFD_THREADS must be an integer of at least 0, not 'many'" "$out"

# docs/cli.md, between its markers, is the binary's table.
table=$(sed -n '/^<!-- tfd flags: begin/,/^<!-- tfd flags: end/p' "$SRC/docs/cli.md" | sed '1d;$d')
if diff=$(diff -u <(printf '%s\n' "$table") <("$TFD" --help=markdown)); then
  pass "docs/cli.md's table of tfd's flags is what tfd --help=markdown writes"
else
  fail "docs/cli.md's table of tfd's flags is stale: run $TFD --help=markdown, and put it between the markers"
  sed 's/^/# /' <<<"$diff"
fi

# every_flag WHAT FILE BEFORE AFTER: passes when FILE has BEFORE, the flag,
# AFTER (grep -E) for every flag; the man page's dashes are \-.
every_flag() {
  local what=$1 file=$2 before=$3 after=$4 missing=""
  for flag in "${flags[@]}"; do
    local escaped=$flag
    [[ $what == "the man page" ]] && escaped=${flag//-/\\\\-}
    grep -qE -- "$before$escaped$after" "$file" || missing+=" $flag"
  done
  if [[ -z $missing ]]; then pass "$what names every flag"; else fail "$what lacks:$missing"; fi
}
printf '%s\n' "$table" >"$work/table.md"
every_flag "docs/cli.md's table" "$work/table.md" '^[|] `' '[ `[]'
# Each flag heads a .TP entry of the man page: \fB\-\-name...
every_flag "the man page" "$MAN" '^\\fB' '([ \\[]|$)'
check "the man page is roff with a NAME and an OPTIONS section" \
  bash -c "grep -q '^.TH TFD 1' '$MAN' && grep -q '^.SH NAME' '$MAN' && grep -q '^.SH OPTIONS' '$MAN'"
check "the man page lists TFD_MAX_CONNECTIONS among the variables" \
  grep -qx '.B TFD_MAX_CONNECTIONS' "$MAN"

# The completion, sourced as bash-completion would.
# shellcheck disable=SC1090
source "$COMPLETION"
offers() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _tfd
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
offered() {  # offered WANT WORD...
  local want=$1 got
  shift
  got=$(offers "$@")
  if [[ $got == "$want" ]]; then pass "'$*' offers: $want"; else fail "'$*' offers '$want', got '$got'"; fi
}
if complete -p tfd 2>/dev/null | grep -q -- '-F _tfd'; then
  pass "sourcing the completion registers _tfd for tfd"
else
  fail "sourcing the completion registers _tfd for tfd"
fi
all=" $(offers tfd --) "
missing=""
for flag in "${flags[@]}"; do [[ $all == *" $flag "* ]] || missing+=" $flag"; done
if [[ -z $missing ]]; then pass "the completion offers every flag"; else fail "the completion lacks:$missing"; fi
# An enum flag's values, from its help ("  --log-level arg  trace|debug|...: ..."), both after
# the flag and after "--flag=".
enums=0
while read -r flag values; do
  enums=$((enums + 1))
  want=$(tr '|' '\n' <<<"$values" | sort | tr '\n' ' ' | sed 's/ $//')
  offered "$want" tfd "$flag" ""
  offered "$want" tfd "$flag" = ""
done < <("$TFD" --help | sed -nE 's/^  (--[a-z-]+) arg +([a-z]+(\|[a-z]+)+):.*/\1 \2/p')
check "the completion was checked for $enums enum flags (at least 3)" test "$enums" -ge 3
offered "--log-device-placement --log-format --log-level" tfd --job ps --log-
offered "" tfd --job ""
touch "$work/cluster.json"
mkdir "$work/ckpt"
offered "$work/cluster.json" tfd --cluster "$work/clu"
offered "$work/ckpt" tfd --checkpoint-dir "$work/"

tap_done
