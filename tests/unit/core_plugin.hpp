// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The plugin as OpenSM holds it: a core made through the C entry points
// (pw_core_create/report/destroy) around a FakeHost, destroyed as OpenSM's
// delete() does. Shared by the tests that play OpenSM's side by hand.
#pragma once

#include <boost/test/unit_test.hpp>

#include "fake_host.hpp"

namespace pwtest {

class Plugin {
public:
    Plugin(FakeHost &host, const char *options) : host_(host)
    {
        core_ = pw_core_create(&host.callbacks(), options, "OpenSM 3.3.23");
        BOOST_REQUIRE_MESSAGE(core_, "create failed:\n" << host.dump());
    }
    ~Plugin() { destroy(); }
    Plugin(const Plugin &) = delete;
    Plugin &operator=(const Plugin &) = delete;

    void report(pw_report r) { pw_core_report(core_, r); }
    // What OpenSM reports around a heavy sweep.
    void sweep_reports()
    {
        report(PW_REPORT_HEAVY_SWEEP_START);
        report(PW_REPORT_HEAVY_SWEEP_DONE);
        report(PW_REPORT_SUBNET_UP);
    }
    // OpenSM's order: osm_exit_flag first (force_heavy_sweep refuses from
    // then on), then the plugin's delete(). After it returns, any callback
    // is a call into an OpenSM that is tearing itself down.
    void destroy()
    {
        if (!core_)
            return;
        host_.exiting = true;
        pw_core_destroy(core_);
        core_ = nullptr;
        host_.closed = true;
    }

private:
    FakeHost &host_;
    pw_core *core_ = nullptr;
};

}  // namespace pwtest
