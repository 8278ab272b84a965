// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// A port transition -> what OpenSM is asked -> the outcome.
//
// act() takes the transition the tracker derived: Policy decides (mark,
// sweep, defer or nothing, by the SM's state and the hold-off), apply()
// performs it through the Host, and Outcome judges the return by the only
// thing that counts, the SM port ACTIVE again: once the sweep has ended,
// check_outcome() queries the port and asks for another sweep while it
// stays INIT. note_active() tells how long the return took.
#include <chrono>
#include <string>

#include "errno_text.hpp"
#include "monitor.hpp"

namespace portwatch {

namespace {
double unix_now()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}
}  // namespace

void Monitor::act(const PortKey &key, const Transition &t, const char *cause,
                  bool link_may_have_changed, TimePoint now)
{
    const std::optional<PortKey> &watched = resolver_.watched();
    bool watched_port = watched && key == *watched;
    if (t.change == Change::Initial) {
        host_.log(PW_LOG_INFO, "%s is %s (phys state %u, LID %u)", key.str().c_str(),
                  link_state_name(t.to.state), t.to.phys_state, t.to.lid);
        // Up but not configured: the SM should see to it (at start-up its
        // first sweep is on its way); check that it does.
        if (watched_port && t.to.state == LinkState::Init)
            outcome_.recheck(now, true);
        return;
    }
    pw_sm_state sm = host_.sm_state();
    Decision d = policy_.on_change(t.change, sm, now);
    bool link_change = t.change == Change::LinkLost || t.change == Change::LinkBack;
    if (link_change) {
        ++counters_.transitions;
        ++(t.change == Change::LinkLost ? counters_.link_lost : counters_.link_back);
        if (d.action == Action::None)
            ++counters_.ignored;
        if (watched_port) {
            outcome_.link_changed();
            if (t.change == Change::LinkLost) {
                outcome_.settled();
                link_back_at_.reset();
            } else {
                link_back_at_ = now;
                last_link_back_unix_ = unix_now();
            }
        }
    }
    // Repeats (rxe's second PORT_ACTIVE, mlx5's PORT_ERR read back twice)
    // stay visible at VERBOSE: an admin checking "no second sweep" sees why.
    // The SM's link lost or back and acted on goes to syslog as well.
    pw_log_level level = link_change && watched_port && d.action != Action::None ? PW_LOG_SYS_INFO
                         : link_change || t.change == Change::Progress           ? PW_LOG_INFO
                                                                                 : PW_LOG_VERBOSE;
    log_.line(
        now, TransitionLog::kind_of(t.change), level, "%s %s -> %s (%s): %s, %s%s%s [action=%s]",
        key.str().c_str(), link_state_name(t.from->state), link_state_name(t.to.state), cause,
        change_name(t.change), d.reason, d.action == Action::None && link_change ? "; SM is " : "",
        d.action == Action::None && link_change ? sm_state_name(sm) : "", action_name(d.action));
    apply(d, now, now);
    if (!watched_port)
        return;
    if (t.to.state == LinkState::Active || t.to.state == LinkState::Armed) {
        outcome_.settled();
        // A sweep the hold-off deferred still runs at the window's end even
        // though the port reads ACTIVE now: on rxe (and any driver that has
        // no INIT state) ACTIVE from verbs says nothing about whether the SM
        // configured the port, and the return it was for is real.
        if (t.to.state == LinkState::Active)
            note_active(key, now);
    } else if (t.to.state == LinkState::Init && !link_change) {
        // Still INIT (events read late can hide a return: INIT, DOWN, INIT
        // read as INIT, INIT). A link event, or a device reopened (its link
        // may have gone and come back while it was closed), is a new return
        // with tries of its own - also while a deferred sweep is pending,
        // or the tries of the old return would run out on the new one. A
        // sweep that fails to configure the port changes no link state and
        // reopens nothing, so this cannot feed itself. With nothing on its
        // way, check the outcome.
        if (link_may_have_changed)
            outcome_.link_changed();
        if (!policy_.deadline())
            outcome_.recheck(now, false);
    }
}

