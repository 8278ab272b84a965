// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "port_resolver.hpp"

#include <cstring>

#include "errno_text.hpp"

namespace portwatch {

PortResolver::PortResolver(const Host &host, const Options &opts) : host_(host), spec_(opts.port) {}

std::optional<PortKey> PortResolver::find_guid(Devices &devices, uint64_t guid,
                                               std::string *why) const
{
    for (VerbsDevice *dev : devices.open_devices()) {
        for (unsigned port = 1; port <= dev->port_count(); ++port) {
            PortKey key{dev->name(), port};
            uint64_t port_guid = 0;
            if (int err = dev->port_guid(port, &port_guid)) {
                if (why->empty())
                    *why = " (the GID query of " + key.str() + " failed: " + errno_text(err) + ")";
                continue;
            }
            devices.remember_guid(key.device, port, port_guid);
            if (port_guid == guid)
                return key;
        }
    }
    return std::nullopt;
}

bool PortResolver::resolve(Devices &devices)
{
    std::optional<PortKey> found;
    uint64_t guid = 0;
    std::string why;  // a failed GID query, which may be why the GUID is not found
    switch (spec_.kind) {
    case PortSpec::Kind::DevicePort:
        if (VerbsDevice *dev = devices.find(spec_.device); dev && spec_.port <= dev->port_count())
            found = PortKey{spec_.device, spec_.port};
        break;
    case PortSpec::Kind::Guid:
        guid = spec_.guid;
        found = find_guid(devices, guid, &why);
        break;
    case PortSpec::Kind::Auto:
        guid = host_.sm_port_guid();
        if (guid)
            found = find_guid(devices, guid, &why);
        break;
    }
    if (guid != seen_guid_) {
        seen_ = false;  // another port (OpenSM chose its port): start afresh
        seen_guid_ = guid;
    }
    if (found == found_) {
        // Logged once per answer: a port that never resolves is one line,
        // not one per event or per OpenSM report.
        if (found || seen_ || unresolved_logged_ == guid)
            return false;
    }
    log_answer(found, guid, why);
    found_ = found;
    if (found) {
        seen_ = true;
        last_place_ = found;
        unresolved_logged_.reset();
    } else if (!seen_) {
        unresolved_logged_ = guid;
    }
    return true;
}

void PortResolver::log_answer(const std::optional<PortKey> &found, uint64_t guid,
                              const std::string &why)
{
    const char *source =
        spec_.kind == PortSpec::Kind::Auto ? "OpenSM's bound port" : "named by portwatch.port";
    if (found && guid)
        host_.log(PW_LOG_INFO, "watching %s (port GUID 0x%016llx, %s)", found->str().c_str(),
                  static_cast<unsigned long long>(guid), source);
    else if (found)
        host_.log(PW_LOG_INFO, "watching %s (%s)", found->str().c_str(), source);
    else if (seen_ && last_place_)
        host_.log(PW_LOG_INFO,
                  "the watched port (%s, %s) is gone with its verbs device; watching no other "
                  "port until it is back",
                  last_place_->str().c_str(), source);
    else if (guid)
        host_.log(PW_LOG_INFO,
                  "port GUID 0x%016llx (%s) is on no open verbs port; watching every "
                  "InfiniBand port until it resolves%s",
                  static_cast<unsigned long long>(guid), source, why.c_str());
    else if (spec_.kind == PortSpec::Kind::DevicePort)
        host_.log(PW_LOG_INFO, "%s (%s) is not open yet", spec_.describe().c_str(), source);
    else
        host_.log(PW_LOG_INFO, "OpenSM has not chosen its port yet; watching every "
                               "InfiniBand port until it does");
}

bool PortResolver::is_watched(const PortKey &key, bool infiniband) const
{
    if (spec_.kind == PortSpec::Kind::DevicePort)
        return key == PortKey{spec_.device, spec_.port};
    if (found_)
        return key == *found_;
    return !seen_ && infiniband;
}

}  // namespace portwatch
