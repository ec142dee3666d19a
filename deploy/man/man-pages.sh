#!/usr/bin/env bash
# Writes a man page into OUTDIR, each from its binary, so the pages never
# disagree with the flags they describe:
#   tfd.1 from `tfd --help=man`, which tfd makes from its table of flags
#   (daemon/tfd_flags.cc);
#   tfctl.1 with help2man from `tfctl --help`, with every command's `--help`
#   (its options with their descriptions) in a COMMANDS section.
# Both end with a SEE ALSO naming DOCDIR, where the reference is installed.
#
#   man-pages.sh tfd TFD OUTDIR DOCDIR
#   man-pages.sh tfctl HELP2MAN TFCTL OUTDIR DOCDIR
set -euo pipefail
page=$1
shift

see_also() {
  echo "The full reference is cli.md, and running tfd on hosts, systemd, Slurm and"
  echo "Kubernetes operations.md, both in $1."
}

if [[ $page == tfd ]]; then
  tfd=$1 out=$2 docdir=$3
  {
    "$tfd" --help=man
    echo ".SH SEE ALSO"
    see_also "$docdir"
  } >"$out/tfd.1.tmp"
  mv "$out/tfd.1.tmp" "$out/tfd.1"
  exit 0
fi

help2man=$1 tfctl=$2 out=$3 docdir=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# roff text: a backslash is \e, and a line may not start with . or '.
roff() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

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
  echo "[SEE ALSO]"
  see_also "$docdir"
} >"$work/tfctl.h2m"
"$help2man" --no-info --section 1 --name "graph tools, in-process runs and cluster control for tfd" \
  --include "$work/tfctl.h2m" --output "$out/tfctl.1" "$tfctl"
