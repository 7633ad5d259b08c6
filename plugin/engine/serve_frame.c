/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * serve_frame.c: the framing of `sdio serve` (serve.h): reading requests
 * from stdin and writing answers to stdout, within the limits of serve.h.
 *
 * Framing, both directions, binary safe.  A message is a header line and
 * N fields, each "LEN\n" and exactly LEN raw bytes.  A request's header
 * is "OP N\n"; a response's is "ok N SEQ\n" or "err N SEQ\n", SEQ being
 * the number of the request it answers (counted from 1, wrapping from
 * MAX_SEQ to 1), so that the client sees at once an answer lost,
 * repeated or added on the way.  N is the decimal count of fields; at
 * most MAX_FIELDS fields, MAX_FIELD bytes each.  A malformed message gets
 * one response, err [protocol, DESCRIPTION], and the server exits 1; EOF
 * between messages ends it with exit 0.  Requests are answered in order,
 * one response each, flushed at once; a stream request alone is answered
 * by any number of "part 1 SEQ\n" messages (resp_part), each flushed as
 * it is made, before its one ok or err.  plugin/sdtune/host/wire.py is
 * the client's side.
 */

#include "serve.h"

static struct {
	unsigned char	buf[IN_BUFSZ];
	size_t		pos;
	size_t		end;
} in;

static struct {
	char		buf[OUT_BUFSZ];
	size_t		len;
} out;

static unsigned long long	seq;	/* the request being answered */

/* -- responses --------------------------------------------------------- */

static void
resp_reset(resp_t *r)
{
	size_t i;

	for (i = 0; i < r->r_n; i++)
		free(r->r_f[i].f_data);
	r->r_n = 0;
	r->r_err = 0;
	r->r_oom = 0;
}

/* Adds a field, taking over data (malloc'd); NULL data is out of memory. */
void
resp_own(resp_t *r, char *data, size_t len)
{
	field_t *nf;
	size_t ncap;

	if (data == NULL) {
		r->r_oom = 1;
		return;
	}
	if (r->r_n == r->r_cap) {
		ncap = r->r_cap == 0 ? 16 : r->r_cap * 2;
		nf = realloc(r->r_f, ncap * sizeof (field_t));
		if (nf == NULL) {
			free(data);
			r->r_oom = 1;
			return;
		}
		r->r_f = nf;
		r->r_cap = ncap;
	}
	r->r_f[r->r_n].f_data = data;
	r->r_f[r->r_n].f_len = len;
	r->r_n++;
}

void
resp_mem(resp_t *r, const void *p, size_t len)
{
	char *d = malloc(len + 1);

	if (d != NULL) {
		(void) memcpy(d, p, len);
		d[len] = '\0';
	}
	resp_own(r, d, len);
}

void
resp_str(resp_t *r, const char *s)
{
	resp_mem(r, s, strlen(s));
}

void
resp_num(resp_t *r, long long v)
{
	char b[32];

	(void) snprintf(b, sizeof (b), "%lld", v);
	resp_str(r, b);
}

void
resp_unum(resp_t *r, unsigned long long v)
{
	char b[32];

	(void) snprintf(b, sizeof (b), "%llu", v);
	resp_str(r, b);
}

/* err [code, detail] (detail NULL: none). */
void
resp_fail(resp_t *r, const char *code, const char *detail)
{
	resp_reset(r);
	r->r_err = 1;
	resp_str(r, code);
	if (detail != NULL)
		resp_str(r, detail);
}

void
resp_failf(resp_t *r, const char *code, const char *fmt, ...)
{
	char b[512];
	va_list ap;

	va_start(ap, fmt);
	(void) vsnprintf(b, sizeof (b), fmt, ap);
	va_end(ap);
	resp_fail(r, code, b);
}

/* err [errno, stage, strerror(e), e] */
void
resp_errno(resp_t *r, const char *stage, int e)
{
	resp_fail(r, "errno", stage);
	resp_str(r, strerror(e));
	resp_num(r, e);
}

