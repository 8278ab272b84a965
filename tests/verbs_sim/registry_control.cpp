// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Control-only operations: fault injection and delays, statistics, waiting for the
// code under test to open or close a device, and reset between test cases.
#include "registry.hpp"

#include <chrono>
#include <thread>

namespace vsim {

// Consumes one injected failure of `call`, if any is armed.
bool Registry::take_fault(Call call, int &err)
{
    Fault &f = faults_[static_cast<std::size_t>(call)];
    if (f.count == 0)
        return false;
    f.count--;
    err = f.err;
    return true;
}

Reply Registry::set_fault(Call call, int err, unsigned count)
{
    std::lock_guard<std::mutex> lock(mu_);
    faults_[static_cast<std::size_t>(call)] = Fault{err, count};
    return Reply::success();
}

Reply Registry::set_delay(Call call, unsigned ms, unsigned count)
{
    std::lock_guard<std::mutex> lock(mu_);
    delays_[static_cast<std::size_t>(call)] = Delay{ms, count};
    return Reply::success();
}

void Registry::pause(Call call)
{
    unsigned ms = 0;
    {
        std::lock_guard<std::mutex> lock(mu_);
        Delay &d = delays_[static_cast<std::size_t>(call)];
        if (d.count == 0)
            return;
        d.count--;
        ms = d.ms;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

Reply Registry::stats(const std::optional<std::string> &name)
{
    std::lock_guard<std::mutex> lock(mu_);
    if (name) {
        Device *dev = find_latest(*name);
        if (!dev)
            return Reply::failure("stats: no device named '" + *name + "'");
        Stats s = dev->stats;
        s.open_contexts = open_context_count(*dev);
        return Reply::success(s.format());
    }
    Stats total;
    for (auto &d : devices_) {
        if (d->epoch != epoch_)
            continue;
        Stats s = d->stats;
        s.open_contexts = open_context_count(*d);
        total += s;
    }
    return Reply::success(total.format());
}

Reply Registry::last_event()
{
    std::lock_guard<std::mutex> lock(mu_);
    return Reply::success("mono_ns=" + std::to_string(last_event_ns_));
}

Reply Registry::wait_open(const std::string &name, int timeout_ms)
{
    std::unique_lock<std::mutex> lock(mu_);
    auto live = [&] {
        for (auto &c : contexts_)
            if (!c->dead && c->dev->present && c->dev->name == name)
                return true;
        return false;
    };
    if (!changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms), live))
        return Reply::failure("wait-open: no live context of '" + name + "' after " +
                              std::to_string(timeout_ms) + " ms");
    return Reply::success();
}

// Counts contexts of removed or dead devices too: tests use it to see that
// the plugin closed the context of a device that went away.
Reply Registry::wait_closed(const std::string &name, int timeout_ms)
{
    std::unique_lock<std::mutex> lock(mu_);
    auto none = [&] {
        for (auto &c : contexts_)
            if (c->dev->epoch == epoch_ && c->dev->name == name)
                return false;
        return true;
    };
    if (!changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms), none))
        return Reply::failure("wait-closed: a context of '" + name + "' is still open after " +
                              std::to_string(timeout_ms) + " ms");
    return Reply::success();
}

// Removes every device abruptly and starts a new generation: stats and
// default LIDs/GUIDs start over, faults are disarmed.  Contexts left open by
// an earlier test case stay valid (dead) until closed.
Reply Registry::reset()
{
    std::lock_guard<std::mutex> lock(mu_);
    for (auto &d : devices_)
        if (d->present)
            remove_locked(*d, true);
    epoch_++;
    faults_ = {};
    delays_ = {};
    next_uverbs_ = 0;
    next_lid_ = 1;
    next_guid_ = 1;
    changed_.notify_all();
    return Reply::success();
}

}  // namespace vsim
