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
# Where perf can read the raw_syscalls:sys_enter tracepoint, it also counts
# the server's system calls (all its threads, from 0.5 s after the start,
# when a runtime's workers exist) and adds them as "syscalls", with the
# seconds they were counted over as "syscall_window_s".
set -uo pipefail
out=$1
shift
"$@" &
pid=$!
perf_pid=
perf_start=0
if command -v perf >/dev/null 2>&1; then
  sleep 0.5
  perf_start=$(date +%s.%N)
  perf stat -e raw_syscalls:sys_enter -x, -p "$pid" -o "$out.syscalls" 2>/dev/null &
  perf_pid=$!
fi
report() {
  syscalls=-1
  window=0
  if [ -n "$perf_pid" ]; then
    window=$(awk -v a="$perf_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
    kill -INT "$perf_pid" 2>/dev/null
    wait "$perf_pid" 2>/dev/null
    count=$(awk -F, '/raw_syscalls:sys_enter/ { print $1 }' "$out.syscalls" 2>/dev/null)
    case $count in '' | *[!0-9]*) ;; *) syscalls=$count ;; esac
    rm -f "$out.syscalls"
  fi
  if [ -r "/proc/$pid/stat" ]; then
    # Fields after the command name (which may hold spaces): utime is the
    # 12th, stime the 13th of them, in clock ticks.
    rest=$(sed 's/^.*) //' "/proc/$pid/stat")
    read -r -a f <<<"$rest"
    vcsw=$(cat /proc/"$pid"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }')
    awk -v u="${f[11]}" -v s="${f[12]}" -v hz="$(getconf CLK_TCK)" -v v="$vcsw" -v c="$syscalls" -v w="$window" \
      'BEGIN { printf "{\"user_cpu_s\": %.3f, \"sys_cpu_s\": %.3f, \"voluntary_switches\": %d, \"syscalls\": %d, \"syscall_window_s\": %s}\n", u / hz, s / hz, v, c, w }' >"$out"
  fi
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  exit 0
}
trap report TERM INT
wait "$pid"
