// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "mad_path_check.hpp"

#include <chrono>

namespace portwatch {

void MadPathCheck::start(TimePoint now, uint32_t received, unsigned starts)
{
    at_ = now + bound_;
    since_ = now;
    received_ = received;
    starts_ = starts;
    first_start_.reset();
    sweep_wanted_ = false;
    stuck_looks_ = 0;
    spacing_ = 1;
}

MadPathCheck::Verdict MadPathCheck::on_deadline(TimePoint now, uint32_t received, unsigned starts,
                                                TimePoint last_start, bool sweeping)
{
    sweep_wanted_ = false;
    if (received != received_) {
        at_.reset();
        return Verdict::Works;
    }
    if (!first_start_ && starts != starts_)
        first_start_ = last_start;  // the first start is no later than the latest
    if (first_start_) {
        // Its first SMP, answered by the port's own HCA, would be back in
        // milliseconds. Later sweeps do not move the bound: an SM that starts
        // a sweep every few seconds must still be judged.
        if (now - *first_start_ >= bound_) {
            at_.reset();
            return Verdict::Dead;
        }
        at_ = *first_start_ + bound_;
        return Verdict::Wait;
    }
    if (!sweeping) {
        // A standby's polls or its own takeover will tell; no sweep to ask for.
        stuck_looks_ = 0;
        if (spacing_ < kMaxSpacing)
            spacing_ *= 2;
        at_ = now + bound_ * spacing_;
        return Verdict::Wait;
    }
    spacing_ = 1;
    if (++stuck_looks_ >= kStuckLooks) {
        at_.reset();
        return Verdict::Dead;
    }
    sweep_wanted_ = true;
    at_ = now + bound_;
    return Verdict::Wait;
}

Millis MadPathCheck::waited(TimePoint now) const
{
    return std::chrono::duration_cast<Millis>(now - since_);
}

}  // namespace portwatch
