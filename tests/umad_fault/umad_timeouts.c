/* SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB */
/*
 * Send timeouts for umad2sim, as the kernel's MAD layer gives them: a
 * request written with timeout_ms and retries that gets no response within
 * timeout_ms * (retries + 1) comes back to its sender as a umad with status
 * ETIMEDOUT and the request's MAD. umad2sim has none: ibsim times out only a
 * request nobody is attached to take; one forwarded to an SM that never
 * answers (a deaf one, or one just starting, whose agents are not
 * registered yet) is waited for by its sender for ever, and OpenSM's sweep
 * with it. A late response to a request that timed out is dropped, as the
 * kernel drops it.
 *
 * umad_fault.c calls these from its read, write and poll wrappers.
 */
#define _GNU_SOURCE
#include "umad_timeouts.h"

#include <errno.h>
#include <infiniband/umad.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#define MAX_PENDING 256
#define MAD_BYTES 256
#define MAD_METHOD 3
#define MAD_TID 8
#define METHOD_RESPONSE 0x80
#define EXPIRED_KEPT_NS (10LL * 1000 * 1000 * 1000)

struct pending {
	int fd;
	uint32_t tid;          /* the low 32 bits: the kernel owns the high ones */
	long long deadline_ns; /* CLOCK_MONOTONIC */
	int expired;           /* timed out and told; late responses are dropped */
	size_t len;
	unsigned char umad[sizeof(struct ib_user_mad) + MAD_BYTES];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pending pending[MAX_PENDING];
static int npending;

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static uint32_t tid_of(const unsigned char *mad)
{
	return (uint32_t)mad[MAD_TID + 4] << 24 | (uint32_t)mad[MAD_TID + 5] << 16 |
	       (uint32_t)mad[MAD_TID + 6] << 8 | mad[MAD_TID + 7];
}

static void drop(int i)
{
	pending[i] = pending[--npending];
}

/* Expired entries are kept a while for their late responses, then go. */
static void prune(long long now)
{
	int i;

	for (i = npending - 1; i >= 0; i--)
		if (pending[i].expired && now - pending[i].deadline_ns > EXPIRED_KEPT_NS)
			drop(i);
}

void umad_timeouts_sent(int fd, const void *buf, size_t len)
{
	const struct ib_user_mad *umad = buf;
	const unsigned char *mad = (const unsigned char *)buf + sizeof(*umad);
	long long now = now_ns();

	if (len < sizeof(*umad) + MAD_TID + 8 || umad->timeout_ms == 0 ||
	    (mad[MAD_METHOD] & METHOD_RESPONSE))
		return;
	pthread_mutex_lock(&lock);
	prune(now);
	if (npending < MAX_PENDING) {
		struct pending *p = &pending[npending++];

		p->fd = fd;
		p->tid = tid_of(mad);
		p->deadline_ns = now + (long long)umad->timeout_ms * (umad->retries + 1) * 1000000LL;
		p->expired = 0;
		p->len = len < sizeof(p->umad) ? len : sizeof(p->umad);
		memcpy(p->umad, buf, p->len);
	}
	pthread_mutex_unlock(&lock);
}

int umad_timeouts_received(int fd, const void *buf, ssize_t len)
{
	const unsigned char *mad = (const unsigned char *)buf + sizeof(struct ib_user_mad);
	int i, late = 0;
	uint32_t tid;

	if (len < (ssize_t)(sizeof(struct ib_user_mad) + MAD_TID + 8) ||
	    !(mad[MAD_METHOD] & METHOD_RESPONSE))
		return 0;
	tid = tid_of(mad);
	pthread_mutex_lock(&lock);
	for (i = 0; i < npending; i++)
		if (pending[i].fd == fd && pending[i].tid == tid) {
			late = pending[i].expired;
			drop(i);
			break;
		}
	pthread_mutex_unlock(&lock);
	return late;
}

ssize_t umad_timeouts_expired(int fd, void *buf, size_t count)
{
	long long now = now_ns();
	ssize_t n = 0;
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < npending; i++) {
		struct pending *p = &pending[i];
		struct ib_user_mad *umad = buf;

		if (p->fd != fd || p->expired || p->deadline_ns > now || count < p->len)
			continue;
		memcpy(buf, p->umad, p->len);
		umad->status = ETIMEDOUT;
		p->expired = 1;
		n = (ssize_t)p->len;
		break;
	}
	pthread_mutex_unlock(&lock);
	return n;
}

int umad_timeouts_due(int fd)
{
	long long now = now_ns();
	int i, due = 0;

	pthread_mutex_lock(&lock);
	for (i = 0; i < npending && !due; i++)
		due = pending[i].fd == fd && !pending[i].expired && pending[i].deadline_ns <= now;
	pthread_mutex_unlock(&lock);
	return due;
}

int umad_timeouts_next_ms(int fd)
{
	long long now = now_ns(), next = -1;
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < npending; i++)
		if (pending[i].fd == fd && !pending[i].expired &&
		    (next < 0 || pending[i].deadline_ns < next))
			next = pending[i].deadline_ns;
	pthread_mutex_unlock(&lock);
	if (next < 0)
		return -1;
	if (next <= now)
		return 0;
	/* Rounded up: a wake-up before the deadline would find nothing due. */
	return (int)((next - now + 999999) / 1000000);
}

void umad_timeouts_forget(int fd)
{
	int i;

	pthread_mutex_lock(&lock);
	for (i = npending - 1; i >= 0; i--)
		if (pending[i].fd == fd)
			drop(i);
	pthread_mutex_unlock(&lock);
}
