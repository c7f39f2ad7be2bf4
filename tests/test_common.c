/* test_common.c - units parsing and formatting, status codes, strings. */
#include "testutil.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static void test_unit_parse_count_suffixes(void **state)
{
	double v;

	(void)state;
	assert_int_equal(unit_parse_count("1T", &v), RC_OK);
	assert_near(v, 1e12, 1e-15);
	assert_int_equal(unit_parse_count("300B", &v), RC_OK);
	assert_near(v, 3e11, 1e-15);
	assert_int_equal(unit_parse_count("2.5e12", &v), RC_OK);
	assert_near(v, 2.5e12, 1e-15);
	assert_int_equal(unit_parse_count("1.5M", &v), RC_OK);
	assert_near(v, 1.5e6, 1e-15);
	assert_int_equal(unit_parse_count("250k", &v), RC_OK);
	assert_near(v, 2.5e5, 1e-15);
}

static void test_unit_parse_count_rejects(void **state)
{
	double v = 42;

	(void)state;
	assert_int_equal(unit_parse_count("", &v), RC_USAGE);
	assert_int_equal(unit_parse_count("abc", &v), RC_USAGE);
	assert_int_equal(unit_parse_count("1X", &v), RC_USAGE);
	assert_int_equal(unit_parse_count("1m", &v), RC_USAGE); /* milli or mega? */
	assert_int_equal(unit_parse_count("-5", &v), RC_USAGE);
	assert_int_equal(unit_parse_count("0", &v), RC_USAGE);
	assert_int_equal(unit_parse_count("nan", &v), RC_USAGE);
	/* beyond UNIT_COUNT_MAX a plan's cost no longer prints as a number */
	assert_int_equal(unit_parse_count("1e27", &v), RC_USAGE);
	assert_int_equal(unit_parse_count("1001P", &v), RC_USAGE);
	assert_int_equal(unit_parse_count("inf", &v), RC_USAGE);
	assert_int_equal(unit_parse_count("1e999", &v), RC_USAGE);
	assert_int_equal(unit_parse_count("0x10", &v), RC_USAGE);
	assert_int_equal(unit_parse_count(" 5", &v), RC_USAGE);
	assert_int_equal(unit_parse_count("0.5", &v), RC_USAGE); /* not a whole token */
	assert_int_equal(unit_parse_count("1e-300", &v), RC_USAGE);
	assert_near(v, 42, 0); /* untouched on failure */
	assert_int_equal(unit_parse_count("1000P", &v), RC_OK);
	assert_near(v, UNIT_COUNT_MAX, 1e-15);
}

static void test_unit_parse_usd_forms(void **state)
{
	double v;

	(void)state;
	assert_int_equal(unit_parse_usd("$20000", &v), RC_OK);
	assert_near(v, 20000, 1e-15);
	assert_int_equal(unit_parse_usd("250k", &v), RC_OK);
	assert_near(v, 250000, 1e-15);
	assert_int_equal(unit_parse_usd("$1,500,000", &v), RC_OK);
	assert_near(v, 1.5e6, 1e-15);
	assert_int_equal(unit_parse_usd("1.5M", &v), RC_OK);
	assert_near(v, 1.5e6, 1e-15);
	assert_int_equal(unit_parse_usd("0", &v), RC_OK);
	assert_true(v == 0);
	assert_int_equal(unit_parse_usd("-1", &v), RC_USAGE);
	assert_int_equal(unit_parse_usd("-0", &v), RC_USAGE);
	assert_int_equal(unit_parse_usd("$", &v), RC_USAGE);
	assert_int_equal(unit_parse_usd("12 dollars", &v), RC_USAGE);
	assert_int_equal(unit_parse_usd("1,000.50", &v), RC_OK);
	assert_near(v, 1000.5, 1e-15);
	assert_int_equal(unit_parse_usd("$250,000k", &v), RC_OK);
	assert_near(v, 2.5e8, 1e-15);
	/* a decimal comma, or commas not grouping thousands */
	assert_int_equal(unit_parse_usd("1,5M", &v), RC_USAGE);
	assert_int_equal(unit_parse_usd("15,00", &v), RC_USAGE);
	assert_int_equal(unit_parse_usd(",500", &v), RC_USAGE);
	assert_int_equal(unit_parse_usd("1,500,00", &v), RC_USAGE);
	assert_int_equal(unit_parse_usd("1000,000", &v), RC_USAGE);
	assert_int_equal(unit_parse_usd("1.500,00", &v), RC_USAGE);
}

