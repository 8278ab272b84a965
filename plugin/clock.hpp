// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The one clock portwatch uses: monotonic, so hold-off and telemetry survive
// wall-clock steps (NTP) on the SM host.
#pragma once

#include <chrono>

namespace portwatch {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;
using Millis = std::chrono::milliseconds;

inline double ms_between(TimePoint from, TimePoint to)
{
    return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace portwatch
