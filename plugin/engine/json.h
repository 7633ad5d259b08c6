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
