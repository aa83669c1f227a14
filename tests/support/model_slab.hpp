// What the model build's slab (model_slab.cpp) tells a model test.
#pragma once

#include <cstddef>

/// Slab blocks allocated and not yet given back, by every thread.
std::size_t model_live_blocks() noexcept;
