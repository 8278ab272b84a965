// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Implementation of the self-test helpers (see test_helpers.hpp).
#include "test_helpers.hpp"

#include "vsim.h"

#include <boost/test/unit_test.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace vt {

namespace {

vsim_command_fn command_fn()
{
    auto fn = reinterpret_cast<vsim_command_fn>(dlsym(RTLD_DEFAULT, "vsim_command"));
    BOOST_REQUIRE_MESSAGE(fn, "vsim_command not found: libvsim.so is not preloaded "
                              "(run this test through tests/with-vsim)");
    return fn;
}

}  // namespace

std::string command(const std::string &line)
{
    char reply[1024];
    int rc = command_fn()(line.c_str(), reply, sizeof reply);
    std::string text(reply);
    BOOST_REQUIRE_MESSAGE((rc == 0) == (text.rfind("ok", 0) == 0),
                          "return code " << rc << " does not match reply '" << text << "'");
    return text;
}

void ok(const std::string &line)
{
    std::string reply = command(line);
    BOOST_REQUIRE_MESSAGE(reply.rfind("ok", 0) == 0, "'" << line << "' -> '" << reply << "'");
}

std::string error(const std::string &line)
{
    std::string reply = command(line);
    BOOST_REQUIRE_MESSAGE(reply.rfind("error ", 0) == 0,
                          "'" << line << "' should fail but got '" << reply << "'");
    return reply;
}

std::map<std::string, unsigned long long> stats(const std::string &name)
{
    std::string reply = command(name.empty() ? "stats" : "stats " + name);
    BOOST_REQUIRE_MESSAGE(reply.rfind("ok ", 0) == 0, reply);
    std::map<std::string, unsigned long long> values;
    std::istringstream in(reply.substr(3));
    std::string kv;
    while (in >> kv) {
        auto eq = kv.find('=');
        values[kv.substr(0, eq)] = std::stoull(kv.substr(eq + 1));
    }
    return values;
}

int raw_command(const std::string &line)
{
    auto fn = reinterpret_cast<vsim_command_fn>(dlsym(RTLD_DEFAULT, "vsim_command"));
    return fn ? fn(line.c_str(), nullptr, 0) : -2;
}

ResetFixture::ResetFixture()
{
    ok("reset");
}

DeviceList device_list(int *num)
{
    DeviceList list(ibv_get_device_list(num));
    BOOST_REQUIRE_MESSAGE(list, "ibv_get_device_list failed: " << std::strerror(errno));
    return list;
}

ibv_device *find_device(const DeviceList &list, const std::string &name)
{
    for (ibv_device **d = list.get(); *d; ++d)
        if (name == ibv_get_device_name(*d))
            return *d;
    return nullptr;
}

std::vector<std::string> device_names()
{
    std::vector<std::string> names;
    DeviceList list = device_list();
    for (ibv_device **d = list.get(); *d; ++d)
        names.emplace_back(ibv_get_device_name(*d));
    return names;
}

ContextPtr open(const std::string &name)
{
    DeviceList list = device_list();
    ibv_device *dev = find_device(list, name);
    BOOST_REQUIRE_MESSAGE(dev, "device " << name << " is not in the device list");
    ContextPtr ctx(ibv_open_device(dev));
    BOOST_REQUIRE_MESSAGE(ctx, "ibv_open_device(" << name << "): " << std::strerror(errno));
    return ctx;
}

std::ostream &operator<<(std::ostream &os, const Ev &ev)
{
    return os << "{" << ibv_event_type_str(ev.type) << ", port " << ev.port << "}";
}

void set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    BOOST_REQUIRE(flags >= 0);
    BOOST_REQUIRE(fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0);
}

short poll_revents(int fd, int timeout_ms)
{
    pollfd p{fd, POLLIN, 0};
    int n = poll(&p, 1, timeout_ms);
    BOOST_REQUIRE(n >= 0);
    return n == 0 ? 0 : p.revents;
}

