#!/usr/bin/env bash
# server_cpu.sh OUT SERVER [ARGS...]
#
# Runs SERVER [ARGS...] and, when this script gets SIGTERM or SIGINT (as
# ../shared/peers/echo_bench.sh and http_bench.sh send when the load is
# over), writes the server's user and system CPU time so far, read from
# /proc/PID/stat (all its threads), and the voluntary context switches of
# all its threads (/proc/PID/task/*/status), to OUT as JSON, then stops the
# server.
# scripts/bench wraps every server, pollux's and the peers', in it, to
# report CPU per round trip where loopback TCP hides the library's share.
set -uo pipefail
out=$1
shift
"$@" &
pid=$!
report() {
  if [ -r "/proc/$pid/stat" ]; then
    # Fields after the command name (which may hold spaces): utime is the
    # 12th, stime the 13th of them, in clock ticks.
    rest=$(sed 's/^.*) //' "/proc/$pid/stat")
    read -r -a f <<<"$rest"
    vcsw=$(cat /proc/"$pid"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }')
    awk -v u="${f[11]}" -v s="${f[12]}" -v hz="$(getconf CLK_TCK)" -v v="$vcsw" \
      'BEGIN { printf "{\"user_cpu_s\": %.3f, \"sys_cpu_s\": %.3f, \"voluntary_switches\": %d}\n", u / hz, s / hz, v }' >"$out"
  fi
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  exit 0
}
trap report TERM INT
wait "$pid"
