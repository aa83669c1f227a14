// SessionCache: a client's last session per server name, offered at the
// next connect to the same name so the handshake resumes (one round trip
// and no certificate check). Bounded; guarded by a mutex, as connectors are
// shared between threads.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <cstddef>
#include <string>
#include <unordered_map>

#include "pollux/core/detail/concurrency.hpp"

struct ssl_session_st;

namespace pollux::tls::detail {

class SessionCache {
 public:
  /// The most server names remembered; past it, one is forgotten.
  static constexpr std::size_t kMaxServers = 1024;

  SessionCache() = default;
  ~SessionCache();
  SessionCache(const SessionCache&) = delete;
  SessionCache& operator=(const SessionCache&) = delete;

  /// Keeps `session` (its reference is ours now) as `name`'s latest.
  void store(const std::string& name, ssl_session_st* session);
  /// `name`'s latest session with a reference for the caller, or null.
  ssl_session_st* take_ref(const std::string& name);

 private:
  pollux::detail::Mutex mutex_;
  std::unordered_map<std::string, ssl_session_st*> sessions_ POLLUX_GUARDED_BY(mutex_);
};

}  // namespace pollux::tls::detail
