// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "verbs_device.hpp"

#include <endian.h>
#include <fcntl.h>

#include <cerrno>

namespace portwatch {

namespace {

// EINTR and EAGAIN say "try again", not "the device is gone": a verbs query
// that reports them is repeated a few times before its error counts.
constexpr int kTransientTries = 4;

bool transient(int err)
{
    return err == EINTR || err == EAGAIN || err == EWOULDBLOCK;
}

}  // namespace

DeviceList::DeviceList()
{
    // In the body, not the init list: count_'s own initializer would run after.
    errno = 0;  // read below: a failing call may leave it untouched
    list_ = ibv_get_device_list(&count_);
    if (!list_) {
        error_ = errno ? errno : ENODEV;
        count_ = 0;
    }
}

DeviceList::~DeviceList()
{
    if (list_)
        ibv_free_device_list(list_);
}

VerbsDevice::VerbsDevice(Key, ibv_context *context, unsigned port_count)
    : context_(context), name_(ibv_get_device_name(context->device)), port_count_(port_count),
      guids_(port_count + 1, 0)
{
}

VerbsDevice::~VerbsDevice()
{
    ibv_close_device(context_);
}

std::unique_ptr<VerbsDevice> VerbsDevice::open(ibv_device *device, int *err)
{
    ibv_context *context = nullptr;
    for (int tries = 1; (errno = 0, !(context = ibv_open_device(device))); ++tries) {
        int e = errno ? errno : ENODEV;
        if (!transient(e) || tries >= kTransientTries) {
            *err = e;
            return nullptr;
        }
    }
    // Owned from here on, so every early return closes it.
    ibv_device_attr attr{};
    int rc = 0;
    for (int tries = 0; tries < kTransientTries; ++tries) {
        attr = ibv_device_attr{};
        errno = 0;
        rc = ibv_query_device(context, &attr);
        if (rc < 0)
            rc = errno ? errno : EIO;
        if (!transient(rc))
            break;
    }
    std::unique_ptr<VerbsDevice> dev;
    try {
        dev = std::make_unique<VerbsDevice>(Key{}, context, rc == 0 ? attr.phys_port_cnt : 0);
    } catch (...) {  // GCOVR_EXCL_START: only bad_alloc gets here, which no test provokes
        ibv_close_device(context);  // not owned yet: bad_alloc must not leak it
        throw;
    }  // GCOVR_EXCL_STOP
    if (rc != 0) {
        *err = rc;
        return nullptr;
    }
    errno = 0;
    int flags = fcntl(context->async_fd, F_GETFL);
    if (flags < 0 || fcntl(context->async_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        *err = errno;
        return nullptr;
    }
    return dev;
}

VerbsDevice::Read VerbsDevice::read_event(AsyncEvent *out, int *err)
{
    ibv_async_event event;
    // errno is cleared first: rdma-core returns -1 on a short read without
    // setting it, and a stale EAGAIN would read as "no event" while poll()
    // keeps reporting the fd readable - a busy loop.
    for (int tries = 1; (errno = 0, ibv_get_async_event(context_, &event) != 0); ++tries) {
        int e = errno;
        // EINTR: retried, but boundedly: the caller goes back to poll(),
        // which keeps the thread responsive to stop() whatever happens here.
        if (e == EINTR && tries < kTransientTries)
            continue;
        if (transient(e))
            return Read::Empty;  // poll() says when to try again
        *err = e ? e : EIO;
        return Read::Failed;
    }
    out->type = event.event_type;
    switch (event.event_type) {
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_GID_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
        out->port = static_cast<unsigned>(event.element.port_num);
        break;
    default:
        out->port = 0;
        break;
    }
    ibv_ack_async_event(&event);
    return Read::Event;
}

int VerbsDevice::query_port(unsigned port, PortInfo *out)
{
    ibv_port_attr attr;
    int rc = 0;
    for (int tries = 0; tries < kTransientTries; ++tries) {
        // The verbs.h wrapper returns the errno value (some providers -1 with errno).
        errno = 0;
        rc = ibv_query_port(context_, static_cast<uint8_t>(port), &attr);
        if (rc < 0)
            rc = errno ? errno : EIO;
        if (!transient(rc))
            break;
    }
    if (rc != 0)
        return rc;
    out->snapshot.state = link_state_from_verbs(attr.state);
    out->snapshot.phys_state = attr.phys_state;
    out->snapshot.lid = attr.lid;
    out->snapshot.sm_lid = attr.sm_lid;
    // Old drivers leave link_layer UNSPECIFIED; that means InfiniBand.
    out->infiniband = attr.link_layer != IBV_LINK_LAYER_ETHERNET;
    return 0;
}

int VerbsDevice::port_guid(unsigned port, uint64_t *guid)
{
    ibv_gid gid;
    int err = 0;
    for (int tries = 0; tries < kTransientTries; ++tries) {
        errno = 0;
        if (ibv_query_gid(context_, static_cast<uint8_t>(port), 0, &gid) == 0) {
            *guid = be64toh(gid.global.interface_id);
            if (port < guids_.size())
                guids_[port] = *guid;
            return 0;
        }
        err = errno ? errno : EIO;
        if (!transient(err))
            break;
    }
    return err;
}

LinkState link_state_from_verbs(ibv_port_state state)
{
    switch (state) {
    case IBV_PORT_INIT:
        return LinkState::Init;
    case IBV_PORT_ARMED:
        return LinkState::Armed;
    case IBV_PORT_ACTIVE:
    case IBV_PORT_ACTIVE_DEFER:
        return LinkState::Active;
    default:
        return LinkState::Down;
    }
}

}  // namespace portwatch
