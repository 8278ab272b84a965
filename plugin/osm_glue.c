/* SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB */
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
#define _GNU_SOURCE /* process_vm_readv() */
#include <opensm/osm_config.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_event_plugin.h>
#include <opensm/osm_version.h>
#include <infiniband/umad.h>

#include <portwatch/host.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

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
	case PW_LOG_SYS_ERROR:
		/* As OpenSM's own "ERR 0D01": in the log as an error, and to syslog. */
		osm_level = OSM_LOG_ERROR | OSM_LOG_SYS;
		break;
	case PW_LOG_SYS_INFO:
		osm_level = OSM_LOG_INFO | OSM_LOG_SYS;
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

/*
 * OpenSM's own statistics counter (an atomic32_t its SM MAD controller
 * increments for every SMP received, osm_sm_mad_ctrl.c); the console's
 * "perfmgr"/"status" shows the same number.
 */
static uint32_t host_smps_received(void *ctx)
{
	return (uint32_t)osm_of(ctx)->stats.qp0_mads_rcvd;
}

/*
 * What OpenSM's SIGTERM handler does: set osm_exit_flag. Its main loop then
 * leaves, and OpenSM shuts down as on SIGTERM (plugins' delete(), the
 * vendor layer, exit status 0). That loop sleeps up to 10 s between looks
 * at the flag, and a signal ends the sleep, so the signal follows - only
 * once OpenSM has its handler installed (it is after the plugins are
 * created), never into the default action. OpenSM's threads and ours block
 * SIGTERM: the kernel gives it to the main thread.
 */
static int host_request_exit(void *ctx)
{
	struct sigaction sa;

	(void)ctx;
	if (osm_exit_flag)
		return -1;
	osm_exit_flag = 1;
	if (sigaction(SIGTERM, NULL, &sa) == 0 &&
	    ((sa.sa_flags & SA_SIGINFO) ||
	     (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)))
		kill(getpid(), SIGTERM);
	return 0;
}

/*
 * OpenSM's clean shutdown after a device reset can hang for good (its umad
 * receiver cancelled while it holds a lock another thread's shutdown step
 * then waits for), and by then OpenSM has unloaded this plugin: no thread or
 * handler of ours may be what ends it. A process-directed timer whose
 * notification is SIGKILL is the kernel's alone: it fires after_ms later
 * whatever the process's threads do, and it dies with the process when the
 * clean exit wins. The timer is never deleted: it is armed once, just
 * before the exit is asked for.
 */
static int host_arm_exit_deadline(void *ctx, uint32_t after_ms)
{
	struct sigevent sev;
	struct itimerspec when;
	timer_t timer;

	(void)ctx;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGKILL;
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0)
		return -1;
	memset(&when, 0, sizeof(when));
	when.it_value.tv_sec = after_ms / 1000;
	when.it_value.tv_nsec = (long)(after_ms % 1000) * 1000000L;
	if (when.it_value.tv_sec == 0 && when.it_value.tv_nsec == 0)
		when.it_value.tv_nsec = 1; /* zero would disarm it */
	if (timer_settime(timer, 0, &when, NULL) != 0) {
		int saved = errno;

		timer_delete(timer);
		errno = saved;
		return -1;
	}
	return 0;
}

/*
 * OpenSM's umad file: osm_vendor_bind() (OpenSM's main thread, once, before
 * the first sweep) stores the port id in the vendor object; until then it
 * is -1. umad_get_fd() is libibumad's documented way from the id to the fd.
 */
static int host_mad_fd(void *ctx)
{
	osm_vendor_t *vendor = osm_of(ctx)->p_vendor;
	int id;

	if (!vendor)
		return -1;
	id = vendor->umad_port_id;
	return id < 0 ? -1 : umad_get_fd(id);
}

/*
 * After a reset its receiver thread spins on the dead file and logs "ERR
 * 5404" for every try (hundreds of MB a minute, each line flushed inside the
 * log's lock). What OpenSM's console "loglevel" command does: a one-byte
 * store into the level every osm_log() call reads first; a line being
 * written finishes, the next ERROR line is not written.
 */
