// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include <boost/test/unit_test.hpp>

#include <string>

#include "options.hpp"

using namespace portwatch;

namespace {

Options ok(const char *text)
{
    ParsedOptions p = parse_options(text);
    BOOST_REQUIRE_MESSAGE(p.options, "'" << (text ? text : "(null)") << "' -> " << p.error);
    return *p.options;
}

std::string bad(const std::string &text)
{
    ParsedOptions p = parse_options(text.c_str());
    BOOST_REQUIRE_MESSAGE(!p.options, "'" << text << "' was accepted");
    BOOST_TEST(!p.error.empty());
    BOOST_TEST(p.error.find('\n') == std::string::npos);  // one log line
    return p.error;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(options)

BOOST_AUTO_TEST_CASE(defaults_without_options)
{
    for (const char *text : {static_cast<const char *>(nullptr), "", "   \t "}) {
        Options o = ok(text);
        BOOST_TEST((o.port.kind == PortSpec::Kind::Auto));
        BOOST_TEST(o.holdoff.count() == 100);
        BOOST_TEST(!o.sweep_on_loss);
        BOOST_TEST(o.act_in.describe() == "master,discovering");
        BOOST_TEST(o.retry_max.count() == 30000);
        BOOST_TEST(o.verify.count() == 1000);
        BOOST_TEST(o.verify_tries == 4u);
    }
    BOOST_TEST(ok(nullptr).describe() ==
               "port=auto holdoff_ms=100 sweep_on_loss=no act_in=master,discovering "
               "retry_max_ms=30000 verify_ms=1000 verify_tries=4 metrics_file=off "
               "on_device_reset=restart reset_check_ms=10000");
}

BOOST_AUTO_TEST_CASE(on_device_reset_and_its_bound)
{
    BOOST_TEST((ok(nullptr).on_device_reset == OnDeviceReset::Restart));
    BOOST_TEST((ok("portwatch.on_device_reset=log").on_device_reset == OnDeviceReset::Log));
    BOOST_TEST((ok("portwatch.on_device_reset=restart").on_device_reset == OnDeviceReset::Restart));
    BOOST_TEST(ok("portwatch.on_device_reset=log").describe().find(" on_device_reset=log ") !=
               std::string::npos);
    BOOST_TEST(ok("portwatch.reset_check_ms=1000").reset_check.count() == 1000);
    BOOST_TEST(ok("portwatch.reset_check_ms=600000").reset_check.count() == 600000);
    for (const char *value : {"Restart", "exit", "yes"})
        BOOST_TEST(bad(std::string("portwatch.on_device_reset=") + value).find("expected") !=
                       std::string::npos,
                   value);
    BOOST_TEST(bad("portwatch.on_device_reset=exit").find("expected restart or log") !=
               std::string::npos);
    for (const char *value : {"999", "600001", "0", "-1000", "10s"})
        BOOST_TEST(
            bad(std::string("portwatch.reset_check_ms=") + value).find("from 1000 to 600000") !=
                std::string::npos,
            value);
}

BOOST_AUTO_TEST_CASE(metrics_file)
{
    BOOST_TEST(ok(nullptr).metrics_file.empty());
    BOOST_TEST(ok("portwatch.metrics_file=off").metrics_file.empty());  // as describe() shows it
    Options o = ok("portwatch.metrics_file=/var/lib/prometheus/node-exporter/portwatch.prom");
    BOOST_TEST(o.metrics_file == "/var/lib/prometheus/node-exporter/portwatch.prom");
    BOOST_TEST(
        o.describe().find(" metrics_file=/var/lib/prometheus/node-exporter/portwatch.prom") !=
        std::string::npos);
    BOOST_TEST(ok("portwatch.metrics_file=/portwatch.prom").metrics_file == "/portwatch.prom");
    // Relative, a directory, nothing after the slash, dot names.
    for (const char *bad_value :
         {"portwatch.prom", "./portwatch.prom", "/", "/var/lib/", "/var/..", "/var/."}) {
        std::string token = std::string("portwatch.metrics_file=") + bad_value;
        BOOST_TEST(bad(token).find("an absolute path to a file") != std::string::npos, token);
    }
    // %g (OpenSM's port GUID) in the file name only; no other '%'.
    BOOST_TEST(ok("portwatch.metrics_file=/d/portwatch-%g.prom").metrics_file ==
               "/d/portwatch-%g.prom");
    for (const char *bad_value : {"/d/%x.prom", "/d/a%", "/d/%%g", "/d%g/a.prom", "/%g/a"}) {
        std::string token = std::string("portwatch.metrics_file=") + bad_value;
        BOOST_TEST(bad(token).find("%g in the file name: OpenSM's port GUID") != std::string::npos,
                   token);
    }
    // A control byte.
    std::string control = "portwatch.metrics_file=/var/a";
    control += '\x01';
    control += "b";
    BOOST_TEST(bad(control).find("an absolute path to a file") != std::string::npos);
    BOOST_TEST(bad("portwatch.metrics_file=/a/b portwatch.metrics_file=/a/c").find("given twice") !=
               std::string::npos);
}

BOOST_AUTO_TEST_CASE(every_key)
{
    Options o = ok("portwatch.port=mlx5_0:1 portwatch.holdoff_ms=0 portwatch.sweep_on_loss=yes "
                   "portwatch.act_in=master,standby portwatch.retry_max_ms=100 "
                   "portwatch.verify_ms=0 portwatch.verify_tries=20");
    BOOST_TEST((o.port.kind == PortSpec::Kind::DevicePort));
    BOOST_TEST(o.port.device == "mlx5_0");
    BOOST_TEST(o.port.port == 1u);
    BOOST_TEST(o.holdoff.count() == 0);
    BOOST_TEST(o.sweep_on_loss);
    BOOST_TEST(o.act_in.contains(PW_SM_MASTER));
    BOOST_TEST(o.act_in.contains(PW_SM_STANDBY));
    BOOST_TEST(!o.act_in.contains(PW_SM_DISCOVERING));
    BOOST_TEST(!o.act_in.contains(PW_SM_NOT_ACTIVE));
    BOOST_TEST(o.retry_max.count() == 100);
    BOOST_TEST(o.verify.count() == 0);
    BOOST_TEST(o.verify_tries == 20u);
    BOOST_TEST(ok("portwatch.verify_tries=0").verify_tries == 0u);
}

BOOST_AUTO_TEST_CASE(port_forms)
{
    Options g = ok("portwatch.port=0x0002C90300A1B2C3");
    BOOST_TEST((g.port.kind == PortSpec::Kind::Guid));
    BOOST_TEST(g.port.guid == 0x0002c90300a1b2c3ULL);
    BOOST_TEST(g.port.describe() == "0x0002c90300a1b2c3");
    BOOST_TEST((ok("portwatch.port=auto").port.kind == PortSpec::Kind::Auto));
    Options r = ok("portwatch.port=rxe0:1");
    BOOST_TEST(r.port.describe() == "rxe0:1");
    BOOST_TEST(ok("portwatch.port=hfi1_0:254").port.port == 254u);
}

BOOST_AUTO_TEST_CASE(other_plugins_tokens_are_ignored)
{
    Options o = ok("ibssa.log=3 portwatch.holdoff_ms=250 some_flag other.plugin=x,y");
    BOOST_TEST(o.holdoff.count() == 250);
    BOOST_TEST(ok("foo=portwatch.holdoff_ms=1").holdoff.count() == 100);
}

BOOST_AUTO_TEST_CASE(malformed_tokens_name_the_token)
{
    BOOST_TEST(bad("portwatch.holdoff_ms=banana").find("portwatch.holdoff_ms=banana") !=
               std::string::npos);
    BOOST_TEST(bad("portwatch.bogus=1").find("unknown option 'portwatch.bogus=1'") !=
               std::string::npos);
    BOOST_TEST(bad("portwatch.holdoff_ms").find("has no '='") != std::string::npos);
    BOOST_TEST(bad("portwatch.holdoff_ms=").find("empty value") != std::string::npos);
    BOOST_TEST(bad("portwatch.holdoff_ms=60001").find("0 to 60000") != std::string::npos);
    BOOST_TEST(bad("portwatch.holdoff_ms=-1").find("holdoff_ms=-1") != std::string::npos);
    BOOST_TEST(bad("portwatch.holdoff_ms=-0").find("holdoff_ms=-0") != std::string::npos);
    BOOST_TEST(bad("portwatch.retry_max_ms=+500").find("retry_max_ms=+500") != std::string::npos);
    BOOST_TEST(bad("portwatch.port=0x-1").find("portwatch.port") != std::string::npos);
    BOOST_TEST(bad("portwatch.holdoff_ms=1e3").find("holdoff_ms=1e3") != std::string::npos);
    BOOST_TEST(bad("portwatch.holdoff_ms=99999999999999999999").find("0 to 60000") !=
               std::string::npos);
    BOOST_TEST(bad("portwatch.retry_max_ms=99").find("100 to 3600000") != std::string::npos);
    BOOST_TEST(bad("portwatch.verify_ms=60001").find("0 to 60000") != std::string::npos);
    BOOST_TEST(bad("portwatch.verify_tries=21").find("0 to 20") != std::string::npos);
    BOOST_TEST(bad("portwatch.verify_tries=-1").find("verify_tries=-1") != std::string::npos);
    BOOST_TEST(bad("portwatch.verify_tries=two").find("0 to 20") != std::string::npos);
    BOOST_TEST(bad("portwatch.sweep_on_loss=maybe").find("yes or no") != std::string::npos);
    BOOST_TEST(bad("portwatch.act_in=master,master").find("act_in") != std::string::npos);
    BOOST_TEST(bad("portwatch.act_in=leader").find("act_in=leader") != std::string::npos);
    BOOST_TEST(bad("portwatch.act_in=master,").find("act_in") != std::string::npos);
    BOOST_TEST(bad("Portwatch_holdoff=5").find("not of the form") != std::string::npos);
    for (const char *port : {"mlx5_0", "mlx5_0:0", "mlx5_0:255", ":1", "mlx5 0:1", "0x", "0x0",
                             "0x12345678901234567", "0xg", "dev/0:1"})
        BOOST_TEST(bad(std::string("portwatch.port=") + port).find("portwatch.port") !=
                   std::string::npos);
}

BOOST_AUTO_TEST_CASE(duplicated_key)
{
    std::string e = bad("portwatch.holdoff_ms=5 portwatch.holdoff_ms=6");
    BOOST_TEST(e.find("given twice") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(hostile_input_is_bounded)
{
    std::string huge = "portwatch.holdoff_ms=" + std::string(1 << 20, '7');
    std::string e = bad(huge);
    BOOST_TEST(e.size() < 400u);  // the log line names the token but stays short
    std::string garbage = "portwatch.port=\x01\xff\x7f";
    e = bad(garbage);
    BOOST_TEST(e.find("\\x01\\xff\\x7f") != std::string::npos);
    // Escaping must not defeat the bound: each control byte shows as four
    // characters, and the line must stay inside the logger's 512 bytes.
    for (const std::string &token :
         {"portwatch.port=" + std::string(300, '\x13'),
          "portwatch." + std::string(300, '\xff') + "=1", "portwatch" + std::string(300, '\x01')}) {
        e = bad(token);
        BOOST_TEST(e.size() < 300u, e);
        BOOST_TEST(e.find("...") != std::string::npos, e);
    }
    // A megabyte of other plugins' tokens is fine.
    std::string many;
    for (int i = 0; i < 50000; ++i)
        many += "x" + std::to_string(i) + "=1 ";
    BOOST_TEST(ok(many.c_str()).holdoff.count() == 100);
}

BOOST_AUTO_TEST_SUITE_END()
