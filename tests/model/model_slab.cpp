// The slab in a model build: every block comes from operator new, and a
// block given back is marked freed and released only after the execution
// (model::free_later), so that the checker reports an atomic operation on a
// freed channel or node instead of letting a new allocation reuse it.
// model_live_blocks() says how many blocks are out, for leak checks.
#include "model_slab.hpp"

#include <new>

#include "model.hpp"
#include "pollux/core/slab.hpp"

namespace {
std::size_t live = 0;

void release(void* block) { ::operator delete (block, std::align_val_t{pollux::detail::kSlabAlign}); }
}  // namespace

namespace pollux::detail {

void* slab_allocate(std::size_t size) {
  void* block = ::operator new (size, std::align_val_t{kSlabAlign});
  ++live;
  return block;
}

void slab_deallocate(void* block, std::size_t size) noexcept {
  --live;
  model::free_later(block, size, &release);
}

std::size_t slab_chunks() noexcept { return 0; }

}  // namespace pollux::detail

std::size_t model_live_blocks() noexcept { return live; }
