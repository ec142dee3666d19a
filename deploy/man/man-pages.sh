#!/usr/bin/env bash
# Writes tfd.1 and tfctl.1 into OUTDIR from the binaries' own help, with
# help2man, so the pages never disagree with the flags they describe.
# tfctl's page also holds every command's `--help` (its options with their
# descriptions), in a COMMANDS section.
#
#   man-pages.sh HELP2MAN TFD TFCTL OUTDIR DOCDIR
set -euo pipefail
help2man=$1 tfd=$2 tfctl=$3 out=$4 docdir=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# roff text: a backslash is \e, and a line may not start with . or '.
roff() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

see_also="[SEE ALSO]
The full reference is cli.md, and running tfd on hosts, systemd, Slurm and
Kubernetes operations.md, both in $docdir."

{
  echo "[ENVIRONMENT]"
  echo "Every flag is also a variable: TFD_ and the flag's name in capitals, - as _"
  echo "(--max-connections is TFD_MAX_CONNECTIONS). TF_CONFIG gives the cluster, job and task."
  echo "$see_also"
} >"$work/tfd.h2m"
"$help2man" --no-info --section 1 --name "one task of a tfd cluster (parameter server or worker)" \
  --include "$work/tfd.h2m" --output "$out/tfd.1" "$tfd"

{
  echo "[COMMANDS]"
  "$tfctl" --help | sed -n 's/^  tfctl \([a-z]*\) .*/\1/p' | while read -r command; do
    echo ".SS $command"
    echo ".nf"
    "$tfctl" "$command" --help | roff
    echo ".fi"
  done
  echo "[ENVIRONMENT]"
  echo "TF_CONFIG names the task to talk to when --target is absent;"
  echo "TFD_AUTH_TOKEN_FILE the token file when --token-file is."
  echo "$see_also"
} >"$work/tfctl.h2m"
"$help2man" --no-info --section 1 --name "graph tools, in-process runs and cluster control for tfd" \
  --include "$work/tfctl.h2m" --output "$out/tfctl.1" "$tfctl"
