// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// vsimctl: send one command to a running simulator's control socket.
//
//   vsimctl [-s SOCKET] [-t SECONDS] WORD...
//
// The words are joined with spaces into one command line; the reply line is
// printed on stdout.  Exit status: 0 for an "ok" reply, 1 for an "error"
// reply, 2 when the simulator could not be reached or did not answer in time
// (and for usage errors).  SOCKET defaults to $VSIM_SOCKET.  The timeout
// (default 30 s, or longer when the command carries a larger timeout_ms=)
// makes sure a test script never hangs on a dead host process.
//
// Run it WITHOUT libvsim preloaded: the library would otherwise start up in
// vsimctl's own process too (VSIM_CONFIG would run again, for one thing).
#include "diag.hpp"
#include "unique_fd.hpp"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr int kExitOk = 0;
constexpr int kExitErrorReply = 1;
constexpr int kExitNoContact = 2;
constexpr long kDefaultTimeoutSec = 30;

int usage()
{
    (void)std::fprintf(stderr, "usage: vsimctl [-s SOCKET] [-t SECONDS] COMMAND WORD...\n"
                               "  SOCKET defaults to $VSIM_SOCKET; SECONDS defaults to 30\n");
    return kExitNoContact;
}

int no_contact(const std::string &what)
{
    (void)std::fprintf(stderr, "vsimctl: %s\n", what.c_str());
    return kExitNoContact;
}

// wait-open/wait-closed may legitimately take longer than the default.
long timeout_for(const std::string &command)
{
    long seconds = kDefaultTimeoutSec;
    auto pos = command.find("timeout_ms=");
    if (pos != std::string::npos) {
        long ms = std::strtol(command.c_str() + pos + 11, nullptr, 10);
        if (ms / 1000 + 5 > seconds)
            seconds = ms / 1000 + 5;
    }
    return seconds;
}

}  // namespace

int main(int argc, char **argv)
{
    // vsimctl has one thread: getenv() and getopt() cannot race.
    const char *env_socket = std::getenv("VSIM_SOCKET");  // NOLINT(concurrency-mt-unsafe)
    std::string path = env_socket ? env_socket : "";
    long timeout = -1;
    int opt;
    while ((opt = ::getopt(argc, argv, "+s:t:h")) != -1) {  // NOLINT(concurrency-mt-unsafe)
        switch (opt) {
        case 's':
            path = optarg;
            break;
        case 't':
            timeout = std::strtol(optarg, nullptr, 10);
            break;
        default:
            return usage();
        }
    }
    if (optind >= argc)
        return usage();
    std::string command;
    for (int i = optind; i < argc; ++i)
        command += (command.empty() ? "" : " ") + std::string(argv[i]);
    if (timeout <= 0)
        timeout = timeout_for(command);
    if (path.empty())
        return no_contact("no socket: give -s SOCKET or set VSIM_SOCKET");

    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path)
        return no_contact("socket path too long: " + path);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

    vsim::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd)
        return no_contact(std::string("socket: ") + vsim::errno_text(errno));
    // Both timeouts also bound connect() on a unix socket with a full backlog.
    timeval tv{timeout, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (::connect(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0)
        return no_contact("cannot connect to " + path + ": " + vsim::errno_text(errno));

    std::string line = command + "\n";
    if (::send(fd.get(), line.data(), line.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(line.size()))
        return no_contact(std::string("send: ") + vsim::errno_text(errno));

    std::string reply;
    char c;
    for (;;) {
        ssize_t n = ::recv(fd.get(), &c, 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return no_contact("no reply within " + std::to_string(timeout) + " s");
        if (n < 0)
            return no_contact(std::string("recv: ") + vsim::errno_text(errno));
        if (n == 0)
            return no_contact("connection closed before a complete reply");
        if (c == '\n')
            break;
        reply += c;
    }
    std::printf("%s\n", reply.c_str());
    return reply == "ok" || reply.rfind("ok ", 0) == 0 ? kExitOk : kExitErrorReply;
}
