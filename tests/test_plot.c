/*
 * test_plot.c - the gnuplot driver (cli/plot.c, compiled in here since
 * the CLI is not part of the library): path checks, quoting, finding the
 * program on PATH, the script it pipes, failures, and the CSV fallback
 * without gnuplot.  A stand-in "gnuplot" shell script records what it is
 * sent, so no real gnuplot is needed; tests/cli/test_ecosystem.sh draws
 * real charts.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cli/plot.c"

static char dir[256];
static char *old_path;

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gpuplan-test-plot-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	old_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	gp_log_quiet(1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[320];

	(void)state;
	if (old_path) {
		setenv("PATH", old_path, 1);
		free(old_path);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Writes an executable "gnuplot" into dir/bin whose body is sh. */
static void fake_gnuplot(const char *body)
{
	char path[320];
	FILE *f;

	snprintf(path, sizeof(path), "%s/bin", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/bin/gnuplot", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\nPATH=/usr/bin:/bin\n%s\n", body);
	fclose(f);
	chmod(path, 0755);
	snprintf(path, sizeof(path), "%s/bin", dir);
	setenv("PATH", path, 1);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void small_plot(struct plot *p)
{
	plot_init(p);
	plot_row(p, "gpus,tokens_per_s");
	plot_row(p, "%d,%g", 8, 1000.0);
	plot_row(p, "%d,%g", 16, 1900.0);
	plot_cmd(p, "plot $data every ::1 using 1:2 with lines title %s", "'it''s'");
}

static void test_plot_check_path_extensions(void **state)
{
	enum plot_format f = PLOT_SVG;

	(void)state;
	assert_int_equal(plot_check_path("--plot", "a.png", &f), RC_OK);
	assert_int_equal(f, PLOT_PNG);
	assert_int_equal(plot_check_path("--plot", "dir.x/A.SVG", &f), RC_OK);
	assert_int_equal(f, PLOT_SVG);
	assert_int_equal(plot_check_path("--plot", "a.jpg", &f), RC_USAGE);
	assert_int_equal(plot_check_path("--plot", ".png", &f), RC_USAGE);
	assert_int_equal(plot_check_path("--plot", "a\n.png", &f), RC_USAGE);
	assert_int_equal(plot_check_path("--plot", "png", &f), RC_USAGE);
}

static void test_plot_quote_doubles_quotes(void **state)
{
	char b[64];

	(void)state;
	assert_string_equal(plot_quote(b, sizeof(b), "it's"), "'it''s'");
	/* a line break is written as text: the literal stays on its line */
	assert_string_equal(plot_quote(b, sizeof(b), "a\nb"), "'a\\x0ab'");
	assert_string_equal(plot_quote(b, sizeof(b), ""), "''");
	/* Truncated, the literal is still closed. */
	plot_quote(b, 6, "abcdefgh");
	assert_int_equal(b[strlen(b) - 1], '\'');
	assert_true(strlen(b) < 6);
}

static void test_plot_find_program_uses_path(void **state)
{
	char buf[512], want[320];

	(void)state;
	fake_gnuplot("exit 0");
	snprintf(want, sizeof(want), "%s/bin/gnuplot", dir);
	assert_int_equal(plot_find_program("gnuplot", buf, sizeof(buf)), 1);
	assert_string_equal(buf, want);
	assert_int_equal(plot_find_program("no-such-program-here", buf, sizeof(buf)), 0);
	setenv("PATH", "/nonexistent-dir", 1);
	assert_int_equal(plot_find_program("gnuplot", buf, sizeof(buf)), 0);
}

/* Shell: $o = the file a kept script's "set output '...'" names. */
#define SET_OUTPUT_OF "o=$(sed -n \"s/^set output '\\(.*\\)'$/\\1/p\" '%s')"

static void test_plot_render_pipes_script(void **state)
{
	struct plot p;
	char body[900], out[320], got[320];
	char *script;
	int fb = -1;

	(void)state;
	snprintf(out, sizeof(out), "%s/chart.png", dir);
	snprintf(got, sizeof(got), "%s/script.gp", dir);
	/* The stand-in keeps the script and draws a PNG signature where the
	 * script's set output says. */
	snprintf(body, sizeof(body), "cat > '%s'\n" SET_OUTPUT_OF "\n"
		 "printf '\\211PNG\\r\\n' > \"$o\"", got, got);
	fake_gnuplot(body);
	small_plot(&p);
	assert_int_equal(plot_render(&p, "--plot", out, &fb), RC_OK);
	assert_int_equal(fb, 0);
	script = read_all(got);
	assert_non_null(script);
	/* Terminal by extension, output, CSV separator, the data inline, the
	 * command's lines, and the output closed at the end, in that order. */
	assert_non_null(strstr(script, "pngcairo size 1000,620"));
	assert_true(strstr(script, "set output '") < strstr(script, "$data << EOD"));
	/* drawn beside the chart, then renamed over it */
	snprintf(body, sizeof(body), "set output '%s.tmp.", out);
	assert_non_null(strstr(script, body));
	assert_non_null(strstr(script, "set datafile separator comma\n"));
	assert_non_null(strstr(script, "$data << EOD\ngpus,tokens_per_s\n8,1000\n16,1900\nEOD\n"));
	assert_true(strstr(script, "EOD\nplot $data") != NULL);
	assert_non_null(strstr(script, "title 'it''s'\n"));
	assert_non_null(strstr(script, "\nunset output\n"));
	free(script);
	script = read_all(out);
	assert_non_null(script);
	assert_non_null(strstr(script, "PNG"));
	free(script);
	plot_release(&p);
}

static void test_plot_render_svg_terminal(void **state)
{
	struct plot p;
	char body[900], out[320], got[320];
	char *script;

	(void)state;
	snprintf(out, sizeof(out), "%s/chart.svg", dir);
	snprintf(got, sizeof(got), "%s/script-svg.gp", dir);
	snprintf(body, sizeof(body), "cat > '%s'\n" SET_OUTPUT_OF "\necho '<svg/>' > \"$o\"",
		 got, got);
	fake_gnuplot(body);
	small_plot(&p);
	p.height = 800;
	assert_int_equal(plot_render(&p, "--plot", out, NULL), RC_OK);
	script = read_all(got);
	assert_non_null(script);
	assert_non_null(strstr(script, "set terminal svg size 1000,800"));
	assert_null(strstr(script, "pngcairo"));
	free(script);
	plot_release(&p);
}

static void test_plot_render_reports_gnuplot_failure(void **state)
{
	struct plot p;
	char out[320];
	int fb = -1;

	(void)state;
	snprintf(out, sizeof(out), "%s/fail.png", dir);
	small_plot(&p);
	/* gnuplot refusing the script (exit 1) is an error... */
	fake_gnuplot("cat > /dev/null\nexit 1");
	assert_int_equal(plot_render(&p, "--plot", out, &fb), RC_ERR);
	assert_int_equal(fb, 0);
	/* ...and so is one that reads nothing and writes nothing. */
	fake_gnuplot("exit 0");
	assert_int_equal(plot_render(&p, "--plot", out, &fb), RC_ERR);
	plot_release(&p);
}

static void test_plot_render_falls_back_to_csv(void **state)
{
	struct plot p;
	char out[320], csv[320], gp[320], empty[320];
	char *data, *script;
	struct stat st;
	int fb = 0;

	(void)state;
	snprintf(empty, sizeof(empty), "%s/empty", dir);
	mkdir(empty, 0755);
	setenv("PATH", empty, 1);
	snprintf(out, sizeof(out), "%s/frontier.svg", dir);
	snprintf(csv, sizeof(csv), "%s/frontier.csv", dir);
	snprintf(gp, sizeof(gp), "%s/frontier.gp", dir);
	small_plot(&p);
	assert_int_equal(plot_render(&p, "--plot", out, &fb), RC_OK);
	assert_int_equal(fb, 1);
	assert_int_not_equal(stat(out, &st), 0);
	data = read_all(csv);
	assert_non_null(data);
	assert_string_equal(data, "gpus,tokens_per_s\n8,1000\n16,1900\n");
	/* The script draws the chart later, by itself. */
	script = read_all(gp);
	assert_non_null(script);
	assert_non_null(strstr(script, "set terminal svg"));
	assert_non_null(strstr(script, "frontier.svg'"));
	assert_non_null(strstr(script, "$data << EOD\ngpus,tokens_per_s\n"));
	free(data);
	free(script);
	plot_release(&p);
}

static void test_plot_release_accepts_null(void **state)
{
	struct plot p;

	(void)state;
	plot_release(NULL);
	plot_init(&p);
	plot_release(&p);
	assert_null(p.data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plot_check_path_extensions),
		cmocka_unit_test(test_plot_quote_doubles_quotes),
		cmocka_unit_test(test_plot_find_program_uses_path),
		cmocka_unit_test(test_plot_render_pipes_script),
		cmocka_unit_test(test_plot_render_svg_terminal),
		cmocka_unit_test(test_plot_render_reports_gnuplot_failure),
		cmocka_unit_test(test_plot_render_falls_back_to_csv),
		cmocka_unit_test(test_plot_release_accepts_null),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
