/*
 * The OpenSM side of portwatch: the only file that includes OpenSM headers
 * and the only code that reads or writes OpenSM state.
 *
 * It exports the osm_event_plugin table that OpenSM's loader looks up and
 * gives the C++ core a struct pw_host of small callbacks (include/portwatch/
 * host.h). Everything here is plain field access or a call OpenSM itself
 * makes from its signal and console paths.
 */
/*
 * osm_config.h carries the build switches (ENABLE_OSM_PERF_MGR,
 * HAVE_LIBPTHREAD) that change the layout of osm_opensm_t and osm_subn_opt_t:
 * without it first, every field offset below is wrong for the real opensm.
 */
#include <opensm/osm_config.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_event_plugin.h>
#include <opensm/osm_version.h>

#include <portwatch/host.h>

static osm_opensm_t *osm_of(void *ctx)
{
	return (osm_opensm_t *)ctx;
}

static void host_log(void *ctx, enum pw_log_level level, const char *line)
{
	osm_log_level_t osm_level;

	switch (level) {
	case PW_LOG_ERROR:
		osm_level = OSM_LOG_ERROR;
		break;
	case PW_LOG_INFO:
		osm_level = OSM_LOG_INFO;
		break;
	case PW_LOG_VERBOSE:
		osm_level = OSM_LOG_VERBOSE;
		break;
	default:
		osm_level = OSM_LOG_DEBUG;
		break;
	}
	osm_log(&osm_of(ctx)->log, osm_level, "portwatch: %s\n", line);
}

static enum pw_sm_state host_sm_state(void *ctx)
{
	/* A single byte OpenSM's state manager writes; a torn read is impossible. */
	switch (osm_of(ctx)->subn.sm_state) {
	case IB_SMINFO_STATE_MASTER:
		return PW_SM_MASTER;
	case IB_SMINFO_STATE_DISCOVERING:
		return PW_SM_DISCOVERING;
	case IB_SMINFO_STATE_STANDBY:
		return PW_SM_STANDBY;
	default:
		return PW_SM_NOT_ACTIVE;
	}
}

static uint64_t host_sm_port_guid(void *ctx)
{
	return osm_of(ctx)->subn.sm_port_guid;
}

/*
 * Exactly what SIGHUP and the console's "resweep heavy" do. OpenSM calls
 * plugins' delete() before osm_sm_destroy(), and delete() joins the core's
 * thread, so the SM object is alive whenever this runs; once osm_exit_flag
 * is set the sweeper is being shut down and we leave it alone.
 */
static int host_force_heavy_sweep(void *ctx, int wake)
{
	osm_opensm_t *osm = osm_of(ctx);

	if (osm_exit_flag)
		return -1;
	osm->subn.force_heavy_sweep = TRUE;
	if (wake)
		osm_opensm_sweep(osm);
	return 0;
}

static void *portwatch_create(struct osm_opensm *osm)
{
	struct pw_host host = {
		.ctx = osm,
		.log = host_log,
		.sm_state = host_sm_state,
		.sm_port_guid = host_sm_port_guid,
		.force_heavy_sweep = host_force_heavy_sweep,
	};

	return pw_core_create(&host, osm->subn.opt.event_plugin_options,
			      OSM_VERSION);
}

static void portwatch_delete(void *plugin_data)
{
	pw_core_destroy(plugin_data);
}

static void portwatch_report(void *plugin_data, osm_epi_event_id_t event_id,
			     void *event_data)
{
	enum pw_report report;

	(void)event_data;
	switch (event_id) {
	case OSM_EVENT_ID_HEAVY_SWEEP_START:
		report = PW_REPORT_HEAVY_SWEEP_START;
		break;
	case OSM_EVENT_ID_HEAVY_SWEEP_DONE:
		report = PW_REPORT_HEAVY_SWEEP_DONE;
		break;
	case OSM_EVENT_ID_SUBNET_UP:
		report = PW_REPORT_SUBNET_UP;
		break;
	case OSM_EVENT_ID_STATE_CHANGE:
		report = PW_REPORT_STATE_CHANGE;
		break;
	default:
		/* Counters, traps, LFT changes: not ours, and must stay cheap. */
		return;
	}
	pw_core_report(plugin_data, report);
}

/* The one symbol the library exports (see plugin/portwatch.map). */
const osm_event_plugin_t osm_event_plugin = {
	.osm_version = OSM_VERSION,
	.create = portwatch_create,
	.delete = portwatch_delete,
	.report = portwatch_report,
};
