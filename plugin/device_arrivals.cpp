// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "device_arrivals.hpp"

#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace portwatch {

namespace {
// The kernel's group on NETLINK_KOBJECT_UEVENT (udev's own is 2).
constexpr unsigned kKernelGroup = 1;
// The most messages read in one wake-up: a burst of unrelated uevents (a
// whole bus probed) cannot keep the event thread here.
constexpr int kMaxPerDrain = 64;
}  // namespace

DeviceArrivals::~DeviceArrivals()
{
    close();
}

bool DeviceArrivals::open()
{
    close();
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
    if (fd < 0)
        return false;
    sockaddr_nl addr{};
    addr.nl_family = AF_NETLINK;
    addr.nl_groups = kKernelGroup;
    if (bind(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof(addr)) != 0) {
        const int err = errno;
        ::close(fd);
        errno = err;
        return false;
    }
    fd_ = fd;
    return true;
}

void DeviceArrivals::close()
{
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = -1;
}

bool DeviceArrivals::drain()
{
    bool arrived = false;
    std::array<char, 8192> buf;
    for (int i = 0; i < kMaxPerDrain && fd_ >= 0; ++i) {
        ssize_t n = recv(fd_, buf.data(), buf.size(), MSG_DONTWAIT);
        if (n < 0) {
            // ENOBUFS: messages were dropped while we were busy; one of
            // them may have been ours, so look anyway.
            if (errno == ENOBUFS)
                arrived = true;
            if (errno == EINTR || errno == ENOBUFS)
                continue;
            break;  // EAGAIN: all read
        }
        if (announces_arrival(buf.data(), static_cast<size_t>(n)))
            arrived = true;
    }
    return arrived;
}

bool DeviceArrivals::announces_arrival(const char *msg, size_t len)
{
    bool add = false, rdma = false;
    // The first string is the header ("add@/devices/..."); the others are
    // KEY=VALUE pairs. A message from udev ("libudev" and a binary header)
    // never comes here: only the kernel's group is bound.
    size_t at = 0;
    bool header = true;
    while (at < len) {
        const char *s = msg + at;
        const size_t n = strnlen(s, len - at);
        std::string_view field(s, n);
        if (!header) {
            if (field == "ACTION=add")
                add = true;
            else if (field == "SUBSYSTEM=infiniband" || field == "SUBSYSTEM=infiniband_verbs")
                rdma = true;
        }
        header = false;
        at += n + 1;
    }
    return add && rdma;
}

}  // namespace portwatch