static void test_unit_parse_date_days(void **state)
{
	static const char *const bad[] = { "", "2026-12-4", "2026/12/04", "2026-13-01",
					   "2026-02-29", "1969-12-31", "2026-12-04x", "12-04-2026",
					   "2026-04-31", "2026-00-10" };
	char buf[16];
	long d;

	(void)state;
	assert_int_equal(unit_parse_date("1970-01-01", &d), RC_OK);
	assert_int_equal(d, 0);
	/* 2026-12-04: 56 years of days since 1970 (14 leap days) to 2026-01-01,
	 * 20454 days, then 337 days of 2026 before December 4th: 20791. */
	assert_int_equal(unit_parse_date("2026-12-04", &d), RC_OK);
	assert_int_equal(d, 20791);
	/* 2024-12-31 is 703 days earlier (2025 has 365, and 338 of 2026). */
	assert_int_equal(unit_parse_date("2024-12-31", &d), RC_OK);
	assert_int_equal(20791 - d, 703);
	assert_int_equal(unit_parse_date("2024-02-29", &d), RC_OK);
	assert_string_equal(unit_fmt_date(buf, sizeof(buf), d), "2024-02-29");
	assert_int_equal(unit_parse_date("2000-02-29", &d), RC_OK);
	for (long i = 0; i < 30000; i += 37)
	{
		assert_int_equal(unit_parse_date(unit_fmt_date(buf, sizeof(buf), i), &d), RC_OK);
		assert_int_equal(d, i);
	}
	for (size_t i = 0; i < GP_ARRAY_LEN(bad); i++)
		assert_int_equal(unit_parse_date(bad[i], &d), RC_USAGE);
	assert_int_equal(unit_parse_date(NULL, &d), RC_USAGE);
}

static void test_unit_today_env(void **state)
{
	long d;

	(void)state;
	setenv("GPUPLAN_NOW", "2026-12-04", 1);
	assert_int_equal(unit_today(&d), RC_OK);
	assert_int_equal(d, 20791);
	setenv("GPUPLAN_NOW", "yesterday", 1);
	assert_int_equal(unit_today(&d), RC_USAGE);
	unsetenv("GPUPLAN_NOW");
	/* The clock: after this code was written. */
	assert_int_equal(unit_today(&d), RC_OK);
	assert_true(d > 19000);
}

static void test_unit_parse_duration_units(void **state)
{
	double s;

	(void)state;
	assert_int_equal(unit_parse_duration("30d", &s), RC_OK);
	assert_near(s, 30 * 86400.0, 1e-15);
	assert_int_equal(unit_parse_duration("72h", &s), RC_OK);
	assert_near(s, 72 * 3600.0, 1e-15);
	assert_int_equal(unit_parse_duration("90m", &s), RC_OK);
	assert_near(s, 5400, 1e-15);
	assert_int_equal(unit_parse_duration("2w", &s), RC_OK);
	assert_near(s, 14 * 86400.0, 1e-15);
	assert_int_equal(unit_parse_duration("3600", &s), RC_OK);
	assert_near(s, 3600, 1e-15);
	assert_int_equal(unit_parse_duration("3y", &s), RC_USAGE);
	assert_int_equal(unit_parse_duration("0d", &s), RC_USAGE);
}