/* -- output ------------------------------------------------------------- */

/* All of p to stdout: 0, or -1 when a write fails. */
static int
out_try(const void *p, size_t len)
{
	const char *c = p;
	ssize_t n;

	while (len > 0) {
		n = write(STDOUT_FILENO, c, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return (-1);
		c += n;
		len -= (size_t)n;
	}
	return (0);
}

/* A failed write to stdout ends the server: nobody hears it any more. */
static void
out_write(const void *p, size_t len)
{
	if (out_try(p, len) != 0)
		_exit(1);
}

static void
out_flush(void)
{
	out_write(out.buf, out.len);
	out.len = 0;
}

static void
out_bytes(const void *p, size_t len)
{
	if (len > OUT_BUFSZ - out.len) {
		out_flush();
		if (len >= OUT_BUFSZ / 2) {
			out_write(p, len);
			return;
		}
	}
	(void) memcpy(out.buf + out.len, p, len);
	out.len += len;
}

static void
out_line(const char *word, size_t n)
{
	char b[MAX_HEADER + 32];
	int k;

	k = snprintf(b, sizeof (b), "%s%s%zu\n", word, word[0] ? " " : "", n);
	out_bytes(b, (size_t)k);
}

void
resp_send(resp_t *r)
{
	size_t i;

	char b[64];
	int k;

	if (r->r_oom)
		resp_fail(r, "nomem", "out of memory");
	k = snprintf(b, sizeof (b), "%s %zu %llu\n", r->r_err ? "err" : "ok",
	    r->r_n, seq);
	out_bytes(b, (size_t)k);
	for (i = 0; i < r->r_n; i++) {
		out_line("", r->r_f[i].f_len);
		out_bytes(r->r_f[i].f_data, r->r_f[i].f_len);
	}
	out_flush();
	resp_reset(r);
}

/*
 * One part of the answer to the stream request being answered: "part 1
 * SEQ", the bytes as its one field, flushed at once.  0, or -1 when the
 * write failed: the caller, which runs a command, kills it before the
 * server ends.
 */
int
resp_part(const void *p, size_t len)
{
	char b[MAX_HEADER + MAX_LEN_LINE + 2];
	int k;

	if (out.len > 0 && out_try(out.buf, out.len) != 0)
		return (-1);
	out.len = 0;
	k = snprintf(b, sizeof (b), "part 1 %llu\n%zu\n", seq, len);
	return (out_try(b, (size_t)k) != 0 || out_try(p, len) != 0 ? -1 : 0);
}

/* -- input -------------------------------------------------------------- */

/* Refills the input buffer: 1, or 0 at EOF; a read error is EOF too. */
static int
in_fill(void)
{
	ssize_t n;

	for (;;) {
		n = read(STDIN_FILENO, in.buf, sizeof (in.buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return (0);
		in.pos = 0;
		in.end = (size_t)n;
		return (1);
	}
}

/*
 * One line into b (without its newline), at most max bytes before the
 * newline.  Returns the length, -1 at EOF before any byte, -2 at EOF
 * within the line, -3 when it is too long.
 */
static ssize_t
in_line(char *b, size_t max)
{
	size_t n = 0;
	unsigned char c;

	for (;;) {
		if (in.pos == in.end && !in_fill())
			return (n == 0 ? -1 : -2);
		c = in.buf[in.pos++];
		if (c == '\n') {
			b[n] = '\0';
			return ((ssize_t)n);
		}
		if (n == max)
			return (-3);
		b[n++] = (char)c;
	}
}

/* Exactly len bytes into p: 0, or -1 at EOF. */
static int
in_exact(char *p, size_t len)
{
	size_t k;
	ssize_t n;

	k = in.end - in.pos;
	if (k > len)
		k = len;
	(void) memcpy(p, in.buf + in.pos, k);
	in.pos += k;
	p += k;
	len -= k;
	while (len > 0) {
		n = read(STDIN_FILENO, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return (-1);
		p += n;
		len -= (size_t)n;
	}
	return (0);
}

/* A decimal count, digits only, at most max: 0, or -1. */
static int
parse_count(const char *s, unsigned long max, size_t *out)
{
	unsigned long v = 0;

	if (*s == '\0')
		return (-1);
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return (-1);
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > max)
			return (-1);
	}
	*out = (size_t)v;
	return (0);
}

void
req_free(req_t *q)
{
	size_t i;

	for (i = 0; i < q->q_n; i++)
		free(q->q_f[i].f_data);
	q->q_n = 0;
}

/* Answers a malformed message and ends the server. */
static void
protocol_error(const char *what)
{
	resp_t r;

	(void) memset(&r, 0, sizeof (r));
	resp_fail(&r, "protocol", what);
	resp_send(&r);
	exit(1);
}

/* Reads one request: 1, or 0 at a clean EOF; exits when malformed. */
int
req_read(req_t *q)
{
	char line[MAX_HEADER + 1], *sp, *p;
	field_t *nf;
	size_t n, len, i, ncap;
	ssize_t k;

	k = in_line(line, MAX_HEADER);
	if (k == -1)
		return (0);
	if (++seq > MAX_SEQ)
		seq = 1;
	if (k == -2)
		protocol_error("end of input within a header");
	if (k == -3)
		protocol_error("header line too long");
	if ((sp = strchr(line, ' ')) == NULL || sp == line)
		protocol_error("malformed header: want 'WORD N'");
	*sp = '\0';
	for (p = line; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || *p == '_'))
			protocol_error("malformed header: bad word");
	if (parse_count(sp + 1, MAX_FIELDS, &n) != 0)
		protocol_error("malformed header: bad field count");
	(void) memcpy(q->q_op, line, (size_t)(sp - line) + 1);

	for (i = 0; i < n; i++) {
		k = in_line(line, MAX_LEN_LINE);
		if (k == -1 || k == -2)
			protocol_error("end of input within a message");
		if (k == -3 || parse_count(line, MAX_FIELD, &len) != 0)
			protocol_error("malformed field length");
		if (q->q_n == q->q_cap) {
			ncap = q->q_cap == 0 ? 16 : q->q_cap * 2;
			if ((nf = realloc(q->q_f, ncap * sizeof (field_t))) ==
			    NULL)
				protocol_error("out of memory");
			q->q_f = nf;
			q->q_cap = ncap;
		}
		if ((p = malloc(len + 1)) == NULL)
			protocol_error("out of memory");
		if (in_exact(p, len) != 0) {
			free(p);
			protocol_error("end of input within a field");
		}
		p[len] = '\0';
		q->q_f[q->q_n].f_data = p;
		q->q_f[q->q_n].f_len = len;
		q->q_n++;
	}
	return (1);
}

/* -- field helpers ------------------------------------------------------ */

/* Field i as a C string; err usage when it holds a NUL. */
const char *
fstr(req_t *q, size_t i, resp_t *r)
{
	field_t *f = &q->q_f[i];

	if (strlen(f->f_data) != f->f_len) {
		resp_failf(r, "usage", "field %zu of %s holds a NUL byte", i,
		    q->q_op);
		return (NULL);
	}
	return (f->f_data);
}

/* Field i as a decimal integer in [min, max]; err usage otherwise. */
int
fnum(req_t *q, size_t i, long long min, long long max, long long *v,
    resp_t *r)
{
	const char *s = q->q_f[i].f_data;
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	if (!((s[0] >= '0' && s[0] <= '9') || (s[0] == '-' &&
	    s[1] >= '0' && s[1] <= '9')) || end != s + q->q_f[i].f_len ||
	    errno != 0 || *v < min || *v > max) {
		resp_failf(r, "usage", "field %zu of %s: not a number in "
		    "[%lld, %lld]", i, q->q_op, min, max);
		return (-1);
	}
	return (0);
}
