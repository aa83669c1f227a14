// The part of <chrono> the library uses: durations, time points, clocks and
// the duration literals. With libstdc++, <bits/chrono.h> holds exactly
// those; <chrono> adds the calendars, the time zones and their stream I/O
// (it includes <sstream>), about a tenth of the compile time of a program
// that includes <pollux/pollux.hpp>. Other standard libraries get <chrono>.
#pragma once

#include "pollux/core/detail/cxx20.hpp"  // first: a clear error before C++20

#include <version>  // names the standard library

#if defined(__GLIBCXX__) && __has_include(<bits/chrono.h>)
#include <bits/chrono.h>
#else
#include <chrono>
#endif
