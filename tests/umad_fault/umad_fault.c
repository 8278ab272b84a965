/* SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB */
/*
 * libumadfault.so: what a device reset does to OpenSM's MAD port on a real
 * host, for tests on ibsim. Preloaded ahead of umad2sim (which forwards
 * umad to ibsim and survives any reset of the verbs device), it makes the
 * umad files a process opened before a "reset" behave as the kernel's do
 * once their device is gone: every read, write and ioctl fails with EIO, and
 * poll() reports them readable with POLLERR at once. OpenSM's receiver
 * thread then logs "ERR 5404: recv error on MAD sized umad" and reads again,
 * as on the real host.
 *
 * The reset is a file: PW_UMAD_DEAD_FILE names it, and a umad file opened
 * before that file's last modification is dead. `touch FILE` kills the
 * umad files open now; a process started afterwards (a restarted opensm)
 * opens live ones. Without PW_UMAD_DEAD_FILE nothing changes.
 *
 * What others see of the deaf SM follows the kernel too. Its old file's MAD
 * agents are gone with the reset, so the kernel's MAD layer answers a
 * request sent to that port (a standby's SMInfo poll) as it answers any
 * request no agent takes (ib_mad.c, generate_unmatched_resp): a GetResp with
 * status "unsupported method/attribute combination", the direction bit set
 * on a directed-route SMP. umad2sim would instead queue the request for the
 * dead file, where nobody reads it; and since umad2sim implements no send
 * timeouts, the standby would wait for its answer for ever. So the pending
 * requests of a dead file are answered so whenever its owner tries to read.
 *
 * The files a process opened after the last reset are live, with the send
 * timeouts the kernel gives and umad2sim lacks (umad_timeouts.c).
 *
 * One liberty is taken: a failing read waits 20 ms, so that OpenSM's
 * endless ERR 5404 loop costs a test little CPU and log (the kernel returns
 * at once).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/umad.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "umad_timeouts.h"

#define MAX_UMAD_FDS 16
#define POLL_SLICE_MS 50
#define DEAD_READ_PAUSE_NS (20 * 1000 * 1000)
/* MAD header: base version, class, class version, method, status (16 bits). */
#define MAD_CLASS 1
#define MAD_METHOD 3
#define MAD_STATUS 4
#define METHOD_GET 0x01
#define METHOD_SET 0x02
#define METHOD_GET_RESP 0x81
#define CLASS_SUBN_DIRECTED_ROUTE 0x81
#define STATUS_UNSUPPORTED_METHOD_ATTR 0x000c
#define SMP_DIRECTION 0x8000

struct umad_fd {
	int fd;
	struct timespec opened;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct umad_fd fds[MAX_UMAD_FDS];
static int nfds;

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static int before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* 1 if fd is a umad file (one open() saw). */
static int is_umad(int fd)
{
	int i, known = 0;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nfds && !known; i++)
		known = fds[i].fd == fd;
	pthread_mutex_unlock(&lock);
	return known;
}

/* 1 if fd is a umad file opened before the last "reset". */
static int dead(int fd)
{
	const char *file = getenv("PW_UMAD_DEAD_FILE");
	struct timespec opened = { 0, 0 };
	struct stat st;
	int i, known = 0;

	if (!file || fd < 0)
		return 0;
	pthread_mutex_lock(&lock);
	for (i = 0; i < nfds; i++)
		if (fds[i].fd == fd) {
			opened = fds[i].opened;
			known = 1;
		}
	pthread_mutex_unlock(&lock);
	if (!known || stat(file, &st) != 0)
		return 0;
	return before(&opened, &st.st_mtim);
}

int open(const char *path, int flags, ...)
{
	int (*real)(const char *, int, ...) = next("open");
	mode_t mode = 0;
	va_list ap;
	int fd;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	fd = real(path, flags, mode);
	if (fd >= 0 && strncmp(path, "/dev/infiniband/umad", 20) == 0) {
		pthread_mutex_lock(&lock);
		if (nfds < MAX_UMAD_FDS) {
			fds[nfds].fd = fd;
			clock_gettime(CLOCK_REALTIME, &fds[nfds].opened);
			nfds++;
		}
		pthread_mutex_unlock(&lock);
	}
	return fd;
}

/*
 * PW_UMAD_HANG_ON_CLOSE=1 makes OpenSM's shutdown hang for certain: the
 * close of a dead umad file (umad_close_port, in osm_vendor_delete, on the
 * main thread, after the plugins were unloaded) never returns. The kernel's
 * close does return; this plays the hang a reviewer saw on its timing (the
 * umad receiver cancelled inside osm_log's lock, the main thread then
 * waiting for that lock in osm_log_destroy), which strikes in a few runs
 * only: the same place in the shutdown, the same state of the process (no
 * plugin code left, the main thread blocked for good), every time.
 */
