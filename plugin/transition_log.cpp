// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "transition_log.hpp"

#include <cstdarg>

namespace portwatch {

namespace {
// Lines a log window writes in full before it only counts: a single bounce
// (link lost, back, three telemetry lines, INIT -> ARMED -> ACTIVE, ACTIVE
// again) fits, a storm does not.
constexpr unsigned kLogBurst = 8;
// In a long storm, a summary goes to syslog at most this often.
constexpr Millis kSysSummaryEvery{60000};

long long ms_since(TimePoint from, TimePoint now)
{
    return static_cast<long long>(std::chrono::ceil<Millis>(now - from).count());
}
}  // namespace

TransitionLog::TransitionLog(const Host &host, Millis window)
    : host_(host), limiter_(window, kLogBurst)
{
}

bool TransitionLog::line(TimePoint now, Kind kind, pw_log_level level, const char *fmt, ...)
{
    last_full_ = limiter_.admit(now);
    if (last_full_) {
        va_list args;
        va_start(args, fmt);
        host_.vlog(level, fmt, args);
        va_end(args);
        return true;
    }
    ++(kind == Kind::LinkLost   ? window_.lost
       : kind == Kind::LinkBack ? window_.back
                                : window_.other);
    return false;
}

bool TransitionLog::action(Action action)
{
    if (last_full_ || action == Action::None)
        return false;
    window_.last = action;
    ++(action == Action::Sweep  ? window_.sweeps
       : action == Action::Mark ? window_.marks
                                : window_.deferred);
    return action == Action::Sweep;
}

void TransitionLog::summarise_if_due(TimePoint now, const std::string &port, const char *state,
                                     bool now_anyway)
{
    std::optional<TimePoint> due = limiter_.deadline();
    if (!due || (*due > now && !now_anyway) || (now_anyway && limiter_.counted() == 0))
        return;
    if (limiter_.counted() == 0) {
        // A window of the chain passed with nothing to count: the storm is
        // over. Syslog hears of its end and the port's final state.
        limiter_.next_window(now);
        host_.log(storm_.lost + storm_.back ? PW_LOG_SYS_INFO : PW_LOG_INFO,
                  "storm over after %lld ms: %u link lost, %u link back and sweeps requested %u "
                  "in its summaries; %s is %s",
                  ms_since(storm_started_, now), storm_.lost, storm_.back, storm_.sweeps,
                  port.c_str(), state);
        storm_ = Tally{};
        storm_summaries_ = 0;
        return;
    }
    TimePoint window_start = *due - limiter_.window();
    if (storm_summaries_++ == 0) {
        storm_started_ = window_start;
        last_sys_summary_.reset();
    }
    // A link that came and went is news for syslog: the first summary of a
    // storm, then at most one a minute (its end is told anyway).
    bool sys = window_.lost + window_.back > 0 &&
               (!last_sys_summary_ || now - *last_sys_summary_ >= kSysSummaryEvery);
    if (sys)
        last_sys_summary_ = now;
    host_.log(sys ? PW_LOG_SYS_INFO : PW_LOG_INFO,
              "in the last %lld ms: %u link lost, %u link back, %u other lines; "
              "sweeps requested %u, marks %u, deferred %u; %s is %s [last action=%s]",
              ms_since(window_start, now), window_.lost, window_.back, window_.other,
              window_.sweeps, window_.marks, window_.deferred, port.c_str(), state,
              action_name(window_.last));
    storm_.lost += window_.lost;
    storm_.back += window_.back;
    storm_.sweeps += window_.sweeps;
    window_ = Tally{};
    limiter_.next_window(now);
}

}  // namespace portwatch
