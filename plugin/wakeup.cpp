// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "wakeup.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace portwatch {

Wakeup::Wakeup() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))
{
    if (fd_ < 0)
        throw std::system_error(errno, std::generic_category(), "eventfd");
}

Wakeup::~Wakeup()
{
    close(fd_);
}

void Wakeup::signal()
{
    uint64_t one = 1;
    // EAGAIN means the counter is saturated: it is readable, which is all we need.
    while (write(fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
}

void Wakeup::drain()
{
    uint64_t count;
    while (read(fd_, &count, sizeof(count)) < 0 && errno == EINTR) {
    }
}

}  // namespace portwatch
