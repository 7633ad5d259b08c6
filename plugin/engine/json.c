/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * json.c: JSON string escaping (RFC 8259), hex strings and numbers.
 */

#include "sdio.h"

#include <stdio.h>

#include "json.h"

void
json_string(FILE *f, const char *s)
{
	const unsigned char *p;

	(void) putc('"', f);
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			(void) fputs("\\\"", f);
			break;
		case '\\':
			(void) fputs("\\\\", f);
			break;
		case '\n':
			(void) fputs("\\n", f);
			break;
		case '\t':
			(void) fputs("\\t", f);
			break;
		default:
			/*
			 * Bytes >= 0x80 pass through: valid JSON when the
			 * text (a device path) is UTF-8, as illumos paths are.
			 */
			if (*p < 0x20)
				(void) fprintf(f, "\\u%04x", *p);
			else
				(void) putc(*p, f);
			break;
		}
	}
	(void) putc('"', f);
}

void
json_hex(FILE *f, const uint8_t *b, size_t n)
{
	size_t i;

	(void) putc('"', f);
	for (i = 0; i < n; i++)
		(void) fprintf(f, "%02x", b[i]);
	(void) putc('"', f);
}

/*
 * A number with prec decimals.  Finite numbers only: JSON has no NaN or
 * infinity, and none can arise from the engine's counts.
 */
void
json_double(FILE *f, double d, int prec)
{
	if (d != d || d > 1e300 || d < -1e300)
		d = 0.0;
	(void) fprintf(f, "%.*f", prec, d);
}
