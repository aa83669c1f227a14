#!/usr/bin/env bash
# Fails if an embedded image references the heap or exceptions: malloc,
# free, realloc, calloc, operator new or delete, or __cxa_allocate_exception
# (defined or undefined, in any form the linker kept). Writes `out` when clean.
#   tests/tools/no_heap.sh <nm> <image.elf> <out>
set -euo pipefail
nm=$1 image=$2 out=$3
found=$("$nm" "$image" | awk '{print $NF}' \
  | grep -E '^(_?malloc(_r)?|_?free(_r)?|_?realloc(_r)?|_?calloc(_r)?|_Zn[wa][jm](St11align_val_t)?(RKSt9nothrow_t)?|_Zd[la]Pv.*|__cxa_allocate_exception)$' || true)
if [ -n "$found" ]; then
  echo "no_heap: $image references the heap, which the embedded profile does not have:" >&2
  echo "$found" | sed 's/^/  /' >&2
  exit 1
fi
echo "no heap in $image" >"$out"
