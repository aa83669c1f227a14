// pollux/fs.hpp: files and directories without blocking a worker: File
// (an AsyncRead/AsyncWrite with positional I/O), OpenOptions, the
// whole-file and path operations, and read_dir as a stream.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/fs/file.hpp"
#include "pollux/fs/metadata.hpp"
#include "pollux/fs/open_options.hpp"
#include "pollux/fs/operations.hpp"
#include "pollux/fs/read_dir.hpp"
