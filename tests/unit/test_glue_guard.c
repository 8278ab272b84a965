/* SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB */
/*
 * The layout guard of plugin/osm_glue.c: create() must start the core only
 * when OpenSM's structures look like those portwatch was compiled against,
 * and otherwise refuse with one ERROR line and return NULL (OpenSM runs on
 * without the plugin) - without faulting on whatever the fields hold.
 *
 * C, not C++: OpenSM's headers are not C++. The glue is compiled into this
 * program, with test doubles for what opensm and the C++ core provide.
 */
#include "../../plugin/osm_glue.c"

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>

/* ---- test doubles: OpenSM's log and sweeper, the core */
volatile unsigned int osm_exit_flag;
static char logged[4096];
static int log_lines;
static int core_creates;
static const char *core_options;
static int core_handle;
static struct pw_host core_host; /* what the glue handed the core */
static volatile sig_atomic_t sigterms;

static void count_sigterm(int signum)
{
	(void)signum;
	sigterms++;
}

void osm_log(osm_log_t *log, osm_log_level_t level, const char *fmt, ...)
{
	va_list ap;

	(void)log;
	if (level != OSM_LOG_ERROR)
		return;
	va_start(ap, fmt);
	vsnprintf(logged, sizeof(logged), fmt, ap);
	va_end(ap);
	log_lines++;
}

void osm_sm_sweep(osm_sm_t *sm)
{
	(void)sm;
}

struct pw_core *pw_core_create(const struct pw_host *host, const char *options,
			       const char *osm_version)
{
	(void)osm_version;
	core_host = *host;
	core_creates++;
	core_options = options;
	return (struct pw_core *)&core_handle;
}

void pw_core_destroy(struct pw_core *core)
{
	(void)core;
}

void pw_core_report(struct pw_core *core, enum pw_report report)
{
	(void)core;
	(void)report;
}

/* ---- harness */
static int failures;

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: %s: check failed: %s\n",     \
				__FILE__, __LINE__, current, #cond);          \
			failures++;                                          \
		}                                                            \
	} while (0)

static const char *current;
static char log_file[] = "/var/log/opensm.log";

/* An osm_opensm_t as OpenSM 3.3.23 leaves it when it calls create(). */
static osm_opensm_t *make_osm(char *names, char *options)
{
	osm_opensm_t *osm = calloc(1, sizeof(*osm));

	if (!osm)
		abort();
	osm->osm_version = OSM_VERSION;
	osm->subn.opt.event_plugin_name = names;
	osm->subn.opt.event_plugin_options = options;
	osm->subn.opt.log_file = log_file;
	osm->log.log_file_name = log_file;
	return osm;
}

static void *create(osm_opensm_t *osm)
{
	log_lines = 0;
	logged[0] = '\0';
	core_creates = 0;
	core_options = NULL;
	return osm_event_plugin.create(osm);
}

static void expect_refused(osm_opensm_t *osm, const char *why, int to_osm_log)
{
	void *data = create(osm);

	CHECK(data == NULL);
	CHECK(core_creates == 0);
	CHECK(log_lines == (to_osm_log ? 1 : 0));
	if (to_osm_log) {
		CHECK(strstr(logged, "portwatch: ERROR: ") == logged);
		CHECK(strstr(logged, why) != NULL);
		CHECK(strstr(logged, "rebuild portwatch") != NULL);
	}
}

/*
 * The kernel's kill timer: a child that arms it and then blocks every signal
 * it can and hangs (as a shutdown stuck on a lock) is ended by SIGKILL near
 * the bound; one that exits first is not.
 */
