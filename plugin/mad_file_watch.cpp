// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "mad_file_watch.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace portwatch {

MadFileWatch::~MadFileWatch()
{
    close();
}

bool MadFileWatch::watch(int osm_fd)
{
    close();
    fd_ = fcntl(osm_fd, F_DUPFD_CLOEXEC, 0);
    return fd_ >= 0;
}

void MadFileWatch::close()
{
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = -1;
}

}  // namespace portwatch
