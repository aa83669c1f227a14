#!/usr/bin/env bash
# The folders of include/pollux and of src are layers, and each knows only
# its own layer and the layers below it: no arrow points up. The ranks,
# lowest first (future/, stream/ and sink/ are one layer in three folders):
#   core < task < future = stream = sink < sync < exec < time < io < codec < tls < driver < runtime < fs < process < interop
# Three kinds of arrow are checked:
#   1. a header's includes (include/pollux/<layer>/);
#   2. a source file's includes, of public headers and of another layer's
#      private ones (src/<layer>/, "../<other>/...");
#   3. the link: a symbol that an object of src/<layer>/ uses must be
#      defined by an object of its own layer or one below (an arrow that
#      hides behind a declaration in a low header, defined high up).
# Prints each folder's arrows, and every one that points up or sideways.
#   tests/tools/layers.sh SOURCE_ROOT [LIBRARY]      (LIBRARY: libpollux.a, for 3)
set -uo pipefail
root=$1
lib=${2:-}
declare -A rank=([core]=0 [task]=1 [future]=2 [stream]=2 [sink]=2 [sync]=3 [exec]=4 [time]=5 [io]=6 [codec]=7 [tls]=8 [driver]=9 [runtime]=10 [fs]=11 [process]=12 [interop]=13 [embedded]=14)
bad=0

# points_up LAYER OTHER: whether an arrow LAYER -> OTHER breaks the order.
points_up() {
  local layer=$1 other=$2
  [ -z "${rank[$other]+x}" ] && return 0
  [ "${rank[$other]}" -gt "${rank[$layer]}" ] && return 0
  if [ "${rank[$other]}" -eq "${rank[$layer]}" ] && [ "$other" != "$layer" ]; then
    case $layer in future | stream | sink) return 1 ;; *) return 0 ;; esac
  fi
  return 1
}

# check_includes KIND DIR PATTERN: the layers that the files under DIR name
# with includes matching PATTERN (an extended regex that ends with the
# layer's folder: "pollux/io/").
check_includes() {
  local kind=$1 top=$2 pattern=$3
  for dir in "$top"/*/; do
    local layer
    layer=$(basename "$dir")
    if [ -z "${rank[$layer]+x}" ]; then
      echo "FAIL: $kind/$layer/ has no rank in tests/tools/layers.sh: place it among the layers"; bad=1; continue
    fi
    local used
    used=$(grep -rhoE "$pattern" "$dir" | sed -E 's#.*/([a-z_]+)/$#\1#' | sort -u | grep -vx "$layer" | tr '\n' ' ')
    echo "$kind $layer -> $used"
    for other in $used; do
      if points_up "$layer" "$other"; then
        echo "FAIL: $kind/$layer/ includes $other/, which is not below it:"
        grep -rnE "#include \"(pollux|\.\.)/$other/" "$dir" | sed "s#^$root/##; s#^#  #"
        bad=1
      fi
    done
  done
}

check_includes include "$root/include/pollux" '#include "pollux/([a-z_]+)/'
check_includes src "$root/src" '#include "(pollux|\.\.)/([a-z_]+)/'

if [ -n "$lib" ]; then
  # Objects are named after their source: src_<layer>_<file>.cpp.o. A strong
  # definition (T, D, B, R) names the layer that owns a symbol; inline and
  # template code (W, V, u) is defined in every object that uses it, so it
  # draws no arrow.
  arrows=$(nm -A -g "$lib" 2>/dev/null | awk -F'[ \t]+' -v ranks="$(for l in "${!rank[@]}"; do printf '%s=%s ' "$l" "${rank[$l]}"; done)" '
    BEGIN { n = split(ranks, pairs, " "); for (i = 1; i <= n; i++) { split(pairs[i], kv, "="); rank[kv[1]] = kv[2] } }
    {
      split($1, where, ":"); object = where[2]
      if (object !~ /^src_/) next
      layer = object; sub(/^src_/, "", layer); sub(/_.*/, "", layer)
      type = $(NF - 1); symbol = $NF
      if (type ~ /^[TDBR]$/) owner[symbol] = layer
      else if (type == "U") { uses[++count] = layer " " symbol " " object }
    }
    END {
      for (i = 1; i <= count; i++) {
        split(uses[i], u, " ")
        if (!(u[2] in owner)) continue
        o = owner[u[2]]
        if (o == u[1]) continue
        same = rank[o] == rank[u[1]]
        if (rank[o] > rank[u[1]] || (same && !(u[1] ~ /^(future|stream|sink)$/))) print u[1], o, u[2], u[3]
        else print u[1], o, "-", "-"
      }
    }')
  for layer in core task future stream sink sync exec time io codec driver runtime; do
    used=$(awk -v l="$layer" '$1 == l { print $2 }' <<<"$arrows" | sort -u | tr '\n' ' ')
    [ -n "$used" ] && echo "link $layer -> $used"
  done
  up=$(awk '$3 != "-"' <<<"$arrows")
  if [ -n "$up" ]; then
    echo "FAIL: objects use symbols defined by a layer that is not below theirs:"
    while read -r layer owner symbol object; do
      echo "  $object ($layer/) uses $(c++filt "$symbol"), defined in $owner/"
    done <<<"$up"
    bad=1
  fi
  [ -z "$arrows" ] && { echo "FAIL: no arrow read from $lib: is it the library, with objects named src_<layer>_*.o?"; bad=1; }
fi

[ $bad -eq 0 ] && echo "no arrow points up a layer"
exit $bad
