#!/usr/bin/env bash
# Compiles each common mistake in tests/tools/diagnostics/ with g++ and clang++
# and checks what the user is told: the compile fails, the first error
# line names the mistake (the `// expect:` regex on the file's first line),
# and the whole diagnostic stays under 40 lines. Prints a table: mistake,
# compiler, lines, first error line. Fails if any row does not hold.
#   tests/tools/diagnostics.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
limit=40
failed=0
rows=0
printf '%-28s %-8s %5s  %s\n' mistake compiler lines "first error"
for src in "$root"/tests/tools/diagnostics/*.cpp; do
  name=$(basename "$src" .cpp)
  expect=$(head -1 "$src" | sed -n 's|^// expect: ||p')
  if [ -z "$expect" ]; then
    echo "tests/tools/diagnostics.sh: $name has no '// expect:' line"; failed=$((failed + 1)); continue
  fi
  for cxx in g++ clang++; do
    rows=$((rows + 1))
    if out=$("$cxx" -std=c++20 -Wall -Wextra -Werror -fsyntax-only -I"$root/include" "$src" 2>&1); then
      printf '%-28s %-8s %5s  %s\n' "$name" "$cxx" 0 "COMPILED: the mistake went unnoticed"; failed=$((failed + 1)); continue
    fi
    lines=$(printf '%s\n' "$out" | wc -l)
    first=$(printf '%s\n' "$out" | grep -m1 -E 'error' | sed -E 's|^.*(error: )|\1|')
    verdict=""
    if ! printf '%s' "$first" | grep -qE "$expect"; then verdict=" [FAIL: expected /$expect/]"; fi
    if [ "$lines" -ge "$limit" ]; then verdict="$verdict [FAIL: $limit lines or more]"; fi
    [ -n "$verdict" ] && failed=$((failed + 1))
    printf '%-28s %-8s %5s  %.150s%s\n' "$name" "$cxx" "$lines" "$first" "$verdict"
  done
done
if [ $failed -ne 0 ]; then
  echo "tests/tools/diagnostics.sh: $failed of $rows diagnostics do not hold"
  exit 1
fi
echo "tests/tools/diagnostics.sh: all $rows diagnostics name the mistake in under $limit lines"
