// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The kernel's word that an RDMA device was added: its uevents.
//
// libibverbs has no arrival event: a device that was reset and comes back
// is found only by listing the devices again, on the reopen backoff, which
// grows to portwatch.retry_max_ms. The kernel announces every device it
// adds on the kobject uevent netlink socket (what udev, and through libudev
// rdma-core's rdma-ndd, listen to): "add" for the infiniband class (the
// device) and for the infiniband_verbs class (its uverbs node, which is what
// ibv_get_device_list() needs). portwatch reads those itself, without udev,
// and only while a device it wants is missing: an idle plugin has no such
// socket and no wake-up. A message only makes the device list be read again
// now (nothing in it is trusted beyond that), and only a process with
// CAP_NET_ADMIN over the network namespace can send one that is not the
// kernel's. Where no uevent arrives (a container with its own network
// namespace, a socket that cannot be opened) the backoff finds the device.
#pragma once

#include <cstddef>

namespace portwatch {

class DeviceArrivals {
public:
    DeviceArrivals() = default;
    ~DeviceArrivals();
    DeviceArrivals(const DeviceArrivals &) = delete;
    DeviceArrivals &operator=(const DeviceArrivals &) = delete;

    // Opens and binds the socket (non-blocking, close-on-exec); false, with
    // errno set, when it cannot.
    bool open();
    void close();
    // The descriptor to poll for POLLIN; -1 while closed.
    int fd() const { return fd_; }
    // Reads every message waiting; true when one announced an RDMA device.
    bool drain();

    // One uevent message ("ACTION@DEVPATH" and NUL-separated KEY=VALUE
    // pairs): true for the "add" of an infiniband or infiniband_verbs device.
    static bool announces_arrival(const char *msg, size_t len);

private:
    int fd_ = -1;
};

}  // namespace portwatch
