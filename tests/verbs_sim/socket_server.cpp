// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The control socket.  One thread multiplexes all connections with poll(),
// so commands from several clients are executed one at a time, in arrival
// order.  A client sends lines; each gets exactly one reply line.
#include "socket_server.hpp"

#include "commands.hpp"
#include "diag.hpp"
#include "unique_fd.hpp"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

namespace vsim {

namespace {

constexpr std::size_t kMaxLine = 4096;

// Removes the socket file when the process that created it exits normally.
// Forked children (which share nothing but the inherited descriptor) and a
// newer server that re-created the path are left alone.
class SocketFile {
public:
    void own(const std::string &path, pid_t pid, const struct stat &st)
    {
        path_ = path;
        pid_ = pid;
        dev_ = st.st_dev;
        ino_ = st.st_ino;
    }
    ~SocketFile()
    {
        struct stat st;
        if (pid_ == ::getpid() && ::stat(path_.c_str(), &st) == 0 && st.st_dev == dev_ &&
            st.st_ino == ino_)
            ::unlink(path_.c_str());
    }

private:
    std::string path_;
    pid_t pid_ = -1;
    dev_t dev_ = 0;
    ino_t ino_ = 0;
};

SocketFile &socket_file()
{
    static SocketFile file;
    return file;
}

bool fill_address(const std::string &path, sockaddr_un &addr)
{
    std::memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path)
        return false;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    return true;
}

bool someone_listens(const sockaddr_un &addr)
{
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    return fd && ::connect(fd.get(), reinterpret_cast<const sockaddr *>(&addr), sizeof addr) == 0;
}

bool send_all(int fd, const std::string &data)
{
    std::size_t done = 0;
    while (done < data.size()) {
        ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

struct Client {
    UniqueFd fd;
    std::string pending;  // bytes received after the last complete line
};

// Reads what is available and answers every complete line.  Returns false
// when the connection is finished (closed by the peer, or misbehaving).
bool serve_client(Client &c)
{
    char buf[1024];
    ssize_t n = ::recv(c.fd.get(), buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR)
        return true;
    if (n <= 0)
        return false;
    c.pending.append(buf, static_cast<std::size_t>(n));
    std::size_t eol;
    while ((eol = c.pending.find('\n')) != std::string::npos) {
        std::string line = c.pending.substr(0, eol);
        c.pending.erase(0, eol + 1);
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (!send_all(c.fd.get(), run_command(line).line() + "\n"))
            return false;
    }
    if (c.pending.size() > kMaxLine) {
        send_all(c.fd.get(), Reply::failure("command line too long").line() + "\n");
        return false;
    }
    return true;
}

void serve(UniqueFd listener)
{
    std::vector<Client> clients;
    for (;;) {
        std::vector<pollfd> fds{{listener.get(), POLLIN, 0}};
        for (const Client &c : clients)
            fds.push_back({c.fd.get(), POLLIN, 0});
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR)
                continue;
            warn("control socket: poll: %s; control socket stops", errno_text(errno).c_str());
            return;
        }
        // Serve existing clients first: fds[i + 1] belongs to clients[i].
        for (std::size_t i = clients.size(); i-- > 0;)
            if (fds[i + 1].revents && !serve_client(clients[i]))
                clients.erase(clients.begin() + static_cast<std::ptrdiff_t>(i));
        if (fds[0].revents & POLLIN) {
            int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
            if (fd >= 0)
                clients.push_back(Client{UniqueFd(fd), {}});
        }
    }
}

}  // namespace

std::string start_socket_server(const std::string &path)
{
    sockaddr_un addr;
    if (!fill_address(path, addr))
        return "socket path is too long for a unix socket";

    struct stat st;
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return "exists and is not a socket; refusing to remove it";
        if (someone_listens(addr)) {
            warn("VSIM_SOCKET=%s is served by another live process; not serving it here",
                 path.c_str());
            return {};
        }
        ::unlink(path.c_str());  // stale, left by a process that died
    }

    UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!listener)
        return std::string("socket: ") + errno_text(errno);
    if (::bind(listener.get(), reinterpret_cast<const sockaddr *>(&addr), sizeof addr) != 0)
        return std::string("bind: ") + errno_text(errno);
    if (::listen(listener.get(), 16) != 0 || ::stat(path.c_str(), &st) != 0)
        return std::string("listen: ") + errno_text(errno);
    socket_file().own(path, ::getpid(), st);

    // The host process (opensm) owns signal handling; a helper thread that
    // could receive its SIGTERM/SIGHUP/SIGUSR1 would break that.  Threads
    // inherit the creator's mask, so block everything around the creation.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    std::string error;
    try {
        std::thread(serve, std::move(listener)).detach();
    } catch (const std::exception &e) {
        error = std::string("cannot start the server thread: ") + e.what();
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return error;
}

}  // namespace vsim
