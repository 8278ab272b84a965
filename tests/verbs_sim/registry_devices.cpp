// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Devices and contexts: adding devices, the device list, open and close, and
// the pointer lookups that turn API misuse into loud aborts.
#include "registry.hpp"
#include "uevent.hpp"

#include "diag.hpp"
#include "no_destructor.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <cstdlib>
#include <endian.h>

namespace vsim {

namespace {

// Default node GUIDs: a Mellanox OUI and a counter, spaced so that the
// derived port GUIDs (node GUID + port number) of two devices never collide.
constexpr uint64_t kGuidBase = 0x0002c90300000000ULL;
constexpr uint64_t kGuidStride = 0x100;

}  // namespace

Context::Context()
{
    pthread_mutex_init(&ibctx.mutex, nullptr);
}
Context::~Context()
{
    pthread_mutex_destroy(&ibctx.mutex);
}

Registry &Registry::instance()
{
    static NoDestructor<Registry> registry;
    return registry.value;
}

Device *Registry::find_present(const std::string &name)
{
    for (auto &d : devices_)
        if (d->present && d->name == name)
            return d.get();
    return nullptr;
}

// The device a name refers to for `stats`: the present one, else the most
// recently removed one of the current reset generation.
Device *Registry::find_latest(const std::string &name)
{
    if (Device *d = find_present(name))
        return d;
    for (auto it = devices_.rbegin(); it != devices_.rend(); ++it)
        if ((*it)->epoch == epoch_ && (*it)->name == name)
            return it->get();
    return nullptr;
}

Device &Registry::device_of(ibv_device *device, const char *caller)
{
    for (auto &d : devices_)
        if (&d->ibdev == device)
            return *d;
    caller_bug("%s: %p is not a device returned by ibv_get_device_list()", caller,
               static_cast<void *>(device));
}

Context *Registry::find_context(ibv_context *context)
{
    for (auto &c : contexts_)
        if (&c->ibctx == context)
            return c.get();
    return nullptr;
}

Context &Registry::context_of(ibv_context *context, const char *caller)
{
    if (Context *c = find_context(context))
        return *c;
    caller_bug("%s: %p is not an open context (never opened, or already closed)", caller,
               static_cast<void *>(context));
}

// ibv_free_device_list(3): "pointers to devices that were not opened with
// ibv_open_device() are no longer valid" once the array is freed.  A device
// pointer is usable while some live list holds it or a context on it is open.
bool Registry::device_usable(const Device &dev) const
{
    return dev.list_refs > 0 || open_context_count(dev) > 0;
}

uint64_t Registry::open_context_count(const Device &dev) const
{
    return static_cast<uint64_t>(std::count_if(contexts_.begin(), contexts_.end(),
                                               [&](const auto &c) { return c->dev == &dev; }));
}

Reply Registry::add(const DeviceSpec &spec)
{
    std::lock_guard<std::mutex> lock(mu_);
    if (find_present(spec.name))
        return Reply::failure("add: a device named '" + spec.name + "' already exists");
    if (!style_supports_state(spec.style, spec.state))
        return Reply::failure(std::string("add: style ") + style_name(spec.style) +
                              " has no INIT or ARMED port state");

    auto dev = std::make_unique<Device>();
    dev->name = spec.name;
    dev->style = spec.style;
    dev->epoch = epoch_;
    dev->node_guid = spec.node_guid ? *spec.node_guid : kGuidBase + kGuidStride * next_guid_++;

    ibv_device &ib = dev->ibdev;
    ib.node_type = IBV_NODE_CA;
    ib.transport_type = IBV_TRANSPORT_IB;  // RoCE (rxe) is IB transport too
    unsigned uverbs = next_uverbs_++;
    (void)std::snprintf(ib.name, sizeof ib.name, "%s", spec.name.c_str());
    (void)std::snprintf(ib.dev_name, sizeof ib.dev_name, "uverbs%u", uverbs);
    (void)std::snprintf(ib.dev_path, sizeof ib.dev_path, "/sys/class/infiniband_verbs/uverbs%u",
                        uverbs);
    (void)std::snprintf(ib.ibdev_path, sizeof ib.ibdev_path, "/sys/class/infiniband/%s",
                        spec.name.c_str());

    const bool eth = spec.style == Style::rxe;
    for (int i = 0; i < spec.ports; ++i) {
        Port p;
        p.state = spec.state;
        p.phys_state = phys_state_for(spec.state);
        p.guid = dev->node_guid + static_cast<uint64_t>(i) + 1;
        p.link_layer = eth ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
        // RoCE ports have no LIDs; IB ports get a unique one.  The SM runs on
        // this host, so the SM LID defaults to the port's own LID.
        if (spec.lid)
            p.lid = static_cast<uint16_t>(*spec.lid + i);
        else if (!eth)
            p.lid = static_cast<uint16_t>(next_lid_++);
        p.sm_lid = p.lid;
        dev->ports.push_back(p);
    }

    char data[96];
    (void)std::snprintf(data, sizeof data, "node_guid=0x%016llx lid=%u",
                        static_cast<unsigned long long>(dev->node_guid), dev->ports[0].lid);
    const std::string uverbs_name = ib.dev_name;
    devices_.push_back(std::move(dev));
    // As the kernel does, the uevents once the device is listed. Only with
    // CAP_NET_ADMIN can a process send them; without, the reply says so
    // (a test that needs the arrival fails on it, not on a timing).
    if (spec.uevent && announce_arrival(spec.name, uverbs_name) < 0)
        return Reply::success(std::string(data) +
                              " uevent_error=" + std::generic_category().message(errno));
    return Reply::success(data);
}

ibv_device **Registry::get_device_list(int *num_devices)
{
    std::lock_guard<std::mutex> lock(mu_);
    int err;
    if (take_fault(Call::get_device_list, err)) {
        errno = err;
        return nullptr;
    }
    std::vector<Device *> present;
    for (auto &d : devices_)
        if (d->present)
            present.push_back(d.get());

    // The caller releases the array with ibv_free_device_list(), which frees
    // it with free(): it has to come from malloc().
    // An array of pointers, as ibv_get_device_list() returns.
    // NOLINTNEXTLINE(bugprone-sizeof-expression)
    auto list = static_cast<ibv_device **>(std::calloc(present.size() + 1, sizeof(ibv_device *)));
    if (!list) {
        errno = ENOMEM;
        return nullptr;
    }
    try {
        lists_.emplace(list, present);
    } catch (...) {
        std::free(static_cast<void *>(list));
        throw;  // std::bad_alloc: ENOMEM at the API boundary
    }
    for (std::size_t i = 0; i < present.size(); ++i) {
        list[i] = &present[i]->ibdev;
        present[i]->list_refs++;
    }
    if (num_devices)
        *num_devices = static_cast<int>(present.size());
    return list;
}

void Registry::free_device_list(ibv_device **list)
{
    std::lock_guard<std::mutex> lock(mu_);
    auto it = lists_.find(list);
    if (it == lists_.end())
        caller_bug("ibv_free_device_list: %p was not returned by ibv_get_device_list() "
                   "or was already freed",
                   static_cast<void *>(list));
    // cppcheck-suppress derefInvalidIteratorRedundantCheck ; caller_bug() does not return
    for (Device *d : it->second)
        d->list_refs--;
    // cppcheck-suppress eraseIteratorOutOfBoundsCond ; caller_bug() does not return
    lists_.erase(it);
    std::free(static_cast<void *>(list));
}

const char *Registry::device_name(ibv_device *device)
{
    std::lock_guard<std::mutex> lock(mu_);
    Device &dev = device_of(device, "ibv_get_device_name");
    if (!device_usable(dev))
        caller_bug("ibv_get_device_name: device %s used after ibv_free_device_list() "
                   "without an open context",
                   dev.name.c_str());
    return dev.ibdev.name;
}

__be64 Registry::device_guid(ibv_device *device)
{
    std::lock_guard<std::mutex> lock(mu_);
    Device &dev = device_of(device, "ibv_get_device_guid");
    if (!device_usable(dev))
        caller_bug("ibv_get_device_guid: device %s used after ibv_free_device_list() "
                   "without an open context",
                   dev.name.c_str());
    return htobe64(dev.node_guid);
}

ibv_context *Registry::open_device(ibv_device *device)
{
    std::lock_guard<std::mutex> lock(mu_);
    Device &dev = device_of(device, "ibv_open_device");
    if (!device_usable(dev))
        caller_bug("ibv_open_device: device %s used after ibv_free_device_list() "
                   "without an open context",
                   dev.name.c_str());
    int err;
    if (take_fault(Call::open_device, err)) {
        errno = err;
        return nullptr;
    }
    if (!dev.present) {
        errno = ENODEV;
        return nullptr;
    }

    // The async fd is the read end of a pipe holding one byte per queued
    // event, so read()/poll()/O_NONBLOCK on it behave like the kernel's event
    // file.  Blocking by default, like the real one; the write end is
    // non-blocking so that queueing never stalls the control path.
    auto ctx = std::make_unique<Context>();
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return nullptr;  // errno from pipe2 (EMFILE, ENFILE)
    ctx->async_fd.reset(fds[0]);
    ctx->writer.reset(fds[1]);
    ::fcntl(fds[1], F_SETFL, O_NONBLOCK);

    ctx->id = next_context_id_++;
    ctx->dev = &dev;
    ctx->ibctx.device = &dev.ibdev;
    ctx->ibctx.cmd_fd = -1;
    ctx->ibctx.async_fd = fds[0];
    ctx->ibctx.num_comp_vectors = 1;
    ctx->ibctx.abi_compat = nullptr;  // not extended: inline wrappers use the plain symbols

    ibv_context *result = &ctx->ibctx;
    contexts_.push_back(std::move(ctx));
    dev.stats.opens++;
    changed_.notify_all();
    return result;
}

int Registry::close_device(ibv_context *context)
{
    std::lock_guard<std::mutex> lock(mu_);
    Context &ctx = context_of(context, "ibv_close_device");

    // The real library does not wait for async event acks on close; say so
    // anyway, because an unacknowledged event is a bug in the caller.
    auto mine = [&](const Delivered &d) { return d.context_id == ctx.id; };
    auto unacked = static_cast<uint64_t>(std::count_if(unacked_.begin(), unacked_.end(), mine));
    if (unacked) {
        warn("ibv_close_device(%s): %llu async event(s) delivered but not acknowledged",
             ctx.dev->name.c_str(), static_cast<unsigned long long>(unacked));
        unacked_.erase(std::remove_if(unacked_.begin(), unacked_.end(), mine), unacked_.end());
        ctx.dev->stats.unacked_at_close += unacked;
    }
    ctx.dev->stats.closes++;
    // Destroying the Context closes whatever async_fd now refers to (the
    // event pipe, or the error pipe after removal) exactly once.
    contexts_.erase(std::find_if(contexts_.begin(), contexts_.end(),
                                 [&](const auto &c) { return c.get() == &ctx; }));
    changed_.notify_all();
    return 0;
}

}  // namespace vsim
