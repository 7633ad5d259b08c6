/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * diskmgt.c: `sdio diskmgt`, the fixed disks and their in-use state from
 * illumos libdiskmgt, as one JSON document.
 *
 *	sdio diskmgt --diskmgt LIBPATH --nvpair LIBPATH [--no-inuse]
 *
 * Why here.  sdtune asks libdiskmgt, the library behind diskinfo(8) and
 * zpool's in-use check, which fixed disks exist and whether any slice of
 * each is in use, so that certification never destroys a pool member.
 * With --host the appliance has no Python, only this engine, so the
 * library is asked here, the same way on the machine itself and over
 * SSH.  The libraries are dlopen()ed (RTLD_NOW | RTLD_LOCAL) from the
 * absolute paths given (the [libraries] section of sdtune.conf) and every
 * function is dlsym()ed, so that the engine builds and runs where there
 * is no libdiskmgt (Linux, where tests use a fake one).
 *
 * What it calls, following illumos usr/src/cmd/diskinfo/diskinfo.c and
 * usr/src/cmd/zpool/zpool_vdev.c check_disk():
 *	dm_get_descriptors(DM_MEDIA, {DM_DT_FIXED, DM_FILTER_END});
 *	per media: the associated DM_DRIVE's attributes ("vendor_id",
 *	"product_id", "opath" strings, "rpm" uint32, "removable" and
 *	"solid_state" present-when-true booleans), that drive's
 *	DM_CONTROLLER's "ctype", the media's attributes ("size" uint64
 *	blocks, "blocksize" uint32 logical bytes);
 *	per slice of the media (DM_SLICE): dm_get_name(), then
 *	dm_inuse(name, &msg, DM_WHO_ZPOOL, &err).  The check is per slice (a
 *	whole-disk ZFS member is found on s0), and DM_WHO_ZPOOL reports
 *	every kind of use.
 * Whatever the library allocates is freed as libdiskmgt.h requires:
 * descriptor arrays with dm_free_descriptors(), names with dm_free_name(),
 * attribute lists with nvlist_free(), in-use messages with the free()
 * that libdiskmgt's own lookup scope finds (its libc's).  The libraries
 * are not closed: the process ends.
 *
 * Any failure for one disk goes into that disk's "errors" and the next
 * step is tried, so the record says as much as can be known; the caller
 * must treat a disk with errors as in use.  NOINUSE_CHECK in the
 * environment makes dm_inuse() answer "not in use" at once, so then, or
 * with --no-inuse (sdtune gives it when NOINUSE_CHECK is set in its own
 * environment), dm_inuse() is not called and every disk gets an error.
 *
 * Output: {"version": 1, "available": BOOL, "reason": STRING,
 * "disks": [DISK...]}, DISK being {"name": cXtYdZ or "" (no opath),
 * "opath", "vendor_id", "product_id": STRING or null, "size_blocks",
 * "block_bytes", "rpm": NUMBER or null, "removable", "solid_state": BOOL,
 * "ctype": STRING or null, "slices": [/dev/dsk path...], "inuse":
 * [{"slice", "message"}...] (one per line of a dm_inuse() message, in
 * order), "errors": [STRING...]}.  A library that cannot be loaded, a
 * missing function or a failing enumeration give available false, no
 * disks and the reason, with exit status 0.  Exit 1 on usage; 2 when out
 * of memory or when the output cannot be written.
 */

#include "sdio.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define	DISKMGT_JSON_VERSION	1

/* dm_desc_type_t, usr/src/lib/libdiskmgt/common/libdiskmgt.h. */
#define	DM_DRIVE		0
#define	DM_CONTROLLER		1
#define	DM_MEDIA		2
#define	DM_SLICE		3

/*
 * dm_drive_type_t DM_DT_FIXED.  A DM_MEDIA filter is compared with
 * dm_media_type_t in media.c apply_filter(), where DM_MT_FIXED is also 1;
 * diskinfo passes DM_DT_FIXED, and so does this file.
 */
