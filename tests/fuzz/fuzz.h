/*
 * fuzz.h - what the libFuzzer targets in tests/fuzz/ share: quiet runs
 * (every rejected input prints one error line, which would otherwise
 * drown the fuzzer's own report), a per-input time limit, and a check
 * that JSON written for a user holds only finite numbers.
 *
 * It holds static inline functions only; each target includes it once.
 */
#ifndef GPUPLAN_FUZZ_H
#define GPUPLAN_FUZZ_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Puts libFuzzer flags at the front of the command line before libFuzzer
 * reads it: -close_fd_mask=3 sends the target's stdout and stderr to
 * /dev/null while libFuzzer and the sanitizers keep a copy of stderr for
 * their reports; -timeout=20 turns an input that runs for 20 s into a
 * reported hang; -dict=DICT (when dict is not NULL and readable from the
 * working directory, as under `make fuzz`) gives the mutator the format's
 * keywords and boundary numbers.  libFuzzer keeps the last value of a
 * flag, so one given on the command line wins. */
static inline void fuzz_quiet_args(int *argc, char ***argv, const char *dict)
{
	static char dict_flag[PATH_MAX + 8];
	char abs[PATH_MAX];
	const char *extra[3] = { "-close_fd_mask=3", "-timeout=20", NULL };
	int n = *argc, k = 2;
	char **av;

	/* absolute: a target may change directory before libFuzzer reads it */
	if (dict && realpath(dict, abs) && access(abs, R_OK) == 0) {
		snprintf(dict_flag, sizeof(dict_flag), "-dict=%s", abs);
		extra[k++] = dict_flag;
	}
	av = calloc((size_t)n + (size_t)k + 1, sizeof(*av));
	if (!av)
		return;
	av[0] = (*argv)[0];
	for (int i = 0; i < k; i++)
		av[1 + i] = (char *)extra[i];
	for (int i = 1; i < n; i++)
		av[k + i] = (*argv)[i];
	*argc = n + k;
	*argv = av;
}

/* 1 when every number in the cJSON tree it is finite and no value is null
 * (cJSON prints a non-finite number as null); 0 otherwise. */
static inline int fuzz_tree_finite(const cJSON *it)
{
	for (; it; it = it->next) {
		if (cJSON_IsNull(it))
			return 0;
		if (cJSON_IsNumber(it) && !(it->valuedouble - it->valuedouble == 0))
			return 0;
		if (it->child && !fuzz_tree_finite(it->child))
			return 0;
	}
	return 1;
}

/* 1 when json is valid JSON whose numbers are all finite: a printed nan or
 * inf is not valid JSON, and a null stands where one was suppressed. */
static inline int fuzz_json_finite(const char *json)
{
	cJSON *root;
	int ok;

	if (!json)
		return 0;
	root = cJSON_Parse(json);
	ok = root && fuzz_tree_finite(root);
	cJSON_Delete(root);
	return ok;
}

/* What a target judged, per input: refused (the parser said no, one
 * message), accepted, and of the accepted ones round-tripped (written
 * back and read again to the same value; a failure aborts, so it counts
 * as a crash).  make fuzz names the file in FUZZ_COUNTS; the counts are
 * written there every 4096 inputs and at exit, one line:
 * "NAME: run N, refused N, accepted N, round-tripped N". */
enum fuzz_outcome { FUZZ_REFUSED, FUZZ_ACCEPTED, FUZZ_ROUND_TRIPPED };

static struct {
	const char *name;
	unsigned long run, refused, accepted, round_tripped;
	int registered;
} fuzz_n;

static inline void fuzz_counts_write(void)
{
	const char *path = getenv("FUZZ_COUNTS");
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "w")))
		return;
	fprintf(f, "%s: run %lu, refused %lu, accepted %lu, round-tripped %lu\n",
		fuzz_n.name ? fuzz_n.name : "?", fuzz_n.run, fuzz_n.refused, fuzz_n.accepted,
		fuzz_n.round_tripped);
	fclose(f);
}

/* Counts one input of the target name with its outcome (a round-tripped
 * input is an accepted one too). */
static inline void fuzz_count(const char *name, enum fuzz_outcome o)
{
	if (!fuzz_n.registered) {
		fuzz_n.registered = 1;
		fuzz_n.name = name;
		atexit(fuzz_counts_write);
	}
	fuzz_n.run++;
	if (o == FUZZ_REFUSED)
		fuzz_n.refused++;
	else
		fuzz_n.accepted++;
	if (o == FUZZ_ROUND_TRIPPED)
		fuzz_n.round_tripped++;
	if (fuzz_n.run % 4096 == 0)
		fuzz_counts_write();
}

#endif
