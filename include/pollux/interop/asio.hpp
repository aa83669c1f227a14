// pollux::use_future: an Asio completion token that makes any Asio
// initiating function return a pollux future of its result, a Result of
// the operation's values with Asio's error_code as the error:
//   auto n = co_await sock.async_read_some(buffer, pollux::use_future);   // in a Coro
//   auto n = rt.block_on(sock.async_read_some(buffer, pollux::use_future));
// The future is lazy (the operation starts at its first poll, rule 1). Its
// state is shared with the handler, so a completion that comes after the
// future went away touches nothing freed (rule 5). Destroying a started
// future cancels the operation through its cancellation slot
// (cancellation_type::all), on the operation's executor, since Asio's
// signals are not thread-safe. The io_context runs where the program runs
// it (a thread of its own calling run()). Needs Asio (Debian: libasio-dev);
// pollux's library never includes this header.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/cancellation_type.hpp>
#include <asio/error_code.hpp>
#include <asio/post.hpp>

#include <cstddef>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "pollux/core/atomic_waker.hpp"
#include "pollux/core/context.hpp"
#include "pollux/core/detail/concurrency.hpp"
#include "pollux/core/detail/contract.hpp"
#include "pollux/core/poll.hpp"
#include "pollux/core/result.hpp"
#include "pollux/core/slab.hpp"
#include "pollux/core/wake.hpp"

namespace pollux {

/// The type of use_future, the completion token.
struct UseFuture {
  constexpr UseFuture() noexcept = default;
};

/// Passed where an Asio initiating function takes its handler, makes it
/// return a future of the operation's Result (see AsioOperation).
inline constexpr UseFuture use_future{};

namespace detail {

// The value of an operation that completes with (error_code, Values...):
// none (Result<void, error_code>), one, or a tuple of them.
template <class... Values>
struct AsioValue {
  using type = std::tuple<Values...>;
};
template <class V>
struct AsioValue<V> {
  using type = V;
};
template <>
struct AsioValue<> {
  using type = void;
};

// What the future and the handler share, from pollux's slab. The handler
// writes the outcome, then publishes it with the release store of done_;
// the future reads it after the acquire load that sees done_ set.
template <class... Values>
class AsioState : public RefCounted<AsioState<Values...>> {
 public:
  using Value = typename AsioValue<Values...>::type;
  using Outcome = Result<Value, asio::error_code>;

  static void* operator new(std::size_t size) { return allocate_bytes(size, alignof(AsioState)); }
  static void operator delete(void* memory, std::size_t size) noexcept {
    deallocate_bytes(memory, size, alignof(AsioState));
  }

  // The handler's call, on whichever thread runs the completion.
  template <class... Args>
  void complete(const asio::error_code& error, Args&&... values) {
    if (error) {
      outcome_.emplace(error);
    } else if constexpr (std::is_void_v<Value>) {
      outcome_.emplace();
    } else {
      outcome_.emplace(Value(std::forward<Args>(values)...));
    }
    done_.store(true, std::memory_order_release);
    waker_.wake_by_ref();
  }

  bool done() const noexcept { return done_.load(std::memory_order_acquire); }
  Outcome take() { return std::move(*outcome_); }

  AtomicWaker waker_;
  asio::cancellation_signal signal_;  // touched on the operation's executor only

 private:
  Atomic<bool> done_{false};
  std::optional<Outcome> outcome_;
};

// The handler Asio calls. It names the state's cancellation slot, and
// pollux's slab as the allocator of Asio's own operation storage.
template <class... Values>
class AsioHandler {
 public:
  using cancellation_slot_type = asio::cancellation_slot;
  using allocator_type = SlabAllocator<std::byte>;

  explicit AsioHandler(Arc<AsioState<Values...>> state) noexcept : state_(std::move(state)) {}
  cancellation_slot_type get_cancellation_slot() const noexcept { return state_->signal_.slot(); }
  allocator_type get_allocator() const noexcept { return {}; }

  template <class... Args>
  void operator()(const asio::error_code& error, Args&&... values) {
    state_->complete(error, std::forward<Args>(values)...);
  }
  // An operation that cannot fail (asio::post, dispatch, defer): void().
  void operator()() { state_->complete(asio::error_code()); }

