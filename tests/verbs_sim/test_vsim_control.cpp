// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Self-test: the command language, VSIM_CONFIG, VSIM_SOCKET and vsimctl.
//
// The socket server and the config file are started by the library
// constructor, so they are tested in a separate host process: `cat` with
// libvsim.so preloaded, kept alive by a pipe on its stdin.  cat exits through
// exit() when the pipe closes, which is what lets the socket file be removed.
#include <boost/test/unit_test.hpp>

#include "test_helpers.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace vt;

namespace {

std::vector<std::string> preload_env(const std::vector<std::string> &extra)
{
    // A sanitizer build's simulator needs the sanitizer runtime loaded first
    // (tests/with-vsim passes it on), with the same options.
    std::string preload = libvsim_path();
    if (const char *runtime = std::getenv("PW_SANITIZER_PRELOAD"); runtime && *runtime)
        preload = std::string(runtime) + " " + preload;
    std::vector<std::string> env{"LD_PRELOAD=" + preload, "PATH=/usr/bin:/bin"};
    for (const char *name : {"ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"})
        if (const char *value = std::getenv(name))
            env.push_back(std::string(name) + "=" + value);
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
}

// vsimctl runs with a clean environment (no preload), as test scripts should.
Outcome vsimctl(const std::vector<std::string> &args)
{
    std::vector<std::string> argv{vsimctl_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, {"PATH=/usr/bin:/bin"});
}

// A process that hosts the simulator until destroyed.
class Host {
public:
    Host(const std::vector<std::string> &env)
    {
        int in[2];
        BOOST_REQUIRE(pipe2(in, O_CLOEXEC) == 0);
        stdin_write_ = in[1];
        std::vector<std::string> argv{"/bin/cat"};
        std::vector<char *> c_argv{const_cast<char *>(argv[0].c_str()), nullptr};
        std::vector<char *> c_env;
        for (const auto &e : env)
            c_env.push_back(const_cast<char *>(e.c_str()));
        c_env.push_back(nullptr);
        pid_ = fork();
        BOOST_REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            dup2(in[0], 0);
            int devnull = ::open("/dev/null", O_WRONLY);
            dup2(devnull, 1);
            execve(c_argv[0], c_argv.data(), c_env.data());
            _exit(127);
        }
        close(in[0]);
    }
    ~Host()
    {
        if (pid_ > 0)
            finish();
    }
    Host(const Host &) = delete;
    Host &operator=(const Host &) = delete;

    pid_t pid() const { return pid_; }

    // Ends the host normally (EOF on stdin) and returns its exit status.
    int finish()
    {
        close(stdin_write_);
        int wstatus = 0;
        waitpid(pid_, &wstatus, 0);
        pid_ = -1;
        return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
    }

private:
    pid_t pid_ = -1;
    int stdin_write_ = -1;
};

