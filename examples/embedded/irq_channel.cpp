// An interrupt handler feeds a task: CMSDK timer 0 interrupts every 2 ms,
// its handler puts a sample into a fixed ring and wakes the consumer
// through an AtomicWaker (no lock, no heap); the consumer task registers
// its waker, drains the ring, and looks again before it waits. Ends after 20 samples, checking that
// every one arrived, once and in order; exits 0 then.
#include <cstdint>

#include <pollux/embedded/executor.hpp>
#include <pollux/core/atomic_waker.hpp>

#include "board.hpp"

namespace {

constexpr std::uint32_t kSamples = 20;

// A single-producer (the interrupt), single-consumer (the task) ring: the
// handler writes `head`, the task writes `tail`; each is a 32-bit word,
// which the core reads and writes in one instruction.
struct Ring {
  std::uint32_t slots[8] = {};
  volatile std::uint32_t head = 0;
  volatile std::uint32_t tail = 0;
  volatile std::uint32_t dropped = 0;
};

Ring ring;
pollux::AtomicWaker consumer_waker;
std::uint32_t next_sample = 1;

void on_timer0() noexcept {
  if (next_sample > kSamples) return;
  if (ring.head - ring.tail == 8) {
    ring.dropped = ring.dropped + 1;
    return;
  }
  ring.slots[ring.head % 8] = next_sample++;
  ring.head = ring.head + 1;
  consumer_waker.wake_by_ref();
}

// Waits for samples until kSamples came; keeps their sum and their order.
class Consumer {
 public:
  using Output = void;

  pollux::Poll<void> poll(pollux::Context& cx) {
    // Registered before the look at the ring: a sample that lands after
    // the look wakes this waker, so none waits unseen.
    consumer_waker.register_waker(cx.waker());
    while (ring.tail != ring.head) {
      std::uint32_t sample = ring.slots[ring.tail % 8];
      ring.tail = ring.tail + 1;
      if (sample != received + 1) in_order = false;
      received = sample;
      sum += sample;
    }
    return received == kSamples ? pollux::ready() : pollux::Poll<void>(pollux::pending);
  }

  static inline std::uint32_t received = 0;
  static inline std::uint32_t sum = 0;
  static inline bool in_order = true;
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
  pollux::board::write(" samples from the interrupt, sum ");
  mps2::write_number(Consumer::sum);
  pollux::board::write(", dropped ");
  mps2::write_number(ring.dropped);
  pollux::board::write("\n");
  return Consumer::sum == kSamples * (kSamples + 1) / 2 && Consumer::in_order && ring.dropped == 0 ? 0 : 1;
}
