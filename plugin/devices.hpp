// The verbs devices portwatch holds open, and which of their ports it watches.
//
// Devices are opened by name: the one named by portwatch.port, or all of them
// when the port is found by GUID. A device that fails (DEVICE_FATAL, EIO,
// POLLERR) is closed and reopened with a bounded exponential backoff; the
// retry timer runs only while something wanted is missing, never when idle.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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

class Devices {
public:
    Devices(const Host &host, const Options &opts);

    // Opens every wanted device not yet open; returns the names it opened.
    std::vector<std::string> scan(TimePoint now);
    // A configuration error found by the first scan ("" if none): an explicit
    // device that does not exist while others do, or a port it does not have.
    std::string spec_error() const;
    // Closes a failed device and schedules its reopening.
    void lose(const std::string &name, const char *why, TimePoint now);

    VerbsDevice *find(const std::string &name) const;
    std::vector<VerbsDevice *> open_devices() const;

    // When scan() should run again; empty while nothing wanted is missing.
    std::optional<TimePoint> retry_at() const
    {
        return retrying_ ? std::optional<TimePoint>(retry_at_) : std::nullopt;
    }
    bool retry_due(TimePoint now) const { return retrying_ && retry_at_ <= now; }

    // Decides the watched port from the spec (and OpenSM's port GUID for
    // "auto"); logs when the answer changes. True if it changed.
    bool resolve();
    const std::optional<PortKey> &watched() const { return watched_; }
    // While unresolved every InfiniBand port counts as watched.
    bool is_watched(const PortKey &key, bool infiniband) const;

private:
    bool wanted(const std::string &name) const;
    bool missing_something() const;
    void schedule_retry(TimePoint now);
    // *why: the first failed GID query, as " (the GID query of ... failed: ...)".
    std::optional<PortKey> find_guid(uint64_t guid, std::string *why) const;

    const Host &host_;
    PortSpec spec_;
    Millis retry_max_;
    Millis retry_delay_;
    // Not an optional: both fields are always defined. GCC evaluates
    // "retry && *retry <= now" on an optional by reading the payload first,
    // which valgrind reports as a jump on an uninitialised value.
    TimePoint retry_at_{};
    bool retrying_ = false;
    std::map<std::string, std::unique_ptr<VerbsDevice>> open_;
    std::map<std::string, int> failed_;  // listed, wanted, but would not open: errno
    int list_error_ = 0;                 // errno of a failing device list, 0 when fine
    bool outage_logged_ = false;         // the retry line of this outage is out
    std::optional<PortKey> watched_;
    std::optional<uint64_t> unresolved_logged_;  // the GUID (0: none yet) logged as not found
    std::vector<std::string> present_;  // names the last device list showed
};

} // namespace portwatch
