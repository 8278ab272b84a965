// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The kernel's uevents for a device the simulator adds.
#pragma once

#include <string>

namespace vsim {

// What the kernel sends on the kobject uevent netlink socket when it
// registers an RDMA device: "add" for the infiniband class device and for
// its infiniband_verbs node, sent to every NETLINK_KOBJECT_UEVENT socket
// this process holds (the kernel multicasts to all of them; a simulator can
// reach only its own process, by unicast, which needs CAP_NET_ADMIN).
// Returns how many sockets were sent to, or -1 with errno set.
int announce_arrival(const std::string &name, const std::string &uverbs);

}  // namespace vsim
