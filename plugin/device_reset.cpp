// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// After OpenSM's own device came back from a reset: is OpenSM's MAD path
// alive, and if not, what portwatch does about it.
//
// A reset on real hardware leaves OpenSM's umad file dead for good (every
// read and write fails with EIO), while the process runs on: deaf and mute,
// it loses every trap and every change, and looks alive to anything that
// only checks for the process. MadPathCheck judges it by OpenSM's own count
// of SMPs received; where the path survives the reset (a simulator, a
// driver that keeps the old file working) it sees SMPs and nothing happens.
// Found dead: with portwatch.on_device_reset=restart, OpenSM is asked to
// exit cleanly so that its service manager starts it again (the packages'
// systemd drop-in); with log, it is said once, in the log, syslog and the
// metrics file.
#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "errno_text.hpp"
#include "monitor.hpp"

namespace portwatch {

namespace {
TimePoint from_ticks(Clock::rep ticks)
{
    return TimePoint(Clock::duration(ticks));
}

double unix_in(Millis after)
{
    return std::chrono::duration<double>(
               (std::chrono::system_clock::now() + after).time_since_epoch())
        .count();
}
}  // namespace

void Monitor::note_device_lost(const std::string &name)
{
    const std::optional<PortKey> &watched = resolver_.watched();
    if (!watched || watched->device != name || exit_requested_)
        return;
    reset_pending_ = true;
    mad_check_.cancel();  // its next return is judged afresh
}

Monitor::ResetBaseline Monitor::reset_baseline() const
{
    // Only while a return is awaited: no call into OpenSM otherwise.
    if (!reset_pending_)
        return {};
    return {host_.smps_received(), sweep_starts_};
}

void Monitor::note_device_back(TimePoint now, ResetBaseline baseline)
{
    const std::optional<PortKey> &watched = resolver_.watched();
    if (!reset_pending_ || !watched || !devices_.find(watched->device))
        return;
    reset_pending_ = false;
    if (mad_file_died_at_) {
        // The kernel said so already: no SMPs to wait for. (A look still
        // due gives the verdict itself.)
        if (!mad_file_look_at_)
            mad_file_verdict(*watched, now);
        return;
    }
    mad_path_dead_ = false;  // a new reset, a new verdict
    mad_check_.start(now, baseline.received, baseline.starts);
    host_.log(PW_LOG_INFO,
              "%s is back after its device was lost: checking that OpenSM still receives SMPs "
              "(%u so far; portwatch.reset_check_ms=%lld)",
              watched->str().c_str(), static_cast<unsigned>(baseline.received),
              static_cast<long long>(opts_.reset_check.count()));
}

void Monitor::check_mad_path(TimePoint now)
{
    const std::optional<PortKey> watched = resolver_.watched();
    if (!watched || !devices_.find(watched->device)) {
        // Lost again on the way: its return starts the check again.
        mad_check_.cancel();
        reset_pending_ = true;
        return;
    }
    // Starts first, then their time: a start counted is no later than the time read.
    unsigned starts = sweep_starts_;
    TimePoint last_start = from_ticks(last_sweep_start_);
    pw_sm_state sm = host_.sm_state();
    bool sweeping = sm == PW_SM_MASTER || sm == PW_SM_DISCOVERING;
    uint32_t received = host_.smps_received();
    switch (mad_check_.on_deadline(now, received, starts, last_start, sweeping)) {
    case MadPathCheck::Verdict::Works:
        host_.log(PW_LOG_INFO, "OpenSM's MAD path works after the reset of %s: %u SMPs received",
                  watched->device.c_str(),
                  static_cast<unsigned>(mad_check_.received_since(received)));
        return;
    case MadPathCheck::Verdict::Dead: {
        char evidence[160];
        (void)std::snprintf(
            evidence, sizeof(evidence), "no SMP received in %lld ms (%u in all), %s",
            static_cast<long long>(mad_check_.waited(now).count()), static_cast<unsigned>(received),
            mad_check_.sweep_started()
                ? "a heavy sweep started and not even the port's own HCA answered"
                : "OpenSM's sweeper started no heavy sweep");
        mad_path_dead(*watched, now, evidence);
        return;
    }
    case MadPathCheck::Verdict::Wait:
        break;
    }
    if (!mad_check_.sweep_wanted())
        return;
    // A device return normally brings a heavy sweep (the link came back);
    // without one there is nothing to judge by.
    host_.log(PW_LOG_VERBOSE,
              "no heavy sweep since %s came back %lld ms ago: requesting one to check OpenSM's "
              "MAD path",
              watched->device.c_str(), static_cast<long long>(mad_check_.waited(now).count()));
    if (host_.force_heavy_sweep(true))
        ++counters_.sweeps;
}

void Monitor::mad_path_dead(const PortKey &key, TimePoint now, const std::string &evidence)
{
    ++counters_.mad_path_dead;
    mad_path_dead_ = true;
    mad_check_.cancel();
    const VerbsDevice *dev = devices_.find(key.device);
    const unsigned long long guid = dev ? dev->known_guid(key.port) : 0;
    if (opts_.on_device_reset == OnDeviceReset::Log) {
        host_.log(PW_LOG_SYS_ERROR,
                  "ERROR: OpenSM's MAD path is dead since the reset of %s (port GUID 0x%016llx): "
                  "%s. OpenSM can neither send nor receive on this port: restart opensm "
                  "(portwatch.on_device_reset=log)",
                  key.device.c_str(), guid, evidence.c_str());
        return;
    }
    host_.log(PW_LOG_SYS_ERROR,
              "ERROR: OpenSM's MAD path is dead since the reset of %s (port GUID 0x%016llx): %s. "
              "Asking OpenSM to exit so that its service manager starts it again "
              "(portwatch.on_device_reset=restart)",
              key.device.c_str(), guid, evidence.c_str());
    request_exit(now);
}

void Monitor::start_watching_mad_file()
{
    const int osm_fd = host_.mad_fd();
    if (osm_fd < 0)
        return;  // not bound yet
    if (!mad_file_.watch(osm_fd)) {
        const int err = errno;
        mad_file_done_ = true;
        host_.log(PW_LOG_VERBOSE,
                  "cannot watch OpenSM's umad file (fd %d: %s): after a device reset, OpenSM's "
                  "count of SMPs received alone tells whether its MAD path works",
                  osm_fd, errno_text(err).c_str());
        return;
    }
    host_.log(PW_LOG_VERBOSE, "watching OpenSM's umad file (fd %d) for the kernel's POLLERR",
              osm_fd);
}

void Monitor::mad_file_event(short revents, TimePoint now)
{
    if (!(revents & (POLLERR | POLLHUP | POLLNVAL)))
        return;
    // Level-triggered: never polled again. A disassociated file stays dead.
    mad_file_.close();
    mad_file_done_ = true;
    if (revents & POLLNVAL)
        return;  // not ours to judge (it cannot happen to our own duplicate)
    mad_file_died_at_ = now;
    mad_path_dead_ = true;  // deaf from now on, whether or not the device returns
    mad_check_.cancel();
    const bool muted = host_.mute_error_log();
    host_.log(PW_LOG_SYS_ERROR,
              "ERROR: the kernel reports OpenSM's umad file dead (POLLERR): its device was reset "
              "or removed, and OpenSM never reopens it. Its receiver would log \"ERR 5404\" for "
              "every try without end: %s; %s",
              muted ? "OpenSM's ERROR lines are off from now on (its SYS lines go on)"
                    : "OpenSM's ERROR lines were off already",
              opts_.on_device_reset == OnDeviceReset::Restart
                  ? "portwatch asks OpenSM to exit once the port's device is back "
                    "(portwatch.on_device_reset=restart)"
                  : "restart opensm once the port's device is back "
                    "(portwatch.on_device_reset=log)");
    // The verbs side of the same reset (DEVICE_FATAL, EIO) comes within
    // microseconds of this; look a moment later at whether the watched
    // port's device is gone or already back.
    mad_file_look_at_ = now + kMadFileLook;
}

void Monitor::look_after_mad_file_died(TimePoint now)
{
    mad_file_look_at_.reset();
    const std::optional<PortKey> watched = resolver_.watched();
    VerbsDevice *dev = watched ? devices_.find(watched->device) : nullptr;
    if (!dev) {
        reset_pending_ = true;  // its return gives the verdict (note_device_back)
        return;
    }
    PortInfo info;
    if (int err = dev->query_port(watched->port, &info)) {
        // The old, disassociated context: lost now, its return decides.
        const std::string why = std::string("query_port: ") + errno_text(err);
        lose(watched->device, why.c_str(), now);
        reset_pending_ = true;
        return;
    }
    mad_file_verdict(*watched, now);
}

void Monitor::mad_file_verdict(const PortKey &key, TimePoint now)
{
    const long long ago =
        std::chrono::duration_cast<Millis>(now - mad_file_died_at_.value_or(now)).count();
    char evidence[160];
    (void)std::snprintf(evidence, sizeof(evidence),
                        "the kernel reported OpenSM's umad file dead %lld ms ago, and OpenSM never "
                        "reopens it",
                        ago);
    mad_path_dead(key, now, evidence);
}

void Monitor::request_exit(TimePoint now)
{
    // Armed first, and said first: once OpenSM exits, nothing of portwatch
    // is left to say anything.
    if (host_.arm_exit_deadline(kExitDeadline)) {
        exit_kill_unix_ = unix_in(kExitDeadline);
        host_.log(PW_LOG_SYS_INFO,
                  "a kernel timer ends opensm with SIGKILL should it still run %lld ms from now "
                  "(its shutdown can hang after a device reset); its service manager then "
                  "restarts it as after the clean exit",
                  static_cast<long long>(kExitDeadline.count()));
        try {
            metrics_.offer(now, metrics_snapshot(), true);  // now, not after the hold-off
        } catch (const std::exception &e) {
            host_.log(PW_LOG_ERROR, "%s", e.what());
        }
    } else {
        const int err = errno;
        host_.log(PW_LOG_SYS_ERROR,
                  "ERROR: cannot arm the kernel timer that would end opensm should its exit hang "
                  "(timer_create: %s): asking for the clean exit only",
                  errno_text(err).c_str());
    }
    if (!host_.request_exit()) {
        host_.log(PW_LOG_INFO, "OpenSM is already exiting");
        return;
    }
    exit_requested_ = true;
}

}  // namespace portwatch
