// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// What OpenSM's threads report (HEAVY_SWEEP_START/DONE, SUBNET_UP, an SM
// state change), and the event thread taking it in.
//
// report() is the one function that runs on OpenSM's threads. It touches
// only the telemetry (its own mutex) and atomics, and wakes the event thread
// through the eventfd when the thread waits for what was reported; the
// outcome check and the port resolution act on it on the event thread.
#include "monitor.hpp"

namespace portwatch {

void Monitor::report(pw_report report) noexcept
{
    try {
        bool logged = true;
        bool wake = false;
        if (std::optional<double> ms = telemetry_.on_report(report, Clock::now(), &logged)) {
            const char *name = report == PW_REPORT_HEAVY_SWEEP_START  ? "HEAVY_SWEEP_START"
                               : report == PW_REPORT_HEAVY_SWEEP_DONE ? "HEAVY_SWEEP_DONE"
                                                                      : "SUBNET_UP";
            // In a storm only the histogram has them (the sweep was
            // requested by a line the log window counted).
            host_.log(logged ? PW_LOG_INFO : PW_LOG_DEBUG,
                      "telemetry: %s %.3f ms after the port event", name, *ms);
            wake = metrics_.enabled();  // a new observation for the file
        }
        switch (report) {
        case PW_REPORT_HEAVY_SWEEP_START:
            // The time first: whoever sees the count move sees this start's
            // time or a later one (the MAD path check).
            last_sweep_start_ = Clock::now().time_since_epoch().count();
            ++sweep_starts_;
            ++progress_reports_;
            wake = awaiting_sweep_;
            break;
        case PW_REPORT_HEAVY_SWEEP_DONE:
            ++progress_reports_;
            wake = awaiting_sweep_;
            break;
        case PW_REPORT_SUBNET_UP:
            ++up_reports_;
            wake = awaiting_sweep_;
            break;
        case PW_REPORT_STATE_CHANGE:
            // The SM may have started acting: a return it ignored before
            // may need a sweep now.
            state_changed_ = true;
            wake = true;
            break;
        case PW_REPORT_OTHER:
            break;
        }
        // OpenSM may have (re)chosen its port: let the thread look again.
        if (unresolved_ && (report == PW_REPORT_SUBNET_UP || report == PW_REPORT_STATE_CHANGE)) {
            resolve_requested_ = true;
            wake = true;
        }
        if (wake)
            wakeup_.signal();
    } catch (...) {  // NOLINT(bugprone-empty-catch): swallowed on purpose
        // Called from OpenSM's own threads: nothing may escape into C.
    }
}

void Monitor::take_reports(TimePoint now)
{
    // The state first: the sweep of an SM that just became master may have
    // been reported already, and belongs to this check.
    if (state_changed_.exchange(false)) {
        bool acting = opts_.act_in.contains(host_.sm_state());
        if (acting && !sm_acting_ && resolver_.watched()) {
            outcome_.link_changed();      // tries of its own: the SM's sweep is new
            outcome_.recheck(now, true);  // an SM that starts acting sweeps
        }
        sm_acting_ = acting;
    }
    unsigned progress = progress_reports_, up = up_reports_;
    if (progress != progress_seen_)
        outcome_.sweep_progress(now);
    if (up != up_seen_)
        outcome_.subnet_up(now);
    progress_seen_ = progress;
    up_seen_ = up;
}

void Monitor::absorb_reports()
{
    // Reports nobody waits for are absorbed: a later check must not take an
    // old SUBNET_UP for the end of its sweep. Not while an SM state change
    // is still to be taken: the sweep of an SM that just started to act is
    // reported after its state change, and belongs to the check that change
    // starts. (Counts read first: a report counted before the read follows
    // any state change it belongs to.)
    unsigned progress = progress_reports_, up = up_reports_;
    if (!state_changed_) {
        progress_seen_ = progress;
        up_seen_ = up;
    }
}

}  // namespace portwatch