std::string sig_blocked_mask(pid_t pid, pid_t tid)
{
    std::ifstream status("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) +
                         "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("SigBlk:", 0) == 0)
            return line.substr(7);
    return {};
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(control, ResetFixture)

BOOST_AUTO_TEST_CASE(errors_name_the_problem)
{
    const std::pair<const char *, const char *> cases[] = {
        {"", "empty"},
        {"frobnicate", "frobnicate"},
        {"add", "missing"},
        {"add mlx5_0 colour=red", "colour"},
        {"add mlx5_0 style=mlx6", "mlx6"},
        {"add mlx5_0 ports=0", "ports"},
        {"add mlx5_0 ports=x", "ports"},
        {"add mlx5_0 state=sleepy", "state"},
        {"add mlx5_0 lid=70000", "lid"},
        {"add bad/name", "bad/name"},
        {"add a b", "'b'"},
        {"port nosuch 1 state=down", "nosuch"},
        {"event nosuch 1 port_err", "nosuch"},
        {"fatal nosuch", "nosuch"},
        {"remove nosuch", "nosuch"},
        {"fail query_everything", "query_everything"},
        {"fail query_port errno=EWHAT", "errno"},
        {"wait-open x timeout_ms=soon", "timeout_ms"},
        {"reset now", "now"},
    };
    for (const auto &c : cases) {
        std::string reply = error(c.first);
        BOOST_TEST(reply.find(c.second) != std::string::npos, "'" << c.first << "' -> " << reply);
    }
    ok("add mlx5_0");
    BOOST_TEST(error("add mlx5_0").find("already exists") != std::string::npos);
    BOOST_TEST(error("port mlx5_0 2 state=down").find("ports 1..1") != std::string::npos);
    BOOST_TEST(error("port mlx5_0 1 state=down quiet loud").find("loud") != std::string::npos);
    BOOST_TEST(error("event mlx5_0 1 port_gone").find("port_gone") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(comments_and_reply_format)
{
    std::string reply = command("add mlx5_0 node_guid=0x10 lid=3 # a comment");
    BOOST_TEST(reply == "ok node_guid=0x0000000000000010 lid=3");
    char small[8];
    auto fn = reinterpret_cast<int (*)(const char *, char *, size_t)>(
        dlsym(RTLD_DEFAULT, "vsim_command"));
    BOOST_REQUIRE(fn);
    BOOST_TEST(fn("stats", small, sizeof small) == 0);
    BOOST_TEST(std::string(small) == "ok open");  // truncated, still terminated
    BOOST_TEST(fn("nonsense", nullptr, 0) == -1);
    BOOST_TEST(fn(nullptr, nullptr, 0) == -1);
}

BOOST_AUTO_TEST_CASE(reset_removes_everything)
{
    ok("add a");
    ContextPtr ctx = open("a");
    ok("fail open_device count=3");
    ok("reset");
    BOOST_TEST(device_names().empty());
    BOOST_TEST(stats()["opens"] == 0u);
    ibv_port_attr attr;
    BOOST_TEST(ibv_query_port(ctx.get(), 1, &attr) == EIO);  // left-over context is dead
    ok("add a");
    ContextPtr fresh = open("a");  // the fault was disarmed too
}

BOOST_AUTO_TEST_CASE(socket_config_and_vsimctl)
{
    TempDir dir;
    const std::string sock = dir.file("ctl.sock");
    write_file(dir.file("setup.conf"), "# devices for this test\n"
                                       "add sock0 style=mlx4 ports=2\n"
                                       "\n"
                                       "port sock0 2 state=down\n");
    Host host(preload_env({"VSIM_SOCKET=" + sock, "VSIM_CONFIG=" + dir.file("setup.conf")}));
    BOOST_REQUIRE_MESSAGE(wait_for_path(sock, 10000), "the host never created " << sock);

    // The config ran before the socket appeared.
    Outcome r = vsimctl({"-s", sock, "stats", "sock0"});
    BOOST_TEST(r.status == 0, r.err);
    BOOST_TEST(r.out.rfind("ok opens=0 ", 0) == 0u, r.out);

    r = vsimctl({"-s", sock, "add", "sock1", "style=rxe"});
    BOOST_TEST(r.status == 0, r.out << r.err);
    r = vsimctl({"-s", sock, "add", "sock1"});
    BOOST_TEST(r.status == 1);
    BOOST_TEST(r.out.find("error add: a device named 'sock1' already exists") == 0u, r.out);
    r = vsimctl({"-s", sock, "wait-open", "sock0", "timeout_ms=20"});
    BOOST_TEST(r.status == 1);
    r = run({vsimctl_path(), "stats"}, {"VSIM_SOCKET=" + sock});  // socket from the environment
    BOOST_TEST(r.status == 0, r.err);

    // Several commands on one connection, one reply line each.
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
    BOOST_REQUIRE(connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
    const std::string batch = "stats sock1\nbogus\r\nport sock0 1 state=down\n";
    BOOST_REQUIRE(write(fd, batch.data(), batch.size()) == static_cast<ssize_t>(batch.size()));
    shutdown(fd, SHUT_WR);
    std::string replies;
    char buf[512];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        replies.append(buf, static_cast<std::size_t>(n));
    close(fd);
    std::istringstream lines(replies);
    std::string line;
    std::vector<std::string> got;
    while (std::getline(lines, line))
        got.push_back(line);
    BOOST_REQUIRE(got.size() == 3u);
    BOOST_TEST(got[0].rfind("ok opens=0", 0) == 0u);
    BOOST_TEST(got[1] == "error unknown command 'bogus'");
    BOOST_TEST(got[2] == "ok");

    // The server thread must not take the host's signals: all blocked.
    bool saw_thread = false;
    for (const auto &entry :
         std::filesystem::directory_iterator("/proc/" + std::to_string(host.pid()) + "/task")) {
        pid_t tid = std::stoi(entry.path().filename().string());
        if (tid == host.pid())
            continue;
        saw_thread = true;
        unsigned long long mask = std::stoull(sig_blocked_mask(host.pid(), tid), nullptr, 16);
        for (int sig : {SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGPIPE, SIGCHLD})
            BOOST_TEST((mask & (1ULL << (sig - 1))) != 0u, "signal " << sig << " not blocked");
    }
    BOOST_TEST(saw_thread);

    BOOST_TEST(host.finish() == 0);
    BOOST_TEST(!std::filesystem::exists(sock));  // removed at exit
    r = vsimctl({"-s", sock, "stats"});
    BOOST_TEST(r.status == 2);
}

BOOST_AUTO_TEST_CASE(stale_socket_file_is_replaced)
{
    TempDir dir;
    const std::string sock = dir.file("ctl.sock");
    {
        // Leave a socket file nobody listens on, like a crashed host would.
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
        BOOST_REQUIRE(bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
        close(fd);
    }
    Host host(preload_env({"VSIM_SOCKET=" + sock}));
    bool answered = false;
    for (int i = 0; i < 500 && !answered; ++i) {
        answered = vsimctl({"-s", sock, "stats"}).status == 0;
        if (!answered)
            usleep(10000);
    }
    BOOST_TEST(answered);
}

BOOST_AUTO_TEST_CASE(a_bad_config_line_ends_the_host_with_status_1)
{
    TempDir dir;
    write_file(dir.file("bad.conf"), "add x\nadd x ports=99\n");
    Outcome r = run({"/bin/true"}, preload_env({"VSIM_CONFIG=" + dir.file("bad.conf")}));
    BOOST_TEST(r.status == 1);
    BOOST_TEST(r.err.find("bad.conf:2: add x ports=99") != std::string::npos, r.err);
    BOOST_TEST(r.err.find("ports") != std::string::npos, r.err);

    r = run({"/bin/true"}, preload_env({"VSIM_CONFIG=" + dir.file("missing.conf")}));
    BOOST_TEST(r.status == 1);
    BOOST_TEST(r.err.find("missing.conf") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(vsimctl_without_a_server_exits_2)
{
    TempDir dir;
    Outcome r = vsimctl({"-s", dir.file("nobody.sock"), "stats"});
    BOOST_TEST(r.status == 2);
    BOOST_TEST(r.err.find("cannot connect") != std::string::npos, r.err);
    r = vsimctl({"stats"});  // no -s, no VSIM_SOCKET
    BOOST_TEST(r.status == 2);
    r = vsimctl({});
    BOOST_TEST(r.status == 2);
}

BOOST_AUTO_TEST_SUITE_END()
