/* SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB */
/* Send timeouts for umad2sim's files, as the kernel gives them (umad_timeouts.c). */
#ifndef PW_UMAD_TIMEOUTS_H
#define PW_UMAD_TIMEOUTS_H

#include <stddef.h>
#include <sys/types.h>

/* A umad written to fd: a request with a timeout is remembered. */
void umad_timeouts_sent(int fd, const void *buf, size_t len);
/* A umad read from fd: 1 when it is a late response to drop. */
int umad_timeouts_received(int fd, const void *buf, ssize_t len);
/* A timed-out request of fd as the kernel returns it (status ETIMEDOUT):
 * its length in buf, or 0 when none is due. */
ssize_t umad_timeouts_expired(int fd, void *buf, size_t count);
/* Whether a timeout of fd is due now (poll reports fd readable). */
int umad_timeouts_due(int fd);
/* Milliseconds until fd's next timeout is due (0: due now), -1 when none waits. */
int umad_timeouts_next_ms(int fd);
/* fd closed. */
void umad_timeouts_forget(int fd);

#endif
