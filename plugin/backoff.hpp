// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// A doubling delay between two bounds: device reopens, the device list, the
// metrics file and trouble on the event thread all back off so, never in a
// tight loop.
#pragma once

#include <algorithm>

#include "clock.hpp"

namespace portwatch {

class Backoff {
public:
    Backoff(Millis min, Millis max) : min_(min), max_(max), next_(min) {}
    // The delay to use now; the following one is twice as long (capped).
    Millis take()
    {
        Millis now = next_;
        next_ = std::min(next_ * 2, max_);
        return now;
    }
    void reset() { next_ = min_; }

private:
    Millis min_, max_, next_;
};

}  // namespace portwatch