#define	DM_DT_FIXED		1
#define	DM_FILTER_END		(-1)

/* dm_who_type_t DM_WHO_ZPOOL. */
#define	DM_WHO_ZPOOL		1

/* Attribute names (libdiskmgt.h). */
#define	DM_SIZE			"size"
#define	DM_BLOCKSIZE		"blocksize"
#define	DM_VENDOR_ID		"vendor_id"
#define	DM_PRODUCT_ID		"product_id"
#define	DM_OPATH		"opath"
#define	DM_REMOVABLE		"removable"
#define	DM_SOLIDSTATE		"solid_state"
#define	DM_RPM			"rpm"
#define	DM_CTYPE		"ctype"

/*
 * data_type_t, usr/src/uts/common/sys/nvpair.h (the same enum, and ABI,
 * in the OpenZFS libnvpair that Linux distributions ship).
 */
#define	DATA_TYPE_BOOLEAN	1
#define	DATA_TYPE_UINT32	6
#define	DATA_TYPE_UINT64	8
#define	DATA_TYPE_STRING	9
#define	DATA_TYPE_BOOLEAN_VALUE	21

typedef uint64_t dm_descriptor_t;
typedef struct nvlist nvlist_t;		/* opaque */
typedef struct nvpair nvpair_t;		/* opaque */

/* The entry points used, with the types of libdiskmgt.h and nvpair.h. */
typedef dm_descriptor_t *(*get_descriptors_fn)(int, int *, int *);
typedef dm_descriptor_t *(*get_associated_fn)(dm_descriptor_t, int, int *);
typedef void (*free_descriptors_fn)(dm_descriptor_t *);
typedef nvlist_t *(*get_attributes_fn)(dm_descriptor_t, int *);
typedef char *(*get_name_fn)(dm_descriptor_t, int *);
typedef void (*free_name_fn)(char *);
typedef int (*inuse_fn)(char *, char **, int, int *);
typedef void (*free_fn)(void *);
typedef void (*nvlist_free_fn)(nvlist_t *);
typedef nvpair_t *(*next_nvpair_fn)(nvlist_t *, nvpair_t *);
typedef char *(*nvpair_name_fn)(nvpair_t *);
typedef int (*nvpair_type_fn)(nvpair_t *);
typedef int (*value_string_fn)(nvpair_t *, char **);
typedef int (*value_uint32_fn)(nvpair_t *, uint32_t *);
typedef int (*value_uint64_fn)(nvpair_t *, uint64_t *);
typedef int (*value_boolean_value_fn)(nvpair_t *, int *);

typedef struct dm_api {
	get_descriptors_fn	get_descriptors;
	get_associated_fn	get_associated;
	free_descriptors_fn	free_descriptors;
	get_attributes_fn	get_attributes;
	get_name_fn		get_name;
	free_name_fn		free_name;
	inuse_fn		inuse;
	free_fn			free;
	nvlist_free_fn		nvlist_free;
	next_nvpair_fn		next_nvpair;
	nvpair_name_fn		nvpair_name;
	nvpair_type_fn		nvpair_type;
	value_string_fn		value_string;
	value_uint32_fn		value_uint32;
	value_uint64_fn		value_uint64;
	value_boolean_value_fn	value_boolean_value;
} dm_api_t;

/* A growable list of owned strings. */
typedef struct strv {
	char		**sv_v;
	size_t		sv_n;
	size_t		sv_cap;
} strv_t;

/* One attribute wanted from an nvlist, as the last pair of its name. */
typedef enum { AV_NONE, AV_BOOL, AV_INT, AV_STR } av_kind_t;

typedef struct attr {
	const char	*a_name;
	av_kind_t	a_kind;
	int		a_bool;
	uint64_t	a_int;
	char		*a_str;		/* owned */
} attr_t;

