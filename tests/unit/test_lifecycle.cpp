// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Device lifecycles as real SM hosts have them, one regression test per
// failure found in review: two verbs devices per dual-port card, a device
// reset and renamed, a device stuck failing, events read late, a return seen
// while the SM did not act, an exception or a poll() error on the event
// thread, a short read that leaves errno stale. Each case ends with the
// outcome an admin cares about: the SM port's return answered by a sweep.
//
// The core runs through the plugin's C entry points (exactly what OpenSM
// calls) on the verbs simulator; the test plays OpenSM's side by hand
// (reports, SM state). Waits are for conditions, with generous bounds.
#define BOOST_TEST_MODULE portwatch_lifecycle
#include <boost/test/unit_test.hpp>

#include <sys/resource.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "clock.hpp"
#include "core_plugin.hpp"
#include "expect.hpp"
#include "fake_host.hpp"

using namespace pwtest;
using std::chrono::milliseconds;

namespace {

constexpr uint64_t kNode0 = 0x0002c90300003000ULL;  // mlx5_0: OpenSM's port is its port 1
constexpr uint64_t kNode1 = 0x0002c90300003100ULL;  // mlx5_1: the card's other port
constexpr uint64_t kSmGuid = kNode0 + 1;
// Small timings so a lifecycle takes tens of milliseconds; the bounds below
// are generous multiples of them.
constexpr const char *kOptions =
    "portwatch.holdoff_ms=0 portwatch.retry_max_ms=400 portwatch.verify_ms=50";

void add(const std::string &name, uint64_t node_guid, const std::string &extra = "")
{
    char cmd[200];
    std::snprintf(cmd, sizeof(cmd), "add %s node_guid=0x%016llx %s", name.c_str(),
                  static_cast<unsigned long long>(node_guid), extra.c_str());
    vsim(cmd);
}

// The CPU time (ms) the thread named "portwatch" has used so far.
long portwatch_thread_cpu_ms()
{
    std::string dir = thread_dir("portwatch");
    if (dir.empty())
        return -1;
    std::ifstream stat(dir + "/stat");
    std::string line;
    std::getline(stat, line);
    // Fields after the ")" of the command name: state is field 3, utime 14,
    // stime 15.
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    std::string field;
    long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
        if (i == 14)
            utime = std::stol(field);
        if (i == 15)
            stime = std::stol(field);
    }
    return (utime + stime) * 1000 / sysconf(_SC_CLK_TCK);
}

