#!/usr/bin/env bash
# The code's layout is .clang-format's: every C++ file of the library, its
# tests, examples, benchmarks and fuzz targets is as clang-format leaves it.
# Different clang-format releases lay out a few constructs differently, so
# the check runs with the release the layout was made with (Debian 12's)
# and is skipped with any other.
#   tests/tools/format.sh SOURCE_ROOT CLANG_FORMAT
set -uo pipefail
root=$1
clang_format=$2
made_with=14
version=$("$clang_format" --version | sed -nE 's/.*version ([0-9]+)\..*/\1/p')
if [ "$version" != "$made_with" ]; then
  echo "SKIP: clang-format $version here; the layout was made with clang-format $made_with"
  exit 77
fi
cd "$root" || exit 1
files=$(find include src tests examples bench fuzz -name '*.hpp' -o -name '*.cpp' | sort)
# shellcheck disable=SC2086  # the file names have no spaces
report=$("$clang_format" --dry-run --Werror $files 2>&1)
if [ -n "$report" ]; then
  head -40 <<<"$report"
  echo "FAIL: these files are not laid out as .clang-format says: run"
  echo "  clang-format -i \$(find include src tests examples bench fuzz -name '*.hpp' -o -name '*.cpp')"
  exit 1
fi
echo "$(wc -w <<<"$files") files laid out as .clang-format says"