static void hang_if_asked(int fd)
{
	const char *hang = getenv("PW_UMAD_HANG_ON_CLOSE");

	if (!hang || strcmp(hang, "1") != 0 || !dead(fd))
		return;
	for (;;)
		pause();
}

int close(int fd)
{
	int (*real)(int) = next("close");
	int i, known = 0;

	hang_if_asked(fd);

	pthread_mutex_lock(&lock);
	for (i = 0; i < nfds; i++)
		if (fds[i].fd == fd) {
			fds[i] = fds[--nfds];
			known = 1;
			break;
		}
	pthread_mutex_unlock(&lock);
	if (known)
		umad_timeouts_forget(fd);
	return real(fd);
}

/*
 * Answers the requests queued for dead fd as the kernel answers a request
 * no agent takes; drops anything else (responses to the deaf SM's own
 * requests, traps). umad2sim's read returns <= 0 once its queue is empty.
 */
static void answer_unmatched(int fd)
{
	ssize_t (*real_read)(int, void *, size_t) = next("read");
	ssize_t (*real_write)(int, const void *, size_t) = next("write");
	unsigned char buf[sizeof(struct ib_user_mad) + 256];
	unsigned char *mad = buf + sizeof(struct ib_user_mad);
	unsigned status;
	ssize_t n;

	while ((n = real_read(fd, buf, sizeof(buf))) > (ssize_t)sizeof(struct ib_user_mad) + MAD_STATUS + 1) {
		if (mad[MAD_METHOD] != METHOD_GET && mad[MAD_METHOD] != METHOD_SET)
			continue;
		status = STATUS_UNSUPPORTED_METHOD_ATTR;
		if (mad[MAD_CLASS] == CLASS_SUBN_DIRECTED_ROUTE)
			status |= SMP_DIRECTION;
		mad[MAD_METHOD] = METHOD_GET_RESP;
		mad[MAD_STATUS] = status >> 8;
		mad[MAD_STATUS + 1] = status & 0xff;
		(void)real_write(fd, buf, (size_t)n);
	}
}

ssize_t read(int fd, void *buf, size_t count)
{
	ssize_t (*real)(int, void *, size_t) = next("read");
	struct timespec pause = { 0, DEAD_READ_PAUSE_NS };

	if (dead(fd)) {
		answer_unmatched(fd);
		nanosleep(&pause, NULL);
		errno = EIO;
		return -1;
	}
	if (is_umad(fd)) {
		ssize_t n = umad_timeouts_expired(fd, buf, count);

		if (n > 0)
			return n;
		/* Late responses to requests that timed out are dropped. */
		do
			n = real(fd, buf, count);
		while (n > 0 && umad_timeouts_received(fd, buf, n));
		return n;
	}
	return real(fd, buf, count);
}

ssize_t write(int fd, const void *buf, size_t count)
{
	ssize_t (*real)(int, const void *, size_t) = next("write");

	if (dead(fd)) {
		errno = EIO;
		return -1;
	}
	/* Remembered first: the response may be read before write returns. */
	if (is_umad(fd))
		umad_timeouts_sent(fd, buf, count);
	return real(fd, buf, count);
}

int ioctl(int fd, unsigned long request, ...)
{
	int (*real)(int, unsigned long, ...) = next("ioctl");
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (dead(fd)) {
		errno = EIO;
		return -1;
	}
	return real(fd, request, arg);
}

/*
 * Dead umad fds are ready at once (POLLIN | POLLERR), and so are live ones
 * with a timeout due (POLLIN): the count, or 0.
 */
static int mark_ready(struct pollfd *set, nfds_t n)
{
	short ev[64];
	nfds_t i;
	int ready = 0;

	for (i = 0; i < n && i < 64; i++) {
		ev[i] = dead(set[i].fd)                                ? POLLIN | POLLERR
			: is_umad(set[i].fd) && umad_timeouts_due(set[i].fd) ? POLLIN
									     : 0;
		ready += ev[i] != 0;
	}
	if (!ready)
		return 0;
	for (i = 0; i < n && i < 64; i++)
		set[i].revents = ev[i];
	return ready;
}

int poll(struct pollfd *set, nfds_t n, int timeout)
{
	int (*real)(struct pollfd *, nfds_t, int) = next("poll");
	int has_umad = 0, r;
	nfds_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < n && !has_umad; i++)
		for (r = 0; r < nfds; r++)
			has_umad |= fds[r].fd == set[i].fd;
	pthread_mutex_unlock(&lock);
	if (!has_umad)
		return real(set, n, timeout);
	/* A reset or a timeout can come while the caller waits: look again
	 * every slice. */
	for (;;) {
		int slice;

		r = mark_ready(set, n);
		if (r)
			return r;
		slice = timeout < 0 || timeout > POLL_SLICE_MS ? POLL_SLICE_MS : timeout;
		r = real(set, n, slice);
		if (r != 0)
			return r;
		if (timeout >= 0) {
			timeout -= slice;
			if (timeout <= 0)
				return 0;
		}
	}
}
