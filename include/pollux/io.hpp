// pollux/io.hpp: I/O: the AsyncRead/AsyncWrite traits and their helpers (read_exact,
// write_all, copy, BufReader, ...), and the sockets: TCP, UDP, Unix.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/io/async_fd.hpp"
#include "pollux/io/async_io.hpp"
#include "pollux/io/buf_reader.hpp"
#include "pollux/io/buf_writer.hpp"
#include "pollux/io/bytes_buf.hpp"
#include "pollux/io/copy.hpp"
#include "pollux/io/copy_bidirectional.hpp"
#include "pollux/io/flush.hpp"
#include "pollux/io/interest.hpp"
#include "pollux/io/io_error.hpp"
#include "pollux/io/io_future.hpp"
#include "pollux/io/lines.hpp"
#include "pollux/io/read.hpp"
#include "pollux/io/read_buf.hpp"
#include "pollux/io/read_exact.hpp"
#include "pollux/io/read_to_end.hpp"
#include "pollux/io/read_until.hpp"
#include "pollux/io/reader_stream.hpp"
#include "pollux/io/socket_addr.hpp"
#include "pollux/io/socket_operations.hpp"
#include "pollux/io/stream_reader.hpp"
#include "pollux/io/tcp_listener.hpp"
#include "pollux/io/tcp_split.hpp"
#include "pollux/io/tcp_stream.hpp"
#include "pollux/io/udp_socket.hpp"
#include "pollux/io/unix_socket.hpp"
#include "pollux/io/write.hpp"
#include "pollux/io/write_all.hpp"
