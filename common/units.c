/*
 * units.c - parse the quantities people type ("1T" tokens, "$250k",
 * "30d") and format quantities for tables.  Parsing is strict: trailing
 * garbage, NaN, infinity and negative values are rejected so that nothing
 * non-finite ever reaches the planner or the output.
 *
 * It calls common.c (its messages).
 */
#include "common.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* strtod that accepts only a finite number covering the whole of s up to
 * *end; leading/trailing blanks are not allowed.  "nan"/"inf" rejected. */
static int parse_number(const char *s, double *out, const char **end)
{
	char *e;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	/* strtod accepts "nan", "inf" and hex floats; we want decimals only. */
	if (!isdigit((unsigned char)*s) && *s != '.' && *s != '-' && *s != '+')
		return -1;
	errno = 0;
	v = strtod(s, &e);
	if (e == s || errno == ERANGE || !isfinite(v))
		return -1;
	if (strncmp(s, "0x", 2) == 0 || strncmp(s, "0X", 2) == 0)
		return -1;
	*out = v;
	*end = e;
	return 0;
}

static int si_multiplier(const char *suffix, double *mult)
{
	if (suffix[0] == '\0') {
		*mult = 1;
		return 0;
	}
	if (suffix[1] != '\0')
		return -1;
	switch (suffix[0]) {
	case 'k': case 'K': *mult = 1e3; return 0;
	case 'M': *mult = 1e6; return 0;
	case 'B': case 'b': case 'G': case 'g': *mult = 1e9; return 0;
	case 'T': case 't': *mult = 1e12; return 0;
	case 'P': case 'p': *mult = 1e15; return 0;
	}
	return -1;
}

enum rc unit_parse_count(const char *s, double *out)
{
	const char *end;
	double v, mult;

	if (parse_number(s, &v, &end) || si_multiplier(end, &mult))
		return RC_USAGE;
	v *= mult;
	/* A count of tokens or bytes is whole things: 0.5 or 1e-300 of one
	 * would reach the planner as a job that needs no step at all. */
	if (!(v >= 1) || !(v <= UNIT_COUNT_MAX))
		return RC_USAGE;
	*out = v;
	return RC_OK;
}

/* Whether the commas of s (up to the decimal point or a suffix) separate
 * groups of three digits: "1,500,000" but not "1,5" or "15,00". */
static int commas_group_thousands(const char *s)
{
	const char *p = s;
	int digits = 0, seen_comma = 0;

	if (!strchr(s, ','))
		return 1;
	for (; *p && *p != '.' && (isdigit((unsigned char)*p) || *p == ','); p++) {
		if (*p != ',') {
			digits++;
			continue;
		}
		if (digits == 0 || digits > 3 || (seen_comma && digits != 3))
			return 0;
		seen_comma = 1;
		digits = 0;
	}
	/* a comma anywhere after the integer part, or a short last group */
	return digits == 3 && !strchr(p, ',');
}

enum rc unit_parse_usd(const char *s, double *out)
{
	char buf[64];
	size_t n = 0;
	const char *end;
	double v, mult;

	if (!s)
		return RC_USAGE;
	if (*s == '$')
		s++;
	/* Drop thousands separators ("1,500,000"); a comma anywhere else is
	 * more likely a decimal comma ("1,5M") than a typo to ignore. */
	if (!commas_group_thousands(s))
		return RC_USAGE;
	for (; *s && n + 1 < sizeof(buf); s++)
		if (*s != ',')
			buf[n++] = *s;
	if (*s)
		return RC_USAGE;
	buf[n] = '\0';
	if (parse_number(buf, &v, &end) || si_multiplier(end, &mult))
		return RC_USAGE;
	v *= mult;
	/* signbit: "-0" is no amount either */
	if (v < 0 || signbit(v) || !isfinite(v) || v > UNIT_USD_MAX)
		return RC_USAGE;
	*out = v;
	return RC_OK;
}

enum rc unit_parse_duration(const char *s, double *out_s)
{
	const char *end;
	double v, mult;

	if (parse_number(s, &v, &end))
		return RC_USAGE;
	if (end[0] == '\0' || strcmp(end, "s") == 0)
		mult = 1;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		mult = 60;
	else if (strcmp(end, "h") == 0)
		mult = 3600;
	else if (strcmp(end, "d") == 0)
		mult = 86400;
	else if (strcmp(end, "w") == 0)
		mult = 7 * 86400;
	else
		return RC_USAGE;
	v *= mult;
	if (!(v > 0) || !isfinite(v))
		return RC_USAGE;
	*out_s = v;
	return RC_OK;
}

enum rc unit_parse_int(const char *s, int *out)
{
	char *e;
	long v;

