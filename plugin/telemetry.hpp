// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// How long after the port event the sweep it caused started, finished and
// brought the subnet up. Fed by the event thread (sweep_requested) and by
// OpenSM's threads through report(); one short mutex section each.
#pragma once

#include <portwatch/host.h>

#include <mutex>
#include <optional>

#include "clock.hpp"

namespace portwatch {

class Telemetry {
public:
    // A wake-up was sent for a port event seen at event_time.
    void sweep_requested(TimePoint event_time);
    // The milliseconds since that port event if this report is the first of
    // its kind since the request; each milestone is reported once.
    std::optional<double> on_report(pw_report report, TimePoint now);

private:
    std::mutex mutex_;
    std::optional<TimePoint> event_time_;
    bool started_ = false;
    bool done_ = false;
};

} // namespace portwatch
