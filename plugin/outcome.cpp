// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "outcome.hpp"

namespace portwatch {

namespace {
// How long to wait for OpenSM to start the sweep it was asked for, and for
// a started heavy sweep to end, before looking at the port anyway. A heavy
// sweep takes milliseconds on small fabrics and seconds on large ones.
constexpr Millis kStartBound{5000};
constexpr Millis kSweepBound{30000};
}  // namespace

Outcome::Outcome(const Options &opts) : verify_(opts.verify), max_tries_(opts.verify_tries) {}

Millis Outcome::grace() const
{
    // Doubling with every try: 1, 2, 4, 8 s at the default.
    Millis g = verify_;
    for (unsigned i = 0; i < tries_ && g < Millis(3600000); ++i)
        g *= 2;
    return g;
}

void Outcome::sweep_requested(TimePoint now)
{
    phase_ = Phase::AwaitSweep;
    at_ = now + kStartBound;
}

void Outcome::recheck(TimePoint now, bool sweep_coming)
{
    if (phase_ != Phase::Idle)
        return;  // a check is already on its way
    if (max_tries_ > 0 && tries_ >= max_tries_)
        return;  // given up on this return: said so once
    if (sweep_coming) {
        phase_ = Phase::AwaitSweep;
        at_ = now + kStartBound;
    } else {
        phase_ = Phase::Grace;
        ended_ = now;
        at_ = now + grace();
    }
}

void Outcome::sweep_progress(TimePoint now)
{
    if (phase_ != Phase::AwaitSweep)
        return;
    at_ = now + kSweepBound;
}

void Outcome::subnet_up(TimePoint now)
{
    if (phase_ != Phase::AwaitSweep)
        return;
    phase_ = Phase::Grace;
    ended_ = now;
    at_ = now + grace();
}

std::optional<TimePoint> Outcome::deadline() const
{
    if (phase_ == Phase::Idle)
        return std::nullopt;
    return at_;
}

Outcome::Verdict Outcome::on_deadline(LinkState state, TimePoint now)
{
    if (phase_ == Phase::AwaitSweep) {
        // No end reported within the bound: treat the sweep as over now.
        ended_ = now;
        if (state == LinkState::Init) {
            phase_ = Phase::Grace;
            at_ = now + grace();
            return Verdict::Wait;
        }
    }
    if (state != LinkState::Init) {
        phase_ = Phase::Idle;
        return Verdict::Fine;
    }
    waited_ = std::chrono::duration_cast<Millis>(now - ended_);
    phase_ = Phase::Idle;
    if (max_tries_ == 0)
        return Verdict::Off;
    if (tries_ >= max_tries_)
        return Verdict::GiveUp;
    ++tries_;
    return Verdict::Retry;
}

}  // namespace portwatch