/* One fixed disk; strings are owned, NULL when absent. */
typedef struct dm_disk {
	char		*dd_name;
	char		*dd_opath;
	char		*dd_vid;
	char		*dd_pid;
	char		*dd_ctype;
	int		dd_has_size;
	uint64_t	dd_size;	/* blocks */
	int		dd_has_bs;
	uint64_t	dd_bs;
	int		dd_has_rpm;
	uint64_t	dd_rpm;
	int		dd_removable;
	int		dd_ssd;
	strv_t		dd_slices;
	strv_t		dd_inuse_slice;	/* parallel to dd_inuse_msg */
	strv_t		dd_inuse_msg;
	strv_t		dd_errors;
} dm_disk_t;

/* A copied descriptor array. */
typedef struct descs {
	dm_descriptor_t	*ds_v;
	size_t		ds_n;
} descs_t;

/* -- memory: running out ends the process (exit 2, no document) ---------- */

static void
out_of_memory(void)
{
	(void) fprintf(stderr, "sdio: cannot query libdiskmgt: out of "
	    "memory\n");
	exit(SDIO_EXIT_SETUP);
}

static void *
xmalloc(size_t n)
{
	void *p = malloc(n == 0 ? 1 : n);

	if (p == NULL)
		out_of_memory();
	return (p);
}

static char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		out_of_memory();
	return (p);
}

static char *
xvasprintf(const char *fmt, va_list ap)
{
	va_list ap2;
	char *p;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		out_of_memory();
	p = xmalloc((size_t)n + 1);
	(void) vsnprintf(p, (size_t)n + 1, fmt, ap);
	return (p);
}

static void
strv_add(strv_t *sv, char *s)
{
	char **nv;

	if (sv->sv_n == sv->sv_cap) {
		sv->sv_cap = sv->sv_cap == 0 ? 8 : sv->sv_cap * 2;
		nv = realloc(sv->sv_v, sv->sv_cap * sizeof (char *));
		if (nv == NULL)
			out_of_memory();
		sv->sv_v = nv;
	}
	sv->sv_v[sv->sv_n++] = s;
}

static void
strv_free(strv_t *sv)
{
	size_t i;

	for (i = 0; i < sv->sv_n; i++)
		free(sv->sv_v[i]);
	free(sv->sv_v);
	(void) memset(sv, 0, sizeof (*sv));
}

static void
add_error(strv_t *errors, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strv_add(errors, xvasprintf(fmt, ap));
	va_end(ap);
}

/* "cannot WHAT: strerror (errno N)", or "cannot WHAT" when err is 0. */
static void
dm_error(strv_t *errors, const char *what, int err)
{
	if (err != 0)
		add_error(errors, "cannot %s: %s (errno %d)", what,
		    strerror(err), err);
	else
		add_error(errors, "cannot %s", what);
}

/* -- loading ------------------------------------------------------------- */

static void *
find_sym(void *lib, const char *path, const char *name, char *why,
    size_t len)
{
	const char *e;
	void *p;

	(void) dlerror();
	if ((p = dlsym(lib, name)) == NULL) {
		e = dlerror();
		(void) snprintf(why, len, "cannot find '%s' in '%s': %s", name,
		    path, e != NULL ? e : "a null symbol");
	}
	return (p);
}

/*
 * Every function, from the library that defines it: 0, or -1 with the
 * reason in why.  free() comes from libdiskmgt's own lookup scope, the
 * libc whose malloc() made dm_inuse()'s message.
 */
static int
load_api(dm_api_t *a, void *dm, const char *dmpath, void *nv,
    const char *nvpath, char *why, size_t len)
{
#define	SYM(field, lib, path, name)					\
	if ((a->field = (field##_fn)find_sym(lib, path, name, why,	\
	    len)) == NULL)						\
		return (-1)

	SYM(get_descriptors, dm, dmpath, "dm_get_descriptors");
	SYM(get_associated, dm, dmpath, "dm_get_associated_descriptors");
	SYM(free_descriptors, dm, dmpath, "dm_free_descriptors");
	SYM(get_attributes, dm, dmpath, "dm_get_attributes");
	SYM(get_name, dm, dmpath, "dm_get_name");
	SYM(free_name, dm, dmpath, "dm_free_name");
	SYM(inuse, dm, dmpath, "dm_inuse");
	SYM(free, dm, dmpath, "free");
	SYM(nvlist_free, nv, nvpath, "nvlist_free");
	SYM(next_nvpair, nv, nvpath, "nvlist_next_nvpair");
	SYM(nvpair_name, nv, nvpath, "nvpair_name");
	SYM(nvpair_type, nv, nvpath, "nvpair_type");
	SYM(value_string, nv, nvpath, "nvpair_value_string");
	SYM(value_uint32, nv, nvpath, "nvpair_value_uint32");
	SYM(value_uint64, nv, nvpath, "nvpair_value_uint64");
	SYM(value_boolean_value, nv, nvpath, "nvpair_value_boolean_value");
#undef	SYM
	return (0);
}

