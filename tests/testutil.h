/*
 * testutil.h - what every cmocka runner shares: cmocka's headers in the
 * order it needs, and assert_near() since cmocka 1.1.5 has no double
 * compare.
 */
#ifndef GPUPLAN_TESTUTIL_H
#define GPUPLAN_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

/* Fails unless |a - b| <= rel * max(|a|, |b|) (or both are zero). */
#define assert_near(a, b, rel) \
	assert_near_impl((double)(a), (double)(b), (double)(rel), #a, #b, __FILE__, __LINE__)

static inline void assert_near_impl(double a, double b, double rel,
				    const char *sa, const char *sb,
				    const char *file, int line)
{
	double scale = fabs(a) > fabs(b) ? fabs(a) : fabs(b);

	if (isfinite(a) && isfinite(b) && fabs(a - b) <= rel * scale)
		return;
	print_error("%s = %.10g is not within %.3g (relative) of %s = %.10g\n",
		    sa, a, rel, sb, b);
	_fail(file, line);
}

/* Path to the repository's data/ directory (tests run from the repo root). */
#define TEST_DATA_DIR "data"

#endif
