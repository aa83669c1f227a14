#!/usr/bin/env bash
# The folders of include/pollux are layers, and a header includes only its
# own layer and the layers below it: no arrow points up. The ranks, lowest
# first (future/, stream/ and sink/ are one layer in three folders):
#   core < task < future = stream = sink < sync < exec < time < io < codec < driver < runtime
# Prints each folder's includes, and every include that points up or sideways.
#   tests/layers.sh INCLUDE_DIR
set -uo pipefail
inc=$1/pollux
declare -A rank=([core]=0 [task]=1 [future]=2 [stream]=2 [sink]=2 [sync]=3 [exec]=4 [time]=5 [io]=6 [codec]=7 [driver]=8 [runtime]=9)
bad=0
for dir in "$inc"/*/; do
  layer=$(basename "$dir")
  if [ -z "${rank[$layer]+x}" ]; then
    echo "FAIL: include/pollux/$layer/ has no rank in tests/layers.sh: place it among the layers"; bad=1; continue
  fi
  used=$(grep -rhoE '#include "pollux/[a-z_]+/' "$dir" | sed -E 's#.*pollux/([a-z_]+)/#\1#' | sort -u | grep -vx "$layer" | tr '\n' ' ')
  echo "$layer -> $used"
  for other in $used; do
    if [ -z "${rank[$other]+x}" ] || [ "${rank[$other]}" -gt "${rank[$layer]}" ] ||
       { [ "${rank[$other]}" -eq "${rank[$layer]}" ] && ! { [ "$layer" = future ] || [ "$layer" = stream ] || [ "$layer" = sink ]; }; }; then
      echo "FAIL: $layer/ includes $other/, which is not below it:"
      grep -rnE "#include \"pollux/$other/" "$dir" | sed "s#^$inc/#  include/pollux/#"
      bad=1
    fi
  done
done
[ $bad -eq 0 ] && echo "no include points up a layer"
exit $bad