/* -- descriptors --------------------------------------------------------- */

/*
 * Copy a 0-terminated descriptor array into out, then free it: 0, or -1
 * with an error added (the array is freed either way).
 */
static int
take(const dm_api_t *a, dm_descriptor_t *array, int err, const char *what,
    descs_t *out, strv_t *errors)
{
	size_t n = 0;
	int rc = -1;

	out->ds_v = NULL;
	out->ds_n = 0;
	if (err != 0) {
		dm_error(errors, what, err);
	} else if (array == NULL) {
		add_error(errors, "cannot %s (no list returned)", what);
	} else {
		while (array[n] != 0)
			n++;
		out->ds_v = xmalloc(n * sizeof (dm_descriptor_t));
		(void) memcpy(out->ds_v, array, n * sizeof (dm_descriptor_t));
		out->ds_n = n;
		rc = 0;
	}
	if (array != NULL)
		a->free_descriptors(array);
	return (rc);
}

static int
associated(const dm_api_t *a, dm_descriptor_t desc, int type,
    const char *what, descs_t *out, strv_t *errors)
{
	dm_descriptor_t *array;
	int err = 0;

	array = a->get_associated(desc, type, &err);
	return (take(a, array, err, what, out, errors));
}

/* A copy of a descriptor's name, or NULL with an error added. */
static char *
desc_name(const dm_api_t *a, dm_descriptor_t desc, const char *what,
    strv_t *errors)
{
	char *p, *copy = NULL;
	int err = 0;

	p = a->get_name(desc, &err);
	if (err != 0 || p == NULL)
		dm_error(errors, what, err);
	else
		copy = xstrdup(p);
	if (p != NULL)
		a->free_name(p);
	return (copy);
}

/* -- attributes ---------------------------------------------------------- */

static void
attr_set(attr_t *want, size_t nwant, const char *name, av_kind_t kind,
    int b, uint64_t v, char *s)
{
	size_t i;

	for (i = 0; i < nwant; i++) {
		if (strcmp(want[i].a_name, name) != 0)
			continue;
		free(want[i].a_str);
		want[i].a_kind = kind;
		want[i].a_bool = b;
		want[i].a_int = v;
		want[i].a_str = s;
		return;
	}
	free(s);
}

/*
 * Every pair of an nvlist, read by the types libdiskmgt attributes use
 * (a DATA_TYPE_BOOLEAN pair has no value: its presence means true); the
 * wanted names get the value of their last readable pair.
 */
static void
walk(const dm_api_t *a, nvlist_t *nvl, attr_t *want, size_t nwant)
{
	nvpair_t *pair;
	const char *name;
	uint32_t u32;
	uint64_t u64;
	char *s;
	int b;

	for (pair = a->next_nvpair(nvl, NULL); pair != NULL;
	    pair = a->next_nvpair(nvl, pair)) {
		if ((name = a->nvpair_name(pair)) == NULL)
			name = "";
		switch (a->nvpair_type(pair)) {
		case DATA_TYPE_BOOLEAN:
			attr_set(want, nwant, name, AV_BOOL, 1, 0, NULL);
			break;
		case DATA_TYPE_BOOLEAN_VALUE:
			if (a->value_boolean_value(pair, &b) == 0)
				attr_set(want, nwant, name, AV_BOOL, b != 0, 0,
				    NULL);
			break;
		case DATA_TYPE_UINT32:
			if (a->value_uint32(pair, &u32) == 0)
				attr_set(want, nwant, name, AV_INT, 0, u32,
				    NULL);
			break;
		case DATA_TYPE_UINT64:
			if (a->value_uint64(pair, &u64) == 0)
				attr_set(want, nwant, name, AV_INT, 0, u64,
				    NULL);
			break;
		case DATA_TYPE_STRING:
			s = NULL;
			if (a->value_string(pair, &s) == 0 && s != NULL)
				attr_set(want, nwant, name, AV_STR, 0, 0,
				    xstrdup(s));
			break;
		default:
			break;
		}
	}
}