static void test_unit_parse_int_range(void **state)
{
	int v;

	(void)state;
	assert_int_equal(unit_parse_int("8", &v), RC_OK);
	assert_int_equal(v, 8);
	assert_int_equal(unit_parse_int("-8", &v), RC_USAGE);
	assert_int_equal(unit_parse_int("8x", &v), RC_USAGE);
	assert_int_equal(unit_parse_int("99999999999", &v), RC_USAGE);
}

static void test_unit_fmt_never_prints_nan(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(unit_fmt_usd(buf, sizeof(buf), NAN), "-");
	assert_string_equal(unit_fmt_count(buf, sizeof(buf), INFINITY), "-");
	assert_string_equal(unit_fmt_bytes(buf, sizeof(buf), NAN), "-");
	assert_string_equal(unit_fmt_duration(buf, sizeof(buf), -INFINITY), "-");
}

static void test_unit_fmt_values(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(unit_fmt_usd(buf, sizeof(buf), 1234567.4), "$1,234,567");
	assert_string_equal(unit_fmt_usd(buf, sizeof(buf), 123), "$123");
	assert_string_equal(unit_fmt_usd(buf, sizeof(buf), 12.5), "$12.50");
	assert_string_equal(unit_fmt_usd(buf, sizeof(buf), 100000), "$100,000");
	assert_string_equal(unit_fmt_count(buf, sizeof(buf), 1e12), "1T");
	assert_string_equal(unit_fmt_bytes(buf, sizeof(buf), 80.0 * UNIT_GIB), "80.0 GiB");
	assert_string_equal(unit_fmt_duration(buf, sizeof(buf), 86400 * 3), "3.0 d");
}

static void test_unit_fmt_exact_round_trips(void **state)
{
	const double v[] = { 0.1, 1.0 / 3.0, 2.5e12, 55.04, 1e300, -7.25, 3 };
	char buf[40];

	(void)state;
	for (size_t i = 0; i < GP_ARRAY_LEN(v); i++)
		assert_true(strtod(unit_fmt_exact(buf, sizeof(buf), v[i]), NULL) == v[i]);
	assert_string_equal(unit_fmt_exact(buf, sizeof(buf), 3), "3");
	assert_string_equal(unit_fmt_exact(buf, sizeof(buf), 0.1), "0.1");
	assert_string_equal(unit_fmt_exact(buf, sizeof(buf), NAN), "0");
}

static void test_gp_write_file_atomic_replaces(void **state)
{
	char dir[] = "/tmp/gpuplan-test-common-XXXXXX", path[128], *data;
	size_t len;
	struct stat st;
	mode_t old_mask;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f.json", dir);
	old_mask = umask(022);
	assert_int_equal(gp_write_file_atomic(path, "old\n", 4), RC_OK);
	assert_int_equal(gp_write_file_atomic(path, "new!\n", 5), RC_OK);
	umask(old_mask);
	assert_int_equal(gp_read_file(path, &data, &len), RC_OK);
	assert_int_equal(len, 5);
	assert_string_equal(data, "new!\n");
	free(data);
	/* creat()'s mode under umask 022, not mkstemp's 0600 */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* A directory that does not exist: an error, nothing left behind. */
	snprintf(path, sizeof(path), "%s/missing/f.json", dir);
	assert_int_equal(gp_write_file_atomic(path, "x", 1), RC_ERR);
	/* Reading a path that does not exist, or a directory: bad input. */
	assert_int_equal(gp_read_file(path, &data, &len), RC_INPUT);
	assert_null(data);
	assert_int_equal(gp_read_file(dir, &data, &len), RC_INPUT);
	assert_null(data);
	snprintf(path, sizeof(path), "%s/f.json", dir);
	unlink(path);
	assert_int_equal(rmdir(dir), 0); /* empty: no temporary file was left */
}

