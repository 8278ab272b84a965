// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The process-wide simulator state: devices, open contexts, their event
// queues, fault injection and statistics.  This is the one global of the
// simulator; every member function takes the single mutex, so the verbs entry
// points, the control socket thread and in-process tests can race freely.
//
// The implementation is split by concern:
//   registry_devices.cpp  device list, open/close, lookups
//   registry_events.cpp   event queues, port changes, fatal/remove, get/ack
//   registry_queries.cpp  ibv_query_* attribute tables
//   registry_control.cpp  faults, stats, waits, reset
#pragma once

#include "model.hpp"
#include "unique_fd.hpp"

#include <infiniband/verbs.h>

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace vsim {

// A simulated HCA.  Devices are never freed (only marked absent), so every
// struct ibv_device pointer ever handed out stays a valid address; validity
// in the API sense is checked separately (see device_usable()).
struct Device {
    ibv_device ibdev{};  // what callers see
    std::string name;
    uint64_t node_guid = 0;  // host byte order
    Style style = Style::mlx5;
    std::vector<Port> ports;  // ports[0] is port 1
    bool present = true;      // false once removed
    unsigned epoch = 0;       // `reset` generation the device belongs to
    int list_refs = 0;        // live ibv_get_device_list() arrays holding it
    Stats stats;
};

// One ibv_open_device() result.
struct Context {
    Context();
    ~Context();
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;

    ibv_context ibctx{};  // what callers see
    uint64_t id = 0;
    Device *dev = nullptr;
    UniqueFd async_fd;          // owns the number stored in ibctx.async_fd
    UniqueFd writer;            // write end of the event pipe, one byte per event
    std::deque<Event> queue;    // parallel to the bytes in the pipe
    bool dead = false;          // fatal or removed: queries fail, no new events
    bool removed = false;       // device gone: EIO once the queue is drained
    bool disconnected = false;  // async_fd now refers to the error pipe
};

class Registry {
public:
    static Registry &instance();

    // Control side (the command language).
    Reply add(const DeviceSpec &spec);
    Reply change_port(const std::string &name, int port, const PortChange &change);
    Reply inject(const std::string &name, int port, ibv_event_type type);
    Reply fatal(const std::string &name);
    Reply remove(const std::string &name, bool abrupt);
    Reply set_fault(Call call, int err, unsigned count);
    Reply set_delay(Call call, unsigned ms, unsigned count);
    Reply wait_open(const std::string &name, int timeout_ms);
    Reply wait_closed(const std::string &name, int timeout_ms);
    Reply stats(const std::optional<std::string> &name);
    Reply last_event();
    Reply reset();

    // Verbs side; same return conventions as the functions they implement.
    ibv_device **get_device_list(int *num_devices);
    void free_device_list(ibv_device **list);
    const char *device_name(ibv_device *device);
    __be64 device_guid(ibv_device *device);
    ibv_context *open_device(ibv_device *device);
    int close_device(ibv_context *context);
    int query_device(ibv_context *context, ibv_device_attr *attr);
    int query_port(ibv_context *context, uint8_t port_num, ibv_port_attr *attr);
    int query_gid(ibv_context *context, uint8_t port_num, int index, ibv_gid *gid);
    int query_pkey(ibv_context *context, uint8_t port_num, int index, __be16 *pkey);
    int get_async_event(ibv_context *context, ibv_async_event *event);
    void ack_async_event(const ibv_async_event *event);
    // Sleeps for an armed `delay` of `call`, if any, without holding the
    // registry lock (other threads and the control socket go on meanwhile).
    void pause(Call call);

private:
    // All helpers expect mu_ to be held.
    Device *find_present(const std::string &name);
    Device *find_latest(const std::string &name);
    Device &device_of(ibv_device *device, const char *caller);
    Context *find_context(ibv_context *context);
    Context &context_of(ibv_context *context, const char *caller);
    bool device_usable(const Device &dev) const;
    uint64_t open_context_count(const Device &dev) const;
    bool take_fault(Call call, int &err);
    void queue_event(Device &dev, Event ev);
    void queue_event(Context &ctx, Event ev);
    void disconnect(Context &ctx);
    void remove_locked(Device &dev, bool abrupt);
    Context &query_context(ibv_context *context, const char *caller);

    // An event handed out by ibv_get_async_event and not yet acknowledged.
    struct Delivered {
        uint64_t context_id;
        Device *dev;
        Event event;
    };
    struct Fault {
        int err = 0;
        unsigned count = 0;
    };
    struct Delay {
        unsigned ms = 0;
        unsigned count = 0;
    };

    std::mutex mu_;
    std::condition_variable changed_;                 // contexts opened/closed/died
    std::vector<std::unique_ptr<Device>> devices_;    // never shrinks
    std::vector<std::unique_ptr<Context>> contexts_;  // open contexts
    std::map<ibv_device **, std::vector<Device *>> lists_;
    std::deque<Delivered> unacked_;
    std::array<Fault, kCallCount> faults_{};
    std::array<Delay, kCallCount> delays_{};
    unsigned epoch_ = 0;
    int64_t last_event_ns_ = 0;  // CLOCK_MONOTONIC when an event was last queued
    uint64_t next_context_id_ = 1;
    unsigned next_uverbs_ = 0;
    unsigned next_lid_ = 1;
    uint64_t next_guid_ = 1;
};

}  // namespace vsim
