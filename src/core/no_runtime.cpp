// The one wording of "polled outside a runtime", for timers and sockets.
#include "pollux/core/no_runtime.hpp"

#include <string>

namespace pollux::detail {

void throw_no_runtime(const char* what) {
  throw NoRuntime(std::string(what) +
                  ": polled outside a runtime: no driver (for timers and sockets) is installed on this thread. Run it "
                  "inside Runtime::block_on or a task spawned on a Runtime, or install a Driver of your own with "
                  "driver.enter()");
}

}  // namespace pollux::detail
