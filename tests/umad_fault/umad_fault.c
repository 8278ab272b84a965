/* SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB */
/*
 * libumadfault.so: what a device reset does to OpenSM's MAD port on a real
 * host, for tests on ibsim. Preloaded ahead of umad2sim (which forwards
 * umad to ibsim and survives any reset of the verbs device), it makes the
 * umad files a process opened before a "reset" behave as the kernel's do
 * once their device is gone: every read, write and ioctl fails with EIO at
 * once, and poll() reports them with POLLERR at once (a caller already
 * waiting in poll() is woken, as the kernel wakes it). OpenSM's receiver
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
 * No liberty is taken with the time: a failing call returns at once, as
 * the kernel's does, and is a thread cancellation point as the system call
 * is, so OpenSM's receiver spins on the dead file and floods
 * its log with "ERR 5404" as on a real host, and OpenSM's threads are where
 * they would be when it shuts down. The one cost the kernel does not have:
 * each call on a umad file stat()s the reset file (microseconds).
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
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "umad_timeouts.h"

#define MAX_UMAD_FDS 16
#define MAX_POLL_FDS 64
#define POLL_SLICE_MS 1
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
	int dup; /* a duplicate (fcntl F_DUPFD, dup) of a file open() saw */
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
			fds[nfds].dup = 0;
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
	int i, original = 0;

	if (!hang || strcmp(hang, "1") != 0 || !dead(fd))
		return;
	pthread_mutex_lock(&lock);
	for (i = 0; i < nfds; i++)
		original |= fds[i].fd == fd && !fds[i].dup;
	pthread_mutex_unlock(&lock);
	if (!original)
		return; /* a duplicate (portwatch's watch) closes as ever */
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
 * A duplicate of a umad file: the same open file, so it dies with it. Under
 * umad2sim a umad "fd" is a number of umad2sim's own (1024 and up), not a
 * descriptor the kernel could duplicate; the duplicate is a real descriptor
 * (an eventfd that never becomes readable) known here as that file's, and
 * poll() answers for it as the kernel answers for the file: nothing while
 * it lives, POLLERR once it is dead. Nothing reads or writes a duplicate.
 */
static int dup_umad(int fd, int cloexec)
{
	struct timespec opened;
	int i, known = 0, copy;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nfds; i++)
		if (fds[i].fd == fd) {
			opened = fds[i].opened;
			known = 1;
		}
	pthread_mutex_unlock(&lock);
	if (!known)
		return -2;
	copy = eventfd(0, cloexec ? EFD_CLOEXEC : 0);
	if (copy < 0)
		return -1;
	pthread_mutex_lock(&lock);
	if (nfds < MAX_UMAD_FDS) {
		fds[nfds].fd = copy;
		fds[nfds].opened = opened;
		fds[nfds].dup = 1;
		nfds++;
	} else {
		pthread_mutex_unlock(&lock);
		((int (*)(int))next("close"))(copy);
		errno = EMFILE;
		return -1;
	}
	pthread_mutex_unlock(&lock);
	return copy;
}

/* F_DUPFD and F_DUPFD_CLOEXEC of a umad fd give the double's duplicate. */
static int fcntl_via(const char *name, int fd, int cmd, void *arg)
{
	int (*real)(int, int, ...) = next(name);
	int copy;

	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) {
		copy = dup_umad(fd, cmd == F_DUPFD_CLOEXEC);
		if (copy != -2)
			return copy;
	}
	return real(fd, cmd, arg);
}

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_via("fcntl", fd, cmd, arg);
}

/* Where _FILE_OFFSET_BITS=64 makes fcntl() a call of fcntl64(). */
int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_via("fcntl64", fd, cmd, arg);
}

