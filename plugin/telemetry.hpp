// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// How long after the port event the sweep it caused started, finished and
// brought the subnet up. Fed by the event thread (sweep_requested) and by
// OpenSM's threads through report(); one short mutex section each.
#pragma once

#include <portwatch/host.h>

#include <array>
#include <mutex>
#include <optional>

#include "clock.hpp"
#include "metrics.hpp"

namespace portwatch {

class Telemetry {
public:
    // A wake-up was sent for a port event seen at event_time. logged: the
    // line that asked for it was written in full, so its milestones are
    // worth a line each too (not in the middle of a storm).
    void sweep_requested(TimePoint event_time, bool logged = true);
    // The milliseconds since that port event if this report is the first of
    // its kind since the request; each milestone is reported once, and
    // counted in the histogram of its stage. *logged tells whether to log it.
    std::optional<double> on_report(pw_report report, TimePoint now, bool *logged = nullptr);
    // Every milestone so far, by stage.
    std::array<ReactionHistogram, kStages> histograms() const;

private:
    std::optional<double> milestone(pw_report report, TimePoint now);

    mutable std::mutex mutex_;
    std::optional<TimePoint> event_time_;
    bool started_ = false;
    bool done_ = false;
    bool logged_ = true;
    std::array<ReactionHistogram, kStages> histograms_{};
};

}  // namespace portwatch
