// An interrupt handler feeds a task through a channel: CMSDK timer 0
// interrupts every 2 ms, and its handler try_sends a sample into a
// StaticChannel (8 slots inside it: no heap; the send never waits, and
// the receiver's wake runs after the channel's critical section). The
// consumer task awaits recv() until 20 samples came, checking that each
// arrived once and in order; exits 0 then.
#include <cstdint>
#include <optional>

#include <pollux/embedded/executor.hpp>
#include <pollux/sync/static_channel.hpp>

#include "board.hpp"

namespace {

constexpr std::uint32_t kSamples = 20;

pollux::StaticChannel<std::uint32_t, 8> samples;
std::uint32_t next_sample = 1;
std::uint32_t dropped = 0;  // written by the handler only

void on_timer0() noexcept {
  if (next_sample > kSamples) return;
  if (samples.try_send(next_sample)) {
    ++next_sample;
  } else {
    ++dropped;  // full: the consumer fell 8 samples behind
  }
}

// Receives until kSamples came; keeps their sum and their order.
class Consumer {
 public:
  using Output = void;

  pollux::Poll<void> poll(pollux::Context& cx) {
    while (received < kSamples) {
      if (!recv_) recv_.emplace(samples.recv());
      auto sample = recv_->poll(cx);
      if (sample.is_pending()) return pollux::pending;
      recv_.reset();
      if (*sample.value() != received + 1) in_order = false;
      received = *sample.value();
      sum += received;
    }
    return pollux::ready();
  }

  static inline std::uint32_t received = 0;
  static inline std::uint32_t sum = 0;
  static inline bool in_order = true;

 private:
  std::optional<pollux::StaticChannel<std::uint32_t, 8>::Recv> recv_;
};

constinit pollux::StaticTask<Consumer> consumer;

}  // namespace

int main() {
  pollux::SingleCoreExecutor executor;
  if (!executor.spawn(consumer, Consumer{})) return 2;
  mps2::start_timer0(2000, &on_timer0);
  executor.run();
  mps2::stop_timer0();
  pollux::board::write("irq_channel: ");
  mps2::write_number(Consumer::received);
  pollux::board::write(" samples from the interrupt through a StaticChannel, sum ");
  mps2::write_number(Consumer::sum);
  pollux::board::write(", dropped ");
  mps2::write_number(dropped);
  pollux::board::write("\n");
  return Consumer::sum == kSamples * (kSamples + 1) / 2 && Consumer::in_order && dropped == 0 ? 0 : 1;
}
