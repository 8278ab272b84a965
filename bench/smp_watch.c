/* SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB */
/*
 * smp_watch: a long-running poller of one port's LinkState, for benchmarks.
 *
 *   smp_watch PORT INTERVAL_US MAX_SECONDS
 *
 * Sends a directed-route SMP Get PortInfo to the node it runs on (hop count
 * 0, the path of "smpquery -D portinfo 0 PORT") every INTERVAL_US and prints
 * one line per change of state:
 *
 *     <CLOCK_REALTIME in microseconds> <LinkState 1..4> <PhysState>
 *
 * The time is the moment the reply was received. One process replaces the
 * many smpquery runs (tens of ms each) a shell loop would need, so a state
 * change is seen within INTERVAL_US plus one round trip. Runs as a umad
 * client (under umad2sim: an ibsim client attached at SIM_HOST), exits
 * cleanly on SIGTERM/SIGINT or after MAX_SECONDS, and then prints on stderr
 * how many queries it made and the longest gap between two replies.
 */
#include <infiniband/umad.h>
#include <infiniband/umad_sm.h>
#include <infiniband/umad_types.h>

#include <endian.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int64_t now_us(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: smp_watch PORT INTERVAL_US MAX_SECONDS\n");
		return 2;
	}
	int port = atoi(argv[1]);
	long interval_us = atol(argv[2]);
	long max_s = atol(argv[3]);
	if (port < 1 || port > 254 || interval_us < 0 || max_s < 1) {
		fprintf(stderr, "smp_watch: bad arguments\n");
		return 2;
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	if (umad_init() < 0) {
		fprintf(stderr, "smp_watch: umad_init failed\n");
		return 1;
	}
	int fd = umad_open_port(NULL, 0);
	if (fd < 0) {
		fprintf(stderr, "smp_watch: umad_open_port: %s\n", strerror(-fd));
		return 1;
	}
	int agent = umad_register(fd, UMAD_CLASS_SUBN_DIRECTED_ROUTE, 1, 0, NULL);
	if (agent < 0) {
		fprintf(stderr, "smp_watch: umad_register: %s\n", strerror(-agent));
		return 1;
	}
	size_t len = umad_size() + sizeof(struct umad_smp);
	void *send_buf = calloc(1, len);
	void *recv_buf = calloc(1, len);
	if (!send_buf || !recv_buf)
		return 1;

	int64_t start = now_us(CLOCK_MONOTONIC);
	int64_t last_reply = start, max_gap = 0;
	long queries = 0, failures = 0;
	int last_state = -1, last_phys = -1;
	uint64_t tid = 1;

	while (!stop && now_us(CLOCK_MONOTONIC) - start < max_s * 1000000LL) {
		memset(send_buf, 0, len);
		struct umad_smp *smp = umad_get_mad(send_buf);
		smp->base_version = 1;
		smp->mgmt_class = UMAD_CLASS_SUBN_DIRECTED_ROUTE;
		smp->class_version = 1;
		smp->method = UMAD_METHOD_GET;
		smp->tid = htobe64(tid++);
		smp->attr_id = htobe16(UMAD_SM_ATTR_PORT_INFO);
		smp->attr_mod = htobe32((uint32_t)port);
		smp->dr_slid = htobe16(0xffff);
		smp->dr_dlid = htobe16(0xffff);
		smp->hop_cnt = 0;
		umad_set_addr(send_buf, 0xffff, 0, 0, 0);
		queries++;
		if (umad_send(fd, agent, send_buf, sizeof(struct umad_smp), 200, 0) < 0) {
			failures++;
			continue;
		}
		int rlen = sizeof(struct umad_smp);
		int rc = umad_recv(fd, recv_buf, &rlen, 500);
		if (rc < 0 || umad_status(recv_buf) != 0) {
			failures++;
			continue;
		}
		int64_t t_real = now_us(CLOCK_REALTIME);
		int64_t t_mono = now_us(CLOCK_MONOTONIC);
		if (t_mono - last_reply > max_gap)
			max_gap = t_mono - last_reply;
		last_reply = t_mono;
		struct umad_smp *reply = umad_get_mad(recv_buf);
		/* PortInfo byte 32: LinkSpeedSupported:4 | PortState:4;
		 * byte 33: PortPhysicalState:4 | LinkDownDefaultState:4. */
		int state = reply->data[32] & 0x0f;
		int phys = reply->data[33] >> 4;
		if (state != last_state || phys != last_phys) {
			printf("%lld %d %d\n", (long long)t_real, state, phys);
			fflush(stdout);
			last_state = state;
			last_phys = phys;
		}
		if (interval_us > 0) {
			struct timespec ts = {interval_us / 1000000, (interval_us % 1000000) * 1000};
			while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !stop) {
			}
		}
	}
	fprintf(stderr, "smp_watch: queries=%ld failures=%ld max_gap_us=%lld\n", queries, failures,
		(long long)max_gap);
	umad_unregister(fd, agent);
	umad_close_port(fd);
	umad_done();
	free(send_buf);
	free(recv_buf);
	return 0;
}
