/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * backend.c: the backend table, the one place where both modes find a
 * backend by name and open their target through it.
 *
 * Why a table.  --backend NAME is looked up here by the run mode and by
 * `sdio paired` alike, and the usage's list of backends is printed from
 * it, so that a new backend is one line below (and its file in
 * ENGINE_SRCS) instead of a string compare in each mode and a hand-kept
 * usage line that drifts.  The first entry is the default.
 *
 * Why a version.  A backend is a table of function pointers; one written
 * against another layout of sdio_ops_t would be called through slots that
 * now mean something else.  The lookup refuses it, with a message, before
 * anything is called (SDIO_OPS_VERSION in sdio.h).
 */

#include "sdio.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Every backend, by name; the first is the default. */
static const sdio_ops_t *const backends[] = {
	&sdio_sync_ops,
	&sdio_null_ops,
	NULL
};

/* The column where the usage's option descriptions start (opts.c). */
#define	USAGE_COL	24

/*
 * The backend called name, or the default when name is NULL.  NULL when
 * no backend has that name, or when its ops table is of another version
 * (after a message: the engine was built from mismatched files).
 */
const sdio_ops_t *
sdio_backend_lookup(const char *name)
{
	const sdio_ops_t *const *bp;
	const sdio_ops_t *b;

	for (bp = backends; (b = *bp) != NULL; bp++) {
		if (name != NULL && strcmp(b->o_name, name) != 0)
			continue;
		if (b->o_version != SDIO_OPS_VERSION) {
			(void) fprintf(stderr, "sdio: backend '%s' has ops "
			    "version %d, this sdio takes version %d\n",
			    b->o_name, b->o_version, SDIO_OPS_VERSION);
			return (NULL);
		}
		return (b);
	}
	return (NULL);
}

/*
 * The usage's --backend line, from the table: the names, the default and
 * those that do no I/O.  Today's:
 *	  --backend sync|null   I/O backend (default sync; null does no I/O)
 */
void
sdio_backend_usage(FILE *f)
{
	const sdio_ops_t *const *bp;
	size_t col;

	(void) fputs("  --backend ", f);
	col = strlen("  --backend ");
	for (bp = backends; *bp != NULL; bp++) {
		(void) fprintf(f, "%s%s", bp == backends ? "" : "|",
		    (*bp)->o_name);
		col += (bp == backends ? 0 : 1) + strlen((*bp)->o_name);
	}
	(void) fprintf(f, "%*s", col < USAGE_COL ? (int)(USAGE_COL - col) :
	    1, "");
	(void) fprintf(f, "I/O backend (default %s", backends[0]->o_name);
	for (bp = backends; *bp != NULL; bp++)
		if ((*bp)->o_flags & SDIO_OPS_NOIO)
			(void) fprintf(f, "; %s does no I/O", (*bp)->o_name);
	(void) fputs(")\n", f);
}

/*
 * Open target through ops into dev, for both modes: for writing when wr,
 * with direct I/O when direct and the backend has it (a backend without
 * never sees the flag).  0, or SDIO_EXIT_SETUP after a message.
 */
int
sdio_open_target(const sdio_ops_t *ops, sdio_dev_t *dev, const char *target,
    int wr, int direct)
{
	int flags = wr ? SDIO_OPEN_WRITE : 0, rc;

	if (direct && (ops->o_flags & SDIO_OPS_DIRECT))
		flags |= SDIO_OPEN_DIRECT;
	(void) memset(dev, 0, sizeof (*dev));
	dev->d_fd = -1;
	if ((rc = ops->o_open(dev, target, flags)) == 0)
		return (0);
	/*
	 * EINVAL is the backend's "neither a file nor a device", unless
	 * direct I/O was passed on: then it may be the file system refusing
	 * it, and the errno's own words are the honest ones.
	 */
	(void) fprintf(stderr, "sdio: cannot open '%s': %s\n", target,
	    rc == EINVAL && !(flags & SDIO_OPEN_DIRECT) ?
	    "not a file or device" : strerror(rc));
	return (SDIO_EXIT_SETUP);
}
