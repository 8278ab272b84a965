// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// What an admin operates by: a log that stays small in a storm yet accounts
// for every transition, the lines that go to syslog, and the metrics file.
#define BOOST_TEST_MODULE portwatch_operate
#include <boost/test/unit_test.hpp>

#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core_plugin.hpp"
#include "expect.hpp"
#include "fake_host.hpp"
#include "monitor.hpp"
#include "parsed_options.hpp"
#include "temp_dir.hpp"

using namespace portwatch;
using namespace pwtest;
using std::chrono::milliseconds;

namespace {

constexpr uint64_t kNodeGuid = 0x0002c90300001000ULL;
constexpr uint64_t kPort1Guid = kNodeGuid + 1;  // the simulator's default port GUID

std::string read_file(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A sample's line without the instance label every sample starts with
// (port_guid="0x..."): portwatch_sm_state{port_guid="0x1"} 3 -> portwatch_sm_state 3.
std::string without_instance(std::string line)
{
    const std::string label = "{port_guid=\"";
    size_t at = line.find(label);
    if (at == std::string::npos)
        return line;
    size_t end = line.find('"', at + label.size());
    if (end == std::string::npos || end + 1 >= line.size())
        return line;
    if (line[end + 1] == ',')
        line.erase(at + 1, end + 2 - (at + 1));
    else
        line.erase(at, end + 2 - at);
    return line;
}

// The value of the sample whose line starts with `series ` in the file,
// read without its instance label; -1 if none.
double sample(const std::string &path, const std::string &series)
{
    std::istringstream in(read_file(path));
    std::string line;
    while (std::getline(in, line)) {
        line = without_instance(line);
        if (line.rfind(series + " ", 0) == 0)
            return std::stod(line.substr(series.size() + 1));
    }
    return -1;
}

// Lines written in full for a link change of this kind ("link lost"/"link back").
int full_lines(const FakeHost &host, const std::string &kind)
{
    int n = 0;
    for (const std::string &l : host.lines())
        n += l.rfind("mlx5_0:1 ", 0) == 0 && l.find("): " + kind + ",") != std::string::npos;
    return n;
}

// 1000 DOWN/INIT toggles of mlx5_0 port 1, paced to span several hold-off
// windows (a burst read late collapses into a few transitions); returns
// once the plugin has told the storm's end (a window passed with nothing to
// count). On a slow build the last return may be read late, as "no change",
// after the sweep that answers it: the end of the storm is the condition,
// not a sweep after the last toggle.
void storm(const FakeHost &host)
{
    for (int i = 0; i < 1000; ++i) {
        vsim("port mlx5_0 1 state=down");
        vsim("port mlx5_0 1 state=init");
        std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
    expect_log(host, "storm over after ", 1, milliseconds(10000));
    BOOST_REQUIRE_MESSAGE(host.sweeps() > 0, "no sweep for the storm:\n" << host.dump());
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(log_volume, Fresh)

// 1000 transitions in a burst: a few lines in full, then one summary per
// hold-off window, and every link change either in a line of its own or
// counted in a summary.
BOOST_AUTO_TEST_CASE(a_storm_writes_few_lines_and_loses_no_transition)
{
    vsim("add mlx5_0 node_guid=0x0002c90300001000 style=mlx5 ports=1");
    FakeHost host;
    host.set_guid(kPort1Guid);
    Monitor m(host.callbacks(), opts("portwatch.holdoff_ms=100"));
    m.start();
    expect_log(host, "mlx5_0:1 is ACTIVE");
    size_t before = host.lines().size();
    TimePoint begin = Clock::now();
    storm(host);
    // The storm's end is told, with the port's final state.
    BOOST_TEST(host.count("in its summaries; mlx5_0:1 is INIT") == 1, host.dump());
    m.stop();
    const Counters &c = m.counters();
    // A storm, not one bounce: on a loaded machine the thread reads the
    // toggles late and in bulk, so that the re-query sees few transitions
    // (3 of 2000 events in a slow build); each still has to be accounted for.
    BOOST_TEST(c.events >= 1000u, host.dump());
    BOOST_TEST(c.link_lost >= 2u, host.dump());
    BOOST_TEST(host.count("in the last ") >= 2, host.dump());  // windows chained
    BOOST_TEST(full_lines(host, "link lost") + host.summarised("link lost") ==
                   static_cast<int>(c.link_lost),
               host.dump());
    BOOST_TEST(full_lines(host, "link back") + host.summarised("link back") ==
                   static_cast<int>(c.link_back),
               host.dump());
    // Every woken sweep is told: in a line of its own or in a summary.
    BOOST_TEST(host.sweeps_told() == static_cast<int>(c.sweeps), host.dump());
    // Bounded: the burst, one summary per window (the storm and the window
    // after it, twice over for a slow machine), the stop line.
    double windows = ms_between(begin, Clock::now()) / 100.0;
    size_t lines = host.lines().size() - before;
    BOOST_TEST(lines <= 8 + 2 * (static_cast<size_t>(windows) + 2) + 1, host.dump());
    // Far fewer lines than events (a slow build reads them late, so that
    // fewer of them are transitions: the events are the storm's size).
    BOOST_TEST(lines < c.events / 20, host.dump());
    // Syslog hears of the storm's start (the burst's link changes and the
    // first summary) and of its end, not of every window.
    BOOST_TEST(host.count_sys("storm over after ") == 1, host.dump());
    BOOST_TEST(host.count_sys("in the last ") == 1, host.dump());
    BOOST_TEST(host.count_sys("") <= 8 + 2, host.dump());
}

BOOST_AUTO_TEST_CASE(a_single_bounce_is_logged_in_full)
{
    vsim("add mlx5_0 node_guid=0x0002c90300001000 style=mlx5 ports=1");
    FakeHost host;
    host.set_guid(kPort1Guid);
    Monitor m(host.callbacks(), opts());
    m.start();
    expect_log(host, "mlx5_0:1 is ACTIVE");
    vsim("port mlx5_0 1 state=down");
    expect_log(host, "mlx5_0:1 ACTIVE -> DOWN");
    vsim("port mlx5_0 1 state=init");
    expect_log(host, "mlx5_0:1 DOWN -> INIT");
    expect_sweeps(host, 1);
    m.report(PW_REPORT_HEAVY_SWEEP_START);
    m.report(PW_REPORT_HEAVY_SWEEP_DONE);
    vsim("port mlx5_0 1 state=armed");
    vsim("port mlx5_0 1 state=active");
    m.report(PW_REPORT_SUBNET_UP);
    expect_log(host, "is ACTIVE again");
    expect_log(host, "telemetry: SUBNET_UP");
    m.stop();
    BOOST_TEST(host.count("in the last ") == 0, host.dump());
    BOOST_TEST(host.count("telemetry: ") == 3, host.dump());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(syslog_lines, Fresh)

BOOST_AUTO_TEST_CASE(link_lost_and_back_acted_on_and_the_outcome_go_to_syslog)
{
    vsim("add mlx5_0 node_guid=0x0002c90300001000 style=mlx5 ports=1");
    FakeHost host;
    host.set_guid(kPort1Guid);
    Monitor m(host.callbacks(), opts());
    m.start();
    expect_log(host, "mlx5_0:1 is ACTIVE");
    BOOST_TEST(host.count_sys("") == 0, host.dump());  // start-up is not news
    vsim("port mlx5_0 1 state=down");
    expect_log(host, "mlx5_0:1 ACTIVE -> DOWN");
    vsim("port mlx5_0 1 state=init");
    expect_sweeps(host, 1);
    vsim("port mlx5_0 1 state=active");
    expect_log(host, "is ACTIVE again");
    m.stop();
    BOOST_TEST(host.count_sys("mlx5_0:1 ACTIVE -> DOWN (port error): link lost") == 1, host.dump());
    BOOST_TEST(host.count_sys("): link back, heavy sweep requested") == 1, host.dump());
    BOOST_TEST(host.count_sys("mlx5_0:1 is ACTIVE again") == 1, host.dump());
    BOOST_TEST(host.count_sys("INIT -> ACTIVE") == 0, host.dump());  // the SM's own work
    BOOST_TEST(host.count_sys("stopped:") == 0);
}

BOOST_AUTO_TEST_CASE(a_standby_sm_ignoring_its_link_is_not_news)
{
    vsim("add mlx5_0 node_guid=0x0002c90300001000 style=mlx5 ports=1");
    FakeHost host;
    host.set_guid(kPort1Guid);
    host.sm_state = PW_SM_STANDBY;
    Monitor m(host.callbacks(), opts());
    m.start();
    expect_log(host, "mlx5_0:1 is ACTIVE");
    vsim("port mlx5_0 1 state=down");
    expect_log(host, "mlx5_0:1 ACTIVE -> DOWN");
    vsim("port mlx5_0 1 state=init");
    expect_log(host, "mlx5_0:1 DOWN -> INIT");
    m.stop();
    BOOST_TEST(host.count_sys("") == 0, host.dump());
}

BOOST_AUTO_TEST_CASE(a_device_failing_and_coming_back_goes_to_syslog)
{
    vsim("add mlx5_0 node_guid=0x0002c90300001000 style=mlx5 ports=1");
    FakeHost host;
    host.set_guid(kPort1Guid);
    Monitor m(host.callbacks(), opts());
    m.start();
    expect_log(host, "mlx5_0:1 is ACTIVE");
    vsim("fatal mlx5_0");
    expect_log(host, "verbs device mlx5_0 failed");
    expect_log(host, "opened verbs device mlx5_0", 2);
    m.stop();
    BOOST_TEST(host.count_sys("verbs device mlx5_0 failed") == 1, host.dump());
    BOOST_TEST(host.count_sys("opened verbs device mlx5_0") == 1, host.dump());  // the reopen only
}

BOOST_AUTO_TEST_CASE(refusing_to_load_goes_to_syslog)
{
    FakeHost host;
    BOOST_TEST(pw_core_create(&host.callbacks(), "portwatch.holdoff_ms=x", "OpenSM 3.3.23") ==
               nullptr);
    BOOST_TEST(host.count_sys("plugin not loaded") == 1, host.dump());
    BOOST_TEST(host.count_level(PW_LOG_ERROR) == 1, host.dump());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(metrics_file, Fresh)

BOOST_AUTO_TEST_CASE(the_file_follows_a_bounce_and_goes_with_the_plugin)
{
    vsim("add mlx5_0 node_guid=0x0002c90300001000 style=mlx5 ports=1");
    TempDir dir;
    // %g: OpenSM's port GUID, as one opensm per port names its files.
    const std::string path = dir.path + "/portwatch-0x0002c90300001001.prom";
    FakeHost host;
    host.set_guid(kPort1Guid);
    Plugin plugin(host, ("portwatch.metrics_file=" + dir.path + "/portwatch-%g.prom").c_str());
    // The load line names the file as written.
    BOOST_TEST(host.count("loaded (portwatch") == 1, host.dump());
    BOOST_TEST(host.count(" metrics_file=" + path) == 1, host.dump());
    BOOST_TEST(host.count("%g") == 0, host.dump());
    // Written before create() returns: a bad directory is a load error.
    BOOST_TEST(read_file(path).find("portwatch_info{port_guid=\"0x0002c90300001001\",version=\"") !=
               std::string::npos);
    const std::string state = "portwatch_port_state_id{device=\"mlx5_0\",port=\"1\"}";
    BOOST_REQUIRE_MESSAGE(eventually([&] { return sample(path, state) == 4; }), read_file(path));
    BOOST_TEST(
        read_file(path).find("opensm_version=\"OpenSM 3.3.23\",device=\"mlx5_0\",port=\"1\"} 1") !=
            std::string::npos,
        read_file(path));
    BOOST_TEST(sample(path, "portwatch_sm_state") == 3);
    struct stat st = {};
    BOOST_REQUIRE(stat(path.c_str(), &st) == 0);
    BOOST_TEST((st.st_mode & 0777) == 0644u);

    vsim("port mlx5_0 1 state=down");
    BOOST_REQUIRE_MESSAGE(eventually([&] { return sample(path, state) == 1; }), read_file(path));
    vsim("port mlx5_0 1 state=init");
    expect_sweeps(host, 1);
    plugin.sweep_reports();
    BOOST_REQUIRE_MESSAGE(
        eventually([&] {
            return sample(path, "portwatch_reaction_seconds_count{stage=\"subnet_up\"}") == 1;
        }),
        read_file(path));
    BOOST_TEST(sample(path, state) == 2);
    BOOST_TEST(sample(path, "portwatch_transitions_total{kind=\"link_lost\"}") == 1);
    BOOST_TEST(sample(path, "portwatch_transitions_total{kind=\"link_back\"}") == 1);
    BOOST_TEST(sample(path, "portwatch_sweeps_requested_total") == 1);
    BOOST_TEST(sample(path, "portwatch_marks_total") == 1);
    BOOST_TEST(sample(path, "portwatch_events_total") >= 2);
    BOOST_TEST(sample(path, "portwatch_reaction_seconds_count{stage=\"heavy_sweep_start\"}") == 1);
    BOOST_TEST(
        sample(path, "portwatch_reaction_seconds_bucket{stage=\"heavy_sweep_start\",le=\"60\"}") ==
        1);
    double back = sample(path, "portwatch_last_link_back_timestamp_seconds");
    BOOST_TEST(std::abs(back - static_cast<double>(time(nullptr))) < 60, read_file(path));

    vsim("port mlx5_0 1 state=active");
    BOOST_REQUIRE_MESSAGE(eventually([&] { return sample(path, state) == 4; }), read_file(path));
    BOOST_TEST(sample(path, "portwatch_last_recovery_seconds") > 0);
    plugin.destroy();
    BOOST_TEST(access(path.c_str(), F_OK) != 0);  // no stale state once unloaded
}

BOOST_AUTO_TEST_CASE(a_missing_directory_refuses_to_load_with_one_line)
{
    vsim("add mlx5_0 node_guid=0x0002c90300001000 style=mlx5 ports=1");
    FakeHost host;
    host.set_guid(kPort1Guid);
    BOOST_TEST(pw_core_create(&host.callbacks(),
                              "portwatch.metrics_file=/nonexistent-pw/portwatch.prom",
                              "OpenSM 3.3.23") == nullptr);
    BOOST_TEST(host.count_level(PW_LOG_ERROR) == 1, host.dump());
    BOOST_TEST(host.count("ERROR: portwatch.metrics_file: cannot open directory /nonexistent-pw: "
                          "No such file or directory; plugin not loaded") == 1,
               host.dump());
    BOOST_TEST(host.count("opened verbs device") == 0, host.dump());
}

// A host that names no port of OpenSM's: the samples carry the GUID of the
// port watched instead (here named by portwatch.port).
BOOST_AUTO_TEST_CASE(without_opensms_guid_the_label_is_the_watched_ports)
{
    vsim("add mlx5_0 node_guid=0x0002c90300001000 style=mlx5 ports=1");
    TempDir dir;
    const std::string path = dir.path + "/portwatch.prom";
    FakeHost host;
    host.set_guid(0);
    Plugin plugin(host, ("portwatch.port=mlx5_0:1 portwatch.metrics_file=" + path).c_str());
    BOOST_REQUIRE_MESSAGE(eventually([&] {
                              return read_file(path).find(
                                         "portwatch_port_state_id{port_guid=\"0x0002c90300001001\","
                                         "device=\"mlx5_0\",port=\"1\"} 4") != std::string::npos;
                          }),
                          read_file(path));
}

// Not with stock opensm (it binds before it loads plugins), but a host that
// names no port cannot have a file named after it.
BOOST_AUTO_TEST_CASE(percent_g_without_a_port_guid_refuses_to_load_with_one_line)
{
    vsim("add mlx5_0 node_guid=0x0002c90300001000 style=mlx5 ports=1");
    TempDir dir;
    FakeHost host;
    host.set_guid(0);
    BOOST_TEST(pw_core_create(&host.callbacks(),
                              ("portwatch.metrics_file=" + dir.path + "/pw-%g.prom").c_str(),
                              "OpenSM 3.3.23") == nullptr);
    BOOST_TEST(host.count_level(PW_LOG_ERROR) == 1, host.dump());
    BOOST_TEST(host.count("/pw-%g.prom: %g stands for OpenSM's port GUID, and OpenSM has none; "
                          "plugin not loaded") == 1,
               host.dump());
    BOOST_TEST(std::system(("test -z \"$(ls -A '" + dir.path + "')\"").c_str()) == 0);
}

// Accepted as an option value (under 4096 bytes), too long once %g is the
// GUID: refused before the load line, with one line naming the path.
BOOST_AUTO_TEST_CASE(a_file_name_too_long_with_percent_g_expanded_refuses_to_load)
{
    vsim("add mlx5_0 node_guid=0x0002c90300001000 style=mlx5 ports=1");
    TempDir dir;
    FakeHost host;
    host.set_guid(kPort1Guid);
    const std::string name(230, 'n');
    BOOST_TEST(pw_core_create(&host.callbacks(),
                              ("portwatch.metrics_file=" + dir.path + "/" + name + "%g").c_str(),
                              "OpenSM 3.3.23") == nullptr);
    BOOST_TEST(host.count_level(PW_LOG_ERROR) == 1, host.dump());
    BOOST_TEST(host.count("ERROR: portwatch.metrics_file: " + dir.path + "/" + name +
                          "0x0002c90300001001: the file name is 248 bytes, at most 242 (with %g "
                          "expanded); plugin not loaded") == 1,
               host.dump());
    BOOST_TEST(host.count("loaded (portwatch") == 0, host.dump());
    BOOST_TEST(std::system(("test -z \"$(ls -A '" + dir.path + "')\"").c_str()) == 0);
}

BOOST_AUTO_TEST_CASE(a_failing_write_is_one_error_line_and_the_plugin_goes_on)
{
    vsim("add mlx5_0 node_guid=0x0002c90300001000 style=mlx5 ports=1");
    TempDir dir;
    const std::string path = dir.path + "/portwatch.prom";
    FakeHost host;
    host.set_guid(kPort1Guid);
    Plugin plugin(host, ("portwatch.metrics_file=" + path).c_str());
    // A directory where the file goes: every rename over it fails.
    BOOST_REQUIRE(unlink(path.c_str()) == 0);
    BOOST_REQUIRE(mkdir(path.c_str(), 0755) == 0);
    BOOST_REQUIRE(mkdir((path + "/x").c_str(), 0755) == 0);
    for (int i = 1; i <= 3; ++i) {
        vsim("port mlx5_0 1 state=down");
        BOOST_REQUIRE(eventually([&] { return host.marks() >= i; }));
        vsim("port mlx5_0 1 state=init");
        expect_sweeps(host, i);
    }
    expect_log(host, "cannot write metrics file " + path);
    BOOST_TEST(host.count_level(PW_LOG_ERROR) == 1, host.dump());
    BOOST_REQUIRE(std::system(("rm -rf '" + path + "'").c_str()) == 0);
    vsim("port mlx5_0 1 state=down");
    expect_log(host, "metrics file " + path + " written again", 1, milliseconds(40000));
    BOOST_TEST(sample(path, "portwatch_sweeps_requested_total") == 3, read_file(path));
    BOOST_TEST(host.count_level(PW_LOG_ERROR) == 1, host.dump());
}

BOOST_AUTO_TEST_CASE(a_storm_rewrites_the_file_at_most_once_per_holdoff)
{
    vsim("add mlx5_0 node_guid=0x0002c90300001000 style=mlx5 ports=1");
    TempDir dir;
    const std::string path = dir.path + "/portwatch.prom";
    FakeHost host;
    host.set_guid(kPort1Guid);
    Monitor m(host.callbacks(), opts("portwatch.holdoff_ms=200 portwatch.metrics_file=" + path));
    m.start();
    expect_log(host, "mlx5_0:1 is ACTIVE");
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    BOOST_REQUIRE(fd >= 0);
    // Both halves of each rename: identical events in a row would be merged.
    BOOST_REQUIRE(inotify_add_watch(fd, dir.path.c_str(), IN_MOVED_FROM | IN_MOVED_TO) >= 0);
    TimePoint begin = Clock::now();
    storm(host);
    // The file catches up with the storm's end once its window is over.
    BOOST_REQUIRE(eventually([&] {
        return sample(path, "portwatch_sweeps_requested_total") ==
               static_cast<double>(host.sweeps());
    }));
    double elapsed = ms_between(begin, Clock::now());
    m.stop();
    int renames = 0;
    alignas(inotify_event) char buf[65536];
    for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;)
        for (char *p = buf; p < buf + n;
             p += sizeof(inotify_event) + reinterpret_cast<inotify_event *>(p)->len)
            renames += (reinterpret_cast<inotify_event *>(p)->mask & IN_MOVED_TO) != 0;
    close(fd);
    BOOST_TEST(renames >= 2, "renames=" << renames << " in " << elapsed << " ms");
    BOOST_TEST(renames <= static_cast<int>(elapsed / 200) + 2,
               "renames=" << renames << " in " << elapsed << " ms");
}

BOOST_AUTO_TEST_CASE(idle_with_metrics_on_the_thread_never_wakes)
{
    vsim("add mlx5_0 node_guid=0x0002c90300001000 style=mlx5 ports=1");
    TempDir dir;
    FakeHost host;
    host.set_guid(kPort1Guid);
    Monitor m(host.callbacks(), opts("portwatch.metrics_file=" + dir.path + "/portwatch.prom"));
    m.start();
    expect_log(host, "mlx5_0:1 is ACTIVE");
    struct stat first = {};
    // At rest once the file holds still for a window and more (no fixed sleep
    // assumed long enough: the mtime is the condition).
    BOOST_REQUIRE(eventually([&] {
        struct stat st = {};
        stat((dir.path + "/portwatch.prom").c_str(), &st);
        bool still = st.st_ino == first.st_ino && st.st_mtim.tv_nsec == first.st_mtim.tv_nsec;
        first = st;
        if (!still)
            std::this_thread::sleep_for(milliseconds(300));
        return still;
    }));
    long before = thread_switches("portwatch");
    std::this_thread::sleep_for(milliseconds(1500));  // the quiet time observed
    BOOST_TEST(thread_switches("portwatch") == before);
    struct stat after = {};
    stat((dir.path + "/portwatch.prom").c_str(), &after);
    BOOST_TEST(after.st_ino == first.st_ino);
    m.stop();
}

BOOST_AUTO_TEST_SUITE_END()