Evs drain(ibv_context *ctx, int *last_errno)
{
    set_nonblocking(ctx->async_fd);
    Evs events;
    for (;;) {
        ibv_async_event ev;
        if (ibv_get_async_event(ctx, &ev) != 0) {
            if (last_errno)
                *last_errno = errno;
            else
                BOOST_REQUIRE_MESSAGE(errno == EAGAIN,
                                      "ibv_get_async_event: " << std::strerror(errno));
            return events;
        }
        events.push_back(Ev{ev.event_type, ev.element.port_num});
        ibv_ack_async_event(&ev);
    }
}

namespace {

std::vector<char *> c_strings(const std::vector<std::string> &v)
{
    std::vector<char *> out;
    for (const auto &s : v)
        out.push_back(const_cast<char *>(s.c_str()));
    out.push_back(nullptr);
    return out;
}

int decode_status(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return -1;
}

// Collects a child's stdout and stderr (both pipes) until both hit EOF.
void collect(int out_fd, int err_fd, Outcome &result)
{
    pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    std::string *sinks[2] = {&result.out, &result.err};
    int open_count = 2;
    while (open_count > 0) {
        if (poll(fds, 2, -1) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !fds[i].revents)
                continue;
            char buf[4096];
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                sinks[i]->append(buf, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_count;
            }
        }
    }
}

}  // namespace

Outcome run(const std::vector<std::string> &argv, const std::vector<std::string> &env, int stdin_fd)
{
    int out[2], err[2];
    BOOST_REQUIRE(pipe2(out, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0);
    auto c_argv = c_strings(argv);
    auto c_env = c_strings(env);
    pid_t pid = fork();
    BOOST_REQUIRE(pid >= 0);
    if (pid == 0) {
        int in = stdin_fd >= 0 ? stdin_fd : ::open("/dev/null", O_RDONLY);
        dup2(in, 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        execve(c_argv[0], c_argv.data(), c_env.data());
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    Outcome result;
    collect(out[0], err[0], result);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    result.status = decode_status(wstatus);
    return result;
}

Outcome in_child(const std::function<void()> &body)
{
    int err[2];
    BOOST_REQUIRE(pipe2(err, O_CLOEXEC) == 0);
    pid_t pid = fork();
    BOOST_REQUIRE(pid >= 0);
    if (pid == 0) {
        rlimit no_core{0, 0};
        setrlimit(RLIMIT_CORE, &no_core);  // an expected abort() must not leave core files
        // Boost.Test catches SIGABRT to report it and carry on with the next
        // test case: in the child that would run the rest of the suite.
        for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL})
            signal(sig, SIG_DFL);
        dup2(err[1], 2);
        try {
            body();
        } catch (...) {
            _exit(4);
        }
        _exit(0);
    }
    close(err[1]);
    int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    Outcome result;
    collect(devnull, err[0], result);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    result.status = decode_status(wstatus);
    return result;
}

std::string libvsim_path()
{
    Dl_info info{};
    void *sym = dlsym(RTLD_DEFAULT, "vsim_command");
    BOOST_REQUIRE(sym && dladdr(sym, &info) && info.dli_fname);
    return std::filesystem::absolute(info.dli_fname).string();
}

std::string vsimctl_path()
{
    if (const char *env = std::getenv("VSIMCTL"))
        return env;
    return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "vsimctl").string();
}

TempDir::TempDir()
{
    const char *base = std::getenv("TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") + "/vsim-test.XXXXXX";
    BOOST_REQUIRE(mkdtemp(templ.data()));
    path_ = templ;
}

TempDir::~TempDir()
{
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

void write_file(const std::string &path, const std::string &text)
{
    std::ofstream out(path);
    out << text;
    BOOST_REQUIRE(out.good());
}

bool wait_for_path(const std::string &path, int timeout_ms)
{
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    struct stat st;
    while (stat(path.c_str(), &st) != 0) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

}  // namespace vt
