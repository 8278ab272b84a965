// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// After a reset of OpenSM's device: does OpenSM's MAD path still work?
//
// On real hardware a device reset (firmware recovery, a devlink reload)
// disassociates every open file of the old device. OpenSM's umad file then
// fails every read and write with EIO for good: its SMPs go nowhere and
// nothing comes back, while the process runs on. Whether that happened is
// judged by outcome, from OpenSM's own count of SMPs received (stats.
// qp0_mads_rcvd):
//   - every heavy sweep first asks the SM port's own HCA for its NodeInfo
//     (a directed route of hop 0). The HCA's SMA answers that itself, with or
//     without a link, so a working MAD path counts at least one SMP received
//     within milliseconds of HEAVY_SWEEP_START;
//   - a standby SM polls its master: a working path counts the answers.
// So: the count moved since the device came back -> the path works. A heavy
// sweep started after the return, a bound has passed since that start, and
// still nothing received -> dead. A sweeper that starts no sweep at all while
// the SM is master or discovering (it waits for answers to SMPs sent before
// the reset, which a dead path never delivers, not even as timeouts) is dead
// after kStuckLooks looks. A working OpenSM always counts an answer first.
//
// Pure logic on the event thread: the caller reads OpenSM's counters, asks
// for the heavy sweep a look wants (sweep_wanted()) and acts on the verdict.
#pragma once

#include <cstdint>
#include <optional>

#include "clock.hpp"

namespace portwatch {

class MadPathCheck {
public:
    // Looks while the SM sweeps nothing (standby, not active) come less and
    // less often, up to this many bounds apart.
    static constexpr unsigned kMaxSpacing = 16;
    // Looks with the SM master or discovering and no sweep started.
    static constexpr unsigned kStuckLooks = 6;

    explicit MadPathCheck(Millis bound) : bound_(bound) {}

    // The watched port's device is back after a loss. received: OpenSM's
    // count of SMPs received now; starts: HEAVY_SWEEP_STARTs reported so far.
    void start(TimePoint now, uint32_t received, unsigned starts);
    // The device was lost again before a verdict: its next return starts afresh.
    void cancel() { at_.reset(); }
    bool armed() const { return at_.has_value(); }
    std::optional<TimePoint> deadline() const { return at_; }

    enum class Verdict {
        Wait,   // not yet: deadline() moved
        Works,  // SMPs received since the return
        Dead,   // a heavy sweep started and got no answer, or none could start
    };
    // Call when now >= deadline(). starts and last_start: the count of
    // HEAVY_SWEEP_STARTs and when the latest came. sweeping: the SM is
    // master or discovering (it runs heavy sweeps; a standby only polls).
    Verdict on_deadline(TimePoint now, uint32_t received, unsigned starts, TimePoint last_start,
                        bool sweeping);
    // After a Wait: no heavy sweep has started since the return and the SM
    // sweeps: the caller should request one.
    bool sweep_wanted() const { return sweep_wanted_; }
    // For the log: since the device came back, and whether a sweep started.
    Millis waited(TimePoint now) const;
    bool sweep_started() const { return first_start_.has_value(); }
    uint32_t received_since(uint32_t received) const { return received - received_; }

private:
    Millis bound_;
    std::optional<TimePoint> at_;
    TimePoint since_{};
    uint32_t received_ = 0;
    unsigned starts_ = 0;
    std::optional<TimePoint> first_start_;  // (no earlier than) the first sweep start seen
    bool sweep_wanted_ = false;
    unsigned stuck_looks_ = 0;
    unsigned spacing_ = 1;
};

}  // namespace portwatch
