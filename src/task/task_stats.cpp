// The layout tag of the tasks this library was built for (see
// task/detail/task_stats.hpp): exactly one of the two symbols exists.
#include "pollux/task/detail/task_stats.hpp"

namespace pollux::detail {

#if POLLUX_TASK_METRICS
const bool tasks_carry_stats = true;
#else
const bool tasks_carry_no_stats = true;
#endif

}  // namespace pollux::detail
