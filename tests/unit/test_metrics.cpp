// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The metrics text (Prometheus exposition format) and the file it goes to.
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "metrics.hpp"
#include "metrics_file.hpp"
#include "temp_dir.hpp"

using namespace portwatch;
using pwtest::TempDir;

namespace {

// The instance label every sample carries first.
#define GUID "port_guid=\"0x0002c90300001001\""
#define NO_GUID "port_guid=\"\""

bool has_line(const std::string &text, const std::string &line)
{
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l))
        if (l == line)
            return true;
    return false;
}

std::string read_file(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

MetricsSnapshot sample()
{
    MetricsSnapshot s;
    s.version = "0.1.0";
    s.osm_version = "OpenSM 3.3.23";
    s.device = "mlx5_0";
    s.port = 1;
    s.port_guid = 0x0002c90300001001ULL;
    s.port_state_id = 4;
    s.sm_state = 3;
    s.events = 12;
    s.link_lost = 2;
    s.link_back = 3;
    s.sweeps = 3;
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(metrics)

BOOST_AUTO_TEST_CASE(every_family_with_help_and_type)
{
    std::string text = render_metrics(sample());
    for (const char *family :
         {"portwatch_info gauge", "portwatch_port_state_id gauge", "portwatch_sm_state gauge",
          "portwatch_events_total counter", "portwatch_transitions_total counter",
          "portwatch_sweeps_requested_total counter", "portwatch_marks_total counter",
          "portwatch_coalesced_total counter", "portwatch_ignored_total counter",
          "portwatch_device_failures_total counter", "portwatch_reaction_seconds histogram"}) {
        std::string name = std::string(family).substr(0, std::string(family).find(' '));
        BOOST_TEST(has_line(text, std::string("# TYPE ") + family), family);
        BOOST_TEST(text.find("# HELP " + name + " ") != std::string::npos, name);
    }
    BOOST_TEST(has_line(text, "portwatch_info{" GUID
                              ",version=\"0.1.0\",opensm_version=\"OpenSM 3.3.23\","
                              "device=\"mlx5_0\",port=\"1\"} 1"),
               text);
    BOOST_TEST(has_line(text, "portwatch_port_state_id{" GUID ",device=\"mlx5_0\",port=\"1\"} 4"));
    BOOST_TEST(has_line(text, "portwatch_sm_state{" GUID "} 3"));
    BOOST_TEST(has_line(text, "portwatch_events_total{" GUID "} 12"));
    BOOST_TEST(has_line(text, "portwatch_transitions_total{" GUID ",kind=\"link_lost\"} 2"));
    BOOST_TEST(has_line(text, "portwatch_transitions_total{" GUID ",kind=\"link_back\"} 3"));
    BOOST_TEST(has_line(text, "portwatch_sweeps_requested_total{" GUID "} 3"));
    // Not known yet: not shown (a 0 would read as "at the epoch").
    BOOST_TEST(text.find("portwatch_last_link_back_timestamp_seconds") == std::string::npos);
    BOOST_TEST(text.find("portwatch_last_recovery_seconds") == std::string::npos);
    BOOST_TEST(text.back() == '\n');
}

BOOST_AUTO_TEST_CASE(histogram_buckets_are_cumulative_from_1ms_to_60s)
{
    MetricsSnapshot s = sample();
    ReactionHistogram &up = s.reaction[static_cast<size_t>(Stage::SubnetUp)];
    up.observe(0.0005);  // <= 1 ms
    up.observe(0.001);   // exactly on a bound: in it
    up.observe(0.016);
    up.observe(90.0);  // beyond 60 s: +Inf only
    std::string text = render_metrics(s);
    BOOST_TEST(has_line(text, "portwatch_reaction_seconds_bucket{" GUID
                              ",stage=\"subnet_up\",le=\"0.001\"} 2"),
               text);
    BOOST_TEST(has_line(text, "portwatch_reaction_seconds_bucket{" GUID
                              ",stage=\"subnet_up\",le=\"0.01\"} 2"));
    BOOST_TEST(has_line(text, "portwatch_reaction_seconds_bucket{" GUID
                              ",stage=\"subnet_up\",le=\"0.025\"} 3"));
    BOOST_TEST(has_line(text, "portwatch_reaction_seconds_bucket{" GUID
                              ",stage=\"subnet_up\",le=\"60\"} 3"));
    BOOST_TEST(has_line(text, "portwatch_reaction_seconds_bucket{" GUID
                              ",stage=\"subnet_up\",le=\"+Inf\"} 4"));
    BOOST_TEST(has_line(text, "portwatch_reaction_seconds_count{" GUID ",stage=\"subnet_up\"} 4"));
    BOOST_TEST(
        has_line(text, "portwatch_reaction_seconds_sum{" GUID ",stage=\"subnet_up\"} 90.0175"));
    BOOST_TEST(
        has_line(text, "portwatch_reaction_seconds_count{" GUID ",stage=\"heavy_sweep_start\"} 0"));
    BOOST_TEST(has_line(text, "portwatch_reaction_seconds_bucket{" GUID
                              ",stage=\"heavy_sweep_done\",le=\"+Inf\"} 0"));
}

BOOST_AUTO_TEST_CASE(label_values_are_escaped_and_unknown_port_is_empty)
{
    MetricsSnapshot s;
    s.osm_version = "a\"b\\c\nd";
    std::string text = render_metrics(s);
    BOOST_TEST(text.find("opensm_version=\"a\\\"b\\\\c\\nd\"") != std::string::npos, text);
    BOOST_TEST(has_line(text, "portwatch_port_state_id{" NO_GUID ",device=\"\",port=\"\"} 0"),
               text);
    BOOST_TEST(text.find("port_guid=\"\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(timestamps_keep_their_milliseconds)
{
    MetricsSnapshot s = sample();
    s.last_link_back_unix = 1796000000.25;
    s.last_recovery_seconds = 0.0275;
    std::string text = render_metrics(s);
    BOOST_TEST(
        has_line(text, "portwatch_last_link_back_timestamp_seconds{" GUID "} 1796000000.250"),
        text);
    BOOST_TEST(has_line(text, "portwatch_last_recovery_seconds{" GUID "} 0.0275"), text);
    BOOST_TEST(has_line(text, "# TYPE portwatch_last_recovery_seconds gauge"));
}

// One opensm per port writes one file each into the collector's directory:
// node_exporter takes them together only if no two samples share a name
// and labels, so every sample names its instance.
BOOST_AUTO_TEST_CASE(every_sample_names_the_instance_first)
{
    MetricsSnapshot s = sample();
    s.reaction[0].observe(0.002);
    s.last_link_back_unix = 1796000000.25;
    s.last_recovery_seconds = 0.0275;
    std::istringstream in(render_metrics(s));
    std::string line;
    int samples = 0;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#')
            continue;
        ++samples;
        size_t brace = line.find('{');
        BOOST_TEST((brace != std::string::npos &&
                    line.compare(brace, std::strlen("{" GUID), "{" GUID) == 0),
                   line);
    }
    BOOST_TEST(samples > 60);  // 14 families; the histogram alone has 3 stages x 18 samples
}

BOOST_AUTO_TEST_CASE(snapshots_compare_by_every_field)
{
    MetricsSnapshot a = sample(), b = sample();
    BOOST_TEST((a == b));
    b.reaction[0].observe(0.002);
    BOOST_TEST((a != b));
    b = a;
    b.last_recovery_seconds = 1.5;
    BOOST_TEST((a != b));
    b = a;
    b.port_state_id = 2;
    BOOST_TEST((a != b));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(metrics_file)

BOOST_AUTO_TEST_CASE(percent_g_is_the_port_guid_as_debian_names_its_logs)
{
    BOOST_TEST(metrics_path("/d/portwatch-%g.prom", 0x0002c90300001001ULL) ==
               "/d/portwatch-0x0002c90300001001.prom");
    BOOST_TEST(metrics_path("/d/%g-%g", 0xabULL) == "/d/0x00000000000000ab-0x00000000000000ab");
    BOOST_TEST(metrics_path("/d/portwatch.prom", 0) ==
               "/d/portwatch.prom");  // no %g: no GUID needed
    try {
        (void)metrics_path("/d/portwatch-%g.prom", 0);
        BOOST_FAIL("no error for %g without a GUID");
    } catch (const std::runtime_error &e) {
        std::string what = e.what();
        BOOST_TEST(what.find("portwatch.metrics_file: /d/portwatch-%g.prom: %g stands for OpenSM's "
                             "port GUID") == 0,
                   what);
    }
}

namespace {
std::string path_error(const std::string &configured, uint64_t guid)
{
    try {
        (void)metrics_path(configured, guid);
    } catch (const std::runtime_error &e) {
        return e.what();
    }
    return "";
}
}  // namespace

// The limits apply to the name as written: each %g adds 16 bytes.
BOOST_AUTO_TEST_CASE(too_long_once_expanded_is_refused_naming_the_expanded_path)
{
    const uint64_t guid = 0x0002c90300001001ULL;
    const std::string longest = "/d/" + std::string(kMetricsNameMax, 'n');
    BOOST_TEST(metrics_path(longest, guid) == longest);
    BOOST_TEST(path_error(longest + "x", guid) ==
               "portwatch.metrics_file: " + longest + "x: the file name is 243 bytes, at most 242");
    // 226 + 2 configured bytes fit; with the GUID they are 244.
    const std::string with_g = "/d/" + std::string(226, 'n') + "%g";
    const std::string expanded = "/d/" + std::string(226, 'n') + "0x0002c90300001001";
    BOOST_TEST(path_error(with_g, guid) == "portwatch.metrics_file: " + expanded +
                                               ": the file name is 244 bytes, at most 242 "
                                               "(with %g expanded)");
    // The whole path: directories of 200 bytes, 4095 in all at most.
    std::string dirs;
    while (dirs.size() + 201 <= 4095 - 10)
        dirs += "/" + std::string(200, 'd');
    const std::string fits = dirs + "/" + std::string(4095 - dirs.size() - 1, 'f');
    BOOST_TEST(fits.size() == 4095u);
    BOOST_TEST(path_error(fits, guid).empty());
    const std::string over = dirs + "/" + std::string(4095 - dirs.size() - 17, 'f') + "%g";
    BOOST_TEST(path_error(over, guid)
                       .find(": the path is 4097 bytes, at most 4095 (with %g "
                             "expanded)") != std::string::npos,
               path_error(over, guid));
}

BOOST_AUTO_TEST_CASE(written_whole_with_mode_0644_whatever_the_umask)
{
    TempDir dir;
    mode_t old = umask(077);
    MetricsFile file(dir.path + "/portwatch.prom");
    BOOST_TEST(file.write("a 1\n") == 0);
    umask(old);
    struct stat st = {};
    BOOST_REQUIRE(stat((dir.path + "/portwatch.prom").c_str(), &st) == 0);
    BOOST_TEST((st.st_mode & 07777) == 0644u);
    BOOST_TEST(read_file(dir.path + "/portwatch.prom") == "a 1\n");
    BOOST_TEST(file.write("a 2\n") == 0);
    BOOST_TEST(read_file(dir.path + "/portwatch.prom") == "a 2\n");
    // No temporary left beside it.
    BOOST_TEST(std::system(("test $(ls -A '" + dir.path + "' | wc -l) -eq 1").c_str()) == 0);
    file.remove();
    BOOST_TEST(access((dir.path + "/portwatch.prom").c_str(), F_OK) != 0);
}

BOOST_AUTO_TEST_CASE(a_symlink_at_the_path_is_replaced_not_written_through)
{
    TempDir dir;
    std::string victim = dir.path + "/victim";
    {
        std::ofstream(victim) << "precious\n";
    }
    BOOST_REQUIRE(symlink(victim.c_str(), (dir.path + "/portwatch.prom").c_str()) == 0);
    MetricsFile file(dir.path + "/portwatch.prom");
    BOOST_TEST(file.write("a 1\n") == 0);
    BOOST_TEST(read_file(victim) == "precious\n");
    struct stat st = {};
    BOOST_REQUIRE(lstat((dir.path + "/portwatch.prom").c_str(), &st) == 0);
    BOOST_TEST(S_ISREG(st.st_mode));
}

BOOST_AUTO_TEST_CASE(a_missing_directory_is_named_at_once)
{
    try {
        MetricsFile file("/nonexistent-pw-dir/portwatch.prom");
        BOOST_FAIL("no error for a missing directory");
    } catch (const std::runtime_error &e) {
        std::string what = e.what();
        BOOST_TEST(what.find("portwatch.metrics_file") != std::string::npos, what);
        BOOST_TEST(what.find("/nonexistent-pw-dir") != std::string::npos, what);
        BOOST_TEST(what.find("No such file or directory") != std::string::npos, what);
    }
}

BOOST_AUTO_TEST_CASE(a_failed_write_says_why_and_leaves_no_temporary)
{
    TempDir dir;
    // A directory where the file should be: the rename cannot replace it.
    BOOST_REQUIRE(mkdir((dir.path + "/portwatch.prom").c_str(), 0755) == 0);
    BOOST_REQUIRE(mkdir((dir.path + "/portwatch.prom/x").c_str(), 0755) == 0);
    MetricsFile file(dir.path + "/portwatch.prom");
    int err = file.write("a 1\n");
    BOOST_TEST(err != 0);
    BOOST_TEST(std::system(("test $(ls -A '" + dir.path + "' | wc -l) -eq 1").c_str()) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
