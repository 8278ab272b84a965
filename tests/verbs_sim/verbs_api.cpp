// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The exported libibverbs entry points.  Preloaded ahead of the real
// libibverbs.so.1, these definitions win symbol lookup for the calls the code
// under test makes; the version script gives them the version IBVERBS_1.1
// that programs linked against libibverbs ask for.
//
// Each function is a thin, exception-proof shim over the Registry: no C++
// exception may cross into C callers, and the only one that can arise here
// is std::bad_alloc, which becomes ENOMEM.
#include "diag.hpp"
#include "registry.hpp"

#include <infiniband/verbs.h>

#include <cerrno>
#include <new>

// verbs.h turns these names into macros/inline wrappers; we define the
// underlying exported symbols themselves.
#undef ibv_query_port
#undef ibv_get_device_list

namespace {

using vsim::Registry;

template <typename R, typename F>
R guarded(const char *what, R on_bad_alloc, F &&body) noexcept
{
    try {
        return body();
    } catch (const std::bad_alloc &) {
        errno = ENOMEM;
        return on_bad_alloc;
    } catch (...) {
        vsim::sim_failure("%s: unexpected exception", what);
    }
}

}  // namespace

extern "C" {

struct ibv_device **ibv_get_device_list(int *num_devices)
{
    Registry::instance().pause(vsim::Call::get_device_list);
    return guarded("ibv_get_device_list", static_cast<ibv_device **>(nullptr),
                   [&] { return Registry::instance().get_device_list(num_devices); });
}

void ibv_free_device_list(struct ibv_device **list)
{
    Registry::instance().free_device_list(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
    return Registry::instance().device_name(device);
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
    return Registry::instance().device_guid(device);
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
    Registry::instance().pause(vsim::Call::open_device);
    return guarded("ibv_open_device", static_cast<ibv_context *>(nullptr),
                   [&] { return Registry::instance().open_device(device); });
}

int ibv_close_device(struct ibv_context *context)
{
    return Registry::instance().close_device(context);
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
    Registry::instance().pause(vsim::Call::query_device);
    return Registry::instance().query_device(context, device_attr);
}

// Exported with the compat pointer type of the real symbol; see
// Registry::query_port for why a full struct ibv_port_attr is written.
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
                   struct _compat_ibv_port_attr *port_attr)
{
    Registry::instance().pause(vsim::Call::query_port);
    return Registry::instance().query_port(context, port_num,
                                           reinterpret_cast<ibv_port_attr *>(port_attr));
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
    Registry::instance().pause(vsim::Call::query_gid);
    return Registry::instance().query_gid(context, port_num, index, gid);
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
    Registry::instance().pause(vsim::Call::query_pkey);
    return Registry::instance().query_pkey(context, port_num, index, pkey);
}

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
    Registry::instance().pause(vsim::Call::get_async_event);
    return guarded("ibv_get_async_event", -1,
                   [&] { return Registry::instance().get_async_event(context, event); });
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
    Registry::instance().ack_async_event(event);
}

}  // extern "C"