/*
 * dm_get_attributes() of desc walked into want (reset first): 0, or -1
 * with an error added.  The list is freed either way.
 */
static int
attributes(const dm_api_t *a, dm_descriptor_t desc, const char *what,
    attr_t *want, size_t nwant, strv_t *errors)
{
	nvlist_t *nvl;
	size_t i;
	int err = 0, rc = -1;

	for (i = 0; i < nwant; i++) {
		free(want[i].a_str);
		want[i].a_str = NULL;
		want[i].a_kind = AV_NONE;
	}
	nvl = a->get_attributes(desc, &err);
	if (err != 0 || nvl == NULL) {
		dm_error(errors, what, err);
	} else {
		walk(a, nvl, want, nwant);
		rc = 0;
	}
	if (nvl != NULL)
		a->nvlist_free(nvl);
	return (rc);
}

static void
attrs_free(attr_t *want, size_t nwant)
{
	size_t i;

	for (i = 0; i < nwant; i++) {
		free(want[i].a_str);
		want[i].a_str = NULL;
	}
}

/* The string value of a wanted attribute, copied, or NULL. */
static char *
str_attr(const attr_t *at)
{
	return (at->a_kind == AV_STR ? xstrdup(at->a_str) : NULL);
}

/*
 * cXtYdZ from an opath, as diskinfo derives its DISK column: the
 * basename, less a trailing 's' and one digit (p0 and s10 stay).
 */
static char *
disk_name(const char *opath)
{
	const char *base = strrchr(opath, '/');
	char *name;
	size_t len;

	base = base == NULL ? opath : base + 1;
	name = xstrdup(base);
	len = strlen(name);
	if (len >= 2 && name[len - 2] == 's' &&
	    name[len - 1] >= '0' && name[len - 1] <= '9')
		name[len - 2] = '\0';
	return (name);
}

/* -- in use -------------------------------------------------------------- */

static int
blank_line(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (!isspace((unsigned char)p[i]))
			return (0);
	}
	return (1);
}

/*
 * dm_inuse() for one slice: one in-use record per non-blank line of its
 * message, or an error added.
 */
static void
slice_inuse(const dm_api_t *a, char *slice, dm_disk_t *d)
{
	char *msg = NULL, *text, *line, *nl;
	strv_t lines;
	size_t i;
	int err = 0, count;

	(void) memset(&lines, 0, sizeof (lines));
	count = a->inuse(slice, &msg, DM_WHO_ZPOOL, &err);
	text = xstrdup(msg != NULL ? msg : "");
	if (msg != NULL)
		a->free(msg);

	if (err != 0) {
		add_error(&d->dd_errors, "cannot check '%s' for use: %s "
		    "(errno %d)", slice, strerror(err), err);
	} else if (count < 0) {
		add_error(&d->dd_errors, "cannot check '%s' for use "
		    "(dm_inuse returned %d)", slice, count);
	} else {
		for (line = text; line != NULL; line = nl) {
			if ((nl = strchr(line, '\n')) != NULL)
				*nl++ = '\0';
			if (!blank_line(line, strlen(line)))
				strv_add(&lines, xstrdup(line));
		}
		if (count > 0 && lines.sv_n == 0) {
			add_error(&d->dd_errors, "cannot check '%s' for use "
			    "(%d uses reported without a message)", slice,
			    count);
		}
		for (i = 0; i < lines.sv_n; i++) {
			strv_add(&d->dd_inuse_slice, xstrdup(slice));
			strv_add(&d->dd_inuse_msg, lines.sv_v[i]);
			lines.sv_v[i] = NULL;
		}
	}
	strv_free(&lines);
	free(text);
}

