// Everything pollux offers, in one include: one header per layer, lowest
// first. A program that needs less includes only its layers' headers
// (pollux/future.hpp, pollux/sync.hpp, ...), and compiles faster for it.
// Files, processes and TLS are apart, each its own include, so that a
// program without them does not compile <filesystem> and the rest:
// pollux/fs.hpp, pollux/process.hpp, and pollux/tls.hpp (link pollux-tls).
#pragma once

/// \namespace pollux
/// Everything pollux offers: the core types, the future combinators, tasks,
/// executors, timers, sockets, the sync primitives and the runtime.
/// \namespace pollux::fs
/// Files and directories without blocking a worker: File, OpenOptions, read, write, read_dir, ...
/// \namespace pollux::process
/// Child processes: Command, Child, their pipes, output() and status().
/// \namespace pollux::tls
/// TLS over OpenSSL 3 for any byte stream (pollux/tls.hpp, the pollux-tls library).
/// \namespace pollux::stream
/// The types that stream functions return (`pollux::iter` returns a
/// `stream::Iter`, `pollux::map` on a stream a `stream::Map`, ...).
/// \namespace pollux::mpsc
/// Multi-producer, single-consumer channels, bounded and unbounded.
/// \namespace pollux::broadcast
/// A channel whose every receiver sees every value.
/// \namespace pollux::watch
/// A channel that keeps the latest value only.
/// \namespace pollux::signal
/// Unix signals as streams and futures.
/// \namespace pollux::coop
/// The cooperative budget: how much a task may do in one poll.

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/core.hpp"
#include "pollux/task.hpp"
#include "pollux/future.hpp"
#include "pollux/stream.hpp"
#include "pollux/sink.hpp"
#include "pollux/sync.hpp"
#include "pollux/exec.hpp"
#include "pollux/time.hpp"
#include "pollux/io.hpp"
#include "pollux/codec.hpp"
#include "pollux/driver.hpp"
#include "pollux/runtime.hpp"
