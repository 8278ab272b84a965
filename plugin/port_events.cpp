// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// From a device's async events to the watched port's transition.
//
// An event names a device and a port; like the kernel's core/cache.c,
// portwatch does not trust its type but queries the port again and lets the
// port's tracker derive what happened (PortTracker). Past the resolver a
// port is its GUID: the tracker is found by the GUID the device learnt at
// open, so a port keeps its history across a reset and a rename. Every
// failure of a device (DEVICE_FATAL, a failed read or query) ends in lose():
// the device set reopens it later, and the resolver says where the watched
// port went.
#include <algorithm>
#include <cstdint>
#include <string>

#include "errno_text.hpp"
#include "monitor.hpp"

namespace portwatch {

namespace {
// Events read from one device per wake-up: a device flooding events cannot
// starve the others or stop().
constexpr int kEventsPerWakeup = 64;
}  // namespace

bool Monitor::drain_device(VerbsDevice &dev, TimePoint now)
{
    const unsigned long closes = devices_.closes();
    for (int i = 0; i < kEventsPerWakeup && !stopping_; ++i) {
        AsyncEvent event;
        int err = 0;
        switch (dev.read_event(&event, &err)) {
        case VerbsDevice::Read::Empty:
            return true;
        case VerbsDevice::Read::Failed: {
            // A copy: lose() closes dev.
            // NOLINTNEXTLINE(performance-unnecessary-copy-initialization)
            const std::string name = dev.name();
            lose(name, errno_text(err).c_str(), now);
            return false;
        }
        case VerbsDevice::Read::Event:
            ++counters_.events;
            handle_event(dev, event, now);
            if (devices_.closes() != closes)
                return false;
            break;
        }
    }
    return true;
}

void Monitor::handle_event(VerbsDevice &dev, const AsyncEvent &event, TimePoint now)
{
    const char *type = ibv_event_type_str(event.type);
    if (event.type == IBV_EVENT_DEVICE_FATAL) {
        // A copy: lose() closes dev.
        // NOLINTNEXTLINE(performance-unnecessary-copy-initialization)
        const std::string name = dev.name();
        lose(name, type, now);
        return;
    }
    if (event.port == 0 || event.port > dev.port_count()) {
        host_.log(PW_LOG_DEBUG, "%s event %s: not a port event, ignored", dev.name().c_str(), type);
        return;
    }
    bool link_event = event.type == IBV_EVENT_PORT_ERR || event.type == IBV_EVENT_PORT_ACTIVE;
    // A GID change may move the port GUID we matched on; while the watched
    // port is not found (OpenSM's GUID on no open port, or a failed GID
    // query), every event is a chance to find it.
    if (event.type == IBV_EVENT_GID_CHANGE)
        note_port_guid(dev, event.port);
    if (event.type != IBV_EVENT_GID_CHANGE && !resolver_.looking()) {
        examine_port(dev, event.port, type, link_event, now);
        return;
    }
    // Resolving may examine (and lose) devices: dev is looked up again if so.
    const std::string name = dev.name();
    const unsigned long closes = devices_.closes();
    resolve(now);
    if (VerbsDevice *still = devices_.closes() == closes ? &dev : devices_.find(name))
        examine_port(*still, event.port, type, link_event, now);
}

void Monitor::examine_port(VerbsDevice &dev, unsigned port, const char *cause,
                           bool link_may_have_changed, TimePoint now)
{
    PortKey key{dev.name(), port};
    // Once the watched port is known no other port matters, not even a query:
    // events on a host's other ports cost next to nothing.
    const std::optional<PortKey> &watched = resolver_.watched();
    if ((watched && key != *watched) || !resolver_.is_watched(key, true)) {
        host_.log(PW_LOG_DEBUG, "%s %s: not the watched port, ignored", key.str().c_str(), cause);
        return;
    }
    PortInfo info;
    if (int err = dev.query_port(port, &info)) {
        std::string why = std::string("query_port: ") + errno_text(err);
        lose(key.device, why.c_str(), now);
        return;
    }
    if (!resolver_.is_watched(key, info.infiniband)) {
        host_.log(PW_LOG_DEBUG, "%s %s: not the watched port, ignored", key.str().c_str(), cause);
        return;
    }
    if (!dev.known_guid(port))
        note_port_guid(dev, port);  // the tracker is keyed by it
    Transition t = tracker(dev, key).update(info.snapshot);
    act(key, t, cause, link_may_have_changed, now);
}

void Monitor::sync_ports(const std::string &name, TimePoint now)
{
    VerbsDevice *dev = devices_.find(name);
    for (unsigned port = 1; dev && port <= dev->port_count(); ++port) {
        examine_port(*dev, port, "device opened", true, now);
        dev = devices_.find(name);  // examine_port may have lost it
    }
}

void Monitor::note_port_guid(VerbsDevice &dev, unsigned port)
{
    // A device that comes back under the same name may be another HCA, or
    // the same one with a new GUID. Say so once: it explains why the watched
    // port may no longer resolve.
    PortKey key{dev.name(), port};
    uint64_t guid = 0;
    if (dev.port_guid(port, &guid) != 0)
        return;  // unknown: keep what we have
    devices_.remember_guid(key.device, port, guid);
    auto [it, inserted] = port_guids_.emplace(key, guid);
    if (inserted || it->second == guid)
        return;
    host_.log(PW_LOG_INFO, "%s came back with port GUID 0x%016llx (was 0x%016llx)",
              key.str().c_str(), static_cast<unsigned long long>(guid),
              static_cast<unsigned long long>(it->second));
    it->second = guid;
}

void Monitor::resolve(TimePoint now)
{
    const ResetBaseline baseline = reset_baseline();
    std::optional<PortKey> before = resolver_.watched();
    if (resolver_.resolve(devices_)) {
        const std::optional<PortKey> &after = resolver_.watched();
        if (after && after != before)
            sync_ports(after->device, now);
    }
    looking(now);
    note_device_back(now, baseline);
}

void Monitor::looking(TimePoint now)
{
    bool looking = resolver_.looking();
    unresolved_ = looking;
    // New devices are found only by listing them again.
    devices_.keep_looking(looking, now);
}

void Monitor::rescan(TimePoint now)
{
    // Before the ports are looked at: a return's sweep is requested there.
    const ResetBaseline baseline = reset_baseline();
    std::optional<PortKey> before = resolver_.watched();
    std::vector<std::string> opened = devices_.scan(now);
    // Learn the new devices' port GUIDs first: the watched port is found by
    // its GUID, and a device back under another name by its GUIDs.
    for (const std::string &name : opened)
        if (VerbsDevice *dev = devices_.find(name))
            for (unsigned port = 1; port <= dev->port_count(); ++port)
                note_port_guid(*dev, port);
    resolver_.resolve(devices_);
    for (const std::string &name : opened)
        sync_ports(name, now);
    // The port may now resolve to a device that was already open.
    const std::optional<PortKey> &after = resolver_.watched();
    if (after && after != before && devices_.find(after->device) &&
        std::find(opened.begin(), opened.end(), after->device) == opened.end())
        sync_ports(after->device, now);
    looking(now);
    note_device_back(now, baseline);
}

void Monitor::lose(const std::string &name, const char *why, TimePoint now)
{
    ++counters_.device_failures;
    note_device_lost(name);
    devices_.lose(name, why, now);
    // The watched port may be gone with it: say so, and keep looking.
    resolver_.resolve(devices_);
    looking(now);
}

}  // namespace portwatch