/* -- one media ----------------------------------------------------------- */

#define	ATTR(name)	{ (name), AV_NONE, 0, 0, NULL }

enum { DA_OPATH, DA_VID, DA_PID, DA_REMOVABLE, DA_SSD, DA_RPM, DA_NDRIVE };
enum { MA_SIZE, MA_BLOCKSIZE, DA_NMEDIA };

static void
query_media(const dm_api_t *a, dm_descriptor_t media, const char *noinuse,
    dm_disk_t *d)
{
	attr_t dattrs[DA_NDRIVE] = {
		ATTR(DM_OPATH), ATTR(DM_VENDOR_ID), ATTR(DM_PRODUCT_ID),
		ATTR(DM_REMOVABLE), ATTR(DM_SOLIDSTATE), ATTR(DM_RPM)
	};
	attr_t cattrs[1] = { ATTR(DM_CTYPE) };
	attr_t mattrs[DA_NMEDIA] = { ATTR(DM_SIZE), ATTR(DM_BLOCKSIZE) };
	descs_t drives, ctls, slices;
	strv_t *errs = &d->dd_errors;
	char *name;
	size_t i;

	(void) memset(d, 0, sizeof (*d));

	/*
	 * The drive and its controller.  Each step goes on after another
	 * fails, so the record says as much as can be known.
	 */
	if (associated(a, media, DM_DRIVE, "find the drive of a media",
	    &drives, errs) == 0) {
		if (drives.ds_n == 0) {
			add_error(errs, "cannot find the drive of a media "
			    "(none)");
		} else if (attributes(a, drives.ds_v[0],
		    "get drive attributes", dattrs, DA_NDRIVE, errs) == 0) {
			d->dd_opath = str_attr(&dattrs[DA_OPATH]);
			d->dd_vid = str_attr(&dattrs[DA_VID]);
			d->dd_pid = str_attr(&dattrs[DA_PID]);
			d->dd_removable = dattrs[DA_REMOVABLE].a_kind ==
			    AV_BOOL && dattrs[DA_REMOVABLE].a_bool;
			d->dd_ssd = dattrs[DA_SSD].a_kind == AV_BOOL &&
			    dattrs[DA_SSD].a_bool;
			if (dattrs[DA_RPM].a_kind == AV_INT) {
				d->dd_has_rpm = 1;
				d->dd_rpm = dattrs[DA_RPM].a_int;
			}
			if (d->dd_opath != NULL && d->dd_opath[0] != '\0')
				d->dd_name = disk_name(d->dd_opath);
			else
				add_error(errs, "the drive reports no opath, "
				    "so the disk has no name");
			if (associated(a, drives.ds_v[0], DM_CONTROLLER,
			    "find the controller of a drive", &ctls,
			    errs) == 0) {
				if (ctls.ds_n > 0 && attributes(a,
				    ctls.ds_v[0], "get controller attributes",
				    cattrs, 1, errs) == 0)
					d->dd_ctype = str_attr(&cattrs[0]);
				free(ctls.ds_v);
			}
		}
		free(drives.ds_v);
	}

	/* The media: size in blocks and the logical block size. */
	if (attributes(a, media, "get media attributes", mattrs, DA_NMEDIA,
	    errs) == 0) {
		if (mattrs[MA_BLOCKSIZE].a_kind == AV_INT) {
			d->dd_has_bs = 1;
			d->dd_bs = mattrs[MA_BLOCKSIZE].a_int;
		}
		if (mattrs[MA_SIZE].a_kind != AV_INT || !d->dd_has_bs) {
			add_error(errs, "media attributes lack '%s' or '%s'",
			    DM_SIZE, DM_BLOCKSIZE);
		} else {
			d->dd_has_size = 1;
			d->dd_size = mattrs[MA_SIZE].a_int;
		}
	}

	/* Every slice, and its uses. */
	if (associated(a, media, DM_SLICE, "list slices", &slices,
	    errs) == 0) {
		if (noinuse != NULL)
			add_error(errs, "cannot check for use: %s", noinuse);
		for (i = 0; i < slices.ds_n; i++) {
			if ((name = desc_name(a, slices.ds_v[i],
			    "get a slice name", errs)) == NULL)
				continue;
			strv_add(&d->dd_slices, name);
			if (noinuse == NULL)
				slice_inuse(a, name, d);
		}
		free(slices.ds_v);
	}
	attrs_free(dattrs, DA_NDRIVE);
	attrs_free(cattrs, 1);
	attrs_free(mattrs, DA_NMEDIA);
}

