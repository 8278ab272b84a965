// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "uevent.hpp"

#include <linux/netlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "unique_fd.hpp"

namespace vsim {

namespace {

// Socket inodes of this process's descriptors ("socket:[INODE]" links).
std::set<unsigned long> own_socket_inodes()
{
    std::set<unsigned long> inodes;
    std::error_code ec;
    for (const auto &e : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
        std::error_code link_ec;
        const std::string target = std::filesystem::read_symlink(e.path(), link_ec).string();
        const std::string prefix = "socket:[";
        if (link_ec || target.compare(0, prefix.size(), prefix) != 0 || target.back() != ']')
            continue;
        const std::string digits = target.substr(prefix.size(), target.size() - prefix.size() - 1);
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
            continue;
        inodes.insert(std::stoul(digits));
    }
    return inodes;
}

// The port ids of this process's NETLINK_KOBJECT_UEVENT sockets
// (/proc/self/net/netlink: sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode).
std::vector<unsigned> own_uevent_ports()
{
    std::vector<unsigned> ports;
    const std::set<unsigned long> own = own_socket_inodes();
    std::ifstream in("/proc/self/net/netlink");
    std::string line;
    std::getline(in, line);  // the heading
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string sk;
        int proto = -1;
        unsigned port = 0;
        std::string groups, rmem, wmem, dump, locks, drops;
        unsigned long inode = 0;
        if (!(f >> sk >> proto >> port >> groups >> rmem >> wmem >> dump >> locks >> drops >>
              inode))
            continue;
        if (proto == NETLINK_KOBJECT_UEVENT && port != 0 && own.count(inode))
            ports.push_back(port);
    }
    return ports;
}

std::string message(const std::string &subsystem, const std::string &name, unsigned long seqnum)
{
    const std::string devpath = "/devices/virtual/" + subsystem + "/" + name;
    std::string m = "add@" + devpath;
    m.push_back('\0');
    for (const std::string &kv :
         {std::string("ACTION=add"), "DEVPATH=" + devpath, "SUBSYSTEM=" + subsystem, "NAME=" + name,
          "SEQNUM=" + std::to_string(seqnum)}) {
        m += kv;
        m.push_back('\0');
    }
    return m;
}

}  // namespace

int announce_arrival(const std::string &name, const std::string &uverbs)
{
    const std::vector<unsigned> ports = own_uevent_ports();
    if (ports.empty())
        return 0;
    UniqueFd sock(socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT));
    if (!sock)
        return -1;
    static unsigned long seqnum = 1000;
    int sent = 0;
    for (unsigned port : ports) {
        sockaddr_nl to{};
        to.nl_family = AF_NETLINK;
        to.nl_pid = port;
        // The device first, then its uverbs node, as the kernel registers them.
        for (const std::string &m :
             {message("infiniband", name, ++seqnum), message("infiniband_verbs", uverbs, ++seqnum)})
            if (sendto(sock.get(), m.data(), m.size(), 0, reinterpret_cast<sockaddr *>(&to),
                       sizeof to) < 0)
                return -1;
        ++sent;
    }
    return sent;
}

}  // namespace vsim
