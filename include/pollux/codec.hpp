// pollux/codec.hpp: Codecs: Decoder/Encoder, the lines, length-delimited and bytes codecs,
// and Framed, FramedRead and FramedWrite over any byte stream.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include "pollux/codec/bytes_codec.hpp"
#include "pollux/codec/decoder.hpp"
#include "pollux/codec/encoder.hpp"
#include "pollux/codec/frame_error.hpp"
#include "pollux/codec/framed.hpp"
#include "pollux/codec/framed_parts.hpp"
#include "pollux/codec/framed_read.hpp"
#include "pollux/codec/framed_write.hpp"
#include "pollux/codec/length_delimited_codec.hpp"
#include "pollux/codec/lines_codec.hpp"
#include "pollux/codec/udp_framed.hpp"
