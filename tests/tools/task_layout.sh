#!/usr/bin/env bash
# A program built with the other choice of per-task figures than its
# library (POLLUX_TASK_METRICS, the -Dtask_metrics option) must fail to
# link, naming the layout it expected, instead of reading one task layout
# as the other; built with the library's own choice, it links and runs.
#   tests/tools/task_layout.sh CXX INCLUDE_DIR LIBPOLLUX_A LIBRARY_TASK_METRICS(0|1)
set -uo pipefail
cxx=$1 include=$2 lib=$3 ours=$4
other=$((1 - ours))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/spawns.cpp" <<'CPP'
#include <pollux/pollux.hpp>
int main() {
  pollux::LocalExecutor ex;
  auto handle = ex.spawn(pollux::ready_future(7));
  return ex.block_on(std::move(handle)).value() == 7 ? 0 : 1;
}
CPP
build() { "$cxx" -std=c++20 -O1 -DPOLLUX_TASK_METRICS="$1" -I"$include" "$work/spawns.cpp" "$lib" -luring -pthread -o "$work/spawns" 2>&1; }

if ! out=$(build "$ours"); then
  echo "built with the library's own choice ($ours), it does not link:"; echo "$out"; exit 1
fi
"$work/spawns" || { echo "built with the library's own choice ($ours), it runs wrong"; exit 1; }
if out=$(build "$other"); then
  echo "built with POLLUX_TASK_METRICS=$other against a library built with $ours, it linked: a task would be misread"
  exit 1
fi
expected=$([ "$other" = 1 ] && echo tasks_carry_stats || echo tasks_carry_no_stats)
if ! grep -q "undefined reference to .pollux::detail::$expected" <<<"$out"; then
  echo "the mismatch failed to link, but without naming $expected:"; echo "$out" | head -5; exit 1
fi
echo "task_layout: the library's choice ($ours) links and runs; the other ($other) fails to link, naming $expected"
