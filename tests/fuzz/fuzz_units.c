/*
 * fuzz_units.c - libFuzzer target for the unit parsers: any byte string
 * either parses to a finite, in-range value or is rejected; formatting any
 * parsed value never prints nan or inf.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	char buf[64];
	double v;
	int i;

	memcpy(s, data, size);
	s[size] = '\0';
	if (unit_parse_count(s, &v) == RC_OK && !(v > 0 && isfinite(v)))
		abort();
	if (unit_parse_usd(s, &v) == RC_OK) {
		if (!(v >= 0 && isfinite(v)))
			abort();
		if (strstr(unit_fmt_usd(buf, sizeof(buf), v), "nan"))
			abort();
	}
	if (unit_parse_duration(s, &v) == RC_OK && !(v > 0 && isfinite(v)))
		abort();
	if (unit_parse_int(s, &i) == RC_OK && i < 0)
		abort();
	if (unit_parse_double(s, &v) == RC_OK && !isfinite(v))
		abort();
	free(s);
	return 0;
}
