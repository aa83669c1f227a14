// A runtime's metrics for Prometheus: an HTTP server whose `GET /metrics`
// answers with Runtime::metrics() in Prometheus's text format
// (prometheus.hpp), read afresh for every scrape; `GET /` says where to
// look, any other path gets 404 and a malformed request 400. Beside it runs
// a small workload (a task every 10 ms that yields a few times, a blocking
// job every second) so that the figures move. The runtime measures its
// poll-duration and schedule-latency histograms (RuntimeOptions::histograms).
//
//   metrics_exporter [addr=127.0.0.1:9464] [ct|mt|N=mt] [max_secs=forever] [idle_secs=60] [grace_secs=5]
//                    [idle_tasks=0]
//
// idle_tasks spawns that many tasks that wait for the shutdown: a
// population to watch in pollux-console (POLLUX_CONSOLE=path), as a server
// holding that many connections would have.
//
// Try `curl http://127.0.0.1:9464/metrics`, or point a Prometheus server's
// scrape config at it. The connections keep server.hpp's defences (idle
// limit, accepting paused while out of descriptors, graceful shutdown), and
// a pipelined burst of scrapes is answered 64 KiB at a time.
#include <pollux/pollux.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <thread>

#include "http_connection.hpp"
#include "http_request.hpp"
#include "prometheus.hpp"
#include "server.hpp"

namespace {

using namespace std::chrono_literals;

// What each GET gets: the metrics, a pointer to them, or 404.
struct MetricsAnswer {
  const pollux::Runtime* runtime;
  void operator()(std::string_view path, std::string& out) const {
    if (path == "/metrics") {
      http::append_response(out, "200 OK", "text/plain; version=0.0.4", prometheus::text(runtime->metrics()));
    } else if (path == "/") {
      http::append_response(out, "200 OK", "text/plain", "pollux metrics exporter: GET /metrics\n");
    } else {
      http::append_response(out, "404 Not Found", "text/plain", "not found: try /metrics\n");
    }
  }
};

// Pending `n` times, waking itself each time: a task with a few polls.
struct YieldTimes {
  using Output = void;
  int left;
  pollux::Poll<void> poll(pollux::Context& cx) {
    if (left-- <= 0) return pollux::ready();
    cx.waker().wake_by_ref();
    return pollux::pending;
  }
};

// The demonstration load, until `stop`: a short task every 10 ms, and a
// blocking job (a millisecond's sleep) every hundredth tick.
auto workload(const pollux::CancellationToken& stop) {
  using namespace pollux;
  return interval(10ms) | take_until(stop.cancelled()) | for_each([tick = 0](Instant) mutable {
           (void)pollux::spawn(YieldTimes{3});  // detached: it ends by itself
           if (++tick % 100 == 0) (void)spawn_blocking([] { std::this_thread::sleep_for(1ms); });
         });
}

}  // namespace

int main(int argc, char** argv) {
  using namespace pollux;
  const char* name = "metrics_exporter";
  try {
    std::string addr = argc > 1 ? argv[1] : "127.0.0.1:9464";
    RuntimeOptions runtime_options;
    runtime_options.histograms = true;
    Runtime rt = runtime_from_arg(argc > 2 ? argv[2] : "mt", runtime_options);
    ServerOptions options = server_options(argc, argv, 3);
    TcpListener listener = TcpListener::bind(addr);
    std::printf("%s: listening on http://%s/metrics\n", name, listener.local_addr().to_string().c_str());
    std::fflush(stdout);
    CancellationToken shutdown;
    TaskTracker tracker;
    (void)rt.spawn(workload(shutdown), "workload");  // detached: it ends with the token
    long idle_tasks = argc > 6 ? std::atol(argv[6]) : 0;
    for (long i = 0; i < idle_tasks; ++i) (void)rt.spawn(shutdown.cancelled(), "waits for shutdown");
    accept_until_shutdown(rt, listener, options, shutdown, tracker, name, [&](TcpStream stream) {
      HttpConnection connection(std::move(stream), MetricsAnswer{&rt}, options.idle);
      (void)tracker.spawn(select(idle_timeout(options.idle, std::move(connection)), shutdown.cancelled()),
                          "connection");
    });
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 1;
  }
}
