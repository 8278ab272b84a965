// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// RAII ownership of libibverbs objects, and the few verbs calls portwatch makes.
//
// Only documented libibverbs behaviour is used: the device list, one context
// per device, its async_fd switched to O_NONBLOCK (see ibv_get_async_event(3)),
// ibv_query_port and ibv_query_gid. Every event read is acknowledged at once.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "port_tracker.hpp"

namespace portwatch {

// The result of ibv_get_device_list, freed on destruction.
class DeviceList {
public:
    DeviceList();  // check ok() / error()
    ~DeviceList();
    DeviceList(const DeviceList &) = delete;
    DeviceList &operator=(const DeviceList &) = delete;

    bool ok() const { return list_ != nullptr; }
    int error() const { return error_; }
    int size() const { return count_; }
    ibv_device *operator[](int i) const { return list_[i]; }

private:
    ibv_device **list_ = nullptr;
    int count_ = 0;
    int error_ = 0;
};

struct AsyncEvent {
    ibv_event_type type;
    unsigned port;  // 0 for device-wide events
};

struct PortInfo {
    PortSnapshot snapshot;
    bool infiniband = true;  // link layer; false for RoCE/iWARP ports
};

// One open device context.
class VerbsDevice {
public:
    // nullptr on failure with *err set to the errno value.
    static std::unique_ptr<VerbsDevice> open(ibv_device *device, int *err);
    ~VerbsDevice();
    VerbsDevice(const VerbsDevice &) = delete;
    VerbsDevice &operator=(const VerbsDevice &) = delete;

    const std::string &name() const { return name_; }
    int async_fd() const { return context_->async_fd; }
    unsigned port_count() const { return port_count_; }

    enum class Read { Event, Empty, Failed };
    // Reads and acknowledges one async event. Empty: nothing pending.
    // Failed: *err holds errno (EIO after the device was disassociated).
    Read read_event(AsyncEvent *out, int *err);

    // 0 or the errno value.
    int query_port(unsigned port, PortInfo *out);
    // The port GUID (GID[0]'s interface id), host byte order; 0 or errno.
    int port_guid(unsigned port, uint64_t *guid);
    // What port_guid() last read for the port, without a verbs call; 0
    // while it never succeeded. Refreshed by calling port_guid() again (on
    // GID_CHANGE).
    uint64_t known_guid(unsigned port) const { return port < guids_.size() ? guids_[port] : 0; }

private:
    struct Key {};  // only open() constructs: a context must pass its checks

public:
    VerbsDevice(Key, ibv_context *context, unsigned port_count);

private:
    ibv_context *context_;
    std::string name_;
    unsigned port_count_;
    std::vector<uint64_t> guids_;  // by port number, 0: unknown
};

LinkState link_state_from_verbs(ibv_port_state state);

}  // namespace portwatch
