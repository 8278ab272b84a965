/* SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB */
/*
 * The seam between OpenSM and the portwatch core.
 *
 * OpenSM's headers are C and not valid C++ (osm_event_plugin_t has a member
 * named "delete"), so exactly one C file (plugin/osm_glue.c) includes them.
 * It hands the C++ core this narrow table of callbacks; the core never sees
 * an OpenSM type and can be built and tested without OpenSM.
 */
#ifndef PORTWATCH_HOST_H
#define PORTWATCH_HOST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Mapped onto OpenSM's osm_log levels by the glue. The SYS levels are the
 * lines an on-call admin must see: OpenSM writes them to its log whatever
 * log_flags says and also sends them to syslog (OSM_LOG_SYS).
 */
enum pw_log_level {
	PW_LOG_ERROR,
	PW_LOG_INFO,
	PW_LOG_VERBOSE,
	PW_LOG_DEBUG,
	PW_LOG_SYS_ERROR,
	PW_LOG_SYS_INFO
};

/* The SM's own state (SMInfo), as OpenSM keeps it in subn.sm_state. */
enum pw_sm_state {
	PW_SM_NOT_ACTIVE,
	PW_SM_DISCOVERING,
	PW_SM_STANDBY,
	PW_SM_MASTER
};

/* The OpenSM plugin events portwatch cares about; everything else is OTHER. */
enum pw_report {
	PW_REPORT_HEAVY_SWEEP_START,
	PW_REPORT_HEAVY_SWEEP_DONE,
	PW_REPORT_SUBNET_UP,
	PW_REPORT_STATE_CHANGE,
	PW_REPORT_OTHER
};

/*
 * Everything the core may ask of OpenSM. All callbacks are safe to call from
 * the core's event thread. ctx is passed back unchanged.
 */
struct pw_host {
	void *ctx;
	/* One complete log line, without the "portwatch: " prefix or newline. */
	void (*log)(void *ctx, enum pw_log_level level, const char *line);
	enum pw_sm_state (*sm_state)(void *ctx);
	/* OpenSM's bound port GUID in network byte order, 0 while unknown. */
	uint64_t (*sm_port_guid)(void *ctx);
	/*
	 * Set force_heavy_sweep and, when wake is non-zero, wake the sweeper.
	 * Returns 0 when done, -1 when refused because OpenSM is exiting.
	 */
	int (*force_heavy_sweep)(void *ctx, int wake);
	/*
	 * How many SMPs OpenSM has received on its port since it started
	 * (its own statistics counter): it moves only while OpenSM's MAD path
	 * works.
	 */
	uint32_t (*smps_received)(void *ctx);
	/*
	 * Ask OpenSM to shut down cleanly, as its SIGTERM handler does (set
	 * osm_exit_flag, and wake its main loop). Returns 0 when asked, -1 when
	 * OpenSM is already exiting.
	 */
	int (*request_exit)(void *ctx);
	/*
	 * The last resort behind request_exit: arm a process-directed POSIX
	 * timer whose signal (SIGKILL) the kernel delivers by itself after
	 * after_ms, should the process still be running then. It needs no code
	 * of the plugin, which OpenSM unloads during its shutdown. Returns 0
	 * when armed, else -1 with errno set.
	 */
	int (*arm_exit_deadline)(void *ctx, uint32_t after_ms);
	/*
	 * OpenSM's umad file for its bound port (libibumad's umad_get_fd()),
	 * -1 until OpenSM has bound. The core only ever polls it for the
	 * kernel's POLLERR (events 0): it never reads, writes or closes it.
	 */
	int (*mad_fd)(void *ctx);
	/*
	 * Turn OpenSM's ERROR lines off, as its console's "loglevel" does; the
	 * SYS lines (portwatch's own among them) go on. Returns 0, or -1 when
	 * they were off already.
	 */
	int (*mute_error_log)(void *ctx);
};

struct pw_core;

/* NULL on bad options or failure (already logged); never throws. */
struct pw_core *pw_core_create(const struct pw_host *host, const char *options,
			       const char *osm_version);
/* Stops the event thread and frees everything; returns within milliseconds. */
void pw_core_destroy(struct pw_core *core);
/* Cheap and thread safe: called from OpenSM's own threads. */
void pw_core_report(struct pw_core *core, enum pw_report report);

#ifdef __cplusplus
}
#endif

#endif /* PORTWATCH_HOST_H */
