/*
 * test_progress.c - the stderr progress line (common/progress.c): what it
 * says, that it stays silent when disabled or before its delay, and that
 * it erases what it drew.
 */
#define _GNU_SOURCE     /* memmem */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "progress.h"

static void sleep_s(double s)
{
	struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	nanosleep(&t, NULL);
}

/* Everything written to f so far, NUL-terminated, in buf[size]. */
static size_t slurp(FILE *f, char *buf, size_t size)
{
	size_t n;

	fflush(f);
	rewind(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	return n;
}

static void test_gp_progress_format_parts(void **state)
{
	char b[128];

	(void)state;
	/* 3 of 10 is 30%. */
	assert_string_equal(gp_progress_format(b, sizeof(b), "plan", 3, 10, "x", 1.5),
			    "plan: 3/10 (30%), x, 1.5 s");
	assert_string_equal(gp_progress_format(b, sizeof(b), "plan", 0, 0, NULL, 1.5),
			    "plan: 1.5 s");
	assert_string_equal(gp_progress_format(b, sizeof(b), "scaling", 0, 0, "512 GPUs", 0.25),
			    "scaling: 512 GPUs, 0.2 s");
	/* More done than total (a caller's slip) never shows over 100%. */
	assert_string_equal(gp_progress_format(b, sizeof(b), "a", 12, 10, "", 2),
			    "a: 12/10 (100%), 2.0 s");
	/* A short buffer is truncated, never overrun. */
	gp_progress_format(b, 8, "a long name", 1, 2, "detail", 1);
	assert_int_equal(strlen(b), 7);
}

static void test_gp_progress_disabled_draws_nothing(void **state)
{
	struct gp_progress_opts o;
	struct gp_progress *p;
	FILE *f = tmpfile();
	char buf[256];

	(void)state;
	assert_non_null(f);
	gp_progress_opts_init(&o);
	o.out = f;
	o.enabled = 0;
	o.delay_s = 0;
	p = gp_progress_start_opts(&o, "work", 4);
	assert_non_null(p);
	gp_progress_update(p, 2, "half");
	sleep_s(0.05);
	gp_progress_done(p);
	assert_int_equal(slurp(f, buf, sizeof(buf)), 0);
	fclose(f);
}

static void test_gp_progress_silent_before_delay(void **state)
{
	struct gp_progress_opts o;
	struct gp_progress *p;
	FILE *f = tmpfile();
	char buf[256];

	(void)state;
	assert_non_null(f);
	gp_progress_opts_init(&o);
	o.out = f;
	o.enabled = 1;
	o.delay_s = 30;
	p = gp_progress_start_opts(&o, "work", 4);
	gp_progress_update(p, 1, NULL);
	sleep_s(0.05);
	/* Done long before the delay: quick work never flickers. */
	gp_progress_done(p);
	assert_int_equal(slurp(f, buf, sizeof(buf)), 0);
	fclose(f);
}

static void test_gp_progress_draws_then_erases(void **state)
{
	struct gp_progress_opts o;
	struct gp_progress *p;
	FILE *f = tmpfile();
	char buf[4096];
	size_t n;

	(void)state;
	assert_non_null(f);
	gp_progress_opts_init(&o);
	o.out = f;
	o.enabled = 1;
	o.delay_s = 0;
	o.interval_s = 0.01;
	p = gp_progress_start_opts(&o, "work", 4);
	gp_progress_update(p, 3, "three");
	sleep_s(0.1);
	gp_progress_done(p);
	n = slurp(f, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(buf[0], '\r');
	assert_non_null(strstr(buf, "work: 3/4 (75%), three, "));
	/* The last thing written erases the line for what follows. */
	assert_true(n >= 4);
	assert_memory_equal(buf + n - 4, "\r\033[K", 4);
	fclose(f);
}

/* A message logged while the line is up erases it first, so the message
 * starts at column 0 instead of after the progress text. */
static void test_gp_progress_steps_aside_for_messages(void **state)
{
	struct gp_progress_opts o;
	struct gp_progress *p;
	FILE *f = tmpfile();
	char buf[4096];
	size_t n;

	(void)state;
	assert_non_null(f);
	gp_progress_opts_init(&o);
	o.out = f;
	o.enabled = 1;
	o.delay_s = 0;
	o.interval_s = 10; /* no redraw during the test */
	p = gp_progress_start_opts(&o, "work", 0);
	n = slurp(f, buf, sizeof(buf));
	assert_non_null(strstr(buf, "work: "));
	/* a draw is "\r" then the line then "\033[K"; an erase is "\r\033[K"
	 * alone.  (The drawer may draw the line again right after the
	 * message when its thread starts late, so the erase need not be
	 * last.) */
	assert_null(memmem(buf, n, "\r\033[K", 4));
	gp_error("a message while the line is drawn");
	n = slurp(f, buf, sizeof(buf));
	assert_non_null(memmem(buf, n, "\r\033[K", 4));
	gp_progress_done(p);
	fclose(f);
}

static void test_gp_progress_opts_init_quiet_and_env(void **state)
{
	struct gp_progress_opts o;

	(void)state;
	gp_log_quiet(1);
	gp_progress_opts_init(&o);
	assert_int_equal(o.enabled, 0);
	gp_log_quiet(0);

	setenv("GPUPLAN_PROGRESS_DELAY", "0.25", 1);
	gp_progress_opts_init(&o);
	assert_near(o.delay_s, 0.25, 1e-12);
	setenv("GPUPLAN_PROGRESS_DELAY", "soon", 1);
	gp_progress_opts_init(&o);
	assert_near(o.delay_s, GP_PROGRESS_DELAY_S, 1e-12);
	setenv("GPUPLAN_PROGRESS_DELAY", "-1", 1);
	gp_progress_opts_init(&o);
	assert_near(o.delay_s, GP_PROGRESS_DELAY_S, 1e-12);
	unsetenv("GPUPLAN_PROGRESS_DELAY");
	assert_near(o.interval_s, GP_PROGRESS_INTERVAL_S, 1e-12);
}

static void test_gp_progress_done_accepts_null(void **state)
{
	(void)state;
	gp_progress_update(NULL, 1, "x");
	gp_progress_done(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gp_progress_format_parts),
		cmocka_unit_test(test_gp_progress_disabled_draws_nothing),
		cmocka_unit_test(test_gp_progress_silent_before_delay),
		cmocka_unit_test(test_gp_progress_draws_then_erases),
		cmocka_unit_test(test_gp_progress_steps_aside_for_messages),
		cmocka_unit_test(test_gp_progress_opts_init_quiet_and_env),
		cmocka_unit_test(test_gp_progress_done_accepts_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