static void test_rc_exit_code_documented(void **state)
{
	(void)state;
	assert_int_equal(rc_exit_code(RC_OK), 0);
	assert_int_equal(rc_exit_code(RC_ERR), 1);
	assert_int_equal(rc_exit_code(RC_INPUT), 2);
	assert_int_equal(rc_exit_code(RC_USAGE), 2);
	assert_int_equal(rc_exit_code(RC_INFEASIBLE), 3);
	assert_int_equal(rc_exit_code(RC_DEVICE), 4);
	assert_string_equal(rc_str(RC_INPUT), "bad input");
}

static void test_gp_strlcpy_truncates(void **state)
{
	char buf[4];

	(void)state;
	assert_int_equal(gp_strlcpy(buf, "abc", sizeof(buf)), 0);
	assert_string_equal(buf, "abc");
	assert_int_equal(gp_strlcpy(buf, "abcd", sizeof(buf)), -1);
	assert_string_equal(buf, "abc");
	assert_true(gp_streq_nocase("H100", "h100"));
	assert_false(gp_streq_nocase("H100", "h1000"));
	assert_false(gp_streq_nocase(NULL, "x"));
}

/* Levenshtein's textbook pair: kitten -> sitting is 3 edits (two
 * substitutions, one insertion); folding names makes case, '_' and ' '
 * free; beyond 64 characters the strings are cut, so they differ by the
 * cut part only. */
/* gp_parallel_for: every index once, in contiguous parts, as many as
 * threads and min_part allow, on threads other than the caller's. */
struct pf_seen {
	pthread_mutex_t lock;
	int hits[1000];
	int parts;
	int other_threads;
	pthread_t caller;
};

static void pf_mark(void *ctx, long begin, long end)
{
	struct pf_seen *s = ctx;

	pthread_mutex_lock(&s->lock);
	s->parts++;
	if (!pthread_equal(pthread_self(), s->caller))
		s->other_threads++;
	pthread_mutex_unlock(&s->lock);
	for (long i = begin; i < end; i++)
		s->hits[i]++;
}

static void test_gp_parallel_for_parts(void **state)
{
	struct {
		long n, min_part;
		int threads, parts;
	} cases[] = {
		{ 1000, 1, 4, 4 },     /* four parts, three on new threads */
		{ 1000, 300, 8, 3 },   /* 1000 / 300: three parts of >= 300 */
		{ 1000, 2000, 8, 1 },  /* below one min_part: the caller alone */
		{ 7, 1, 16, 7 },       /* no more parts than indices */
		{ 1000, 1, 0, 1 },     /* threads < 1 counts as one */
		{ 0, 1, 4, 0 },        /* nothing to do: fn is not called */
	};

	(void)state;
	assert_true(gp_cpu_count() >= 1);
	for (size_t c = 0; c < GP_ARRAY_LEN(cases); c++) {
		struct pf_seen s;

		memset(&s, 0, sizeof(s));
		pthread_mutex_init(&s.lock, NULL);
		s.caller = pthread_self();
		gp_parallel_for(cases[c].n, cases[c].threads, cases[c].min_part, pf_mark, &s);
		assert_int_equal(s.parts, cases[c].parts);
		assert_int_equal(s.other_threads, cases[c].parts > 1 ? cases[c].parts - 1 : 0);
		for (long i = 0; i < cases[c].n; i++)
			assert_int_equal(s.hits[i], 1);
		pthread_mutex_destroy(&s.lock);
	}
}

static void test_gp_edit_distance(void **state)
{
	char a[100], b[100];

	(void)state;
	assert_int_equal(gp_edit_distance("kitten", 6, "sitting", 7, NULL), 3);
	assert_int_equal(gp_edit_distance("", 0, "abc", 3, NULL), 3);
	assert_int_equal(gp_edit_distance("H100", 4, "h100", 4, NULL), 1);
	assert_int_equal(gp_edit_distance("H100", 4, "h100", 4, gp_fold_name), 0);
	assert_int_equal(gp_edit_distance("rtx_4090", 8, "RTX-4090", 8, gp_fold_name), 0);
	memset(a, 'x', sizeof(a));
	memset(b, 'x', sizeof(b));
	b[80] = 'y';
	assert_int_equal(gp_edit_distance(a, 100, b, 100, NULL), 0);
	b[10] = 'y';
	assert_int_equal(gp_edit_distance(a, 100, b, 100, NULL), 1);
	/* a third of the name, at least 2 */
	assert_int_equal(gp_suggest_limit("gpt3"), 2);
	assert_int_equal(gp_suggest_limit("llama3-70b-instruct"), 6);
}

