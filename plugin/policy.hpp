// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Decides what a port transition asks of OpenSM.
//
// - link lost: force the next sweep heavy ("mark"); with sweep_on_loss also
//   wake the sweeper, so OpenSM notices "SM port is down" at once;
// - link back: force a heavy sweep and wake the sweeper, once;
// - anything else (INIT -> ARMED -> ACTIVE, LID changes, ...) is the SM
//   configuring its own port: never a trigger, or we would loop.
// Wake-ups are rate-limited by a hold-off: the first comes at once, later ones
// inside the window are deferred to its end, and the last state wins, so a
// final "link back" is never lost. Nothing happens unless the SM is in one of
// the configured states (MASTER or DISCOVERING by default).
#pragma once

#include <optional>

#include "clock.hpp"
#include "options.hpp"
#include "port_tracker.hpp"

namespace portwatch {

enum class Action {
    None,   // nothing asked of OpenSM
    Mark,   // force_heavy_sweep only
    Sweep,  // force_heavy_sweep and wake the sweeper
    Defer,  // a wake-up is due when the hold-off ends
};

struct Decision {
    Action action = Action::None;
    const char *reason = "";  // static text for the log line
};

class Policy {
public:
    explicit Policy(const Options &opts);

    Decision on_change(Change change, pw_sm_state sm, TimePoint now);
    // The outcome check found the port still INIT after a sweep: ask again
    // (the hold-off and the SM state apply as to any wake-up).
    Decision on_retry(pw_sm_state sm, TimePoint now);
    // Call when now >= deadline(): performs what the hold-off deferred.
    Decision on_deadline(pw_sm_state sm, TimePoint now);
    // When the thread must next call on_deadline(); empty when nothing is pending.
    std::optional<TimePoint> deadline() const;

private:
    Decision wake(pw_sm_state sm, TimePoint now, const char *reason);

    Millis holdoff_;
    bool sweep_on_loss_;
    SmStateSet act_in_;
    std::optional<TimePoint> last_wake_;
    bool pending_ = false;  // a deferred wake-up waits for the hold-off to end
};

const char *action_name(Action action);

}  // namespace portwatch