static void
disk_free(dm_disk_t *d)
{
	free(d->dd_name);
	free(d->dd_opath);
	free(d->dd_vid);
	free(d->dd_pid);
	free(d->dd_ctype);
	strv_free(&d->dd_slices);
	strv_free(&d->dd_inuse_slice);
	strv_free(&d->dd_inuse_msg);
	strv_free(&d->dd_errors);
}

/* -- output -------------------------------------------------------------- */

static void
json_opt_string(FILE *f, const char *s)
{
	if (s == NULL)
		(void) fputs("null", f);
	else
		json_string(f, s);
}

static void
json_opt_u64(FILE *f, int has, uint64_t v)
{
	if (has)
		(void) fprintf(f, "%llu", (unsigned long long)v);
	else
		(void) fputs("null", f);
}

static void
json_strv(FILE *f, const strv_t *sv)
{
	size_t i;

	(void) putc('[', f);
	for (i = 0; i < sv->sv_n; i++) {
		if (i > 0)
			(void) fputs(", ", f);
		json_string(f, sv->sv_v[i]);
	}
	(void) putc(']', f);
}

static void
json_disk(FILE *f, const dm_disk_t *d)
{
	size_t i;

	(void) fputs("{\"name\": ", f);
	json_string(f, d->dd_name != NULL ? d->dd_name : "");
	(void) fputs(", \"opath\": ", f);
	json_opt_string(f, d->dd_opath);
	(void) fputs(", \"vendor_id\": ", f);
	json_opt_string(f, d->dd_vid);
	(void) fputs(", \"product_id\": ", f);
	json_opt_string(f, d->dd_pid);
	(void) fputs(", \"size_blocks\": ", f);
	json_opt_u64(f, d->dd_has_size, d->dd_size);
	(void) fputs(", \"block_bytes\": ", f);
	json_opt_u64(f, d->dd_has_bs, d->dd_bs);
	(void) fputs(", \"rpm\": ", f);
	json_opt_u64(f, d->dd_has_rpm, d->dd_rpm);
	(void) fprintf(f, ", \"removable\": %s, \"solid_state\": %s",
	    d->dd_removable ? "true" : "false", d->dd_ssd ? "true" : "false");
	(void) fputs(", \"ctype\": ", f);
	json_opt_string(f, d->dd_ctype);
	(void) fputs(", \"slices\": ", f);
	json_strv(f, &d->dd_slices);
	(void) fputs(", \"inuse\": [", f);
	for (i = 0; i < d->dd_inuse_msg.sv_n; i++) {
		(void) fputs(i > 0 ? ", {\"slice\": " : "{\"slice\": ", f);
		json_string(f, d->dd_inuse_slice.sv_v[i]);
		(void) fputs(", \"message\": ", f);
		json_string(f, d->dd_inuse_msg.sv_v[i]);
		(void) putc('}', f);
	}
	(void) fputs("], \"errors\": ", f);
	json_strv(f, &d->dd_errors);
	(void) putc('}', f);
}

