// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// OpenSM's umad file, watched for the kernel's word that it died.
//
// When the device of a umad file goes away (a reset, a removal), the kernel
// disassociates the file: from then on every read and write fails with EIO
// and poll() reports POLLERR at once, for good; OpenSM never reopens it.
// That is an earlier and surer verdict on OpenSM's MAD path than any count
// of SMPs. portwatch watches its own duplicate of OpenSM's descriptor (one
// open file, two descriptors): polled with no events asked for, it reports
// only POLLERR/POLLHUP; nothing is ever read from or written to it, so
// OpenSM's receiver is never robbed of a MAD, and OpenSM closing its own
// descriptor cannot make ours refer to another file.
#pragma once

namespace portwatch {

class MadFileWatch {
public:
    MadFileWatch() = default;
    ~MadFileWatch();
    MadFileWatch(const MadFileWatch &) = delete;
    MadFileWatch &operator=(const MadFileWatch &) = delete;

    // Duplicates osm_fd (close-on-exec). false, with errno set, when it
    // cannot (the descriptor is not a file of this process, say: then the
    // SMP count alone judges the MAD path).
    bool watch(int osm_fd);
    // The descriptor to poll with events 0; -1 while none is watched.
    int fd() const { return fd_; }
    // Stops watching (the file died: POLLERR is level-triggered).
    void close();

private:
    int fd_ = -1;
};

}  // namespace portwatch
