// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Judges a link return by its outcome: the SM port ACTIVE again.
//
// Events can be read late or collapse (INIT -> DOWN -> INIT read as INIT,
// INIT), a sweep can fail midway, a return can come while the SM was not
// acting. So after a sweep portwatch asked for has ended (OpenSM reported
// SUBNET_UP, or a bound passed) and a grace period
// (portwatch.verify_ms) has passed, the watched port is looked at again: link
// up but still INIT means the SM has not configured it, and a heavy sweep is
// requested again, with a doubling grace, at most portwatch.verify_tries
// times. A port that is ARMED/ACTIVE or DOWN ends the check: there is never a
// sweep while the port is ACTIVE and nothing changes.
//
// Pure logic on the event thread: the caller reads OpenSM's sweep reports,
// queries the port, and performs what this decides.
#pragma once

#include <optional>

#include "clock.hpp"
#include "options.hpp"
#include "port_tracker.hpp"

namespace portwatch {

class Outcome {
public:
    explicit Outcome(const Options &opts);

    // A heavy sweep was requested for the watched port.
    void sweep_requested(TimePoint now);
    // The link was lost or came back (or the SM started acting): a new
    // episode, the tries start afresh. Nothing else resets them, so a port
    // the SM cannot configure costs verify_tries sweeps and one ERROR line.
    void link_changed() { tries_ = 0; }
    // Something suggests the port may need the SM: check it. With
    // sweep_coming (the SM just started acting, or portwatch just started:
    // OpenSM sweeps then by itself) the check waits for that sweep to end;
    // otherwise (a look found the port INIT with nothing on its way) it
    // looks again after the grace period. Once the tries are used up it
    // does nothing until link_changed().
    void recheck(TimePoint now, bool sweep_coming);
    // OpenSM reported a heavy sweep in progress (HEAVY_SWEEP_START, or
    // HEAVY_SWEEP_DONE: OpenSM reports that when discovery is done, before
    // it assigns LIDs and activates ports, osm_state_mgr.c), or the subnet
    // up (SUBNET_UP: the sweep has configured every port it could).
    void sweep_progress(TimePoint now);
    void subnet_up(TimePoint now);
    // The port was seen ARMED/ACTIVE or DOWN: nothing left to check.
    void settled() { phase_ = Phase::Idle; }

    // Whether OpenSM's sweep reports matter now (the thread wakes for them).
    bool awaiting_sweep() const { return phase_ == Phase::AwaitSweep; }
    // When the port must be looked at (or the await bound ends).
    std::optional<TimePoint> deadline() const;

    enum class Verdict {
        Wait,    // not yet (a sweep is still running): deadline() moved
        Fine,    // ARMED/ACTIVE or DOWN: done
        Retry,   // link up, still INIT: request a heavy sweep (try tries())
        GiveUp,  // still INIT after the last try: say so, once
        Off,     // still INIT, but the check is turned off (verify_tries=0)
    };
    // Call when now >= deadline() with the port's state as queried now.
    Verdict on_deadline(LinkState state, TimePoint now);
    unsigned tries() const { return tries_; }
    // How long the port has been INIT since the sweep (for the log).
    Millis waited() const { return waited_; }

private:
    enum class Phase { Idle, AwaitSweep, Grace };

    Millis grace() const;

    Millis verify_;
    unsigned max_tries_;
    Phase phase_ = Phase::Idle;
    TimePoint at_{};     // AwaitSweep: bound; Grace: when to look
    TimePoint ended_{};  // when the awaited sweep ended
    unsigned tries_ = 0;
    Millis waited_{0};
};

}  // namespace portwatch
