// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "devices.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "errno_text.hpp"

namespace portwatch {

namespace {

// A device that stays open this long (or retry_max, if shorter) without
// failing is healthy again: its next failure starts the backoff afresh.
constexpr Millis kHealthy{10000};

long long ms_until(TimePoint at, TimePoint now)
{
    return static_cast<long long>(std::chrono::ceil<Millis>(at - now).count());
}

// One line of text for the log (cut at the logger's length anyway).
std::string format(const char *fmt, const char *a, const char *b = "")
{
    char line[512];
    (void)std::snprintf(line, sizeof(line), fmt, a, b);
    return line;
}

}  // namespace

Devices::Devices(const Host &host, const Options &opts)
    : host_(host), spec_(opts.port), retry_min_(std::min(opts.retry_min, opts.retry_max)),
      retry_max_(opts.retry_max), scan_backoff_(retry_min_, retry_max_)
{
}

bool Devices::wanted(const std::string &name) const
{
    return spec_.kind != PortSpec::Kind::DevicePort || name == spec_.device;
}

VerbsDevice *Devices::find(const std::string &name) const
{
    auto it = slots_.find(name);
    return it == slots_.end() ? nullptr : it->second.dev.get();
}

std::vector<VerbsDevice *> Devices::open_devices() const
{
    std::vector<VerbsDevice *> out;
    for (const auto &entry : slots_)
        if (entry.second.dev)
            out.push_back(entry.second.dev.get());
    return out;
}

bool Devices::try_open(ibv_device *device, const std::string &name, Slot &slot, TimePoint now,
                       std::vector<std::string> &news)
{
    int err = 0;
    std::unique_ptr<VerbsDevice> dev = VerbsDevice::open(device, &err);
    if (!dev) {
        if (slot.open_error != err)
            news.push_back(
                format("cannot open verbs device %s: %s", name.c_str(), errno_text(err).c_str()));
        slot.open_error = err;
        slot.retry_at = now + slot.backoff.take();
        return false;
    }
    // A device back after a failure is news for the on-call admin (syslog).
    host_.log(slot.lost ? PW_LOG_SYS_INFO : PW_LOG_INFO, "opened verbs device %s (%u ports)",
              name.c_str(), dev->port_count());
    slot.dev = std::move(dev);
    slot.opened_at = now;
    slot.open_error = 0;
    slot.lost = false;
    // Port GUIDs are learnt afresh (remember_guid): this may be another HCA.
    slot.guids.clear();
    return true;
}

std::vector<std::string> Devices::scan(TimePoint now)
{
    std::vector<std::string> opened;
    std::vector<std::string> news;  // failures not logged before, for the retry line
    DeviceList list;
    if (!list.ok()) {
        if (list.error() != list_error_)
            // ibv_get_device_list(3): ENOSYS is "no kernel support for RDMA".
            news.push_back(format(
                "cannot list verbs devices: %s%s", errno_text(list.error()).c_str(),
                list.error() == ENOSYS ? " (no kernel RDMA support: is ib_uverbs loaded?)" : ""));
        list_error_ = list.error();
    } else {
        list_error_ = 0;
        present_.clear();
        for (int i = 0; i < list.size(); ++i) {
            std::string name = ibv_get_device_name(list[i]);
            present_.push_back(name);
            if (!wanted(name))
                continue;
            auto [it, is_new] = slots_.try_emplace(name, Backoff(retry_min_, retry_max_));
            Slot &slot = it->second;
            if (slot.dev || (!is_new && slot.retry_at > now))
                continue;
            if (try_open(list[i], name, slot, now, news))
                opened.push_back(name);
        }
        // A device that would not open and is no longer listed is forgotten;
        // one that was lost stays wanted until it is back.
        for (auto it = slots_.begin(); it != slots_.end();) {
            Slot &slot = it->second;
            bool listed = std::find(present_.begin(), present_.end(), it->first) != present_.end();
            if (!slot.dev && !slot.lost && !listed) {
                it = slots_.erase(it);
                continue;
            }
            ++it;
        }
    }
    // A closed device this scan could not try (not listed, or no list at
    // all) is tried again later, by its backoff: never a past-due retry
    // that would make the thread spin.
    for (auto &entry : slots_) {
        Slot &slot = entry.second;
        if (!slot.dev && (slot.lost || slot.open_error) && slot.retry_at <= now)
            slot.retry_at = now + slot.backoff.take();
    }
    // The set's own timer while the list fails or no device is open at all;
    // keep_looking() runs it while the caller looks for its port.
    if (list_error_ || scan_at_ || open_devices().empty())
        scan_at_ = now + scan_backoff_.take();
    log_outage(now, news);
    return opened;
}

void Devices::log_outage(TimePoint now, const std::vector<std::string> &news)
{
    std::optional<TimePoint> next = retry_at();
    if (!next) {
        outage_logged_ = false;
        return;
    }
    long long in_ms = ms_until(*next, now);
    // One line for each new failure and one when an outage begins; the
    // retries after that are logged at debug level only.
    for (const std::string &problem : news)
        host_.log(PW_LOG_SYS_ERROR, "%s; retrying in %lld ms", problem.c_str(), in_ms);
    pw_log_level level = news.empty() && !outage_logged_ ? PW_LOG_INFO : PW_LOG_DEBUG;
    outage_logged_ = true;
    std::string missing;
    for (const auto &entry : slots_)
        if (entry.second.lost && !entry.second.dev)
            missing += (missing.empty() ? "" : ", ") + entry.first;
    if (open_devices().empty())
        host_.log(level, "warning: no usable verbs device%s%s; retrying in %lld ms",
                  spec_.kind == PortSpec::Kind::DevicePort ? " named " : "",
                  spec_.kind == PortSpec::Kind::DevicePort ? spec_.device.c_str() : "", in_ms);
    else if (!missing.empty())
        host_.log(level, "verbs device(s) %s not back; retrying in %lld ms", missing.c_str(),
                  in_ms);
}

void Devices::keep_looking(bool looking, TimePoint now)
{
    if (looking && !scan_at_)
        scan_at_ = now + scan_backoff_.take();
    else if (!looking && !list_error_ && !open_devices().empty()) {
        scan_at_.reset();
        scan_backoff_.reset();
    }
}

void Devices::arrival(TimePoint now)
{
    for (auto &entry : slots_) {
        Slot &slot = entry.second;
        if (!slot.dev && (slot.lost || slot.open_error) && slot.retry_at > now)
            slot.retry_at = now;
    }
    if (scan_at_ && *scan_at_ > now)
        scan_at_ = now;
}

std::optional<TimePoint> Devices::retry_at() const
{
    std::optional<TimePoint> at = scan_at_;
    for (const auto &entry : slots_) {
        const Slot &slot = entry.second;
        // A lost device is wanted back; one that would not open is tried
        // again while it is listed (it may hold the watched port).
        if (slot.dev || (!slot.lost && !slot.open_error))
            continue;
        if (!at || slot.retry_at < *at)
            at = slot.retry_at;
    }
    return at;
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
    auto it = slots_.find(name);
    if (it == slots_.end() || !it->second.dev)
        return;
    Slot &slot = it->second;
    slot.dev.reset();
    ++closes_;
    // Failing again soon after opening (a device stuck in an error state,
    // repeated DEVICE_FATAL) keeps the backoff growing; a long healthy run
    // earns a quick reopen.
    if (now - slot.opened_at >= std::min(kHealthy, retry_max_))
        slot.backoff.reset();
    slot.retry_at = now + slot.backoff.take();
    slot.lost = true;
    host_.log(PW_LOG_SYS_ERROR, "verbs device %s failed (%s): closed it, reopening in %lld ms",
              name.c_str(), why, ms_until(slot.retry_at, now));
}

void Devices::remember_guid(const std::string &name, unsigned port, uint64_t guid)
{
    auto it = slots_.find(name);
    if (it == slots_.end() || !it->second.dev)
        return;
    it->second.guids[port] = guid;
    // A lost device whose port shows up here is back under this name.
    for (auto other = slots_.begin(); other != slots_.end();) {
        const Slot &slot = other->second;
        bool renamed = other != it && !slot.dev && slot.lost &&
                       std::any_of(slot.guids.begin(), slot.guids.end(),
                                   [guid](const auto &g) { return g.second == guid; });
        if (renamed) {
            host_.log(PW_LOG_SYS_INFO, "verbs device %s is back as %s (port GUID 0x%016llx)",
                      other->first.c_str(), name.c_str(), static_cast<unsigned long long>(guid));
            other = slots_.erase(other);
        } else {
            ++other;
        }
    }
}

}  // namespace portwatch