/* Runs script with sh and returns what the one word the quoted payload
 * makes prints; a payload that escaped its quotes would run touch. */
static void shell_echo(const char *payload, char *out, size_t size)
{
	char *q = gp_shell_quote(payload);
	char cmd[4096];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd), "cd \"$(mktemp -d)\" && printf '%%s' %s; ls", q);
	free(q);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, size - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
}

/* A symlink is followed (its target replaced, the link kept, a relative
 * link read from its own directory), a FIFO written in place. */
static void test_gp_write_file_atomic_links_and_fifos(void **state)
{
	char dir[] = "/tmp/gpuplan-test-common-XXXXXX", path[160], target[160], link[160];
	char got[16] = "";
	struct stat st;
	char *data;
	size_t len;
	pid_t pid;
	int status;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(target, sizeof(target), "%s/sub", dir);
	assert_int_equal(mkdir(target, 0755), 0);
	snprintf(target, sizeof(target), "%s/sub/real.csv", dir);
	snprintf(link, sizeof(link), "%s/link.csv", dir);
	assert_int_equal(gp_write_file_atomic(target, "old\n", 4), RC_OK);
	assert_int_equal(symlink("sub/real.csv", link), 0);
	assert_int_equal(gp_write_file_atomic(link, "new\n", 4), RC_OK);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(gp_read_file(target, &data, &len), RC_OK);
	assert_string_equal(data, "new\n");
	free(data);
	/* a dangling link: its target is created */
	assert_int_equal(unlink(target), 0);
	assert_int_equal(gp_write_file_atomic(link, "again\n", 6), RC_OK);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_size, 6);

	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(got, 1, sizeof(got) - 1, f) : 0;

		_exit(n == 6 && memcmp(got, "piped\n", 6) == 0 ? 0 : 1);
	}
	assert_int_equal(gp_write_file_atomic(path, "piped\n", 6), RC_OK);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

static void test_gp_shell_quote_is_one_word(void **state)
{
	static const char *const payloads[] = {
		"$(touch pwned)", "`touch pwned`", "x'; touch pwned; '", "a\ntouch pwned",
		"'", "''", "\\'", "$HOME", "a b\tc", "",
	};
	char out[256];

	(void)state;
	for (size_t i = 0; i < GP_ARRAY_LEN(payloads); i++) {
		shell_echo(payloads[i], out, sizeof(out));
		/* the word comes back whole and nothing was created (ls: empty) */
		assert_string_equal(out, payloads[i]);
	}
	{
		char *q = gp_shell_quote("it's");

		assert_string_equal(q, "'it'\\''s'");
		free(q);
	}
}

static void test_gp_yaml_quote_escapes(void **state)
{
	char *q;

	(void)state;
	q = gp_yaml_quote("a\"b\\c\nd\x1b" "e");
	assert_string_equal(q, "\"a\\\"b\\\\c\\x0Ad\\x1Be\"");
	assert_null(strchr(q, '\n'));
	free(q);
	q = gp_yaml_quote("\xff\xe2\x80\xae" "Z\xc3\xbc");
	assert_string_equal(q, "\"\\uFFFD\\u202EZ\xc3\xbc\"");
	free(q);
}

