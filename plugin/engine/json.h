/*
 * This file and its contents are supplied under the terms of the
 * Common Development and Distribution License ("CDDL"), version 1.0.
 * You may only use this file in accordance with the terms of version
 * 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
 *
 * Copyright 2026 the sdtune authors.
 */

/*
 * json.h: the few JSON writing helpers sdio needs (strings, hex).
 */

#ifndef	_SDIO_JSON_H
#define	_SDIO_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

extern void json_string(FILE *, const char *);
extern void json_hex(FILE *, const uint8_t *, size_t);
extern void json_double(FILE *, double, int);

#endif	/* _SDIO_JSON_H */
