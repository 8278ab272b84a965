// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "policy.hpp"

namespace portwatch {

Policy::Policy(const Options &opts)
    : holdoff_(opts.holdoff), sweep_on_loss_(opts.sweep_on_loss), act_in_(opts.act_in)
{
}

Decision Policy::wake(pw_sm_state sm, TimePoint now, const char *reason)
{
    if (!act_in_.contains(sm)) {
        pending_ = false;
        return {Action::None, "SM state not in portwatch.act_in"};
    }
    if (last_wake_ && now - *last_wake_ < holdoff_) {
        pending_ = true;
        return {Action::Defer, "within hold-off, sweep deferred"};
    }
    pending_ = false;
    last_wake_ = now;
    return {Action::Sweep, reason};
}

Decision Policy::on_change(Change change, pw_sm_state sm, TimePoint now)
{
    switch (change) {
    case Change::LinkBack:
        return wake(sm, now, "heavy sweep requested");
    case Change::LinkLost:
        if (sweep_on_loss_)
            return wake(sm, now, "heavy sweep requested (sweep_on_loss)");
        // The last state wins: a deferred "link back" is void once the link is gone.
        pending_ = false;
        if (!act_in_.contains(sm))
            return {Action::None, "SM state not in portwatch.act_in"};
        return {Action::Mark, "next sweep forced heavy"};
    case Change::Progress:
    case Change::Attributes:
    case Change::Initial:
    case Change::None:
        break;
    }
    return {Action::None, "no trigger"};
}

Decision Policy::on_retry(pw_sm_state sm, TimePoint now)
{
    return wake(sm, now, "heavy sweep requested again");
}

std::optional<TimePoint> Policy::deadline() const
{
    if (!pending_ || !last_wake_)
        return std::nullopt;
    return *last_wake_ + holdoff_;
}

Decision Policy::on_deadline(pw_sm_state sm, TimePoint now)
{
    if (!pending_)
        return {Action::None, "nothing deferred"};
    pending_ = false;
    last_wake_.reset();  // the window is over: wake() must not defer again
    return wake(sm, now, "hold-off over, heavy sweep requested");
}

const char *action_name(Action action)
{
    switch (action) {
    case Action::None:
        return "none";
    case Action::Mark:
        return "mark";
    case Action::Sweep:
        return "sweep";
    case Action::Defer:
        return "defer";
    }
    return "?";
}

}  // namespace portwatch
