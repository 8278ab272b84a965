// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "telemetry.hpp"

namespace portwatch {

namespace {
constexpr double kAttributionWindowMs = 60000.0;
}

void Telemetry::sweep_requested(TimePoint event_time, bool logged)
{
    std::lock_guard<std::mutex> lock(mutex_);
    event_time_ = event_time;
    started_ = false;
    done_ = false;
    logged_ = logged;
}

std::optional<double> Telemetry::on_report(pw_report report, TimePoint now, bool *logged)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (logged)
        *logged = logged_;
    std::optional<double> ms = milestone(report, now);
    if (ms) {
        Stage stage = report == PW_REPORT_HEAVY_SWEEP_START  ? Stage::HeavySweepStart
                      : report == PW_REPORT_HEAVY_SWEEP_DONE ? Stage::HeavySweepDone
                                                             : Stage::SubnetUp;
        histograms_[static_cast<size_t>(stage)].observe(*ms / 1000.0);
    }
    return ms;
}

std::array<ReactionHistogram, kStages> Telemetry::histograms() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return histograms_;
}

std::optional<double> Telemetry::milestone(pw_report report, TimePoint now)
{
    if (!event_time_)
        return std::nullopt;
    double ms = ms_between(*event_time_, now);
    if (ms > kAttributionWindowMs) {
        // Our sweep never completed (the SM port went down again, say): a
        // much later sweep is somebody else's and must not be timed as ours.
        event_time_.reset();
        return std::nullopt;
    }
    switch (report) {
    case PW_REPORT_HEAVY_SWEEP_START:
        if (started_)
            return std::nullopt;
        started_ = true;
        return ms;
    case PW_REPORT_HEAVY_SWEEP_DONE:
        if (!started_ || done_)
            return std::nullopt;
        done_ = true;
        return ms;
    case PW_REPORT_SUBNET_UP:
        if (!started_)
            return std::nullopt;
        event_time_.reset();  // the story of this event is complete
        return ms;
    case PW_REPORT_STATE_CHANGE:
    case PW_REPORT_OTHER:
        break;
    }
    return std::nullopt;
}

}  // namespace portwatch
