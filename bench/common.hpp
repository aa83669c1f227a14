// Shared helpers for pollux's side of the peer benchmarks: the same
// positional arguments, splitmix64 Rng (seed 42) and one-line JSON output
// as ../shared/peers/asio/common.hpp, so rows line up with the peers'.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace bench {

constexpr std::uint64_t kSeed = 42;
constexpr const char* kImpl = "pollux";

struct Args {
  std::vector<std::string> v;
  Args(int argc, char** argv) : v(argv + 1, argv + argc) {
    for (auto& a : v) {
      if (a == "-h" || a == "--help") {
        std::fprintf(stderr, "usage: see the comment at the top of its source file (positional: VARIANT N ...)\n");
        std::exit(0);
      }
    }
  }
  std::string str(std::size_t i, const char* def) const { return i < v.size() ? v[i] : def; }
  std::uint64_t num(std::size_t i, std::uint64_t def) const {
    if (i >= v.size()) return def;
    std::string s;
    for (char c : v[i])
      if (c != '_') s += c;
    char* end = nullptr;
    double value = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0' || value < 0) {
      std::fprintf(stderr, "argument %zu: '%s' is not a number\n", i + 1, v[i].c_str());
      std::exit(2);
    }
    return static_cast<std::uint64_t>(value);
  }
};

using Clock = std::chrono::steady_clock;
inline double secs_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// splitmix64, identical to the peers' generators.
struct Rng {
  std::uint64_t s;
  explicit Rng(std::uint64_t seed) : s(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  template <class T>
  void shuffle(std::vector<T>& v) {  // Fisher-Yates, as bench::Rng::shuffle
    for (std::size_t i = v.size(); i-- > 1;) std::swap(v[i], v[below(i + 1)]);
  }
};

// Keeps the optimizer from seeing through a value (Rust's black_box).
template <class T>
inline T black_box(T value) {
  asm volatile("" : "+r"(value));
  return value;
}

inline void emit(const char* bench, const std::string& variant, std::uint64_t n, double seconds,
                 const std::vector<std::pair<const char*, double>>& extra = {}, const char* impl = kImpl) {
  double ns = seconds * 1e9 / static_cast<double>(n);
  std::printf("{\"bench\":\"%s\",\"impl\":\"%s\",\"variant\":\"%s\",\"n\":%llu,\"ns_per_op\":%.3f,\"ops_per_s\":%.3f",
              bench, impl, variant.c_str(), static_cast<unsigned long long>(n), ns, 1e9 / ns);
  for (auto& [k, v] : extra) std::printf(",\"%s\":%.3f", k, v);
  std::printf("}\n");
}

[[noreturn]] inline void die(const std::string& msg) {
  std::fprintf(stderr, "%s\n", msg.c_str());
  std::exit(2);
}

}  // namespace bench