	if (!s || !isdigit((unsigned char)*s))
		return RC_USAGE;
	errno = 0;
	v = strtol(s, &e, 10);
	if (*e || errno == ERANGE || v > INT_MAX)
		return RC_USAGE;
	*out = (int)v;
	return RC_OK;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (Hinnant, "chrono-Compatible Low-Level Date Algorithms", days_from_civil). */
static long days_from_civil(long y, long m, long d)
{
	long era, yoe, doy, doe;

	y -= m <= 2;
	era = y / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

enum rc unit_parse_date(const char *s, long *days)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	long y, m, d;

	if (!s || strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return RC_USAGE;
	for (int i = 0; i < 10; i++)
		if (i != 4 && i != 7 && !isdigit((unsigned char)s[i]))
			return RC_USAGE;
	y = strtol(s, NULL, 10);
	m = strtol(s + 5, NULL, 10);
	d = strtol(s + 8, NULL, 10);
	if (y < 1970 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return RC_USAGE;
	if (m == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
		return RC_USAGE;
	*days = days_from_civil(y, m, d);
	return RC_OK;
}

char *unit_fmt_date(char *buf, size_t size, long days)
{
	/* Hinnant's civil_from_days, the inverse of days_from_civil. */
	long z = days + 719468, era = z / 146097, doe = z - era * 146097;
	long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	long y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	long mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1;
	long m = mp + (mp < 10 ? 3 : -9);

	snprintf(buf, size, "%04ld-%02ld-%02ld", y + (m <= 2), m, d);
	return buf;
}

enum rc unit_today(long *days)
{
	const char *env = getenv("GPUPLAN_NOW");
	time_t t;

	if (env && *env) {
		if (unit_parse_date(env, days) != RC_OK) {
			gp_error("GPUPLAN_NOW: expected a date YYYY-MM-DD, found '%s'", env);
			return RC_USAGE;
		}
		return RC_OK;
	}
	t = time(NULL);
	*days = (long)(t / 86400);
	return RC_OK;
}

enum rc unit_parse_double(const char *s, double *out)
{
	const char *end;
	double v;

	if (parse_number(s, &v, &end) || *end)
		return RC_USAGE;
	*out = v;
	return RC_OK;
}

char *unit_fmt_count(char *buf, size_t size, double v)
{
	static const char sfx[] = " kMBTP";
	int i = 0;

	if (!isfinite(v)) {
		snprintf(buf, size, "-");
		return buf;
	}
	while (fabs(v) >= 1000 && i < 5) {
		v /= 1000;
		i++;
	}
	if (i == 0)
		snprintf(buf, size, "%.4g", v);
	else
		snprintf(buf, size, "%.3g%c", v, sfx[i]);
	return buf;
}

char *unit_fmt_bytes(char *buf, size_t size, double b)
{
	if (!isfinite(b))
		snprintf(buf, size, "-");
	else if (fabs(b) >= 1e12 * UNIT_GIB) /* fixed point would not fit */
		snprintf(buf, size, "%.3g GiB", b / UNIT_GIB);
	else if (fabs(b) >= UNIT_GIB)
		snprintf(buf, size, "%.1f GiB", b / UNIT_GIB);
	else if (fabs(b) >= 1024.0 * 1024.0)
		snprintf(buf, size, "%.1f MiB", b / (1024.0 * 1024.0));
	else if (fabs(b) >= 1024.0)
		snprintf(buf, size, "%.1f KiB", b / 1024.0);
	else
		snprintf(buf, size, "%.0f B", b);
	return buf;
}

char *unit_fmt_duration(char *buf, size_t size, double s)
{
	if (!isfinite(s))
		snprintf(buf, size, "-");
	else if (fabs(s) >= 86400 * 365.0 * 1e12) /* fixed point would not fit */
		snprintf(buf, size, "%.3g y", s / (86400 * 365.0));
	else if (s >= 86400 * 365.0)
		snprintf(buf, size, "%.2f y", s / (86400 * 365.0));
	else if (s >= 86400)
		snprintf(buf, size, "%.1f d", s / 86400);
	else if (s >= 3600)
		snprintf(buf, size, "%.1f h", s / 3600);
	else if (s >= 60)
		snprintf(buf, size, "%.1f min", s / 60);
	else if (s >= 1)
		snprintf(buf, size, "%.2f s", s);
	else
		snprintf(buf, size, "%.1f ms", s * 1e3);
	return buf;
}

char *unit_fmt_usd(char *buf, size_t size, double usd)
{
	char digits[64];
	size_t n, out = 0, lead;

	if (!isfinite(usd)) {
		snprintf(buf, size, "-");
		return buf;
	}
	/* beyond what digits with commas read as: a cost is still a number */
	if (fabs(usd) >= 1e18) {
		snprintf(buf, size, "%s$%.3g", usd < 0 ? "-" : "", fabs(usd));
		return buf;
	}
	if (fabs(usd) < 100) {
		snprintf(buf, size, "$%.2f", usd);
		return buf;
	}
	snprintf(digits, sizeof(digits), "%.0f", fabs(usd));
	n = strlen(digits);
	lead = n % 3 ? n % 3 : 3;
	if (usd < 0 && out + 1 < size)
		buf[out++] = '-';
	if (out + 1 < size)
		buf[out++] = '$';
	for (size_t i = 0; i < n && out + 1 < size; i++) {
		if (i && (i - lead) % 3 == 0 && i >= lead && out + 1 < size)
			buf[out++] = ',';
		buf[out++] = digits[i];
	}
	buf[out] = '\0';
	return buf;
}

char *unit_fmt_exact(char *buf, size_t size, double v)
{
	if (!isfinite(v))
		v = 0;
	if (v == floor(v) && fabs(v) < 1e15) {
		snprintf(buf, size, "%.0f", v);
	} else {
		snprintf(buf, size, "%.15g", v);
		if (strtod(buf, NULL) != v)
			snprintf(buf, size, "%.17g", v);
	}
	return buf;
}
