/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * A fake libdiskmgt for sdtune's tests: the exported functions sdtune calls,
 * with the ABI of illumos <libdiskmgt.h>, backed by a data file instead of
 * the device tree.  Attribute lists are built with the real libnvpair, typed
 * as illumos libdiskmgt types them (media.c, drive.c, controller.c), and
 * dm_inuse() answers with the message templates of entry.c (NexentaStor
 * "(1M)" wording).
 *
 * The data file is <directory of this library>/../diskmgt.tsv, found with
 * dladdr(), so a simulated root can hold lib/libdiskmgt.so.1 and the file
 * beside lib/.  It is re-read when it changes.  One TAB-separated record per
 * line (blank lines and lines starting with '#' are skipped):
 *
 *	media NAME OPATH SIZE_BLOCKS BLOCKSIZE VENDOR_ID PRODUCT_ID
 *	    REMOVABLE(0|1) SOLID_STATE(0|1) CTYPE RPM(or -)
 *	slice MEDIA_NAME SLICE_NAME
 *	inuse SLICE_NAME KIND DETAIL
 *	fail SLICE_OR_MEDIA_NAME ERRNO
 *	attr MEDIA_NAME drive|media|controller ATTR TYPE VALUE
 *
 * KIND is mount, vfstab, fs, swap, dump, lu, vxvm, active_pool,
 * exported_pool, spare or l2cache.  DETAIL is the second field of the
 * message (mount point, file system type, pool, ...); for swap and dump the
 * real library has no choice of detail, so it is ignored there.  "-" for
 * OPATH, VENDOR_ID or PRODUCT_ID leaves that attribute out; CTYPE "-" means
 * the drive has no controller.  SLICE_NAME is a name under /dev/dsk
 * (c0t0d0s0) or an absolute block device path.  A "fail" record makes
 * dm_get_attributes() of that media or slice, and dm_inuse() of that slice,
 * report ERRNO (any ERRNO: the real dm_inuse() would turn ENODEV into "not
 * in use").  dm_inuse() applies the dm_who_type_t rules of entry.c, so a
 * caller passing the wrong DM_WHO_* misses uses.  A bad file makes
 * dm_get_descriptors() fail with EINVAL (or ENOENT when it is missing) and
 * says why on stderr.
 *
 * An "attr" record adds one more pair to the attribute list of a media's
 * drive, media or controller, after the usual ones (the list has unique
 * names, so it replaces a pair of the same name): TYPE is boolean (VALUE
 * ignored), boolean_value (0 or 1), uint32, uint64, int16 or string.  It
 * lets tests give the caller's nvlist walker every type.
 *
 * Descriptors are numbers (generation, type, index), so they need no
 * freeing; descriptor arrays and names do, and fake_dm_outstanding() counts
 * the ones not freed yet so tests can check their callers.  A caller in
 * another process (sdtune's engine) is checked through the file
 * diskmgt.outstanding beside diskmgt.tsv: when it exists at process exit,
 * the count is written into it.
 */

#define	_GNU_SOURCE		/* dladdr() on glibc */

#include <sys/types.h>
#include <sys/stat.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The few libnvpair entry points used, as declared by illumos
 * <sys/nvpair.h>; Debian ships the library without a header outside
 * libzfslinux-dev, and the list stays opaque here.
 */
typedef struct nvlist nvlist_t;
extern int nvlist_alloc(nvlist_t **, unsigned int, int);
extern void nvlist_free(nvlist_t *);
extern int nvlist_add_boolean(nvlist_t *, const char *);
extern int nvlist_add_uint32(nvlist_t *, const char *, uint32_t);
extern int nvlist_add_uint64(nvlist_t *, const char *, uint64_t);
extern int nvlist_add_string(nvlist_t *, const char *, const char *);
extern int nvlist_add_boolean_value(nvlist_t *, const char *, int);
extern int nvlist_add_int16(nvlist_t *, const char *, int16_t);

#define	NV_UNIQUE_NAME		0x1
#define	NV_UNIQUE_NAME_TYPE	0x2
#define	NVATTRS			(NV_UNIQUE_NAME | NV_UNIQUE_NAME_TYPE)

/* From <libdiskmgt.h>. */
typedef uint64_t dm_descriptor_t;

typedef enum {
	DM_WHO_MKFS = 0,
	DM_WHO_ZPOOL,
	DM_WHO_ZPOOL_FORCE,
	DM_WHO_FORMAT,
	DM_WHO_SWAP,
	DM_WHO_DUMP,
	DM_WHO_ZPOOL_SPARE
} dm_who_type_t;

typedef enum {
	DM_DRIVE = 0,
	DM_CONTROLLER,
	DM_MEDIA,
	DM_SLICE,
	DM_PARTITION,
	DM_PATH,
	DM_ALIAS,
	DM_BUS
} dm_desc_type_t;

#define	DM_DT_FIXED	1	/* dm_drive_type_t */
#define	DM_MT_FIXED	1	/* dm_media_type_t: what a media filter holds */
#define	DM_FILTER_END	(-1)
#define	DM_DISK_UP	1

#define	DM_USE_MOUNT		"mount"
#define	DM_USE_LU		"lu"
#define	DM_USE_DUMP		"dump"
#define	DM_USE_VXVM		"vxvm"
#define	DM_USE_FS		"fs"
#define	DM_USE_VFSTAB		"vfstab"
#define	DM_USE_EXPORTED_ZPOOL	"exported_zpool"
#define	DM_USE_ACTIVE_ZPOOL	"active_zpool"
#define	DM_USE_SPARE_ZPOOL	"spare_zpool"
#define	DM_USE_L2CACHE_ZPOOL	"l2cache_zpool"

#define	DATA_FILE	"diskmgt.tsv"
#define	COUNT_FILE	"diskmgt.outstanding"
#define	DSK_DIR		"/dev/dsk/"
#define	RDSK_DIR	"/dev/rdsk/"
#define	MAXFIELDS	12

typedef struct fake_media {
	char		*fm_name;
	char		*fm_opath;	/* NULL: no opath attribute */
	uint64_t	fm_size;	/* in blocks */
	uint32_t	fm_blocksize;
	char		*fm_vid;	/* NULL: no vendor_id attribute */
	char		*fm_pid;	/* NULL: no product_id attribute */
	int		fm_removable;
	int		fm_ssd;
	char		*fm_ctype;	/* NULL: no controller */
	uint32_t	fm_rpm;		/* 0: no rpm attribute */
	int		fm_errno;	/* dm_get_attributes() fails so */
} fake_media_t;

typedef struct fake_slice {
	char		*fs_path;	/* /dev/dsk/... (allocated) */
	int		fs_media;
	int		fs_errno;	/* dm_inuse() fails so */
} fake_slice_t;

typedef struct fake_use {
	int		fu_slice;
	const char	*fu_by;		/* DM_USE_* */
	char		*fu_data;
	int		fu_swap;
} fake_use_t;

typedef struct fake_attr {
	int		fa_media;
	dm_desc_type_t	fa_which;	/* DM_DRIVE, DM_MEDIA, DM_CONTROLLER */
	char		*fa_name;
	char		*fa_type;
	char		*fa_value;
} fake_attr_t;

typedef struct fake_state {
	char		*st_text;	/* the file; records point into it */
	fake_media_t	*st_media;
	int		st_nmedia;
	fake_slice_t	*st_slices;
	int		st_nslices;
	fake_use_t	*st_uses;
	int		st_nuses;
	fake_attr_t	*st_attrs;
	int		st_nattrs;
} fake_state_t;

/* diskmgt.tsv KIND -> libdiskmgt "used_by" name. */
static const struct {
	const char	*k_kind;
	const char	*k_by;
} use_kinds[] = {
	{ "mount",		DM_USE_MOUNT },
	{ "vfstab",		DM_USE_VFSTAB },
	{ "fs",			DM_USE_FS },
	{ "swap",		DM_USE_MOUNT },	/* mounted on "swap" */
	{ "dump",		DM_USE_DUMP },
	{ "lu",			DM_USE_LU },
	{ "vxvm",		DM_USE_VXVM },
	{ "active_pool",	DM_USE_ACTIVE_ZPOOL },
	{ "exported_pool",	DM_USE_EXPORTED_ZPOOL },
	{ "spare",		DM_USE_SPARE_ZPOOL },
	{ "l2cache",		DM_USE_L2CACHE_ZPOOL },
	{ NULL,			NULL }
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static fake_state_t state;
static int loaded;
static struct stat loaded_stat;
static uint64_t generation;
static long outstanding;

/* Sets the address dladdr() looks up; any symbol of this library does. */
static int self_marker;

static void
free_state(fake_state_t *st)
{
	int i;

	for (i = 0; i < st->st_nslices; i++)
		free(st->st_slices[i].fs_path);
	free(st->st_media);
	free(st->st_slices);
	free(st->st_uses);
	free(st->st_attrs);
	free(st->st_text);
	(void) memset(st, 0, sizeof (*st));
}

static int
file_path(char *buf, size_t len, const char *file)
{
	Dl_info info;
	const char *slash;

	if (dladdr(&self_marker, &info) == 0 || info.dli_fname == NULL)
		return (-1);
	slash = strrchr(info.dli_fname, '/');
	if (slash == NULL) {
		(void) snprintf(buf, len, "../%s", file);
	} else {
		(void) snprintf(buf, len, "%.*s/../%s",
		    (int)(slash - info.dli_fname), info.dli_fname, file);
	}
	return (0);
}

static int
data_path(char *buf, size_t len)
{
	return (file_path(buf, len, DATA_FILE));
}

/* At process exit: the count into COUNT_FILE, if that file exists. */
static void __attribute__((destructor))
write_outstanding(void)
{
	char path[4096];
	FILE *fp;

	if (file_path(path, sizeof (path), COUNT_FILE) != 0 ||
	    access(path, F_OK) != 0 || (fp = fopen(path, "w")) == NULL)
		return;
	(void) fprintf(fp, "%ld\n", outstanding);
	(void) fclose(fp);
}

static char *
read_file(const char *path, int *errp)
{
	FILE *fp;
	char *text = NULL;
	size_t len = 0, cap = 0;
	char chunk[4096];
	size_t n;

	if ((fp = fopen(path, "r")) == NULL) {
		*errp = errno;
		return (NULL);
	}
	while ((n = fread(chunk, 1, sizeof (chunk), fp)) > 0) {
		if (len + n + 1 > cap) {
			char *p;

			cap = (len + n + 1) * 2;
			if ((p = realloc(text, cap)) == NULL) {
				free(text);
				(void) fclose(fp);
				*errp = ENOMEM;
				return (NULL);
			}
			text = p;
		}
		(void) memcpy(text + len, chunk, n);
		len += n;
	}
	(void) fclose(fp);
	if (text == NULL && (text = malloc(1)) == NULL) {
		*errp = ENOMEM;
		return (NULL);
	}
	text[len] = '\0';
	return (text);
}

static int
bad_line(const char *path, int line, const char *why, const char *what)
{
	(void) fprintf(stderr, "fake_libdiskmgt: %s:%d: %s%s%s\n", path, line,
	    why, what != NULL ? ": " : "", what != NULL ? what : "");
	return (EINVAL);
}

static int
find_media(const fake_state_t *st, const char *name)
{
	int i;

	for (i = 0; i < st->st_nmedia; i++) {
		if (strcmp(st->st_media[i].fm_name, name) == 0)
			return (i);
	}
	return (-1);
}

/*
 * The /dev/dsk path for a slice name as dm_inuse() may be given it: a name
 * under /dev/dsk, a /dev/rdsk path (getfullblkname() turns those into block
 * paths) or a block path.
 */
static char *
block_path(const char *name)
{
	char *p;
	const char *rest = name;
	size_t len;

	if (strncmp(name, RDSK_DIR, strlen(RDSK_DIR)) == 0)
		rest = name + strlen(RDSK_DIR);
	else if (name[0] == '/')
		return (strdup(name));
	len = strlen(DSK_DIR) + strlen(rest) + 1;
	if ((p = malloc(len)) != NULL)
		(void) snprintf(p, len, "%s%s", DSK_DIR, rest);
	return (p);
}

static int
find_slice(const fake_state_t *st, const char *name)
{
	char *path;
	int i, found = -1;

	if ((path = block_path(name)) == NULL)
		return (-1);
	for (i = 0; i < st->st_nslices; i++) {
		if (strcmp(st->st_slices[i].fs_path, path) == 0) {
			found = i;
			break;
		}
	}
	free(path);
	return (found);
}

static int
parse_number(const char *s, uint64_t max, uint64_t *valp)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return (-1);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return (-1);
	*valp = v;
	return (0);
}

static char *
optional(char *field)
{
	return (strcmp(field, "-") == 0 ? NULL : field);
}

static void *
grow(void *array, int count, size_t size)
{
	/* Arrays grow by doubling whenever count reaches a power of two. */
	if (count == 0 || (count & (count - 1)) == 0)
		return (realloc(array, (count == 0 ? 1 : 2 * count) * size));
	return (array);
}

static int
parse_media(fake_state_t *st, char **f, int nf, const char *path, int line)
{
	fake_media_t *m;
	uint64_t v;
	void *p;

	if (nf != 11)
		return (bad_line(path, line, "media needs 11 fields", NULL));
	if (find_media(st, f[1]) >= 0)
		return (bad_line(path, line, "duplicate media", f[1]));
	if ((p = grow(st->st_media, st->st_nmedia, sizeof (*m))) == NULL)
		return (ENOMEM);
	st->st_media = p;
	m = &st->st_media[st->st_nmedia];
	(void) memset(m, 0, sizeof (*m));
	m->fm_name = f[1];
	m->fm_opath = optional(f[2]);
	if (parse_number(f[3], UINT64_MAX, &m->fm_size) != 0)
		return (bad_line(path, line, "bad SIZE_BLOCKS", f[3]));
	if (parse_number(f[4], UINT32_MAX, &v) != 0 || v == 0)
		return (bad_line(path, line, "bad BLOCKSIZE", f[4]));
	m->fm_blocksize = (uint32_t)v;
	m->fm_vid = optional(f[5]);
	m->fm_pid = optional(f[6]);
	if (parse_number(f[7], 1, &v) != 0)
		return (bad_line(path, line, "REMOVABLE not 0 or 1", f[7]));
	m->fm_removable = (int)v;
	if (parse_number(f[8], 1, &v) != 0)
		return (bad_line(path, line, "SOLID_STATE not 0 or 1", f[8]));
	m->fm_ssd = (int)v;
	m->fm_ctype = optional(f[9]);
	if (strcmp(f[10], "-") == 0)
		v = 0;
	else if (parse_number(f[10], UINT32_MAX, &v) != 0)
		return (bad_line(path, line, "bad RPM", f[10]));
	m->fm_rpm = (uint32_t)v;
	st->st_nmedia++;
	return (0);
}

static int
parse_slice(fake_state_t *st, char **f, int nf, const char *path, int line)
{
	fake_slice_t *s;
	int media;
	void *p;

	if (nf != 3)
		return (bad_line(path, line, "slice needs 3 fields", NULL));
	if ((media = find_media(st, f[1])) < 0)
		return (bad_line(path, line, "slice of unknown media", f[1]));
	if (f[2][0] == '\0' || find_slice(st, f[2]) >= 0)
		return (bad_line(path, line, "empty or duplicate slice", f[2]));
	if ((p = grow(st->st_slices, st->st_nslices, sizeof (*s))) == NULL)
		return (ENOMEM);
	st->st_slices = p;
	s = &st->st_slices[st->st_nslices];
	s->fs_media = media;
	s->fs_errno = 0;
	if ((s->fs_path = block_path(f[2])) == NULL)
		return (ENOMEM);
	st->st_nslices++;
	return (0);
}

static int
parse_inuse(fake_state_t *st, char **f, int nf, const char *path, int line)
{
	fake_use_t *u;
	int slice, k;
	void *p;

	if (nf != 4)
		return (bad_line(path, line, "inuse needs 4 fields", NULL));
	if ((slice = find_slice(st, f[1])) < 0)
		return (bad_line(path, line, "inuse of unknown slice", f[1]));
	for (k = 0; use_kinds[k].k_kind != NULL; k++) {
		if (strcmp(use_kinds[k].k_kind, f[2]) == 0)
			break;
	}
	if (use_kinds[k].k_kind == NULL)
		return (bad_line(path, line, "unknown KIND", f[2]));
	if ((p = grow(st->st_uses, st->st_nuses, sizeof (*u))) == NULL)
		return (ENOMEM);
	st->st_uses = p;
	u = &st->st_uses[st->st_nuses];
	u->fu_slice = slice;
	u->fu_by = use_kinds[k].k_by;
	u->fu_swap = strcmp(f[2], "swap") == 0;
	/* The real library names no dump device and no swap detail. */
	if (strcmp(f[2], "dump") == 0)
		u->fu_data = "dump";
	else if (u->fu_swap)
		u->fu_data = "swap";
	else
		u->fu_data = f[3];
	st->st_nuses++;
	return (0);
}

static int
parse_fail(fake_state_t *st, char **f, int nf, const char *path, int line)
{
	uint64_t v;
	int media, slice;

	if (nf != 3)
		return (bad_line(path, line, "fail needs 3 fields", NULL));
	if (parse_number(f[2], 4095, &v) != 0 || v == 0)
		return (bad_line(path, line, "bad ERRNO", f[2]));
	media = find_media(st, f[1]);
	slice = find_slice(st, f[1]);
	if (media < 0 && slice < 0)
		return (bad_line(path, line, "fail of unknown name", f[1]));
	if (media >= 0)
		st->st_media[media].fm_errno = (int)v;
	if (slice >= 0)
		st->st_slices[slice].fs_errno = (int)v;
	return (0);
}

static int
parse_attr(fake_state_t *st, char **f, int nf, const char *path, int line)
{
	static const char *const types[] = { "boolean", "boolean_value",
	    "uint32", "uint64", "int16", "string", NULL };
	fake_attr_t *a;
	int media, k;
	void *p;

	if (nf != 6)
		return (bad_line(path, line, "attr needs 6 fields", NULL));
	if ((media = find_media(st, f[1])) < 0)
		return (bad_line(path, line, "attr of unknown media", f[1]));
	for (k = 0; types[k] != NULL; k++) {
		if (strcmp(types[k], f[4]) == 0)
			break;
	}
	if (types[k] == NULL)
		return (bad_line(path, line, "unknown TYPE", f[4]));
	if ((p = grow(st->st_attrs, st->st_nattrs, sizeof (*a))) == NULL)
		return (ENOMEM);
	st->st_attrs = p;
	a = &st->st_attrs[st->st_nattrs];
	a->fa_media = media;
	if (strcmp(f[2], "drive") == 0)
		a->fa_which = DM_DRIVE;
	else if (strcmp(f[2], "media") == 0)
		a->fa_which = DM_MEDIA;
	else if (strcmp(f[2], "controller") == 0)
		a->fa_which = DM_CONTROLLER;
	else
		return (bad_line(path, line, "not drive, media or controller",
		    f[2]));
	a->fa_name = f[3];
	a->fa_type = f[4];
	a->fa_value = f[5];
	st->st_nattrs++;
	return (0);
}

static int
parse_text(fake_state_t *st, const char *path)
{
	char *line, *next, *f[MAXFIELDS];
	int nf, lineno = 0, err;

	for (line = st->st_text; line != NULL; line = next) {
		size_t len;

		lineno++;
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		len = strlen(line);
		if (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		if (len == 0 || line[0] == '#')
			continue;
		nf = 0;
		f[nf++] = line;
		while ((line = strchr(line, '\t')) != NULL) {
			*line++ = '\0';
			if (nf == MAXFIELDS)
				return (bad_line(path, lineno,
				    "too many fields", NULL));
			f[nf++] = line;
		}
		if (strcmp(f[0], "media") == 0)
			err = parse_media(st, f, nf, path, lineno);
		else if (strcmp(f[0], "slice") == 0)
			err = parse_slice(st, f, nf, path, lineno);
		else if (strcmp(f[0], "inuse") == 0)
			err = parse_inuse(st, f, nf, path, lineno);
		else if (strcmp(f[0], "fail") == 0)
			err = parse_fail(st, f, nf, path, lineno);
		else if (strcmp(f[0], "attr") == 0)
			err = parse_attr(st, f, nf, path, lineno);
		else
			err = bad_line(path, lineno, "unknown record", f[0]);
		if (err != 0)
			return (err);
	}
	return (0);
}

/*
 * Make the state match the data file; called with the lock held.  Returns
 * 0 or an errno.  A changed file starts a new generation, which turns older
 * descriptors stale (ENODEV), as when a device goes away.
 */
static int
refresh(void)
{
	char path[4096];
	struct stat sb;
	fake_state_t st;
	int err = 0;

	if (data_path(path, sizeof (path)) != 0) {
		(void) fprintf(stderr, "fake_libdiskmgt: dladdr() failed\n");
		return (EINVAL);
	}
	if (stat(path, &sb) != 0) {
		err = errno;
		(void) fprintf(stderr, "fake_libdiskmgt: %s: %s\n", path,
		    strerror(err));
		return (err);
	}
	if (loaded && sb.st_ino == loaded_stat.st_ino &&
	    sb.st_dev == loaded_stat.st_dev &&
	    sb.st_size == loaded_stat.st_size &&
	    sb.st_mtim.tv_sec == loaded_stat.st_mtim.tv_sec &&
	    sb.st_mtim.tv_nsec == loaded_stat.st_mtim.tv_nsec)
		return (0);

	(void) memset(&st, 0, sizeof (st));
	if ((st.st_text = read_file(path, &err)) == NULL) {
		(void) fprintf(stderr, "fake_libdiskmgt: %s: %s\n", path,
		    strerror(err));
		return (err);
	}
	if ((err = parse_text(&st, path)) != 0) {
		free_state(&st);
		return (err);
	}
	free_state(&state);
	state = st;
	loaded = 1;
	loaded_stat = sb;
	generation = (generation + 1) & 0xffffff;
	return (0);
}

static dm_descriptor_t
make_desc(dm_desc_type_t type, int index)
{
	return ((generation << 40) | ((uint64_t)(type + 1) << 32) |
	    (uint64_t)(index + 1));
}

/* Decode a descriptor; returns 0 or EBADF (garbage) or ENODEV (stale). */
static int
decode_desc(dm_descriptor_t desc, dm_desc_type_t *typep, int *indexp)
{
	uint64_t type = (desc >> 32) & 0xff;
	uint64_t index = desc & 0xffffffffULL;
	int count;

	if (type < 1 || type > DM_BUS + 1 || index == 0)
		return (EBADF);
	if (!loaded || (desc >> 40) != generation)
		return (ENODEV);
	*typep = (dm_desc_type_t)(type - 1);
	*indexp = (int)(index - 1);
	switch (*typep) {
	case DM_MEDIA:
	case DM_DRIVE:
	case DM_CONTROLLER:
		count = state.st_nmedia;
		break;
	case DM_SLICE:
		count = state.st_nslices;
		break;
	default:
		return (EBADF);
	}
	if (*typep == DM_CONTROLLER && *indexp < count &&
	    state.st_media[*indexp].fm_ctype == NULL)
		return (EBADF);
	return (*indexp < count ? 0 : EBADF);
}

static dm_descriptor_t *
new_array(int count, int *errp)
{
	dm_descriptor_t *a;

	if ((a = calloc((size_t)count + 1, sizeof (*a))) == NULL) {
		*errp = ENOMEM;
		return (NULL);
	}
	outstanding++;
	return (a);
}

static int
wanted(int filter[])
{
	int i;

	/* Every fake disk is fixed: DM_DT_FIXED == DM_MT_FIXED. */
	if (filter == NULL || filter[0] == DM_FILTER_END)
		return (1);
	for (i = 0; filter[i] != DM_FILTER_END; i++) {
		if (filter[i] == DM_MT_FIXED)
			return (1);
	}
	return (0);
}

dm_descriptor_t *
dm_get_descriptors(dm_desc_type_t type, int filter[], int *errp)
{
	dm_descriptor_t *a = NULL;
	int i, n = 0;

	*errp = 0;
	(void) pthread_mutex_lock(&lock);
	if ((*errp = refresh()) != 0)
		goto out;
	if ((a = new_array(state.st_nmedia + state.st_nslices, errp)) == NULL)
		goto out;
	switch (type) {
	case DM_MEDIA:
	case DM_DRIVE:
		if (!wanted(filter))
			break;
		for (i = 0; i < state.st_nmedia; i++)
			a[n++] = make_desc(type, i);
		break;
	case DM_CONTROLLER:
		for (i = 0; i < state.st_nmedia; i++) {
			if (state.st_media[i].fm_ctype != NULL)
				a[n++] = make_desc(type, i);
		}
		break;
	case DM_SLICE:
		for (i = 0; i < state.st_nslices; i++)
			a[n++] = make_desc(type, i);
		break;
	default:
		/* Partitions, paths, aliases and buses are not modelled. */
		break;
	}
out:
	(void) pthread_mutex_unlock(&lock);
	return (a);
}

dm_descriptor_t *
dm_get_associated_descriptors(dm_descriptor_t desc, dm_desc_type_t type,
    int *errp)
{
	dm_descriptor_t *a = NULL;
	dm_desc_type_t from;
	int index, i, n = 0;

	*errp = 0;
	(void) pthread_mutex_lock(&lock);
	if ((*errp = decode_desc(desc, &from, &index)) != 0)
		goto out;
	if ((a = new_array(state.st_nslices + 1, errp)) == NULL)
		goto out;
	if (from == DM_MEDIA && type == DM_DRIVE) {
		a[n++] = make_desc(DM_DRIVE, index);
	} else if (from == DM_MEDIA && type == DM_SLICE) {
		for (i = 0; i < state.st_nslices; i++) {
			if (state.st_slices[i].fs_media == index)
				a[n++] = make_desc(DM_SLICE, i);
		}
	} else if (from == DM_DRIVE && type == DM_MEDIA) {
		a[n++] = make_desc(DM_MEDIA, index);
	} else if (from == DM_DRIVE && type == DM_CONTROLLER) {
		if (state.st_media[index].fm_ctype != NULL)
			a[n++] = make_desc(DM_CONTROLLER, index);
	} else if (from == DM_CONTROLLER && type == DM_DRIVE) {
		a[n++] = make_desc(DM_DRIVE, index);
	} else if (from == DM_SLICE && type == DM_MEDIA) {
		a[n++] = make_desc(DM_MEDIA, state.st_slices[index].fs_media);
	} else if ((from == DM_MEDIA || from == DM_SLICE) &&
	    type == DM_PARTITION) {
		/* No fdisk partitions: an empty list, as on EFI disks. */
	} else if (from == DM_DRIVE &&
	    (type == DM_ALIAS || type == DM_PATH)) {
		/* Not modelled: an empty list. */
	} else {
		outstanding--;
		free(a);
		a = NULL;
		*errp = EINVAL;
	}
out:
	(void) pthread_mutex_unlock(&lock);
	return (a);
}

void
dm_free_descriptors(dm_descriptor_t *desc_list)
{
	if (desc_list == NULL)
		return;
	(void) pthread_mutex_lock(&lock);
	outstanding--;
	(void) pthread_mutex_unlock(&lock);
	free(desc_list);
}

/* ARGSUSED */
void
dm_free_descriptor(dm_descriptor_t desc)
{
	/* Descriptors are plain numbers here. */
}

char *
dm_get_name(dm_descriptor_t desc, int *errp)
{
	dm_desc_type_t type;
	int index;
	char *name = NULL;
	char buf[256];

	*errp = 0;
	(void) pthread_mutex_lock(&lock);
	if ((*errp = decode_desc(desc, &type, &index)) != 0)
		goto out;
	switch (type) {
	case DM_MEDIA:
	case DM_DRIVE:
		name = strdup(state.st_media[index].fm_name);
		break;
	case DM_CONTROLLER:
		(void) snprintf(buf, sizeof (buf), "/fake/%s@%d",
		    state.st_media[index].fm_ctype, index);
		name = strdup(buf);
		break;
	case DM_SLICE:
		name = strdup(state.st_slices[index].fs_path);
		break;
	default:
		break;
	}
	if (name == NULL)
		*errp = ENOMEM;
	else
		outstanding++;
out:
	(void) pthread_mutex_unlock(&lock);
	return (name);
}

void
dm_free_name(char *name)
{
	if (name == NULL)
		return;
	(void) pthread_mutex_lock(&lock);
	outstanding--;
	(void) pthread_mutex_unlock(&lock);
	free(name);
}

static int
media_attrs(const fake_media_t *m, nvlist_t *nvl)
{
	/* Order and types of media.c get_attrs(). */
	if (m->fm_removable && (nvlist_add_boolean(nvl, "removable") != 0 ||
	    nvlist_add_boolean(nvl, "loaded") != 0))
		return (ENOMEM);
	if (nvlist_add_uint64(nvl, "size", m->fm_size) != 0 ||
	    nvlist_add_uint32(nvl, "blocksize", m->fm_blocksize) != 0 ||
	    nvlist_add_uint32(nvl, "mtype", DM_MT_FIXED) != 0)
		return (ENOMEM);
	return (0);
}

static int
drive_attrs(const fake_media_t *m, nvlist_t *nvl)
{
	/* Order and types of drive.c get_attrs(). */
	if (m->fm_removable && (nvlist_add_boolean(nvl, "removable") != 0 ||
	    nvlist_add_boolean(nvl, "loaded") != 0))
		return (ENOMEM);
	if (nvlist_add_uint32(nvl, "status", DM_DISK_UP) != 0 ||
	    nvlist_add_uint32(nvl, "drvtype", DM_DT_FIXED) != 0)
		return (ENOMEM);
	if (m->fm_pid != NULL &&
	    nvlist_add_string(nvl, "product_id", m->fm_pid) != 0)
		return (ENOMEM);
	if (m->fm_vid != NULL &&
	    nvlist_add_string(nvl, "vendor_id", m->fm_vid) != 0)
		return (ENOMEM);
	if (m->fm_rpm > 0 && nvlist_add_uint32(nvl, "rpm", m->fm_rpm) != 0)
		return (ENOMEM);
	if (m->fm_opath != NULL &&
	    nvlist_add_string(nvl, "opath", m->fm_opath) != 0)
		return (ENOMEM);
	if (m->fm_ssd && nvlist_add_boolean(nvl, "solid_state") != 0)
		return (ENOMEM);
	return (0);
}

static int
slice_attrs(const fake_slice_t *s, nvlist_t *nvl)
{
	const char *p = s->fs_path + strlen(s->fs_path);

	/* Only the slice number, from the sN suffix. */
	while (p > s->fs_path && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p > s->fs_path && p[-1] == 's' && *p != '\0' &&
	    nvlist_add_uint32(nvl, "index", (uint32_t)atoi(p)) != 0)
		return (ENOMEM);
	return (0);
}

/* The "attr" records of one media's drive, media or controller. */
static int
extra_attrs(int media, dm_desc_type_t which, nvlist_t *nvl)
{
	const fake_attr_t *a;
	const char *t;
	int i, rc;

	for (i = 0; i < state.st_nattrs; i++) {
		a = &state.st_attrs[i];
		if (a->fa_media != media || a->fa_which != which)
			continue;
		t = a->fa_type;
		if (strcmp(t, "boolean") == 0)
			rc = nvlist_add_boolean(nvl, a->fa_name);
		else if (strcmp(t, "boolean_value") == 0)
			rc = nvlist_add_boolean_value(nvl, a->fa_name,
			    atoi(a->fa_value) != 0);
		else if (strcmp(t, "uint32") == 0)
			rc = nvlist_add_uint32(nvl, a->fa_name,
			    (uint32_t)strtoul(a->fa_value, NULL, 0));
		else if (strcmp(t, "uint64") == 0)
			rc = nvlist_add_uint64(nvl, a->fa_name,
			    (uint64_t)strtoull(a->fa_value, NULL, 0));
		else if (strcmp(t, "int16") == 0)
			rc = nvlist_add_int16(nvl, a->fa_name,
			    (int16_t)atoi(a->fa_value));
		else
			rc = nvlist_add_string(nvl, a->fa_name, a->fa_value);
		if (rc != 0)
			return (ENOMEM);
	}
	return (0);
}

nvlist_t *
dm_get_attributes(dm_descriptor_t desc, int *errp)
{
	dm_desc_type_t type;
	int index;
	nvlist_t *nvl = NULL;

	*errp = 0;
	(void) pthread_mutex_lock(&lock);
	if ((*errp = decode_desc(desc, &type, &index)) != 0)
		goto out;
	if ((type == DM_MEDIA && state.st_media[index].fm_errno != 0) ||
	    (type == DM_SLICE && state.st_slices[index].fs_errno != 0)) {
		*errp = type == DM_MEDIA ? state.st_media[index].fm_errno :
		    state.st_slices[index].fs_errno;
		goto out;
	}
	if (nvlist_alloc(&nvl, NVATTRS, 0) != 0) {
		*errp = ENOMEM;
		nvl = NULL;
		goto out;
	}
	switch (type) {
	case DM_MEDIA:
		*errp = media_attrs(&state.st_media[index], nvl);
		break;
	case DM_DRIVE:
		*errp = drive_attrs(&state.st_media[index], nvl);
		break;
	case DM_CONTROLLER:
		if (nvlist_add_string(nvl, "ctype",
		    state.st_media[index].fm_ctype) != 0)
			*errp = ENOMEM;
		break;
	case DM_SLICE:
		*errp = slice_attrs(&state.st_slices[index], nvl);
		break;
	default:
		break;
	}
	if (*errp == 0 && type != DM_SLICE)
		*errp = extra_attrs(index, type, nvl);
	if (*errp != 0) {
		nvlist_free(nvl);
		nvl = NULL;
	}
out:
	(void) pthread_mutex_unlock(&lock);
	return (nvl);
}

/* The message template for a use, as entry.c dm_get_usage_string(). */
static const char *
usage_template(const char *by, const char *data)
{
	if (strcmp(by, DM_USE_MOUNT) == 0) {
		if (strcmp(data, "swap") == 0)
			return ("%s is currently used by swap. "
			    "Please see swap(1M).\n");
		return ("%s is currently mounted on %s. "
		    "Please see umount(1M).\n");
	}
	if (strcmp(by, DM_USE_VFSTAB) == 0)
		return ("%s is normally mounted on %s according to "
		    "/etc/vfstab. Please remove this entry to use this "
		    "device.\n");
	if (strcmp(by, DM_USE_FS) == 0)
		return ("%s contains a %s filesystem.\n");
	if (strcmp(by, DM_USE_VXVM) == 0)
		return ("%s is part of VxVM volume %s.\n");
	if (strcmp(by, DM_USE_LU) == 0)
		return ("%s is in use for live upgrade %s. "
		    "Please see ludelete(1M).\n");
	if (strcmp(by, DM_USE_DUMP) == 0)
		return ("%s is in use by %s. Please see dumpadm(1M).\n");
	if (strcmp(by, DM_USE_EXPORTED_ZPOOL) == 0)
		return ("%s is part of exported or potentially active ZFS pool "
		    "%s. Please see zpool(1M).\n");
	if (strcmp(by, DM_USE_ACTIVE_ZPOOL) == 0)
		return ("%s is part of active ZFS pool %s. "
		    "Please see zpool(1M).\n");
	if (strcmp(by, DM_USE_SPARE_ZPOOL) == 0)
		return ("%s is reserved as a hot spare for ZFS pool %s.  "
		    "Please see zpool(1M).\n");
	if (strcmp(by, DM_USE_L2CACHE_ZPOOL) == 0)
		return ("%s is in use as a cache device for ZFS pool %s.  "
		    "Please see zpool(1M).\n");
	return (NULL);
}

/* Whether caller `who' counts this use, as the switch in dm_inuse(). */
static int
who_cares(dm_who_type_t who, const char *by, const char *data)
{
	int fs = strcmp(by, DM_USE_FS) == 0;
	int exported = strcmp(by, DM_USE_EXPORTED_ZPOOL) == 0;

	switch (who) {
	case DM_WHO_MKFS:
		return (!fs && !exported && strcmp(by, DM_USE_LU) != 0);
	case DM_WHO_SWAP:
		if (fs || exported || strcmp(by, DM_USE_DUMP) == 0)
			return (0);
		if (strcmp(by, DM_USE_LU) == 0 && strcmp(data, "-") == 0)
			return (0);
		return (strcmp(by, DM_USE_VFSTAB) != 0 || data[0] != '\0');
	case DM_WHO_DUMP:
		if (strcmp(by, DM_USE_MOUNT) == 0 && strcmp(data, "swap") == 0)
			return (0);
		return (!fs && !exported && strcmp(by, DM_USE_DUMP) != 0);
	case DM_WHO_FORMAT:
	case DM_WHO_ZPOOL_FORCE:
		return (!fs && !exported);
	case DM_WHO_ZPOOL:
		return (1);
	case DM_WHO_ZPOOL_SPARE:
		return (strcmp(by, DM_USE_SPARE_ZPOOL) != 0);
	default:
		return (0);
	}
}

static int
append_usage(char **msg, const char *dname, const char *by, const char *data)
{
	const char *use = usage_template(by, data);
	size_t len0 = *msg != NULL ? strlen(*msg) : 0;
	int len1;
	char *p;

	if (use == NULL)
		return (0);
	len1 = snprintf(NULL, 0, use, dname, data);
	if (len1 < 0)
		return (EINVAL);
	if ((p = realloc(*msg, len0 + (size_t)len1 + 1)) == NULL)
		return (ENOMEM);
	*msg = p;
	(void) snprintf(p + len0, (size_t)len1 + 1, use, dname, data);
	return (0);
}

int
dm_inuse(char *dev_name, char **msg, dm_who_type_t who, int *errp)
{
	const fake_slice_t *s;
	int slice, i, found = 0;
	int zpool = who == DM_WHO_ZPOOL || who == DM_WHO_ZPOOL_FORCE ||
	    who == DM_WHO_ZPOOL_SPARE;

	*errp = 0;
	*msg = NULL;
	if (getenv("NOINUSE_CHECK") != NULL)
		return (0);
	if (dev_name == NULL || dev_name[0] == '\0')
		return (0);

	(void) pthread_mutex_lock(&lock);
	if ((*errp = refresh()) != 0)
		goto out;
	/* A name that is no slice is "not in use", as ENODEV in entry.c. */
	if ((slice = find_slice(&state, dev_name)) < 0)
		goto out;
	s = &state.st_slices[slice];
	if (s->fs_errno != 0) {
		*errp = s->fs_errno;
		goto out;
	}
	/* zpool callers learn of swap from swapctl(2) first, and only. */
	for (i = 0; zpool && i < state.st_nuses; i++) {
		if (state.st_uses[i].fu_slice == slice &&
		    state.st_uses[i].fu_swap) {
			if ((*errp = append_usage(msg, s->fs_path, DM_USE_MOUNT,
			    "swap")) == 0)
				found = 1;
			goto out;
		}
	}
	for (i = 0; i < state.st_nuses; i++) {
		const fake_use_t *u = &state.st_uses[i];

		if (u->fu_slice != slice ||
		    !who_cares(who, u->fu_by, u->fu_data))
			continue;
		if ((*errp = append_usage(msg, s->fs_path, u->fu_by,
		    u->fu_data)) != 0)
			break;
		found++;
	}
out:
	(void) pthread_mutex_unlock(&lock);
	if (*errp != 0 && *msg != NULL) {
		free(*msg);
		*msg = NULL;
		found = 0;
	}
	return (found);
}

/*
 * Not part of libdiskmgt: descriptor arrays and names handed out and not
 * freed yet, for tests of callers.
 */
long
fake_dm_outstanding(void)
{
	long n;

	(void) pthread_mutex_lock(&lock);
	n = outstanding;
	(void) pthread_mutex_unlock(&lock);
	return (n);
}
