// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The verbs devices portwatch holds open: what happens when one goes away.
//
// Every way a device can fail - it will not open, a query fails, the driver
// reports DEVICE_FATAL, the async fd reads EIO or polls POLLERR - ends in
// lose(): the device is closed and, if it is wanted back, reopened after a
// per-device backoff (Options::retry_min doubling up to retry_max). A
// successful open does not reset that backoff: only a device that then stays
// healthy for a while does, so a device that opens and fails at once (firmware
// error state) is retried ever more slowly, never in a tight loop.
//
// scan() lists the devices and opens the wanted ones that are new or whose
// retry is due. It runs on a timer only while something is missing: a device
// that was lost and is not back (by name, or by its port GUIDs under another
// name), a listed device that would not open, or - said by the caller - a
// watched port not found yet. A healthy, idle host has no timer at all.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backoff.hpp"
#include "clock.hpp"
#include "host.hpp"
#include "options.hpp"
#include "verbs_device.hpp"

namespace portwatch {

struct PortKey {
    std::string device;
    unsigned port = 0;

    std::string str() const { return device + ":" + std::to_string(port); }
    bool operator==(const PortKey &o) const { return device == o.device && port == o.port; }
    bool operator!=(const PortKey &o) const { return !(*this == o); }
    bool operator<(const PortKey &o) const
    {
        return device != o.device ? device < o.device : port < o.port;
    }
};

// A port as the trackers know it: by its GUID, which survives a reset and a
// rename (mlx5_0 back as mlx5_3); by its place only while the GUID is
// unknown (its GID query failed).
struct PortId {
    uint64_t guid = 0;
    PortKey place;  // empty while guid is known

    static PortId of(const PortKey &key, uint64_t guid)
    {
        return guid ? PortId{guid, {}} : PortId{0, key};
    }
    bool operator<(const PortId &o) const
    {
        return guid != o.guid ? guid < o.guid : place < o.place;
    }
};

class Devices {
public:
    Devices(const Host &host, const Options &opts);

    // Lists the devices and opens every wanted one that is not open and is
    // new or due for a retry. Returns the names it opened.
    std::vector<std::string> scan(TimePoint now);
    // A configuration error found by the first scan ("" if none): an explicit
    // device that does not exist while others do, or a port it does not have.
    std::string spec_error() const;
    // Closes a failed device and schedules its reopening.
    void lose(const std::string &name, const char *why, TimePoint now);
    // The port GUIDs a device had, to recognise it if it returns under
    // another name (a reset can rename mlx5_0 to mlx5_3).
    void remember_guid(const std::string &name, unsigned port, uint64_t guid);

    VerbsDevice *find(const std::string &name) const;
    std::vector<VerbsDevice *> open_devices() const;
    // How many devices lose() has closed so far: a VerbsDevice pointer taken
    // before is still valid while this has not changed.
    unsigned long closes() const { return closes_; }

    // Whether the caller still looks for its port: while it does, the set
    // lists the devices again on its own backoff (new devices are found
    // only that way); once it does not, that timer stops.
    void keep_looking(bool looking, TimePoint now);

    // A device was added (the kernel's uevent): every device wanted back and
    // the set's own look are due now; the backoffs keep their growth.
    void arrival(TimePoint now);
    // When scan() should run again; empty while nothing is missing.
    std::optional<TimePoint> retry_at() const;
    bool retry_due(TimePoint now) const
    {
        std::optional<TimePoint> at = retry_at();
        return at && *at <= now;
    }

private:
    struct Slot {
        explicit Slot(const Backoff &b) : backoff(b) {}
        std::unique_ptr<VerbsDevice> dev;  // null while closed
        Backoff backoff;
        TimePoint retry_at{};                // closed: not before this
        TimePoint opened_at{};               // open: since when
        int open_error = 0;                  // errno of the last failed open, 0 if none
        bool lost = false;                   // it was open and failed: wanted back
        std::map<unsigned, uint64_t> guids;  // port -> port GUID, last known
    };

    bool wanted(const std::string &name) const;
    bool try_open(ibv_device *device, const std::string &name, Slot &slot, TimePoint now,
                  std::vector<std::string> &news);
    // A lost device whose ports now show up on another open device.
    void forget_renamed();
    void log_outage(TimePoint now, const std::vector<std::string> &news);

    const Host &host_;
    PortSpec spec_;
    Millis retry_min_, retry_max_;
    std::map<std::string, Slot> slots_;
    Backoff scan_backoff_;              // the set's own: looking, or the list failing
    std::optional<TimePoint> scan_at_;  // the set's next look, when it needs one
    int list_error_ = 0;                // errno of a failing device list, 0 when fine
    bool outage_logged_ = false;        // the retry line of this outage is out
    std::vector<std::string> present_;  // names the last device list showed
    unsigned long closes_ = 0;
};

}  // namespace portwatch
