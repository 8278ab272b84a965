// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The C entry points the OpenSM glue calls. No exception crosses into C:
// whatever goes wrong becomes one ERROR line and a NULL plugin, and OpenSM
// runs on without us ("ERR 1000: cannot load plugin").
#include <portwatch/host.h>

#include <exception>
#include <memory>

#include "host.hpp"
#include "metrics_file.hpp"
#include "monitor.hpp"
#include "options.hpp"

struct pw_core {
    std::unique_ptr<portwatch::Monitor> monitor;
};

using namespace portwatch;

extern "C" struct pw_core *pw_core_create(const struct pw_host *host, const char *options,
                                          const char *osm_version)
{
    Host log(*host);
    try {
        ParsedOptions parsed = parse_options(options);
        if (!parsed.options) {
            log.log(PW_LOG_SYS_ERROR, "ERROR: %s; plugin not loaded", parsed.error.c_str());
            return nullptr;
        }
        // The file named as it will be written, %g expanded: the load line
        // shows it, and a name too long once expanded is refused here.
        if (!parsed.options->metrics_file.empty())
            parsed.options->metrics_file =
                metrics_path(parsed.options->metrics_file, log.sm_port_guid());
        log.log(PW_LOG_INFO, "loaded (portwatch %s for %s): %s", PACKAGE_VERSION, osm_version,
                parsed.options->describe().c_str());
        auto core = std::make_unique<pw_core>();
        core->monitor =
            std::make_unique<Monitor>(*host, *parsed.options, osm_version ? osm_version : "");
        core->monitor->start();
        return core.release();
    } catch (const std::exception &e) {
        log.log(PW_LOG_SYS_ERROR, "ERROR: %s; plugin not loaded", e.what());
    } catch (...) {
        log.log(PW_LOG_SYS_ERROR, "ERROR: unexpected failure; plugin not loaded");
    }
    return nullptr;
}

extern "C" void pw_core_destroy(struct pw_core *core)
{
    // Reclaims what pw_core_create released to OpenSM.
    std::unique_ptr<pw_core> owned(core);
    if (!owned)
        return;
    try {
        owned->monitor->stop();
    } catch (...) {  // NOLINT(bugprone-empty-catch): swallowed on purpose
        // Nothing useful left to do; OpenSM must still shut down.
    }
}

extern "C" void pw_core_report(struct pw_core *core, enum pw_report report)
{
    // Monitor::report() is noexcept; this is OpenSM's own thread, so the
    // promise is kept here as well.
    if (core && core->monitor)
        core->monitor->report(report);
}