static int host_mute_error_log(void *ctx)
{
	osm_log_t *log = &osm_of(ctx)->log;
	osm_log_level_t level = log->level;

	if (!(level & OSM_LOG_ERROR))
		return -1;
	osm_log_set_level(log, (osm_log_level_t)(level & ~OSM_LOG_ERROR));
	return 0;
}

/*
 * Copies LEN bytes from ADDR, which may point anywhere: 0 if they are not
 * all mapped, instead of a fault inside opensm. Where the kernel refuses the
 * call itself (a seccomp filter, no CONFIG_CROSS_MEMORY_ATTACH) the memory is
 * read directly, as it was before this check existed.
 */
static int read_mem(const void *addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)addr, len };
	ssize_t n;

	errno = 0;
	n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 1;
	if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
		memcpy(buf, addr, len);
		return 1;
	}
	return 0;
}

/* The NUL-terminated string at ADDR (at most LEN - 1 bytes), read safely. */
static int read_str(const char *addr, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i++) {
		if (!read_mem(addr + i, buf + i, 1))
			return 0;
		if (buf[i] == '\0')
			return 1;
	}
	return 0;
}

/*
 * OpenSM's loader checks only its version string. A Debian rebuild of the
 * same upstream version with other configure switches (the performance
 * manager, for one) moves fields of osm_opensm_t: reading them through the
 * layout portwatch was compiled against would then read garbage. Check two
 * things OpenSM itself guarantees before trusting the layout: the plugin
 * list OpenSM loaded us from names portwatch, and its log writes to the
 * file named in its options (osm_log_init_v2() keeps that very pointer;
 * with no file it writes to stdout).
 * Returns NULL when the layout looks right, else what is wrong; *log_ok
 * says whether OpenSM's log can be used for the complaint.
 */
static const char *layout_problem(const osm_opensm_t *osm, int *log_ok)
{
	char *names = NULL, *options = NULL, *log_file = NULL, *log_name = NULL;
	FILE *out = NULL;
	char text[1024];

	/* No log_file ("(null)" in opensm.conf) logs to stdout. */
	*log_ok = read_mem(&osm->subn.opt.log_file, &log_file, sizeof(log_file)) &&
		  read_mem(&osm->log.log_file_name, &log_name, sizeof(log_name)) &&
		  read_mem(&osm->log.out_port, &out, sizeof(out)) &&
		  log_file == log_name && (log_name || out == stdout);
	if (!read_mem(&osm->subn.opt.event_plugin_name, &names, sizeof(names)) ||
	    !names || !read_str(names, text, sizeof(text)) ||
	    !strstr(text, "portwatch"))
		return "event_plugin_name does not name portwatch where expected";
	if (!read_mem(&osm->subn.opt.event_plugin_options, &options, sizeof(options)) ||
	    (options && !read_str(options, text, sizeof(text))))
		return "event_plugin_options is not a string where expected";
	if (!*log_ok)
		return "its log is not where expected";
	return NULL;
}

static void refuse(osm_opensm_t *osm, const char *problem, int log_ok)
{
	static const char fmt[] =
		"portwatch: ERROR: the running opensm's structures differ from "
		"those portwatch was built against (%s); portwatch not loaded, "
		"OpenSM runs without it: rebuild portwatch against this "
		"opensm's own headers (libopensm-dev, opensm-devel)\n";

	/* syslog reaches journald whatever OpenSM's log level. */
	syslog(LOG_ERR, fmt, problem);
	if (log_ok)
		osm_log(&osm->log, OSM_LOG_ERROR, fmt, problem);
	else
		fprintf(stderr, fmt, problem);
}

static void *portwatch_create(struct osm_opensm *osm)
{
	struct pw_host host = {
		.ctx = osm,
		.log = host_log,
		.sm_state = host_sm_state,
		.sm_port_guid = host_sm_port_guid,
		.force_heavy_sweep = host_force_heavy_sweep,
		.smps_received = host_smps_received,
		.request_exit = host_request_exit,
		.arm_exit_deadline = host_arm_exit_deadline,
		.mad_fd = host_mad_fd,
		.mute_error_log = host_mute_error_log,
	};
	int log_ok = 0;
	const char *problem = layout_problem(osm, &log_ok);

	if (problem) {
		refuse(osm, problem, log_ok);
		return NULL;
	}
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
