// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// After a reset of OpenSM's device: the MAD path check inside the plugin,
// through the C entry points (what OpenSM calls), on the verbs simulator.
// FakeHost plays OpenSM's side: each woken sweep request counts one SMP
// received while the MAD path works (the port's own HCA answers a sweep's
// first SMP), none once the test declares it dead; the test reports the
// HEAVY_SWEEP_START OpenSM would.
//
// A path that survives is left alone; a dead one asks OpenSM to exit once
// (restart) or says once that it must be restarted (log), with the gauge
// and counter in the metrics file; a return with no sweep of its own gets
// one requested; a new reset is judged afresh.
#define BOOST_TEST_MODULE portwatch_device_reset
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "core_plugin.hpp"
#include "expect.hpp"
#include "fake_host.hpp"
#include "temp_dir.hpp"

using namespace pwtest;
using std::chrono::milliseconds;

namespace {

constexpr uint64_t kNodeGuid = 0x0002c90300003000ULL;
constexpr uint64_t kPort1Guid = kNodeGuid + 1;
const std::string kOptions =
    "portwatch.holdoff_ms=0 portwatch.retry_max_ms=200 portwatch.reset_check_ms=1000";
const milliseconds kVerdict{4000};  // reset_check_ms=1000 and a margin

std::string read_file(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A sample's text as the file has it, with OpenSM's port as its instance label.
std::string sample(const std::string &name, int value)
{
    return name + "{port_guid=\"0x0002c90300003001\"} " + std::to_string(value) + "\n";
}

bool has(const std::string &text, const std::string &needle)
{
    return text.find(needle) != std::string::npos;
}

// The device reset: mlx5_0 goes (DEVICE_FATAL, closed) and comes back with
// its port at `state`; the plugin reopens it and starts the check.
void reset(const FakeHost &host, int n, const char *state = "init")
{
    vsim("remove mlx5_0");
    expect_log(host, "verbs device mlx5_0 failed", n);
    add_device("mlx5_0", kNodeGuid, std::string("state=") + state);
    expect_log(host,
               "mlx5_0:1 is back after its device was lost: checking that OpenSM still "
               "receives SMPs",
               n);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(device_reset, Fresh)

// On ibsim, and wherever umad survives the reset: SMPs are received after
// the return, nothing is stopped, the gauge stays 0.
BOOST_AUTO_TEST_CASE(a_path_that_survives_the_reset_is_left_alone)
{
    add_device("mlx5_0", kNodeGuid);
    TempDir dir;
    const std::string path = dir.path + "/pw.prom";
    FakeHost host;
    host.set_guid(kPort1Guid);
    Plugin plugin(host, (kOptions + " portwatch.metrics_file=" + path).c_str());
    reset(host, 1);
    expect_sweeps(host, 1);  // the link came back with the device
    plugin.report(PW_REPORT_HEAVY_SWEEP_START);
    expect_log(host, "OpenSM's MAD path works after the reset of mlx5_0: 1 SMPs received", 1,
               kVerdict);
    BOOST_TEST(host.exit_requests == 0);
    BOOST_TEST(host.count("MAD path is dead") == 0, host.dump());
    BOOST_TEST(host.sweeps() == 1, host.dump());
    BOOST_REQUIRE(
        eventually([&] { return has(read_file(path), sample("portwatch_mad_path_dead", 0)); }));
    BOOST_TEST(has(read_file(path), sample("portwatch_mad_path_dead_total", 0)));
    plugin.destroy();
    BOOST_TEST(access(path.c_str(), F_OK) != 0, "a stopped plugin leaves no metrics file");
}

// The real kernel's case: OpenSM's umad file is dead after the reset. The
// return's sweep starts and nothing comes back: one SYS line naming the
// device, the port GUID and why; OpenSM is asked to exit once; the metrics
// file says so and stays after the plugin's delete().
BOOST_AUTO_TEST_CASE(a_dead_path_asks_opensm_to_exit_once)
{
    add_device("mlx5_0", kNodeGuid);
    TempDir dir;
    const std::string path = dir.path + "/pw.prom";
    FakeHost host;
    host.set_guid(kPort1Guid);
    Plugin plugin(host, (kOptions + " portwatch.metrics_file=" + path).c_str());
    host.mad_path_dead = true;
    reset(host, 1);
    expect_sweeps(host, 1);
    plugin.report(PW_REPORT_HEAVY_SWEEP_START);
    expect_log(host,
               "ERROR: OpenSM's MAD path is dead since the reset of mlx5_0 (port GUID "
               "0x0002c90300003001): no SMP received in ",
               1, kVerdict);
    BOOST_TEST(host.count("a heavy sweep started and not even the port's own HCA answered. "
                          "Asking OpenSM to exit so that its service manager starts it again "
                          "(portwatch.on_device_reset=restart)") == 1,
               host.dump());
    BOOST_TEST(host.count_sys("MAD path is dead") == 1);
    BOOST_REQUIRE(eventually([&] { return host.exit_requests == 1; }));
    // The last resort, armed once and before the exit was asked for, and said.
    BOOST_TEST(host.deadlines == 1);
    BOOST_TEST(host.deadlines_late == 0);
    BOOST_TEST(host.deadline_ms == 5000u);
    BOOST_TEST(host.count_sys("a kernel timer ends opensm with SIGKILL should it still run "
                              "5000 ms from now") == 1,
               host.dump());
    BOOST_REQUIRE(
        eventually([&] { return has(read_file(path), sample("portwatch_mad_path_dead", 1)); }));
    BOOST_TEST(has(read_file(path), sample("portwatch_mad_path_dead_total", 1)));
    const double now_unix =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    const std::string armed = read_file(path);
    const std::string key =
        "portwatch_exit_kill_timestamp_seconds{port_guid=\"0x0002c90300003001\"} ";
    const size_t at = armed.find(key);
    BOOST_REQUIRE_MESSAGE(at != std::string::npos, armed);
    const double kill_at = std::stod(armed.substr(at + key.size()));
    BOOST_TEST(kill_at > now_unix, armed);
    BOOST_TEST(kill_at <= now_unix + 5.0, armed);
    // OpenSM's shutdown: delete() with osm_exit_flag set.
    plugin.destroy();
    const std::string last = read_file(path);
    BOOST_TEST(has(last, sample("portwatch_mad_path_dead", 1)), "the file stays and says so:\n"
                                                                    << last);
    BOOST_TEST(host.count("stopped: ") == 1);
    BOOST_TEST(host.count("mad_path_dead=1") == 1, host.dump());
}

// With log: said once, OpenSM is not stopped, the gauge says it until
// OpenSM runs again; a later reset whose path works clears it.
BOOST_AUTO_TEST_CASE(log_says_it_once_and_a_new_reset_is_judged_again)
{
    add_device("mlx5_0", kNodeGuid);
    TempDir dir;
    const std::string path = dir.path + "/pw.prom";
    FakeHost host;
    host.set_guid(kPort1Guid);
    Plugin plugin(
        host, (kOptions + " portwatch.on_device_reset=log portwatch.metrics_file=" + path).c_str());
    host.mad_path_dead = true;
    reset(host, 1);
    expect_sweeps(host, 1);
    plugin.report(PW_REPORT_HEAVY_SWEEP_START);
    expect_log(host,
               "OpenSM can neither send nor receive on this port: restart opensm "
               "(portwatch.on_device_reset=log)",
               1, kVerdict);
    BOOST_TEST(host.count_sys("MAD path is dead") == 1);
    BOOST_TEST(host.exit_requests == 0);
    BOOST_REQUIRE(
        eventually([&] { return has(read_file(path), sample("portwatch_mad_path_dead", 1)); }));
    BOOST_TEST(host.deadlines == 0);  // no exit asked for, no timer
    BOOST_TEST(has(read_file(path), sample("portwatch_exit_kill_timestamp_seconds", 0)));
    std::this_thread::sleep_for(milliseconds(2500));  // two more bounds: nothing more to say
    BOOST_TEST(host.count("MAD path is dead") == 1, host.dump());
    BOOST_TEST(host.sweeps() == 1, host.dump());

    // The device is reset again and this time the path works.
    host.mad_path_dead = false;
    reset(host, 2);
    expect_sweeps(host, 2);
    plugin.report(PW_REPORT_HEAVY_SWEEP_START);
    expect_log(host, "OpenSM's MAD path works after the reset of mlx5_0", 1, kVerdict);
    BOOST_REQUIRE(
        eventually([&] { return has(read_file(path), sample("portwatch_mad_path_dead", 0)); }));
    BOOST_TEST(has(read_file(path), sample("portwatch_mad_path_dead_total", 1)));
    BOOST_TEST(host.exit_requests == 0);
}

// The device came back with its port as it was (ACTIVE): no link change,
// so no sweep of its own. The check asks for one and judges by it.
BOOST_AUTO_TEST_CASE(a_return_without_a_sweep_gets_one_requested)
{
    add_device("mlx5_0", kNodeGuid);
    FakeHost host;
    host.set_guid(kPort1Guid);
    Plugin plugin(host, kOptions.c_str());
    reset(host, 1, "active");
    expect_log(host, "no heavy sweep since mlx5_0 came back", 1, kVerdict);
    expect_sweeps(host, 1);
    plugin.report(PW_REPORT_HEAVY_SWEEP_START);
    expect_log(host, "OpenSM's MAD path works after the reset of mlx5_0: 1 SMPs received", 1,
               kVerdict);
    BOOST_TEST(host.exit_requests == 0);
}

// A standby SM sweeps nothing: the check asks for no sweep and, with no
// SMP received, says nothing; it only waits (its polls would tell).
BOOST_AUTO_TEST_CASE(a_standby_is_not_judged_by_silence)
{
    add_device("mlx5_0", kNodeGuid);
    FakeHost host;
    host.set_guid(kPort1Guid);
    host.sm_state = PW_SM_STANDBY;
    Plugin plugin(host, kOptions.c_str());
    host.mad_path_dead = true;
    reset(host, 1);
    std::this_thread::sleep_for(milliseconds(3500));  // three bounds and more
    BOOST_TEST(host.count("MAD path") == 0, host.dump());
    BOOST_TEST(host.sweeps() == 0, host.dump());
    BOOST_TEST(host.exit_requests == 0);
}

// The kernel's word on OpenSM's umad file: POLLERR once its device is gone
// (played by a pipe whose writer closed: POLLHUP, taken the same way).
// OpenSM's ERROR lines go off at once and one SYS line says why; while the
// device is away nothing is decided and OpenSM is not asked to exit (its
// restart could not bind); the device's return brings the verdict at once,
// no reset_check_ms later, the kill timer and the exit.
BOOST_AUTO_TEST_CASE(the_kernels_pollerr_decides_at_the_devices_return)
{
    add_device("mlx5_0", kNodeGuid);
    int pipe_fds[2];
    BOOST_REQUIRE(pipe(pipe_fds) == 0);
    FakeHost host;
    host.set_guid(kPort1Guid);
    host.mad_fd = pipe_fds[0];
    Plugin plugin(host, kOptions.c_str());
    plugin.report(PW_REPORT_HEAVY_SWEEP_START);  // OpenSM bound: the watch starts
    expect_log(host, "watching OpenSM's umad file", 1, kVerdict);
    vsim("remove mlx5_0");
    expect_log(host, "verbs device mlx5_0 failed", 1);
    close(pipe_fds[1]);
    expect_log(host, "ERROR: the kernel reports OpenSM's umad file dead (POLLERR)", 1, kVerdict);
    BOOST_TEST(host.errors_muted);
    BOOST_TEST(host.mutes == 1);
    BOOST_TEST(host.count_sys("OpenSM's ERROR lines are off from now on") == 1, host.dump());
    std::this_thread::sleep_for(milliseconds(1500));  // the device stays away
    BOOST_TEST(host.exit_requests == 0, host.dump());
    BOOST_TEST(host.count("MAD path is dead") == 0, host.dump());
    const auto back = std::chrono::steady_clock::now();
    add_device("mlx5_0", kNodeGuid, "state=init");
    expect_log(host,
               "ERROR: OpenSM's MAD path is dead since the reset of mlx5_0 (port GUID "
               "0x0002c90300003001): the kernel reported OpenSM's umad file dead ",
               1, kVerdict);
    const long long decided_ms =
        std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - back).count();
    // Its return is found by the reopen backoff (retry_max_ms=200 here).
    BOOST_TEST(decided_ms < 1000, "verdict " << decided_ms << " ms after the return");
    BOOST_REQUIRE(eventually([&] { return host.exit_requests == 1; }));
    BOOST_TEST(host.deadlines == 1);
    BOOST_TEST(host.deadlines_late == 0);
    BOOST_TEST(host.count("checking that OpenSM still receives SMPs") == 0, host.dump());
    plugin.destroy();
    close(pipe_fds[0]);
    BOOST_TEST(host.count("mad_path_dead=1") == 1, host.dump());
}

// This process's NETLINK_KOBJECT_UEVENT sockets (the plugin's uevent watch).
int own_uevent_sockets()
{
    std::set<std::string> own;
    for (const auto &e : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        const std::string target = std::filesystem::read_symlink(e.path(), ec).string();
        if (!ec && target.rfind("socket:[", 0) == 0)
            own.insert(target.substr(8, target.size() - 9));
    }
    std::ifstream in("/proc/self/net/netlink");
    std::string line, sk, proto, port, groups, rmem, wmem, dump, locks, drops, inode;
    std::getline(in, line);
    int n = 0;
    while (in >> sk >> proto >> port >> groups >> rmem >> wmem >> dump >> locks >> drops >> inode)
        n += proto == "15" && own.count(inode);
    return n;
}

// A device away for long: its return is seen at the kernel's uevent, not
// when the reopen backoff (grown to 1.6 s steps here, up to the default
// retry_max_ms of 30 s) looks again. The plugin reads uevents only while a
// device is missing: none before the loss, none after the return.
BOOST_AUTO_TEST_CASE(a_return_is_seen_at_the_kernels_uevent)
{
    // The simulator plays the kernel's uevent by netlink unicast, which
    // needs CAP_NET_ADMIN: without root, this case runs again in a user and
    // network namespace of its own, where the test is root.
    if (geteuid() != 0) {
        const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
        const std::string cmd =
            "unshare --user --map-root-user --net -- '" + self +
            "' --run_test=device_reset/a_return_is_seen_at_the_kernels_uevent --log_level=message";
        BOOST_TEST(std::system(cmd.c_str()) == 0,
                   "in its own user and network namespace (unshare --user --map-root-user "
                   "--net: util-linux, and unprivileged user namespaces): "
                       << cmd);
        return;
    }
    add_device("mlx5_0", kNodeGuid);
    FakeHost host;
    host.set_guid(kPort1Guid);
    Plugin plugin(host, "portwatch.holdoff_ms=0 portwatch.reset_check_ms=1000");
    expect_log(host, "watching mlx5_0:1", 1);
    BOOST_TEST(own_uevent_sockets() == 0);
    vsim("remove mlx5_0");
    expect_log(host, "verbs device mlx5_0 failed", 1);
    BOOST_TEST(eventually([] { return own_uevent_sockets() == 1; }));
    // Away 3.5 s: the backoff's looks at 0.1, 0.3, 0.7, 1.5 and 3.1 s; its
    // next at 6.3 s.
    std::this_thread::sleep_for(milliseconds(3500));
    const auto back = std::chrono::steady_clock::now();
    add_device("mlx5_0", kNodeGuid, "state=init");
    expect_log(host, "mlx5_0:1 is back after its device was lost", 1, milliseconds(3000));
    const long long seen_ms =
        std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - back).count();
    BOOST_TEST_MESSAGE("the return was seen " << seen_ms << " ms after it");
    BOOST_TEST(seen_ms <= 100, "the return was seen " << seen_ms << " ms after it");
    BOOST_TEST(host.count("the kernel added an RDMA device") >= 1, host.dump());
    BOOST_TEST(eventually([] { return own_uevent_sockets() == 0; }), "the socket stays open");
}

// Where no uevent comes (uevent=no: a container with its own network
// namespace), the reopen backoff still finds the device.
BOOST_AUTO_TEST_CASE(without_a_uevent_the_backoff_finds_the_return)
{
    add_device("mlx5_0", kNodeGuid);
    FakeHost host;
    host.set_guid(kPort1Guid);
    Plugin plugin(host, kOptions.c_str());  // retry_max_ms=200
    expect_log(host, "watching mlx5_0:1", 1);
    vsim("remove mlx5_0");
    expect_log(host, "verbs device mlx5_0 failed", 1);
    std::this_thread::sleep_for(milliseconds(500));
    add_device("mlx5_0", kNodeGuid, "state=init uevent=no");
    expect_log(host, "mlx5_0:1 is back after its device was lost", 1, milliseconds(2000));
    BOOST_TEST(host.count("the kernel added an RDMA device") == 0, host.dump());
}

BOOST_AUTO_TEST_SUITE_END()
