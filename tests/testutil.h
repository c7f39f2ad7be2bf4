/*
 * testutil.h - what every cmocka runner shares: cmocka's headers in the
 * order it needs, assert_near() since cmocka 1.1.5 has no double
 * compare, and a capture of what a call writes to stderr.
 */
#ifndef GPUPLAN_TESTUTIL_H
#define GPUPLAN_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

/* stderr sent to a temporary file between test_stderr_begin() and
 * test_stderr_end(), which puts it back and returns what was written
 * (NUL-terminated; the caller frees it). */
struct test_stderr {
	FILE *f;
	int saved;
};

static inline void test_stderr_begin(struct test_stderr *c)
{
	fflush(stderr);
	c->f = tmpfile();
	assert_non_null(c->f);
	c->saved = dup(STDERR_FILENO);
	assert_true(c->saved >= 0);
	assert_true(dup2(fileno(c->f), STDERR_FILENO) >= 0);
}

static inline char *test_stderr_end(struct test_stderr *c)
{
	long n;
	char *s;

	fflush(stderr);
	assert_true(dup2(c->saved, STDERR_FILENO) >= 0);
	close(c->saved);
	assert_int_equal(fseek(c->f, 0, SEEK_END), 0);
	n = ftell(c->f);
	assert_true(n >= 0);
	rewind(c->f);
	s = calloc((size_t)n + 1, 1);
	assert_non_null(s);
	assert_int_equal(fread(s, 1, (size_t)n, c->f), (size_t)n);
	fclose(c->f);
	return s;
}

/* Path to the repository's data/ directory (tests run from the repo root). */
#define TEST_DATA_DIR "data"

#endif
