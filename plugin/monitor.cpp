#include "monitor.hpp"

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace portwatch {

Monitor::Monitor(const pw_host &host, const Options &opts)
    : host_(host), opts_(opts), devices_(host_, opts_), policy_(opts_)
{
    TimePoint now = Clock::now();
    devices_.scan(now);
    std::string error = devices_.spec_error();
    if (!error.empty())
        throw std::runtime_error(error);
    for (VerbsDevice *dev : devices_.open_devices())
        sync_ports(dev->name(), now);
    unresolved_ = !devices_.watched();
}

Monitor::~Monitor()
{
    stop();
}

void Monitor::start()
{
    thread_ = boost::thread([this] { run(); });
}

void Monitor::stop()
{
    if (stopped_)
        return;
    stopped_ = true;
    stopping_ = true;
    wakeup_.signal();
    if (thread_.joinable())
        thread_.join();
    host_.log(PW_LOG_INFO,
              "stopped: events=%lu transitions=%lu sweeps=%lu marks=%lu coalesced=%lu "
              "ignored=%lu device_failures=%lu",
              counters_.events, counters_.transitions, counters_.sweeps, counters_.marks,
              counters_.coalesced, counters_.ignored, counters_.device_failures);
}

void Monitor::report(pw_report report)
{
    if (std::optional<double> ms = telemetry_.on_report(report, Clock::now())) {
        const char *name = report == PW_REPORT_HEAVY_SWEEP_START  ? "HEAVY_SWEEP_START"
                           : report == PW_REPORT_HEAVY_SWEEP_DONE ? "HEAVY_SWEEP_DONE"
                                                                  : "SUBNET_UP";
        host_.log(PW_LOG_INFO, "telemetry: %s %.3f ms after the port event", name, *ms);
    }
    // OpenSM may have (re)chosen its port: let the thread look again.
    if (unresolved_ && (report == PW_REPORT_SUBNET_UP || report == PW_REPORT_STATE_CHANGE) &&
        !resolve_requested_.exchange(true))
        wakeup_.signal();
}

int Monitor::poll_timeout(TimePoint now) const
{
    std::optional<TimePoint> due = policy_.deadline();
    std::optional<TimePoint> retry = devices_.retry_at();
    if (retry && (!due || *retry < *due))
        due = retry;
    if (!due)
        return -1;  // idle: sleep until an fd wakes us
    if (*due <= now)
        return 0;
    // Round up so we never wake a hair early and spin.
    auto ms = std::chrono::ceil<Millis>(*due - now).count();
    return ms > 24 * 3600 * 1000 ? 24 * 3600 * 1000 : static_cast<int>(ms);
}

void Monitor::run()
{
    // Named so admins can find it in top -H and tests can read its counters.
    pthread_setname_np(pthread_self(), "portwatch");
    std::vector<pollfd> fds;
    std::vector<std::string> names;
    while (!stopping_) {
        fds.clear();
        names.clear();
        fds.push_back({wakeup_.fd(), POLLIN, 0});
        // The watched port's device first: when several devices have events
        // waiting, OpenSM's own port is never served behind the others.
        std::vector<VerbsDevice *> devices = devices_.open_devices();
        if (const std::optional<PortKey> &watched = devices_.watched())
            std::stable_partition(devices.begin(), devices.end(),
                                  [&](VerbsDevice *dev) { return dev->name() == watched->device; });
        for (VerbsDevice *dev : devices) {
            fds.push_back({dev->async_fd(), POLLIN, 0});
            names.push_back(dev->name());
        }
        int rc = poll(fds.data(), fds.size(), poll_timeout(Clock::now()));
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            host_.log(PW_LOG_ERROR, "poll failed: %s; event thread stops", std::strerror(errno));
            return;
        }
        serve(Clock::now(), fds, std::move(names));
    }
}

void Monitor::serve(TimePoint now, const std::vector<pollfd> &fds, std::vector<std::string> names)
{
    if (fds[0].revents) {
        wakeup_.drain();
        if (stopping_)
            return;
        if (resolve_requested_.exchange(false) && devices_.resolve()) {
            unresolved_ = !devices_.watched();
            if (devices_.watched())
                sync_ports(devices_.watched()->device, now);
        }
    }
    for (size_t i = 1; i < fds.size(); ++i) {
        const std::string &name = names[i - 1];
        if (fds[i].revents & POLLIN)
            drain_device(name, now);
        // Disassociated device: recent kernels report POLLERR, reads fail with EIO.
        if ((fds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) && devices_.find(name)) {
            ++counters_.device_failures;
            devices_.lose(name, fds[i].revents & POLLNVAL ? "POLLNVAL" : "POLLERR", now);
        }
    }
    if (std::optional<TimePoint> due = policy_.deadline(); due && *due <= now) {
        Decision d = policy_.on_deadline(host_.sm_state(), now);
        host_.log(PW_LOG_INFO, "hold-off over: %s [action=%s]", d.reason, action_name(d.action));
        apply(d, deferred_event_time_);
    }
    if (devices_.retry_due(now))
        rescan(now);
}

void Monitor::rescan(TimePoint now)
{
    std::optional<PortKey> before = devices_.watched();
    std::vector<std::string> opened = devices_.scan(now);
    for (const std::string &name : opened)
        sync_ports(name, now);
    // The port may now resolve to a device that was already open.
    const std::optional<PortKey> &after = devices_.watched();
    if (after && after != before && devices_.find(after->device) &&
        std::find(opened.begin(), opened.end(), after->device) == opened.end())
        sync_ports(after->device, now);
    unresolved_ = !after;
}

