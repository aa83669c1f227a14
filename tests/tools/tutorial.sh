#!/usr/bin/env bash
# Compiles and runs every ```cpp block of docs/tutorial.md as a program of
# its own, against the library built in BUILD_DIR (built there, library
# only, if it is not yet), so the tutorial cannot fall out of date.
#   tests/tools/tutorial.sh [BUILD_DIR]   (default build/tutorial)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/tutorial}
if [ ! -f "$build/libpollux.a" ]; then
  [ -f "$build/build.ninja" ] || meson setup "$build" "$root" -Dtests=false -Dexamples=false >/dev/null
  ninja -C "$build" libpollux.a >/dev/null
fi
work=$build/tutorial-programs
rm -rf "$work"
mkdir -p "$work"
python3 - "$root/docs/tutorial.md" "$work" <<'PY'
import sys
text = open(sys.argv[1]).read().split('\n')
n, block = 0, None
for line in text:
    if block is None and line.strip() == '```cpp':
        block = []
    elif block is not None and line.strip() == '```':
        n += 1
        open(f'{sys.argv[2]}/program{n:02}.cpp', 'w').write('\n'.join(block) + '\n')
        block = None
    elif block is not None:
        block.append(line)
if n == 0:
    sys.exit('tutorial.sh: no ```cpp block found')
PY
count=0
for src in "$work"/program*.cpp; do
  exe=${src%.cpp}
  name=$(basename "$exe")
  if ! c++ -std=c++20 -Wall -Wextra -Werror -pthread -I"$root/include" "$src" "$build/libpollux.a" -luring -o "$exe" 2>"$exe.log"; then
    echo "tutorial: $name (block $((10#${name#program})) of docs/tutorial.md) does not compile:"; head -30 "$exe.log"; exit 1
  fi
  if ! timeout 60 "$exe" >"$exe.out" 2>&1; then
    echo "tutorial: $name (block $((10#${name#program}))) failed:"; cat "$exe.out"; exit 1
  fi
  count=$((count + 1))
done
echo "tutorial: all $count programs of docs/tutorial.md compiled and ran"
