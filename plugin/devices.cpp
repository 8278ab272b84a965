#include "devices.hpp"

#include <endian.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

namespace portwatch {

namespace {
constexpr Millis kFirstRetry{100};

// One line of text for the log (cut at the logger's length anyway).
std::string format(const char *fmt, const char *a, const char *b = "")
{
    char line[512];
    std::snprintf(line, sizeof(line), fmt, a, b);
    return line;
}
} // namespace

Devices::Devices(const Host &host, const Options &opts)
    : host_(host), spec_(opts.port), retry_max_(opts.retry_max), retry_delay_(kFirstRetry)
{
}

bool Devices::wanted(const std::string &name) const
{
    return spec_.kind != PortSpec::Kind::DevicePort || name == spec_.device;
}

VerbsDevice *Devices::find(const std::string &name) const
{
    auto it = open_.find(name);
    return it == open_.end() ? nullptr : it->second.get();
}

std::vector<VerbsDevice *> Devices::open_devices() const
{
    std::vector<VerbsDevice *> out;
    for (const auto &entry : open_)
        out.push_back(entry.second.get());
    return out;
}

std::vector<std::string> Devices::scan(TimePoint now)
{
    std::vector<std::string> opened;
    std::vector<std::string> news;  // failures not logged before, for the retry line
    DeviceList list;
    if (!list.ok()) {
        if (list.error() != list_error_)
            news.push_back(format("cannot list verbs devices: %s", std::strerror(list.error())));
        list_error_ = list.error();
    } else {
        list_error_ = 0;
        present_.clear();
        std::map<std::string, int> failed;
        for (int i = 0; i < list.size(); ++i) {
            std::string name = ibv_get_device_name(list[i]);
            present_.push_back(name);
            if (!wanted(name) || find(name))
                continue;
            int err = 0;
            std::unique_ptr<VerbsDevice> dev = VerbsDevice::open(list[i], &err);
            if (!dev) {
                failed[name] = err;
                auto seen = failed_.find(name);
                if (seen == failed_.end() || seen->second != err)
                    news.push_back(format("cannot open verbs device %s: %s", name.c_str(),
                                          std::strerror(err)));
                continue;
            }
            host_.log(PW_LOG_INFO, "opened verbs device %s (%u ports)", name.c_str(),
                      dev->port_count());
            open_[name] = std::move(dev);
            opened.push_back(name);
        }
        failed_ = std::move(failed);
    }
    resolve();
    if (!missing_something()) {
        retrying_ = false;
        retry_delay_ = kFirstRetry;
        outage_logged_ = false;
        return opened;
    }
    schedule_retry(now);
    long long in_ms = static_cast<long long>((retry_at_ - now) / Millis(1));
    // One line for each new failure and one when an outage begins; the
    // retries after that are logged at debug level only.
    for (const std::string &problem : news)
        host_.log(PW_LOG_ERROR, "%s; retrying in %lld ms", problem.c_str(), in_ms);
    pw_log_level level = news.empty() && !outage_logged_ ? PW_LOG_INFO : PW_LOG_DEBUG;
    outage_logged_ = true;
    if (open_.empty())
        host_.log(level, "warning: no usable verbs device%s%s; retrying in %lld ms",
                  spec_.kind == PortSpec::Kind::DevicePort ? " named " : "",
                  spec_.kind == PortSpec::Kind::DevicePort ? spec_.device.c_str() : "", in_ms);
    else if (watched_ && !find(watched_->device))
        host_.log(level, "device %s of the watched port is not back; retrying in %lld ms",
                  watched_->device.c_str(), in_ms);
    else
        host_.log(level, "verbs device(s) that failed to open may hold the watched port; "
                         "retrying in %lld ms", in_ms);
    return opened;
}

std::string Devices::spec_error() const
{
    if (spec_.kind != PortSpec::Kind::DevicePort)
        return "";
    if (VerbsDevice *dev = find(spec_.device)) {
        if (spec_.port > dev->port_count())
            return "portwatch.port=" + spec_.describe() + ": device " + spec_.device + " has " +
                   std::to_string(dev->port_count()) + " port(s)";
        return "";
    }
    if (present_.empty() ||
        std::find(present_.begin(), present_.end(), spec_.device) != present_.end())
        return "";  // no device at all yet, or present but failing: retry, not a typo
    std::string names;
    for (const std::string &name : present_)
        names += (names.empty() ? "" : ", ") + name;
    return "portwatch.port=" + spec_.describe() + ": no verbs device named " + spec_.device +
           " (present: " + names + ")";
}

void Devices::lose(const std::string &name, const char *why, TimePoint now)
{
    if (!open_.erase(name))
        return;
    schedule_retry(now);
    host_.log(PW_LOG_ERROR, "verbs device %s failed (%s): closed it, reopening in %lld ms",
              name.c_str(), why, static_cast<long long>((retry_at_ - now) / Millis(1)));
}

bool Devices::missing_something() const
{
    // A device that would not open matters while the watched port is not
    // found: it may be the one that has it.
    return open_.empty() || (watched_ && !find(watched_->device)) ||
           (!watched_ && !failed_.empty());
}

void Devices::schedule_retry(TimePoint now)
{
    retry_at_ = now + retry_delay_;
    retrying_ = true;
    retry_delay_ = std::min(retry_delay_ * 2, retry_max_);
}

std::optional<PortKey> Devices::find_guid(uint64_t guid, std::string *why) const
{
    for (const auto &entry : open_) {
        for (unsigned port = 1; port <= entry.second->port_count(); ++port) {
            uint64_t port_guid = 0;
            if (int err = entry.second->port_guid(port, &port_guid)) {
                if (why->empty())
                    *why = " (the GID query of " + PortKey{entry.first, port}.str() +
                           " failed: " + std::strerror(err) + ")";
                continue;
            }
            if (port_guid == guid)
                return PortKey{entry.first, port};
        }
    }
    return std::nullopt;
}

bool Devices::resolve()
{
    std::optional<PortKey> found;
    uint64_t guid = 0;
    std::string why;  // a failed GID query, which may be why the GUID is not found
    const char *source = "named by portwatch.port";
    switch (spec_.kind) {
    case PortSpec::Kind::DevicePort:
        found = PortKey{spec_.device, spec_.port};
        break;
    case PortSpec::Kind::Guid:
        guid = spec_.guid;
        found = find_guid(guid, &why);
        break;
    case PortSpec::Kind::Auto:
        guid = be64toh(host_.sm_port_guid_net());
        source = "OpenSM's bound port";
        if (guid)
            found = find_guid(guid, &why);
        break;
    }
    // Logged once per answer: a port that never resolves is one line, not
    // one per event or per OpenSM report.
    if (found == watched_ && (found || unresolved_logged_ == guid))
        return false;
    watched_ = found;
    unresolved_logged_ = found ? std::nullopt : std::optional<uint64_t>(guid);
    if (found && guid)
        host_.log(PW_LOG_INFO, "watching %s (port GUID 0x%016llx, %s)", found->str().c_str(),
                  static_cast<unsigned long long>(guid), source);
    else if (found)
        host_.log(PW_LOG_INFO, "watching %s (%s)", found->str().c_str(), source);
    else if (guid)
        host_.log(PW_LOG_INFO,
                  "port GUID 0x%016llx (%s) is on no open verbs port; watching every "
                  "InfiniBand port until it resolves%s",
                  static_cast<unsigned long long>(guid), source, why.c_str());
    else
        host_.log(PW_LOG_INFO, "OpenSM has not chosen its port yet; watching every "
                               "InfiniBand port until it does");
    return true;
}

bool Devices::is_watched(const PortKey &key, bool infiniband) const
{
    return watched_ ? key == *watched_ : infiniband;
}

} // namespace portwatch
