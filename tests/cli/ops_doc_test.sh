#!/usr/bin/env bash
# docs/ops.md is generated from the op registry; this fails when it is stale.
#   TFCTL=build/cli/tfctl SRC_ROOT=. bash tests/cli/ops_doc_test.sh
set -u
TFCTL=${TFCTL:?set TFCTL to the tfctl binary}
SRC=${SRC_ROOT:?set SRC_ROOT to the source tree}
if diff -u "$SRC/docs/ops.md" <("$TFCTL" ops --output markdown); then
  echo "docs/ops.md matches the op registry"
else
  echo "docs/ops.md is out of date: regenerate it with"
  echo "  $TFCTL ops --output markdown > docs/ops.md"
  exit 1
fi