static void
json_head(FILE *f, int available, const char *reason)
{
	(void) fprintf(f, "{\"version\": %d, \"available\": %s, \"reason\": ",
	    DISKMGT_JSON_VERSION, available ? "true" : "false");
	json_string(f, reason);
	(void) fputs(", \"disks\": [", f);
}

static int
finish(FILE *f)
{
	(void) fputs("]}\n", f);
	if (fflush(f) != 0 || ferror(f)) {
		(void) fprintf(stderr, "sdio: cannot write output: %s\n",
		    strerror(errno));
		return (SDIO_EXIT_SETUP);
	}
	return (SDIO_EXIT_OK);
}

static int
unavailable(const char *reason)
{
	json_head(stdout, 0, reason);
	return (finish(stdout));
}

/* -- the subcommand ------------------------------------------------------ */

static int
diskmgt_usage(const char *why, const char *what)
{
	(void) fprintf(stderr, "sdio: %s%s%s\n", why, what != NULL ? ": " : "",
	    what != NULL ? what : "");
	(void) fprintf(stderr, "usage: sdio diskmgt --diskmgt LIBPATH "
	    "--nvpair LIBPATH [--no-inuse]\n");
	return (SDIO_EXIT_USAGE);
}

int
sdio_diskmgt_main(int argc, char **argv)
{
	const char *dmpath = NULL, *nvpath = NULL, *noinuse = NULL;
	const char **slot;
	void *dm, *nv;
	dm_api_t api;
	dm_descriptor_t *array;
	descs_t media;
	strv_t errors;
	dm_disk_t disk;
	char why[1024];
	int filter[2] = { DM_DT_FIXED, DM_FILTER_END };
	int i, err = 0, no_inuse = 0;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--no-inuse") == 0) {
			no_inuse = 1;
			continue;
		}
		if (strcmp(argv[i], "--diskmgt") == 0)
			slot = &dmpath;
		else if (strcmp(argv[i], "--nvpair") == 0)
			slot = &nvpath;
		else
			return (diskmgt_usage("unknown argument", argv[i]));
		if (*slot != NULL)
			return (diskmgt_usage("option given twice", argv[i]));
		if (i + 1 >= argc)
			return (diskmgt_usage("option needs a value",
			    argv[i]));
		*slot = argv[++i];
		if ((*slot)[0] != '/')
			return (diskmgt_usage("not an absolute path", *slot));
	}
	if (dmpath == NULL || nvpath == NULL)
		return (diskmgt_usage("--diskmgt and --nvpair are required",
		    NULL));

	/* dm_inuse() answers 0 at once when NOINUSE_CHECK is set. */
	if (getenv("NOINUSE_CHECK") != NULL)
		noinuse = "NOINUSE_CHECK is set in the environment";
	else if (no_inuse)
		noinuse = "NOINUSE_CHECK is set in the caller's environment "
		    "(--no-inuse)";

	if ((dm = dlopen(dmpath, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		(void) snprintf(why, sizeof (why), "cannot load '%s': %s",
		    dmpath, dlerror());
		return (unavailable(why));
	}
	if ((nv = dlopen(nvpath, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		(void) snprintf(why, sizeof (why), "cannot load '%s': %s",
		    nvpath, dlerror());
		return (unavailable(why));
	}
	if (load_api(&api, dm, dmpath, nv, nvpath, why, sizeof (why)) != 0)
		return (unavailable(why));

	(void) memset(&errors, 0, sizeof (errors));
	array = api.get_descriptors(DM_MEDIA, filter, &err);
	if (take(&api, array, err, "list fixed-disk media", &media,
	    &errors) != 0) {
		i = unavailable(errors.sv_v[0]);
		strv_free(&errors);
		return (i);
	}

	json_head(stdout, 1, "");
	for (i = 0; (size_t)i < media.ds_n; i++) {
		query_media(&api, media.ds_v[i], noinuse, &disk);
		if (i > 0)
			(void) fputs(", ", stdout);
		json_disk(stdout, &disk);
		disk_free(&disk);
	}
	free(media.ds_v);
	return (finish(stdout));
}
