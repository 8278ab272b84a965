// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Bounds the transition lines a flapping link writes into OpenSM's log.
//
// The first line of a quiet spell opens a window (the hold-off, at least
// 100 ms). The window takes a burst of lines in full: a single bounce, with
// its sweep, telemetry and return to ACTIVE, reads as it always did. Past
// the burst, lines are only counted, and when the window ends the caller
// writes one summary line and a new window opens at once, this time with no
// burst: a storm costs one line per window. A chained window that ends with
// nothing counted closes the chain (the storm is over: the caller may say
// so); the next line starts afresh.
#pragma once

#include <optional>

#include "clock.hpp"

namespace portwatch {

class LogLimiter {
public:
    LogLimiter(Millis window, unsigned burst);

    // true: write this line in full; false: count it for the summary.
    bool admit(TimePoint now);
    // When the current window ends with something to tell: a summary of
    // what it counted, or (a chained window that counted nothing) the end
    // of the chain. Empty when neither is due: no timer is needed then.
    std::optional<TimePoint> deadline() const;
    // Lines counted in the current window.
    unsigned counted() const { return counted_; }
    // At or after deadline(): opens the next window of the chain when the
    // window counted lines, and closes the chain otherwise. Returns true
    // when the chain was closed.
    bool next_window(TimePoint now);
    Millis window() const { return window_; }

private:
    Millis window_;
    unsigned burst_;
    std::optional<TimePoint> start_;
    bool chained_ = false;
    unsigned admitted_ = 0;
    unsigned counted_ = 0;
};

}  // namespace portwatch