static void check_exit_deadline(void)
{
	struct timespec t0, t1;
	sigset_t all;
	pid_t pid;
	int status = 0;
	long ms;

	current = "arm_exit_deadline: a hung process is ended by the kernel's SIGKILL";
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid == 0) {
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		if (core_host.arm_exit_deadline(core_host.ctx, 200) != 0)
			_exit(3);
		for (;;)
			pause();
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CHECK(ms >= 200 && ms < 5000);

	current = "arm_exit_deadline: a process that exits first exits as it chose";
	pid = fork();
	if (pid == 0)
		_exit(core_host.arm_exit_deadline(core_host.ctx, 60000) == 0 ? 0 : 3);
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	char names[] = "portwatch", both[] = "other portwatch", other[] = "other";
	char options[] = "portwatch.holdoff_ms=5";
	osm_opensm_t *osm;
	unsigned char *shifted;

	current = "the layout OpenSM sets up";
	osm = make_osm(names, options);
	CHECK(create(osm) == &core_handle);
	CHECK(core_creates == 1);
	CHECK(core_options == options);
	CHECK(log_lines == 0);
	free(osm);

	current = "portwatch among several plugins, no options";
	osm = make_osm(both, NULL);
	CHECK(create(osm) == &core_handle);
	CHECK(core_options == NULL);
	free(osm);

	current = "event_plugin_name names another plugin";
	osm = make_osm(other, options);
	expect_refused(osm, "event_plugin_name does not name portwatch", 1);
	free(osm);

	current = "event_plugin_name points at unmapped memory";
	osm = make_osm((char *)16, options);
	expect_refused(osm, "event_plugin_name does not name portwatch", 1);
	free(osm);

	current = "event_plugin_options points at unmapped memory";
	osm = make_osm(names, (char *)24);
	expect_refused(osm, "event_plugin_options is not a string", 1);
	free(osm);

	current = "no log file: OpenSM logs to stdout";
	osm = make_osm(names, options);
	osm->subn.opt.log_file = NULL;
	osm->log.log_file_name = NULL;
	osm->log.out_port = stdout;
	CHECK(create(osm) == &core_handle);
	free(osm);

	current = "the log is not where the options say";
	osm = make_osm(names, options);
	osm->log.log_file_name = NULL;
	expect_refused(osm, "its log is not where expected", 0);
	free(osm);

	/*
	 * Another build of OpenSM: every field 8 bytes further on than
	 * compiled (as a member added near the top would move them).
	 */
	current = "every field moved by 8 bytes";
	osm = make_osm(names, options);
	shifted = calloc(1, sizeof(*osm) + 8);
	if (!shifted)
		abort();
	memcpy(shifted + 8, osm, sizeof(*osm));
	expect_refused((osm_opensm_t *)shifted, "", 0);
	free(shifted);
	free(osm);

	/*
	 * The exit portwatch asks for after a dead MAD path: OpenSM's own
	 * flag, then SIGTERM to wake its main loop - only into a handler.
	 */
	current = "request_exit with OpenSM's SIGTERM handler installed";
	osm = make_osm(names, options);
	CHECK(create(osm) == &core_handle);
	osm->stats.qp0_mads_rcvd = 7;
	CHECK(core_host.smps_received(core_host.ctx) == 7);
	signal(SIGTERM, count_sigterm);
	osm_exit_flag = 0;
	CHECK(core_host.request_exit(core_host.ctx) == 0);
	CHECK(osm_exit_flag == 1);
	CHECK(sigterms == 1);
	CHECK(core_host.request_exit(core_host.ctx) == -1); /* already exiting */
	CHECK(sigterms == 1);
	CHECK(core_host.force_heavy_sweep(core_host.ctx, 1) == -1);

	check_exit_deadline();

	/* OpenSM's umad file and its ERROR lines, as the core asks for them. */
	current = "mad_fd: -1 before OpenSM has a vendor object or a bound port, then its fd";
	CHECK(core_host.mad_fd(core_host.ctx) == -1); /* p_vendor NULL */
	{
		osm_vendor_t vendor;

		memset(&vendor, 0, sizeof(vendor));
		vendor.umad_port_id = -1;
		osm->p_vendor = &vendor;
		CHECK(core_host.mad_fd(core_host.ctx) == -1);
		vendor.umad_port_id = 7;
		CHECK(core_host.mad_fd(core_host.ctx) == 7);
		osm->p_vendor = NULL;
	}
	current = "mute_error_log: ERROR off, the rest of the level kept; -1 when off already";
	osm->log.level = OSM_LOG_ERROR | OSM_LOG_INFO | OSM_LOG_SYS;
	CHECK(core_host.mute_error_log(core_host.ctx) == 0);
	CHECK(osm->log.level == (OSM_LOG_INFO | OSM_LOG_SYS));
	CHECK(core_host.mute_error_log(core_host.ctx) == -1);
	CHECK(osm->log.level == (OSM_LOG_INFO | OSM_LOG_SYS));

	current = "request_exit before OpenSM installs its handler: the flag only";
	signal(SIGTERM, SIG_DFL); /* a signal now would end this test */
	osm_exit_flag = 0;
	CHECK(core_host.request_exit(core_host.ctx) == 0);
	CHECK(osm_exit_flag == 1);
	free(osm);

	if (failures) {
		fprintf(stderr, "FAIL: test_glue_guard: %d check(s) failed\n", failures);
		return 1;
	}
	printf("PASS: test_glue_guard: create() starts the core only on the compiled layout; "
	       "8 layouts checked, none faulted; request_exit sets osm_exit_flag and signals "
	       "only into a handler; the kernel's kill timer ends a hung process; mad_fd and "
	       "mute_error_log read and set what they should\n");
	return 0;
}
