#!/usr/bin/env bash
# The chat fan-out load: starts examples/chat_server (current thread) on a
# port the kernel picks, runs bench_chat_load against it (20 clients,
# ROUNDS rounds, every line to every other client), prints its JSON line,
# and stops the server with SIGTERM (it must exit cleanly).
#   bench/chat_bench.sh BUILD_DIR [ROUNDS=2000]
set -euo pipefail
build=$1 rounds=${2:-2000}
dir=$build/examples
log=$(mktemp)
"$dir/chat_server" 127.0.0.1:0 ct 300 >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 200); do grep -q "listening on" "$log" && break; sleep 0.05; done
addr=$(grep -o "127\.0\.0\.1:[0-9]*" "$log" | head -1)
"$build/bench/bench_chat_load" "$addr" "$rounds"
kill -TERM $server
wait $server
