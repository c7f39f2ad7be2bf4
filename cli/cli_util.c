/*
 * cli_util.c - flag parsing with one error style, where the shipped data
 * lives, and progress through a launcher.  Shared by every command
 * front-end.
 */
#include <assert.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"
#include "sim.h"

#ifndef GPUPLAN_SHARE_DIR
#define GPUPLAN_SHARE_DIR "/usr/local/share/gpuplan"
#endif

static int is_dir_with_gpus(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/gpus.csv", dir) >= (int)sizeof(path))
		return 0;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

const char *cli_data_dir(void)
{
	static char dir[PATH_MAX];
	const char *env = getenv("GPUPLAN_SHARE_DIR");
	char exe[PATH_MAX - 64];
	ssize_t n;

	if (env && *env)
		return env;
	if (dir[0])
		return dir;
	/* Running from the build tree: <repo>/build/gpuplan -> <repo>/data. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		for (int up = 0; up < 2; up++) {
			slash = strrchr(exe, '/');
			if (!slash)
				break;
			*slash = '\0';
			snprintf(dir, sizeof(dir), "%s/data", exe);
			if (is_dir_with_gpus(dir))
				return dir;
			snprintf(dir, sizeof(dir), "%s/share/gpuplan", exe);
			if (is_dir_with_gpus(dir))
				return dir;
		}
	}
	snprintf(dir, sizeof(dir), "%s", is_dir_with_gpus("data") ? "data" : GPUPLAN_SHARE_DIR);
	return dir;
}

enum rc cli_parse_int(const char *flag, const char *arg, int min, int max, int *out)
{
	int v;

	if (unit_parse_int(arg, &v) != RC_OK || v < min || v > max) {
		gp_error("%s: expected an integer from %d to %d, found '%s'",
			 flag, min, max, arg ? arg : "");
		return RC_USAGE;
	}
	*out = v;
	return RC_OK;
}

enum rc cli_parse_double(const char *flag, const char *arg, double min, double max,
			 double *out)
{
	double v;

	if (unit_parse_double(arg, &v) != RC_OK || v < min || v > max) {
		gp_error("%s: expected a number from %g to %g, found '%s'", flag, min, max,
			 arg ? arg : "");
		return RC_USAGE;
	}
	*out = v;
	return RC_OK;
}

enum rc cli_parse_count(const char *flag, const char *arg, double *out)
{
	if (unit_parse_count(arg, out) != RC_OK) {
		gp_error("%s: expected a count from 1 to 1e18 like 1T, 300B or 2.5e12, found '%s'",
			 flag, arg ? arg : "");
		return RC_USAGE;
	}
	return RC_OK;
}

enum rc cli_parse_usd(const char *flag, const char *arg, double *out)
{
	if (unit_parse_usd(arg, out) != RC_OK) {
		gp_error("%s: expected US dollars from 0 to 1e15 like 250000, 250k, 1.5M or $20000, found '%s'",
			 flag, arg ? arg : "");
		return RC_USAGE;
	}
	return RC_OK;
}

enum rc cli_parse_choice(const char *flag, const char *arg, const char *const *names, int n,
			 int *out)
{
	char list[256] = "";
	size_t len = 0;

	for (int i = 0; i < n; i++)
		if (arg && strcmp(arg, names[i]) == 0) {
			*out = i;
			return RC_OK;
		}
	for (int i = 0; i < n && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i]);
	gp_error("%s: expected %s, found '%s'", flag, list, arg ? arg : "");
	return RC_USAGE;
}

enum rc cli_parse_recompute_modules(const char *arg, unsigned *out)
{
	char buf[128], *save = NULL, *tok;
	unsigned bits = 0;

	if (!arg || strlen(arg) >= sizeof(buf)) {
		gp_error("--recompute-modules: expected a list like mla_up_proj,moe_act, found '%s'",
			 arg ? arg : "");
		return RC_USAGE;
	}
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k;

		if (cli_parse_choice("--recompute-modules", tok, sim_recompute_module_names,
				     SIM_RECOMPUTE_MODULES, &k) != RC_OK)
			return RC_USAGE;
		if (bits & (1u << k)) {
			gp_error("--recompute-modules: expected each module once, found '%s' twice", tok);
			return RC_USAGE;
		}
		bits |= 1u << k;
	}
	if (!bits) {
		gp_error("--recompute-modules: expected a list like mla_up_proj,moe_act, found '%s'", arg);
		return RC_USAGE;
	}
	*out = bits;
	return RC_OK;
}

/* The range of each duration flag: an overhead paid once, or a span
 * (common.h's UNIT_*_S_MAX). */
static const struct {
	const char *flag;
	double max_s;
	const char *max_text;
} duration_ranges[] = {
	{ "--startup", UNIT_OVERHEAD_S_MAX, "365 days" },
	{ "--restart-time", UNIT_OVERHEAD_S_MAX, "365 days" },
	{ "--switch-time", UNIT_OVERHEAD_S_MAX, "365 days" },
};

enum rc cli_parse_duration(const char *flag, const char *arg, double *out_s)
{
	double max_s = UNIT_SPAN_S_MAX, v;
	const char *max_text = "100 years";
	char e[96];

	for (size_t i = 0; i < GP_ARRAY_LEN(duration_ranges); i++)
		if (strcmp(flag, duration_ranges[i].flag) == 0) {
			max_s = duration_ranges[i].max_s;
			max_text = duration_ranges[i].max_text;
		}
	if (unit_parse_duration(arg, &v) != RC_OK) {
		gp_error("%s: expected a duration like 30d, 72h or 90m, found '%s'",
			 flag, gp_term_escape(e, sizeof(e), arg ? arg : ""));
		return RC_USAGE;
	}
	if (v > max_s) {
		gp_error("%s: expected a duration of at most %s, found '%s'", flag, max_text,
			 gp_term_escape(e, sizeof(e), arg));
		return RC_USAGE;
	}
	*out_s = v;
	return RC_OK;
}

enum rc cli_bad_option(const char *cmd, int optopt_, const char *arg)
{
	/* getopt_long sets optopt to a long option's code when its value is
	 * missing: a number, not a character to print; the option is the
	 * word getopt stopped at ("--layers", or "--layers=" given empty). */
	if (optopt_ > ' ' && optopt_ < 127)
		gp_error("%s: unknown option or missing value for '-%c'", cmd, optopt_);
	else if (optopt_ && arg && arg[0] == '-' && arg[1] == '-')
		gp_error("%s: expected a value after '%.*s', found none", cmd,
			 (int)strcspn(arg, "="), arg);
	else
		gp_error("%s: unknown option or missing value: '%s'", cmd, arg ? arg : "");
	gp_hint("run 'gpuplan %s --help' for its options", cmd);
	return RC_USAGE;
}

#define PROGRESS_TTY_ENV "GPUPLAN_PROGRESS_TTY"

void cli_progress_pass(void)
{
	if (isatty(STDERR_FILENO) && !gp_log_is_quiet())
		setenv(PROGRESS_TTY_ENV, "1", 1);
	else
		unsetenv(PROGRESS_TTY_ENV);
}

struct gp_progress *cli_progress_start(const char *what, size_t total)
{
	struct gp_progress_opts o;
	const char *tty = getenv(PROGRESS_TTY_ENV);

	gp_progress_opts_init(&o);
	if (tty && strcmp(tty, "1") == 0 && !gp_log_is_quiet())
		o.enabled = 1;
	return gp_progress_start_opts(&o, what, total);
}

static char command_line[512];

void cli_set_command_line(int argc, char **argv)
{
	size_t n = 0;

	command_line[0] = '\0';
	for (int i = 0; i < argc && n + 1 < sizeof(command_line); i++) {
		const char *a = i == 0 ? "gpuplan" : argv[i];
		int quote = strpbrk(a, " \t'\"$") != NULL || !*a;

		n += (size_t)snprintf(command_line + n, sizeof(command_line) - n, "%s%s%s%s",
				      i ? " " : "", quote ? "'" : "", a, quote ? "'" : "");
	}
	if (n >= sizeof(command_line))
		command_line[sizeof(command_line) - 1] = '\0';
}

const char *cli_command_line(void)
{
	return command_line;
}

const struct sim_model *cli_model_find(const struct sim_model_table *t, const char *flag,
				       const char *path, const char *name,
				       const char *otherwise)
{
	const struct sim_model *m = sim_model_find(t, name);
	char near[128];

	if (m)
		return m;
	gp_error("%s: expected a preset of %s, found '%s'", flag, path, name);
	if (sim_model_suggest(t, name, near, sizeof(near)) == 0)
		gp_hint("did you mean '%s'? ('gpuplan models' lists every preset)", near);
	else
		gp_hint("%s", otherwise);
	return NULL;
}

void cli_model_field_options(struct option *opts, int first)
{
	for (int i = 0; i < SIM_MODEL_FIELDS; i++) {
		opts[i].name = sim_model_fields[i].flag + 2;   /* past "--" */
		opts[i].has_arg = required_argument;
		opts[i].flag = NULL;
		opts[i].val = first + i;
	}
	memset(&opts[SIM_MODEL_FIELDS], 0, sizeof(opts[0]));
}

enum rc cli_parse_model_field(const char *name, const char *arg, struct sim_model *m,
			      int **field)
{
	for (int i = 0; i < SIM_MODEL_FIELDS; i++) {
		const struct sim_model_field *mf = &sim_model_fields[i];

		if (strcmp(mf->flag + 2, name) != 0)
			continue;
		*field = sim_model_field(m, mf);
		return cli_parse_int(mf->flag, arg, 0, mf->max, *field);
	}
	assert(!"cli_parse_model_field: a flag the model's table does not name");
	return RC_USAGE;
}

const char *cli_fmt_expected(char *buf, size_t size, double n)
{
	snprintf(buf, size, n < 100 ? "%.3g" : "%.0f", n);
	return buf;
}

const char *cli_fmt_effective(char *buf, size_t size, double waste)
{
	snprintf(buf, size, "%.2f%%", 100.0 * (1.0 - waste));
	return buf;
}
