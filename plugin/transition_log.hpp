// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The transition family of log lines (link lost/back, progress, hold-offs,
// outcome checks) and the summaries that stand for them in a storm.
//
// Every line of the family goes through line(): written in full while the
// log window admits it (LogLimiter), otherwise counted, by kind, into the
// window's summary. What a counted line asked of OpenSM is added with
// action(). summarise_if_due() writes the summary when the window ends,
// and the storm's end once a chained window passed with nothing counted.
#pragma once

#include <optional>
#include <string>

#include "clock.hpp"
#include "host.hpp"
#include "log_limiter.hpp"
#include "policy.hpp"
#include "port_tracker.hpp"

namespace portwatch {

class TransitionLog {
public:
    // What a counted line is summed up as.
    enum class Kind { LinkLost, LinkBack, Other };
    static Kind kind_of(Change change)
    {
        return change == Change::LinkLost   ? Kind::LinkLost
               : change == Change::LinkBack ? Kind::LinkBack
                                            : Kind::Other;
    }

    TransitionLog(const Host &host, Millis window);

    // Writes the line in full, or counts it as kind. Returns whether it was
    // written (also kept as last_full()). A window that has just ended takes
    // this line too: its summary follows at the end of this wake-up.
    bool line(TimePoint now, Kind kind, pw_log_level level, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
    // Whether the family's last line was written in full.
    bool last_full() const { return last_full_; }
    // What the last line asked of OpenSM, when it was counted: the summary
    // says so. True when the action is a sweep: the caller then summarises
    // at once, so that the sweep is in the log when it happens.
    bool action(Action action);

    // When a summary (or the storm's end) is due; empty when none is.
    std::optional<TimePoint> deadline() const { return limiter_.deadline(); }
    // Writes the window's summary once due (now_anyway: at stop, and when a
    // counted line woke a sweep), naming the watched port and its state.
    void summarise_if_due(TimePoint now, const std::string &port, const char *state,
                          bool now_anyway = false);

private:
    struct Tally {
        unsigned lost = 0, back = 0, other = 0, sweeps = 0, marks = 0, deferred = 0;
        Action last = Action::None;
    };

    const Host &host_;
    LogLimiter limiter_;
    Tally window_;  // what the current window's counted lines stood for
    Tally storm_;   // the storm (a chain of windows) so far: its summaries added up
    unsigned storm_summaries_ = 0;
    TimePoint storm_started_{};
    std::optional<TimePoint> last_sys_summary_;
    bool last_full_ = true;
};

}  // namespace portwatch
