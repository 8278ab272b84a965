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
 * One liberty is taken: a failing read waits 20 ms, so that OpenSM's
 * endless ERR 5404 loop costs a test little CPU and log (the kernel returns
 * at once).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_UMAD_FDS 16
#define POLL_SLICE_MS 50
#define DEAD_READ_PAUSE_NS (20 * 1000 * 1000)

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

int close(int fd)
{
	int (*real)(int) = next("close");
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nfds; i++)
		if (fds[i].fd == fd) {
			fds[i] = fds[--nfds];
			break;
		}
	pthread_mutex_unlock(&lock);
	return real(fd);
}

ssize_t read(int fd, void *buf, size_t count)
{
	ssize_t (*real)(int, void *, size_t) = next("read");
	struct timespec pause = { 0, DEAD_READ_PAUSE_NS };

	if (dead(fd)) {
		nanosleep(&pause, NULL);
		errno = EIO;
		return -1;
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

/* Dead umad fds are ready at once (POLLIN | POLLERR): the count, or 0. */
static int mark_dead(struct pollfd *set, nfds_t n)
{
	nfds_t i;
	int ready = 0;

	for (i = 0; i < n; i++)
		if (dead(set[i].fd))
			ready++;
	if (!ready)
		return 0;
	for (i = 0; i < n; i++)
		set[i].revents = dead(set[i].fd) ? POLLIN | POLLERR : 0;
	return ready;
}

int poll(struct pollfd *set, nfds_t n, int timeout)
{
	int (*real)(struct pollfd *, nfds_t, int) = next("poll");
	int has_umad = 0, r;
	nfds_t i;

	if (!getenv("PW_UMAD_DEAD_FILE"))
		return real(set, n, timeout);
	pthread_mutex_lock(&lock);
	for (i = 0; i < n && !has_umad; i++)
		for (r = 0; r < nfds; r++)
			has_umad |= fds[r].fd == set[i].fd;
	pthread_mutex_unlock(&lock);
	if (!has_umad)
		return real(set, n, timeout);
	/* A reset can come while the caller waits: look again every slice. */
	for (;;) {
		int slice;

		r = mark_dead(set, n);
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