void Monitor::apply(const Decision &d, TimePoint event_time, TimePoint now)
{
    // Asked for by a line the log window counted: the summary says so, and
    // a woken sweep closes the window at once, so that the sweep is in the
    // log when it happens, not a window later.
    if (log_.action(d.action))
        summarise(now, true);
    switch (d.action) {
    case Action::Sweep:
        // Stamp first: the sweeper may report HEAVY_SWEEP_START before the
        // wake-up call below has even returned.
        telemetry_.sweep_requested(event_time, log_.last_full());
        progress_seen_ = progress_reports_;
        up_seen_ = up_reports_;
        outcome_.sweep_requested(now);
        awaiting_sweep_ = true;
        if (!host_.force_heavy_sweep(true)) {
            host_.log(PW_LOG_INFO, "OpenSM is exiting: sweep not requested");
            outcome_.settled();
            return;
        }
        ++counters_.sweeps;
        break;
    case Action::Mark:
        if (host_.force_heavy_sweep(false))
            ++counters_.marks;
        break;
    case Action::Defer:
        ++counters_.coalesced;
        deferred_event_time_ = event_time;
        break;
    case Action::None:
        break;
    }
}

void Monitor::hold_off_over(TimePoint now)
{
    Decision d = policy_.on_deadline(host_.sm_state(), now);
    log_.line(now, TransitionLog::Kind::Other, PW_LOG_INFO, "hold-off over: %s [action=%s]",
              d.reason, action_name(d.action));
    apply(d, deferred_event_time_, now);
}

void Monitor::note_active(const PortKey &key, TimePoint now)
{
    if (!link_back_at_)
        return;
    double ms = ms_between(*link_back_at_, now);
    last_recovery_seconds_ = ms / 1000.0;
    // The outcome an on-call admin waits for: to syslog as well.
    log_.line(now, TransitionLog::Kind::Other, PW_LOG_SYS_INFO,
              "%s is ACTIVE again %.3f ms after the link came back", key.str().c_str(), ms);
    link_back_at_.reset();
}

void Monitor::check_outcome(TimePoint now)
{
    const std::optional<PortKey> watched = resolver_.watched();
    VerbsDevice *dev = watched ? devices_.find(watched->device) : nullptr;
    if (!dev) {
        // No port, or gone with its device: the reopen compares its state
        // with the last one seen, which is the check.
        outcome_.settled();
        return;
    }
    const PortKey &key = *watched;
    PortInfo info;
    if (int err = dev->query_port(key.port, &info)) {
        outcome_.settled();
        std::string why = std::string("query_port: ") + errno_text(err);
        lose(key.device, why.c_str(), now);
        return;
    }
    // Keep the tracker in step: what the check saw is the port's last state.
    tracker(*dev, key).update(info.snapshot);
    LinkState state = info.snapshot.state;
    switch (outcome_.on_deadline(state, now)) {
    case Outcome::Verdict::Wait:
        return;
    case Outcome::Verdict::Fine:
        if (state == LinkState::Active)
            note_active(key, now);
        return;
    case Outcome::Verdict::Off:
        host_.log(PW_LOG_VERBOSE, "%s is INIT after the heavy sweep (portwatch.verify_tries=0)",
                  key.str().c_str());
        return;
    case Outcome::Verdict::GiveUp:
        host_.log(PW_LOG_SYS_ERROR,
                  "%s is still INIT after %u more heavy sweeps: the SM could not bring its port up",
                  key.str().c_str(), outcome_.tries());
        return;
    case Outcome::Verdict::Retry:
        break;
    }
    pw_sm_state sm = host_.sm_state();
    Decision d = policy_.on_retry(sm, now);
    log_.line(now, TransitionLog::Kind::Other, PW_LOG_INFO,
              "%s is INIT %lld ms after the heavy sweep: %s (try %u of %u)%s%s [action=%s]",
              key.str().c_str(), static_cast<long long>(outcome_.waited().count()), d.reason,
              outcome_.tries(), opts_.verify_tries, d.action == Action::None ? "; SM is " : "",
              d.action == Action::None ? sm_state_name(sm) : "", action_name(d.action));
    if (d.action == Action::Sweep || d.action == Action::Defer)
        ++counters_.retries;
    apply(d, now, now);
}

}  // namespace portwatch