int dup(int fd)
{
	int (*real)(int) = next("dup");
	int copy = dup_umad(fd, 0);

	return copy != -2 ? copy : real(fd);
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

	/* read(2) is a cancellation point, also when it fails at once. */
	pthread_testcancel();
	if (dead(fd)) {
		answer_unmatched(fd);
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

	pthread_testcancel(); /* as write(2) */
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
 * Dead umad fds are ready at once with POLLERR alone, as the kernel's
 * ib_umad_poll() reports a file whose device is gone; live ones with a
 * timeout due are readable (POLLIN): the count, or 0.
 */
static int mark_ready(struct pollfd *set, nfds_t n)
{
	short ev[MAX_POLL_FDS];
	nfds_t i;
	int ready = 0;

	for (i = 0; i < n && i < MAX_POLL_FDS; i++) {
		ev[i] = dead(set[i].fd)                                ? POLLERR
			: is_umad(set[i].fd) && umad_timeouts_due(set[i].fd) ? POLLIN
									     : 0;
		ready += ev[i] != 0;
	}
	if (!ready)
		return 0;
	for (i = 0; i < n && i < MAX_POLL_FDS; i++)
		set[i].revents = ev[i];
	return ready;
}

/*
 * A watch on the reset file's directory: it becomes readable when the file
 * is touched (the "reset"), so that a caller blocked in poll() sees its
 * umad file die at once, as the kernel wakes the waiters of a file whose
 * device goes away. -1 when there is no reset file.
 */
static int reset_watch(void)
{
	const char *file = getenv("PW_UMAD_DEAD_FILE");
	char dir[4096];
	char *slash;
	int fd;

	if (!file || strlen(file) >= sizeof(dir))
		return -1;
	strcpy(dir, file);
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (fd < 0)
		return -1;
	if (inotify_add_watch(fd, dir, IN_ATTRIB | IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
		((int (*)(int))next("close"))(fd);
		return -1;
	}
	return fd;
}

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/*
 * umad2sim's own poll() waits on the first umad fd of a set alone, for a
 * MAD to arrive, whatever else the set holds. Two kinds of callers:
 *
 * - A watcher (events asking for neither POLLIN nor POLLOUT on its umad
 *   fds: portwatch watching OpenSM's file for the kernel's POLLERR). Its
 *   umad fds never go down to umad2sim: they are answered here (POLLERR when
 *   dead), the rest of the set waits in the real poll() beside a watch on
 *   the reset file, so a reset wakes it at once, as the kernel wakes it.
 * - A reader (OpenSM's receiver, POLLIN on its file): umad2sim must do the
 *   wait (its MADs arrive there) and cannot be woken by anything else, so
 *   the wait is cut into slices of POLL_SLICE_MS and the file looked at
 *   between them, and at the next send timeout due. So the receiver sees
 *   its file die at most 1 ms after the reset (the kernel: at once); the
 *   slices cost an idle opensm 1.3 % of a core (measured: 0.13 s of CPU in
 *   10 s, 0 without this library); nothing else of what its threads do
 *   changes (a MAD still wakes the wait at once).
 */
int poll(struct pollfd *set, nfds_t n, int timeout)
{
	int (*real)(struct pollfd *, nfds_t, int) = next("poll");
	int (*real_close)(int) = next("close");
	struct pollfd all[MAX_POLL_FDS + 1];
	long long until = timeout < 0 ? -1 : now_ms() + timeout;
	int has_umad = 0, reader = 0, r, watch = -1;
	nfds_t i;

	for (i = 0; i < n; i++)
		if (is_umad(set[i].fd)) {
			has_umad = 1;
			reader |= (set[i].events & (POLLIN | POLLOUT)) != 0;
		}
	if (!has_umad || n > MAX_POLL_FDS)
		return real(set, n, timeout);
	/* poll(2) is a cancellation point, also when something is ready at once. */
	pthread_testcancel();
	/* The watch first: a reset after the look below still wakes the wait. */
	if (!reader)
		watch = reset_watch();
	for (;;) {
		int wait = timeout < 0 ? -1 : (int)(until - now_ms()), ready = 0;
		nfds_t count = n;

		r = mark_ready(set, n);
		if (r)
			break;
		if (timeout >= 0 && wait <= 0) {
			r = 0;
			break;
		}
		for (i = 0; i < n; i++) {
			int due = is_umad(set[i].fd) ? umad_timeouts_next_ms(set[i].fd) : -1;

			if (due >= 0 && (wait < 0 || due < wait))
				wait = due;
		}
		memcpy(all, set, n * sizeof(*set));
		if (reader) {
			if (wait < 0 || wait > POLL_SLICE_MS)
				wait = POLL_SLICE_MS;
		} else {
			for (i = 0; i < n; i++)
				if (is_umad(set[i].fd))
					all[i].fd = -1; /* answered here, not by umad2sim */
			if (watch >= 0) {
				all[n].fd = watch;
				all[n].events = POLLIN;
				all[n].revents = 0;
				count = n + 1;
			}
		}
		r = real(all, count, wait);
		if (r < 0)
			break;
		for (i = 0; i < n; i++) {
			set[i].revents = all[i].fd == set[i].fd ? all[i].revents : 0;
			ready += set[i].revents != 0;
		}
		if (ready) {
			r = ready;
			break;
		}
		/* A reset, a timeout due, a slice or the caller's time up: look again. */
	}
	if (watch >= 0)
		real_close(watch);
	return r;
}
