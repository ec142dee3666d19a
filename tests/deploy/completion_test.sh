#!/usr/bin/env bash
# deploy/bash-completion/tfctl with the real tfctl: what TAB offers after
# each kind of word — commands, a command's actions and options, an
# option's listed values, file names — and that every command of
# docs/cli.md's synopsis is offered (so completion, binary and reference
# agree). Output is TAP, for meson.
#
#   SRC_ROOT=. TFCTL=build/cli/tfctl bash tests/deploy/completion_test.sh
set -u

SRC=$(realpath "${SRC_ROOT:?set SRC_ROOT to the source tree}")
TFCTL=$(realpath "${TFCTL:?set TFCTL to the tfctl binary}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

# shellcheck source=deploy/bash-completion/tfctl
source "$SRC/deploy/bash-completion/tfctl"
# offers WORD...: what TAB offers for the last word, sorted (bash sorts
# what it shows), on one line.
offers() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _tfctl
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
offered() {  # offered WANT WORD...
  local want=$1
  shift
  local got
  got=$(offers "$@")
  if [[ $got == "$want" ]]; then pass "'${*:2}' offers: $want"; else fail "'${*:2}' offers '$want', got '$got'"; fi
}

if complete -p tfctl 2>/dev/null | grep -q -- '-F _tfctl'; then
  pass "sourcing it registers _tfctl for tfctl"
else
  fail "sourcing it registers _tfctl for tfctl"
fi
offered "submit" "$TFCTL" su
offered "graph" "$TFCTL" gr
offered "decode encode show validate" "$TFCTL" graph ""
offered "list restore save" "$TFCTL" checkpoint ""
offered "--target" "$TFCTL" submit --ta
offered "--token-file" "$TFCTL" train --tok
offered "human json" "$TFCTL" submit --output ""
offered "human json markdown" "$TFCTL" ops --output ""
offered "auto no yes" "$TFCTL" train --chief ""
offered "auto" "$TFCTL" train --chief a
# Options after the action, and files where a graph goes.
offered "--output" "$TFCTL" graph show --outp
mkdir -p "$work/graphs"
touch "$work/graphs/model.capnp" "$work/graphs/model.txt"
offered "$work/graphs/model.capnp $work/graphs/model.txt" "$TFCTL" run "$work/graphs/mod"
offered "$work/graphs/model.capnp" "$TFCTL" submit --token-file "$work/graphs/model.c"
offered "" "$TFCTL" version ""
# `tfctl help COMMAND` completes the command, and nothing after it.
offered "train" "$TFCTL" help tr
offered "" "$TFCTL" help train ""
offered "--self" "$TFCTL" health --se

# Every command docs/cli.md's synopsis names is offered.
all=" $(offers "$TFCTL" "") "
missing=""
documented=0
for c in $(sed -nE 's/^tfctl ([a-z]+).*/\1/p' "$SRC/docs/cli.md" | sort -u); do
  documented=$((documented + 1))
  [[ $all == *" $c "* ]] || missing+=" $c"
done
if [[ -z $missing && $documented -ge 10 ]]; then
  pass "every command of docs/cli.md's synopsis is offered ($documented)"
else
  fail "every command of docs/cli.md's synopsis is offered (missing:$missing; offered:$all)"
fi

tap_done