static void test_gp_term_escape_controls(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(gp_term_escape(buf, sizeof(buf), "a\x1b[2Jb\nc\x7f"),
			    "a\\x1b[2Jb\\x0ac\\x7f");
	assert_string_equal(gp_term_escape(buf, sizeof(buf), "Z\xc3\xbcrich \xff"),
			    "Z\xc3\xbcrich \\xff");
	assert_string_equal(gp_term_escape(buf, sizeof(buf), "\xc2\x9b" "1m"), "\\x9b1m");
	/* cut between characters, never inside an escape */
	assert_string_equal(gp_term_escape(buf, 10, "\x1b\x1b\x1b\x1b"), "\\x1b...");
	for (size_t i = 0; buf[i]; i++)
		assert_true((unsigned char)buf[i] >= 0x20 && buf[i] != 0x7f);
}

static void test_gp_text_checks(void **state)
{
	size_t at = 99;

	(void)state;
	assert_true(gp_text_is_printable("skypilot v8 @00148f", 19, NULL));
	assert_false(gp_text_is_printable("ab\ncd", 5, &at));
	assert_int_equal(at, 2);
	assert_false(gp_text_is_printable("ab\0cd", 5, &at));
	assert_int_equal(at, 2);
	assert_false(gp_text_is_printable("a\xc0\xaf", 3, &at)); /* overlong '/' */
	assert_int_equal(at, 1);
	assert_false(gp_text_is_printable("\xe2\x80\xae", 3, &at)); /* U+202E */
	assert_true(gp_name_is_safe("Germany, DE, EU", 15, NULL));
	assert_true(gp_name_is_safe("H100_PCIE_80GB::1", 17, NULL));
	assert_true(gp_name_is_safe("Z\xc3\xbcrich", 7, NULL));
	assert_false(gp_name_is_safe("$(touch pwned)", 14, &at));
	assert_int_equal(at, 0);
	assert_false(gp_name_is_safe("a;b", 3, &at));
	assert_int_equal(at, 1);
	assert_false(gp_name_is_safe("a'b", 3, NULL));
	assert_false(gp_name_is_safe("a\tb", 3, NULL));
}

static void test_gp_gnuplot_quote_and_datablock(void **state)
{
	char *q, *b, *f;

	(void)state;
	q = gp_gnuplot_quote("it's `x`\n");
	assert_string_equal(q, "'it''s `x`\\x0a'");
	free(q);
	f = gp_gnuplot_field("a,b\"c\n`d`");
	assert_string_equal(f, "a;b_c__d_");
	free(f);
	{
		const char *rows = "h,1\nEOD\nsystem \"touch pwned\"\nEODx,2\nq\x1bz";

		b = gp_gnuplot_datablock("data", rows, strlen(rows));
	}
	assert_string_equal(b, "$data << EOD\nh,1\n EOD\nsystem \"touch pwned\"\n EODx,2\nq_z\nEOD\n");
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit_parse_date_days),
		cmocka_unit_test(test_unit_today_env),
		cmocka_unit_test(test_unit_parse_count_suffixes),
		cmocka_unit_test(test_unit_parse_count_rejects),
		cmocka_unit_test(test_unit_parse_usd_forms),
		cmocka_unit_test(test_unit_parse_duration_units),
		cmocka_unit_test(test_unit_parse_int_range),
		cmocka_unit_test(test_unit_fmt_never_prints_nan),
		cmocka_unit_test(test_unit_fmt_values),
		cmocka_unit_test(test_unit_fmt_exact_round_trips),
		cmocka_unit_test(test_gp_write_file_atomic_replaces),
		cmocka_unit_test(test_gp_write_file_atomic_links_and_fifos),
		cmocka_unit_test(test_rc_exit_code_documented),
		cmocka_unit_test(test_gp_strlcpy_truncates),
		cmocka_unit_test(test_gp_edit_distance),
		cmocka_unit_test(test_gp_parallel_for_parts),
		cmocka_unit_test(test_gp_shell_quote_is_one_word),
		cmocka_unit_test(test_gp_yaml_quote_escapes),
		cmocka_unit_test(test_gp_term_escape_controls),
		cmocka_unit_test(test_gp_text_checks),
		cmocka_unit_test(test_gp_gnuplot_quote_and_datablock),
	};
	return cmocka_run_group_tests_name("common", tests, NULL, NULL);
}