 private:
  Arc<AsioState<Values...>> state_;
};

// The executor an initiation names (those of Asio's I/O objects and of
// post do), where a cancellation is emitted; int where it names none.
template <class Initiation>
struct InitiationExecutor {
  using type = int;
};
template <class Initiation>
requires requires(Initiation& i) { i.get_executor(); }
struct InitiationExecutor<Initiation> {
  using type = decltype(std::declval<Initiation&>().get_executor());
};

}  // namespace detail

/// The future an Asio initiating function returns when given use_future:
/// Ready with a Result of the operation's values (none: Result<void, E>;
/// one: that value; more: a tuple) or its error_code.
///
/// Cancellation: destroyed before its first poll, nothing was started.
/// Destroyed after, with the operation still running: the operation's
/// cancellation slot is emitted with cancellation_type::all on its
/// executor (posted there); Asio then completes it with
/// operation_aborted, which nobody reads, or completes it normally if it
/// was too late to stop. Either way the shared state lives until the
/// handler has run.
template <class Initiation, class Args, class... Values>
class [[nodiscard("futures do nothing unless polled")]] AsioOperation {
 public:
  /// The operation's values, or its error_code.
  using Output = Result<typename detail::AsioValue<Values...>::type, asio::error_code>;

  /// Keeps the initiation and its arguments until the first poll.
  AsioOperation(Initiation initiation, Args args) : initiation_(std::move(initiation)), args_(std::move(args)) {}
  /// Moves one not yet polled.
  AsioOperation(AsioOperation &&) = default;
  AsioOperation& operator=(AsioOperation&&) = delete;
  /// Cancels the operation if it started and has not completed.
  ~AsioOperation() {
    if (!state_ || finished_) return;
    (void)state_->waker_.take();
    if (state_->done()) return;
    if constexpr (kHasExecutor) {
      asio::post(*executor_, [state = state_] { state->signal_.emit(asio::cancellation_type::all); });
    } else {
      state_->signal_.emit(asio::cancellation_type::all);
    }
  }

  /// Starts the operation at the first poll; Ready once its handler ran.
  Poll<Output> poll(Context & cx) {
    POLLUX_CHECK_NOT_DONE(AsioOperation, !finished_);
    if (!state_) {
      state_ = Arc<State>(new State());
      state_->waker_.register_waker(cx.waker());
      if constexpr (kHasExecutor) executor_.emplace(initiation_->get_executor());
      std::apply(
          [&](auto&&... args) {
            std::move (*initiation_)(detail::AsioHandler<Values...>(state_), std::forward<decltype(args)>(args)...);
          },
          std::move(args_));
      initiation_.reset();
    } else {
      state_->waker_.register_waker(cx.waker());
    }
    if (!state_->done()) return pending;
    finished_ = true;
    return Poll<Output>(std::in_place, state_->take());
  }

 private:
  using State = detail::AsioState<Values...>;
  static constexpr bool kHasExecutor = requires(Initiation & i) { i.get_executor(); };

  std::optional<Initiation> initiation_;
  Args args_;
  Arc<State> state_;
  std::optional<typename detail::InitiationExecutor<Initiation>::type> executor_;
  bool finished_ = false;
};

}  // namespace pollux

namespace asio {

/// Asio's customisation point: an initiating function given use_future
/// returns an AsioOperation instead of starting the operation.
template <class... Values>
struct async_result<pollux::UseFuture, void(asio::error_code, Values...)> {
  /// Makes the future; the operation starts at its first poll.
  template <class Initiation, class... InitArgs>
  static auto initiate(Initiation&& initiation, pollux::UseFuture, InitArgs&&... args) {
    using Args = std::tuple<std::decay_t<InitArgs>...>;
    return pollux::AsioOperation<std::decay_t<Initiation>, Args, std::decay_t<Values>...>(
        std::forward<Initiation>(initiation), Args(std::forward<InitArgs>(args)...));
  }
};

/// The same for an operation that cannot fail (void(): asio::post,
/// dispatch, defer): its future is Ready with a Result<void, error_code>
/// that holds no error.
template <>
struct async_result<pollux::UseFuture, void()> {
  /// Makes the future; the operation starts at its first poll.
  template <class Initiation, class... InitArgs>
  static auto initiate(Initiation&& initiation, pollux::UseFuture, InitArgs&&... args) {
    using Args = std::tuple<std::decay_t<InitArgs>...>;
    return pollux::AsioOperation<std::decay_t<Initiation>, Args>(std::forward<Initiation>(initiation),
                                                                 Args(std::forward<InitArgs>(args)...));
  }
};

}  // namespace asio
