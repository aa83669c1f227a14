#!/usr/bin/env bash
# Every atomic, mutex, condition variable and spin of the library goes
# through the vocabulary in pollux/core/detail/concurrency.hpp, which a model
# build swaps for the model checker's: one that names the standard type
# directly would be invisible to every model test. Prints each such use.
#   tests/tools/concurrency_vocabulary.sh SOURCE_ROOT
set -uo pipefail
root=$1
shim=include/pollux/core/detail/concurrency.hpp
found=$(cd "$root" && grep -rnE 'std::(atomic|atomic_flag|mutex|recursive_mutex|shared_mutex|condition_variable|condition_variable_any)\b|__builtin_ia32_pause|SYS_futex' include src |
  grep -v "^$shim:" | grep -v '^src/core/futex.cpp:' | grep -vE '^[^:]+:[0-9]+:\s*//')
if [ -n "$found" ]; then
  echo "FAIL: concurrency outside pollux/core/detail/concurrency.hpp (use Atomic, Mutex, futex_wait, spin_hint):"
  echo "$found"
  exit 1
fi
# A Mutex held through std::lock_guard or std::scoped_lock is invisible to
# Clang's thread-safety analysis: hold it with MutexLock or UniqueLock.
blind=$(cd "$root" && grep -rnE 'std::(lock_guard|scoped_lock)\b' include src | grep -vE '^[^:]+:[0-9]+:\s*//')
if [ -n "$blind" ]; then
  echo "FAIL: a lock the thread-safety analysis cannot see (use MutexLock or UniqueLock):"
  echo "$blind"
  exit 1
fi
echo "every atomic, mutex, lock, futex and spin goes through the vocabulary"
