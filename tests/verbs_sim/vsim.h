/* SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB */
/*
 * The simulator's control entry point, for in-process tests.
 *
 * Test programs are not linked against libvsim (it is preloaded), so they
 * look the function up at run time:
 *
 *     vsim_command_fn cmd = (vsim_command_fn)dlsym(RTLD_DEFAULT, "vsim_command");
 *
 * A NULL result means the simulator is not preloaded; a test must then fail,
 * not skip, or it would silently run against the real libibverbs.
 */
#ifndef VSIM_H
#define VSIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs one command of the control language (see README.md).  Writes the
 * one-line reply ("ok ..." or "error ...", NUL-terminated, truncated to
 * reply_len) when reply is not NULL.  Returns 0 for ok, -1 for error. */
int vsim_command(const char *line, char *reply, size_t reply_len);

typedef int (*vsim_command_fn)(const char *line, char *reply, size_t reply_len);

#ifdef __cplusplus
}
#endif

#endif
