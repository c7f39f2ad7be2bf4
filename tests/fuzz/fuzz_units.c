/*
 * fuzz_units.c - libFuzzer target for the unit parsers: any byte string
 * either parses to a finite, in-range value or is rejected; formatting any
 * parsed value never prints nan or inf, and a value written back exactly
 * (unit_fmt_exact, unit_fmt_date) reads as the same value.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	char buf[64];
	double v;
	int i;

	memcpy(s, data, size);
	s[size] = '\0';
	int accepted = 0;
	long days, days2;
	double w;

	if (unit_parse_count(s, &v) == RC_OK) {
		if (!(v > 0 && isfinite(v)))
			abort();
		/* written back exactly, it reads as the same count */
		if (unit_parse_count(unit_fmt_exact(buf, sizeof(buf), v), &w) != RC_OK || w != v)
			abort();
		accepted = 1;
	}
	if (unit_parse_usd(s, &v) == RC_OK) {
		if (!(v >= 0 && isfinite(v)))
			abort();
		if (strstr(unit_fmt_usd(buf, sizeof(buf), v), "nan"))
			abort();
		if (unit_parse_usd(unit_fmt_exact(buf, sizeof(buf), v), &w) != RC_OK || w != v)
			abort();
		accepted = 1;
	}
	if (unit_parse_duration(s, &v) == RC_OK) {
		if (!(v > 0 && isfinite(v)))
			abort();
		if (unit_parse_duration(unit_fmt_exact(buf, sizeof(buf), v), &w) != RC_OK || w != v)
			abort();
		accepted = 1;
	}
	if (unit_parse_int(s, &i) == RC_OK) {
		if (i < 0)
			abort();
		accepted = 1;
	}
	if (unit_parse_double(s, &v) == RC_OK) {
		if (!isfinite(v))
			abort();
		if (unit_parse_double(unit_fmt_exact(buf, sizeof(buf), v), &w) != RC_OK || w != v)
			abort();
		accepted = 1;
	}
	if (unit_parse_date(s, &days) == RC_OK) {
		if (unit_parse_date(unit_fmt_date(buf, sizeof(buf), days), &days2) != RC_OK ||
		    days2 != days)
			abort();
		accepted = 1;
	}
	fuzz_count("units", accepted ? FUZZ_ROUND_TRIPPED : FUZZ_REFUSED);
	free(s);
	return 0;
}