void Monitor::drain_device(const std::string &name, TimePoint now)
{
    // Bounded: a device flooding events cannot starve the others or stop().
    for (int i = 0; i < 64 && !stopping_; ++i) {
        VerbsDevice *dev = devices_.find(name);
        if (!dev)
            return;
        AsyncEvent event;
        int err = 0;
        switch (dev->read_event(&event, &err)) {
        case VerbsDevice::Read::Empty:
            return;
        case VerbsDevice::Read::Failed:
            ++counters_.device_failures;
            devices_.lose(name, std::strerror(err), now);
            return;
        case VerbsDevice::Read::Event:
            ++counters_.events;
            handle_event(name, event, now);
            break;
        }
    }
}

void Monitor::handle_event(const std::string &name, const AsyncEvent &event, TimePoint now)
{
    const char *type = ibv_event_type_str(event.type);
    if (event.type == IBV_EVENT_DEVICE_FATAL) {
        ++counters_.device_failures;
        devices_.lose(name, type, now);
        return;
    }
    VerbsDevice *dev = devices_.find(name);
    if (!dev || event.port == 0 || event.port > dev->port_count()) {
        host_.log(PW_LOG_DEBUG, "%s event %s: not a port event, ignored", name.c_str(), type);
        return;
    }
    // A GID change may move the port GUID we matched on; while the watched
    // port is not found (OpenSM's GUID on no open port, or a failed GID
    // query), every event is a chance to find it.
    if ((event.type == IBV_EVENT_GID_CHANGE || unresolved_) && devices_.resolve())
        unresolved_ = !devices_.watched();
    examine_port(*dev, event.port, type, now);
}

void Monitor::examine_port(VerbsDevice &dev, unsigned port, const char *cause, TimePoint now)
{
    PortKey key{dev.name(), port};
    // Once the watched port is known no other port matters, not even a query:
    // events on a host's other ports cost next to nothing.
    if (devices_.watched() && key != *devices_.watched()) {
        host_.log(PW_LOG_DEBUG, "%s %s: not the watched port, ignored", key.str().c_str(), cause);
        return;
    }
    PortInfo info;
    if (int err = dev.query_port(port, &info)) {
        ++counters_.device_failures;
        std::string why = std::string("query_port: ") + std::strerror(err);
        devices_.lose(key.device, why.c_str(), now);
        return;
    }
    if (!devices_.is_watched(key, info.infiniband)) {
        host_.log(PW_LOG_DEBUG, "%s %s: not the watched port, ignored", key.str().c_str(), cause);
        return;
    }
    Transition t = trackers_[key].update(info.snapshot);
    act(key, t, cause, now);
}

void Monitor::sync_ports(const std::string &name, TimePoint now)
{
    VerbsDevice *dev = devices_.find(name);
    for (unsigned port = 1; dev && port <= dev->port_count(); ++port) {
        note_port_guid(*dev, port);
        examine_port(*dev, port, "device opened", now);
        dev = devices_.find(name);  // examine_port may have lost it
    }
}

void Monitor::note_port_guid(VerbsDevice &dev, unsigned port)
{
    // A device that comes back under the same name may be another HCA, or
    // the same one with a new GUID. Say so once: it explains why the watched
    // port may no longer resolve. The port's last state is kept: if the new
    // port is up where the old one was down (or back at INIT), a heavy sweep
    // is what OpenSM needs anyway.
    PortKey key{dev.name(), port};
    uint64_t guid = 0;
    if (dev.port_guid(port, &guid) != 0)
        return;  // unknown: keep what we have
    auto [it, inserted] = port_guids_.emplace(key, guid);
    if (inserted || it->second == guid)
        return;
    host_.log(PW_LOG_INFO, "%s came back with port GUID 0x%016llx (was 0x%016llx)",
              key.str().c_str(), static_cast<unsigned long long>(guid),
              static_cast<unsigned long long>(it->second));
    it->second = guid;
}

void Monitor::act(const PortKey &key, const Transition &t, const char *cause, TimePoint now)
{
    if (t.change == Change::Initial) {
        host_.log(PW_LOG_INFO, "%s is %s (phys state %u, LID %u)", key.str().c_str(),
                  link_state_name(t.to.state), t.to.phys_state, t.to.lid);
        return;
    }
    pw_sm_state sm = host_.sm_state();
    Decision d = policy_.on_change(t.change, sm, now);
    bool link_change = t.change == Change::LinkLost || t.change == Change::LinkBack;
    if (link_change) {
        ++counters_.transitions;
        if (d.action == Action::None)
            ++counters_.ignored;
    }
    // Repeats (rxe's second PORT_ACTIVE, mlx5's PORT_ERR read back twice)
    // stay visible at VERBOSE: an admin checking "no second sweep" sees why.
    pw_log_level level = link_change || t.change == Change::Progress ? PW_LOG_INFO
                                                                     : PW_LOG_VERBOSE;
    host_.log(level, "%s %s -> %s (%s): %s, %s%s%s [action=%s]", key.str().c_str(),
              link_state_name(t.from->state), link_state_name(t.to.state), cause,
              change_name(t.change), d.reason, d.action == Action::None && link_change ? "; SM is " : "",
              d.action == Action::None && link_change ? sm_state_name(sm) : "",
              action_name(d.action));
    apply(d, now);
}

void Monitor::apply(const Decision &d, TimePoint event_time)
{
    switch (d.action) {
    case Action::Sweep:
        // Stamp first: the sweeper may report HEAVY_SWEEP_START before the
        // wake-up call below has even returned.
        telemetry_.sweep_requested(event_time);
        if (!host_.force_heavy_sweep(true)) {
            host_.log(PW_LOG_INFO, "OpenSM is exiting: sweep not requested");
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

} // namespace portwatch
