// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "log_limiter.hpp"

#include <algorithm>

namespace portwatch {

namespace {
// A hold-off of 0 still groups a storm's lines: ten summaries a second at most.
constexpr Millis kShortestWindow{100};
}  // namespace

LogLimiter::LogLimiter(Millis window, unsigned burst)
    : window_(std::max(window, kShortestWindow)), burst_(burst)
{
}

bool LogLimiter::admit(TimePoint now)
{
    if (!start_ || (now - *start_ >= window_ && counted_ == 0 && !chained_)) {
        // Quiet, or a burst window that ended with nothing counted.
        start_ = now;
        chained_ = false;
        admitted_ = 1;
        counted_ = 0;
        return true;
    }
    if (!chained_ && admitted_ < burst_) {
        ++admitted_;
        return true;
    }
    ++counted_;
    return false;
}

std::optional<TimePoint> LogLimiter::deadline() const
{
    if (!start_ || (counted_ == 0 && !chained_))
        return std::nullopt;
    return *start_ + window_;
}

bool LogLimiter::next_window(TimePoint now)
{
    if (counted_ == 0) {
        start_.reset();  // the storm is over: the next line starts afresh
        chained_ = false;
        return true;
    }
    start_ = now;
    chained_ = true;
    admitted_ = 0;
    counted_ = 0;
    return false;
}

}  // namespace portwatch
