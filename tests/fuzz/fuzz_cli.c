/*
 * fuzz_cli.c - libFuzzer target for the command-line front-ends: the input
 * is split at NUL bytes into argv (the first word names the command) and
 * the command runs in this process, as cli/main.c would run it, with its
 * output sent to /dev/null.  Any argv ends in a status, never a crash, a
 * leak or undefined behaviour.
 *
 * Only commands that do little work once their options are read are
 * run: gpus, models, prices, quotas, simulate and export (plan, frontier,
 * compare and scaling search thousands of layouts; execute trains).  So
 * that no input can touch files outside a scratch directory, the process
 * works in a fresh temporary directory, GPUPLAN_DATA_DIR points inside it,
 * and an input with a word holding '/' is skipped.  It runs from the
 * repository root (data/ and the seed files are read from there).  Before each input the
 * directory is emptied and refilled with a plan file (plan.json) and a
 * price update (new.csv) for the commands to read.
 */
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "fuzz.h"

#define MAX_ARGS 32
#define MAX_WORD 256

struct command {
	const char *name;
	enum rc (*fn)(int argc, char **argv);
};

static const struct command commands[] = {
	{ "gpus", cmd_gpus },
	{ "models", cmd_models },
	{ "prices", cmd_prices },
	{ "quotas", cmd_quotas },
	{ "simulate", cmd_simulate },
	{ "export", cmd_export },
};

static char scratch[64];
static char *plan_json, *new_csv;
static size_t plan_len, new_len;

/* Reads a whole small file into a new buffer; aborts when it cannot. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(1 << 16);

	if (!f || !buf)
		abort();
	*len = fread(buf, 1, 1 << 16, f);
	fclose(f);
	return buf;
}

static void put(const char *name, const char *buf, size_t len)
{
	FILE *f = fopen(name, "wb");

	if (!f || fwrite(buf, 1, len, f) != len)
		abort();
	fclose(f);
}

/* Removes every entry of dir (one level of subdirectories). */
static void empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) != 0) {
			empty_dir(path);
			rmdir(path);
		}
	}
	closedir(d);
}

static void remove_scratch(void)
{
	empty_dir(scratch);
	rmdir(scratch);
}

/* Returns cwd/rel in a new string when rel is relative, else rel. */
static char *absolute(const char *cwd, const char *rel)
{
	char *p;

	if (rel[0] == '/')
		return (char *)rel;
	p = malloc(strlen(cwd) + strlen(rel) + 2);
	if (!p)
		abort();
	sprintf(p, "%s/%s", cwd, rel);
	return p;
}

/* The corpus directories, inputs and artifact prefix libFuzzer was given
 * are made absolute, as this process leaves the directory they are
 * relative to. */
static void absolute_args(int argc, char **argv)
{
	static const char *const flags[] = { "-artifact_prefix=", "-exact_artifact_path=" };
	char cwd[PATH_MAX];

	if (!getcwd(cwd, sizeof(cwd)))
		abort();
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] != '-') {
			argv[i] = absolute(cwd, argv[i]);
			continue;
		}
		for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
			size_t n = strlen(flags[f]);
			char *v;

			if (strncmp(argv[i], flags[f], n) != 0 || argv[i][n] == '/')
				continue;
			v = absolute(cwd, argv[i] + n);
			argv[i] = malloc(n + strlen(v) + 1);
			if (!argv[i])
				abort();
			sprintf(argv[i], "%s%s", flags[f], v);
			free(v);
		}
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char share[PATH_MAX], user[PATH_MAX + 16];

	fuzz_quiet_args(argc, argv, "tests/fuzz/cli.dict");
	absolute_args(*argc, *argv);
	if (!realpath("data", share)) {
		fprintf(stderr, "fuzz_cli: no data/ here; run it from the repository root\n");
		abort();
	}
	plan_json = slurp("tests/fuzz/corpus/plan_json/llama3_70b.json", &plan_len);
	new_csv = slurp("tests/fixtures/prices/crlf.csv", &new_len);
	snprintf(scratch, sizeof(scratch), "/tmp/gpuplan-fuzz-cli-XXXXXX");
	if (!mkdtemp(scratch) || chdir(scratch) != 0)
		abort();
	atexit(remove_scratch);
	snprintf(user, sizeof(user), "%s/user", scratch);
	setenv("GPUPLAN_SHARE_DIR", share, 1);
	setenv("GPUPLAN_DATA_DIR", user, 1);
	unsetenv("XDG_DATA_HOME");
	/* `prices fetch` reads only a loopback port nothing listens on (refused
	 * at once), never the providers: an input is no network request. */
	setenv("GPUPLAN_PRICE_URL_AWS", "http://127.0.0.1:9", 1);
	setenv("GPUPLAN_PRICE_URL_AZURE", "http://127.0.0.1:9", 1);
	setenv("GPUPLAN_PRICE_URL_GCP", "http://127.0.0.1:9", 1);
	unsetenv("GOOGLE_API_KEY");
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *words[MAX_ARGS + 1];
	char *buf;
	const struct command *cmd = NULL;
	int argc = 0;
	size_t start = 0;
	char *reset[] = { "fuzz", NULL };

	if (size > MAX_ARGS * MAX_WORD)
		return 0;
	buf = malloc(size + 1);
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (size_t i = 0; i <= size && argc < MAX_ARGS; i++) {
		if (buf[i] != '\0')
			continue;
		words[argc++] = buf + start;
		start = i + 1;
	}
	words[argc] = NULL;
	for (int i = 0; i < argc; i++)
		if (strchr(words[i], '/'))
			argc = 0;
	for (size_t i = 0; argc > 0 && i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(words[0], commands[i].name))
			cmd = &commands[i];
	if (!cmd) {
		free(buf);
		return 0;
	}

	empty_dir(".");
	put("plan.json", plan_json, plan_len);
	put("new.csv", new_csv, new_len);
	/* glibc's getopt keeps a pointer into the last argv it read; optind 0
	 * makes it start afresh, as a new process would */
	optind = 0;
	getopt(1, reset, "");
	gp_log_quiet(0);
	cmd->fn(argc, words);
	fflush(stdout);
	free(buf);
	return 0;
}
