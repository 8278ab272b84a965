// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Which kernel uevents announce an RDMA device (device_arrivals.cpp): the
// parse of a message portwatch reads from a netlink socket.
#include <boost/test/unit_test.hpp>

#include <string>

#include "device_arrivals.hpp"

using portwatch::DeviceArrivals;

namespace {

// A uevent as the kernel sends it: the header, then NUL-terminated pairs.
std::string uevent(const std::string &header, std::initializer_list<std::string> pairs)
{
    std::string m = header;
    m.push_back('\0');
    for (const std::string &kv : pairs) {
        m += kv;
        m.push_back('\0');
    }
    return m;
}

bool arrival(const std::string &m)
{
    return DeviceArrivals::announces_arrival(m.data(), m.size());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(device_arrivals)

BOOST_AUTO_TEST_CASE(the_add_of_an_rdma_device_or_its_uverbs_node)
{
    BOOST_TEST(
        arrival(uevent("add@/devices/pci0000:00/0000:00:02.0/infiniband/mlx5_0",
                       {"ACTION=add", "DEVPATH=/devices/pci0000:00/0000:00:02.0/infiniband/mlx5_0",
                        "SUBSYSTEM=infiniband", "NAME=mlx5_0", "SEQNUM=4711"})));
    BOOST_TEST(arrival(uevent("add@/devices/pci0000:00/0000:00:02.0/infiniband_verbs/uverbs0",
                              {"ACTION=add", "SUBSYSTEM=infiniband_verbs", "MAJOR=231", "MINOR=192",
                               "DEVNAME=infiniband/uverbs0", "SEQNUM=4712"})));
}

BOOST_AUTO_TEST_CASE(anything_else_is_not)
{
    // A removal, another class, the umad node, a change.
    BOOST_TEST(!arrival(uevent("remove@/devices/virtual/infiniband/mlx5_0",
                               {"ACTION=remove", "SUBSYSTEM=infiniband"})));
    BOOST_TEST(!arrival(uevent("add@/devices/virtual/net/eth1", {"ACTION=add", "SUBSYSTEM=net"})));
    BOOST_TEST(!arrival(uevent("add@/devices/virtual/infiniband_mad/umad0",
                               {"ACTION=add", "SUBSYSTEM=infiniband_mad"})));
    BOOST_TEST(!arrival(uevent("change@/devices/virtual/infiniband/mlx5_0",
                               {"ACTION=change", "SUBSYSTEM=infiniband"})));
    // The header alone says nothing: only the pairs count.
    BOOST_TEST(!arrival(uevent("ACTION=add", {"SUBSYSTEM=infiniband"})));
    // A prefix is not the value; a pair cut short by the message's end.
    BOOST_TEST(!arrival(uevent("add@/x", {"ACTION=add", "SUBSYSTEM=infiniband_madness"})));
    const std::string cut = uevent("add@/x", {"ACTION=add", "SUBSYSTEM=infiniband"});
    BOOST_TEST(!DeviceArrivals::announces_arrival(cut.data(), cut.size() - 3));
    // Empty, and no NUL anywhere: read within the length, never past it.
    BOOST_TEST(!DeviceArrivals::announces_arrival("", 0));
    const std::string no_nul(64, 'A');
    BOOST_TEST(!DeviceArrivals::announces_arrival(no_nul.data(), no_nul.size()));
}

BOOST_AUTO_TEST_SUITE_END()