int errors(const FakeHost &host)
{
    return host.count_level(PW_LOG_ERROR);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(lifecycle, Fresh)

// Item 1: a dual-port card is two verbs devices. OpenSM's device is reset
// (removed, back 1.5 s later with its link at INIT) while the other stays
// open: the plugin must reopen it and sweep. Before, the retry stopped as
// soon as any device was open, and the port was lost for good.
BOOST_AUTO_TEST_CASE(reset_of_opensm_device_beside_another)
{
    add("mlx5_0", kNode0);
    add("mlx5_1", kNode1);
    FakeHost host;
    host.set_guid(kSmGuid);
    Plugin plugin(host, kOptions);
    expect_log(host, "watching mlx5_0:1 (port GUID 0x0002c90300003001, OpenSM's bound port)");
    vsim("remove mlx5_0");
    expect_log(host, "verbs device mlx5_0 failed");
    expect_log(host, "is gone with its verbs device");
    // Meanwhile the other device's port is not OpenSM's: no sweep for it.
    vsim("port mlx5_1 1 state=down");
    vsim("port mlx5_1 1 state=init");
    expect_log(host, "mlx5_1:1 port error: not the watched port", 2);
    std::this_thread::sleep_for(milliseconds(1500));  // the reset takes its time
    add("mlx5_0", kNode0, "state=init");
    expect_log(host, "opened verbs device mlx5_0", 2);
    expect_log(host, "mlx5_0:1 ACTIVE -> INIT (device opened): link back, heavy sweep requested");
    expect_sweeps(host, 1);
    vsim("port mlx5_0 1 state=active");
    expect_log(host, "mlx5_0:1 is ACTIVE again");
    plugin.destroy();
    BOOST_TEST(host.sweeps() == 1, host.dump());
}

// Item 1, second cause: a device that appears after start-up (OpenSM's
// port on it) while another device is already open.
BOOST_AUTO_TEST_CASE(device_appearing_after_start_beside_another)
{
    add("mlx5_1", kNode1);
    FakeHost host;
    host.set_guid(kSmGuid);
    Plugin plugin(host, kOptions);
    expect_log(host, "is on no open verbs port");
    add("mlx5_0", kNode0);
    expect_log(host, "watching mlx5_0:1 (port GUID 0x0002c90300003001, OpenSM's bound port)");
    expect_log(host, "mlx5_0:1 is ACTIVE");
    vsim("port mlx5_0 1 state=down");
    expect_log(host, "mlx5_0:1 ACTIVE -> DOWN");
    vsim("port mlx5_0 1 state=init");
    expect_sweeps(host, 1);
}

// Item 2: OpenSM's device comes back under another name (mlx5_3, same
// port GUID, link at INIT). The port is the same port: its last state
// (ACTIVE) is compared with INIT, a link back, and swept.
BOOST_AUTO_TEST_CASE(opensm_device_back_under_another_name)
{
    add("mlx5_0", kNode0);
    add("mlx5_1", kNode1);
    FakeHost host;
    host.set_guid(kSmGuid);
    Plugin plugin(host, kOptions);
    expect_log(host, "mlx5_0:1 is ACTIVE");
    vsim("remove mlx5_0");
    expect_log(host, "is gone with its verbs device");
    add("mlx5_3", kNode0, "state=init");
    expect_log(host, "watching mlx5_3:1 (port GUID 0x0002c90300003001, OpenSM's bound port)");
    expect_log(host, "verbs device mlx5_0 is back as mlx5_3");
    expect_log(host, "mlx5_3:1 ACTIVE -> INIT (device opened): link back, heavy sweep requested");
    expect_sweeps(host, 1);
    // The return's last line (the MAD path check starts), written after the
    // sweep was requested: the count below starts once it is in.
    expect_log(host, "mlx5_3:1 is back after its device was lost: checking that OpenSM still "
                     "receives SMPs");
    // Once back, the old name is not waited for: no more rescans.
    int lines = static_cast<int>(host.lines().size());
    std::this_thread::sleep_for(milliseconds(1000));  // several retry_max periods
    BOOST_TEST(static_cast<int>(host.lines().size()) == lines, host.dump());
    plugin.destroy();
    BOOST_TEST(host.sweeps() == 1, host.dump());
}

// Item 3: a device that opens but fails every query (firmware in an error
// state) is retried ever more slowly up to retry_max_ms, not every 100 ms.
BOOST_AUTO_TEST_CASE(device_failing_every_query_backs_off)
{
    add("mlx5_0", kNode0);
    FakeHost host;
    host.set_guid(kSmGuid);
    Plugin plugin(host, "portwatch.holdoff_ms=0 portwatch.retry_max_ms=1600");
    expect_log(host, "mlx5_0:1 is ACTIVE");
    vsim("fail query_port errno=EIO count=1000000");
    vsim("port mlx5_0 1 state=down");
    portwatch::TimePoint t0 = portwatch::Clock::now();
    expect_log(host, "verbs device mlx5_0 failed (query_port: Input/output error)");
    std::this_thread::sleep_for(milliseconds(3000));
    int opens = host.count("opened verbs device mlx5_0") - 1;
    double s = portwatch::ms_between(t0, portwatch::Clock::now()) / 1000.0;
    BOOST_TEST_MESSAGE("reopens in " << s << " s: " << opens);
    // 100, 200, 400, 800, 1600, 1600 ms...: at most 5 within 3 s (it was 30).
    BOOST_TEST(opens <= 5, host.dump());
    BOOST_TEST(opens >= 2, host.dump());  // but it does keep trying
    BOOST_TEST(errors(host) <= opens + 1, host.dump());
    // Once the device works again, the plugin is back at work.
    vsim("fail query_port count=0");
    expect_log(host, "mlx5_0:1 ACTIVE -> DOWN (device opened): link lost", 1, milliseconds(5000));
    vsim("port mlx5_0 1 state=init");
    expect_sweeps(host, 1);
}

// Item 3, repeated DEVICE_FATAL right after every open.
BOOST_AUTO_TEST_CASE(repeated_device_fatal_backs_off)
{
    add("mlx5_0", kNode0);
    FakeHost host;
    host.set_guid(kSmGuid);
    Plugin plugin(host, "portwatch.holdoff_ms=0 portwatch.retry_max_ms=1600");
    expect_log(host, "mlx5_0:1 is ACTIVE");
    portwatch::TimePoint end = portwatch::Clock::now() + milliseconds(3000);
    int fatals = 0;
    while (portwatch::Clock::now() < end) {
        // Every live context of the device gets DEVICE_FATAL: a device that
        // dies again as soon as it is opened.
        // The fatal may land between the open and the first query: then
        // the open is what fails. Either way the device is lost once more.
        vsim("wait-open mlx5_0 timeout_ms=3000");
        vsim("fatal mlx5_0");
        ++fatals;
        if (!eventually([&] {
                return host.count("verbs device mlx5_0 failed (") +
                           host.count("cannot open verbs device mlx5_0") >=
                       fatals;
            }))
            break;
    }
    int opens = host.count("opened verbs device mlx5_0") - 1;
    BOOST_TEST_MESSAGE("reopens in 3 s of repeated DEVICE_FATAL: " << opens);
    BOOST_TEST(opens <= 6, host.dump());
}

// Item 4: the port is INIT (link back, sweep requested); during that sweep
// the cable moves again: DOWN, then INIT, both events still queued when the
// thread reads them, so both re-queries read INIT. The sweep ends (SUBNET
// UP) with the port still INIT: the outcome check must ask again.
BOOST_AUTO_TEST_CASE(late_events_hiding_a_return_are_caught_by_the_outcome)
{
    add("mlx5_0", kNode0);
    FakeHost host;
    host.set_guid(kSmGuid);
    Plugin plugin(host, kOptions);
    expect_log(host, "mlx5_0:1 is ACTIVE");
    vsim("port mlx5_0 1 state=down");
    expect_log(host, "mlx5_0:1 ACTIVE -> DOWN");
    vsim("port mlx5_0 1 state=init");
    expect_sweeps(host, 1);
    // Hold the thread inside its next read while the link bounces again.
    vsim("delay get_async_event ms=300");
    vsim("event mlx5_0 1 lid_change");
    std::this_thread::sleep_for(milliseconds(50));  // the thread is in the delayed read
    vsim("port mlx5_0 1 state=down");
    vsim("port mlx5_0 1 state=init");
    plugin.sweep_reports();  // the sweep ends; the port could not be configured
    expect_log(host, "mlx5_0:1 is INIT ", 1);
    expect_sweeps(host, 2);
    BOOST_TEST(host.count("heavy sweep requested again (try 1 of 4) [action=sweep]") == 1,
               host.dump());
    // The SM configures the port this time: no further sweep.
    vsim("port mlx5_0 1 state=active");
    plugin.sweep_reports();
    expect_log(host, "mlx5_0:1 is ACTIVE again");
    std::this_thread::sleep_for(milliseconds(500));  // ten verify periods
    BOOST_TEST(host.sweeps() == 2, host.dump());
}

// The outcome check gives up after verify_tries, with one ERROR line, and
// never loops: a port that stays INIT is the SM's problem to report.
BOOST_AUTO_TEST_CASE(outcome_check_is_bounded)
{
    add("mlx5_0", kNode0);
    FakeHost host;
    host.set_guid(kSmGuid);
    Plugin plugin(host, "portwatch.holdoff_ms=0 portwatch.verify_ms=20 portwatch.verify_tries=3");
    expect_log(host, "mlx5_0:1 is ACTIVE");
    // OpenSM sweeps whenever asked, but never manages to activate the port.
    host.on_wake = [&plugin] { plugin.sweep_reports(); };
    vsim("port mlx5_0 1 state=down");
    expect_log(host, "ACTIVE -> DOWN");
    vsim("port mlx5_0 1 state=init");
    expect_log(host, "is still INIT after 3 more heavy sweeps: the SM could not bring its port up");
    std::this_thread::sleep_for(milliseconds(500));
    BOOST_TEST(host.sweeps() == 4, host.dump());  // the return's sweep and 3 retries
    BOOST_TEST(errors(host) == 1, host.dump());
    // A port that is ACTIVE and quiet is never swept.
    vsim("port mlx5_0 1 state=active");
    expect_log(host, "INIT -> ACTIVE");
    std::this_thread::sleep_for(milliseconds(300));
    BOOST_TEST(host.sweeps() == 4, host.dump());
}

// Item 5: a return seen while the SM was STANDBY is ignored, as configured;
// when the SM becomes MASTER it must not be forgotten.
BOOST_AUTO_TEST_CASE(return_ignored_in_standby_is_checked_when_the_sm_acts)
{
    add("mlx5_0", kNode0);
    FakeHost host;
    host.set_guid(kSmGuid);
    host.sm_state = PW_SM_STANDBY;
    Plugin plugin(host, kOptions);
    expect_log(host, "mlx5_0:1 is ACTIVE");
    vsim("port mlx5_0 1 state=down");
    expect_log(host, "ACTIVE -> DOWN");
    vsim("port mlx5_0 1 state=init");
    expect_log(host, "DOWN -> INIT (port error): link back, SM state not in portwatch.act_in");
    BOOST_TEST(host.sweeps() == 0);
    host.sm_state = PW_SM_MASTER;
    plugin.report(PW_REPORT_STATE_CHANGE);
    plugin.sweep_reports();  // the new master's own sweep left the port INIT
    expect_sweeps(host, 1);
    BOOST_TEST(host.count("mlx5_0:1 is INIT ") == 1, host.dump());
}

// Item 6: an exception on the event thread (here bad_alloc out of a host
// call) must not reach std::terminate: one ERROR line, and the plugin goes on.
BOOST_AUTO_TEST_CASE(exception_on_the_event_thread_is_survived)
{
    add("mlx5_0", kNode0);
    FakeHost host;
    host.set_guid(kSmGuid);
    Plugin plugin(host, kOptions);
    expect_log(host, "mlx5_0:1 is ACTIVE");
    host.sm_state_throws = 1;
    vsim("port mlx5_0 1 state=down");
    expect_log(host, "event thread: std::bad_alloc; carrying on in");
    BOOST_TEST(errors(host) == 1, host.dump());
    vsim("port mlx5_0 1 state=init");
    expect_sweeps(host, 1);
}

// Item 6: a poll() error other than EINTR is retried with a backoff, not
// the end of the thread. poll() fails with EINVAL while nfds exceeds
// RLIMIT_NOFILE.
BOOST_AUTO_TEST_CASE(poll_error_is_retried_not_fatal)
{
    add("mlx5_0", kNode0);
    FakeHost host;
    host.set_guid(kSmGuid);
    Plugin plugin(host, kOptions);
    expect_log(host, "mlx5_0:1 is ACTIVE");
    rlimit saved{};
    BOOST_REQUIRE(getrlimit(RLIMIT_NOFILE, &saved) == 0);
    rlimit tiny = saved;
    tiny.rlim_cur = 1;  // the thread polls two fds: the eventfd and mlx5_0's
    BOOST_REQUIRE(setrlimit(RLIMIT_NOFILE, &tiny) == 0);
    vsim("event mlx5_0 1 lid_change");  // wake the thread into a failing poll()
    bool seen = host.wait_for("event thread: poll failed: Invalid argument");
    BOOST_REQUIRE(setrlimit(RLIMIT_NOFILE, &saved) == 0);
    BOOST_REQUIRE_MESSAGE(seen, host.dump());
    vsim("port mlx5_0 1 state=down");
    expect_log(host, "ACTIVE -> DOWN");
    vsim("port mlx5_0 1 state=init");
    expect_sweeps(host, 1);
    BOOST_TEST(errors(host) == 1, host.dump());
}

// Item 7: ibv_get_async_event() returning -1 without setting errno (a
// short read) must not be read as "no event" through a stale EAGAIN while
// poll() keeps reporting the fd readable: that is a busy loop.
BOOST_AUTO_TEST_CASE(short_read_with_stale_errno_does_not_spin)
{
    add("mlx5_0", kNode0);
    FakeHost host;
    host.set_guid(kSmGuid);
    Plugin plugin(host, kOptions);
    expect_log(host, "mlx5_0:1 is ACTIVE");
    long cpu0 = -1;
    BOOST_REQUIRE(eventually([&] { return (cpu0 = portwatch_thread_cpu_ms()) >= 0; }));
    // Leave EAGAIN in the thread's errno, as a drained non-blocking fd does:
    // one read fails with it, the retry after poll() reads the event.
    vsim("fail get_async_event errno=EAGAIN count=1");
    vsim("event mlx5_0 1 lid_change");
    expect_log(host, "mlx5_0:1 ACTIVE -> ACTIVE (LID change)");
    vsim("fail get_async_event errno=unchanged count=1000000");
    vsim("event mlx5_0 1 lid_change");
    std::this_thread::sleep_for(milliseconds(1500));
    long cpu = portwatch_thread_cpu_ms() - cpu0;
    BOOST_TEST_MESSAGE("event thread CPU over 1.5 s of failing reads: " << cpu << " ms");
    BOOST_TEST(cpu < 300, host.dump());  // a busy loop burns ~1500
    vsim("fail get_async_event count=0");
    expect_log(host, "opened verbs device mlx5_0", 2);
    expect_log(host, "mlx5_0:1 ACTIVE -> ACTIVE (device opened)");
    vsim("port mlx5_0 1 state=down");
    expect_log(host, "ACTIVE -> DOWN");
    vsim("port mlx5_0 1 state=init");
    expect_sweeps(host, 1);
}

BOOST_AUTO_TEST_SUITE_END()
