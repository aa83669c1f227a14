#!/usr/bin/env bash
# console_attached.sh CONSOLE SERVER [ARGS...]
#
# Runs SERVER [ARGS...] with POLLUX_CONSOLE=CONSOLE while pollux-console
# (next to this build's examples: $POLLUX_CONSOLE_BIN), refreshing, takes
# a snapshot ten times a second for as long as the server lives. The
# server replaces this script (exec), so that bench/server_cpu.sh reads
# the server's own CPU time; the snapshots are the console's work in the
# server, the console program's own CPU is not.
# scripts/bench-metrics runs the servers with and without it.
set -uo pipefail
console=$1
shift
server_pid=$$
(
  # One refreshing console, as a user runs it; until the server has bound
  # its socket the console cannot attach and exits, so it is started again.
  while kill -0 "$server_pid" 2>/dev/null; do
    "$POLLUX_CONSOLE_BIN" "$console" --interval=0.1 >/dev/null 2>&1
    sleep 0.1
  done
) &
POLLUX_CONSOLE=$console exec "$@"
