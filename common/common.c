/*
 * common.c - status strings, stderr logging and small string helpers.
 * Nothing here knows about GPUs or prices.
 *
 * It calls escape.c (a message's control characters are escaped) and
 * alloc.c; neither calls it.
 */
#include "common.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int log_quiet;
static void (*guard_enter)(void *);
static void (*guard_leave)(void *);
static void *guard_ctx;

void gp_log_set_guard(void (*enter)(void *ctx), void (*leave)(void *ctx), void *ctx)
{
	guard_enter = enter;
	guard_leave = leave;
	guard_ctx = ctx;
}

const char *rc_str(enum rc rc)
{
	switch (rc) {
	case RC_OK: return "ok";
	case RC_ERR: return "runtime error";
	case RC_INPUT: return "bad input";
	case RC_USAGE: return "bad usage";
	case RC_INFEASIBLE: return "no feasible plan";
	case RC_DEVICE: return "device unavailable";
	}
	return "unknown status";
}

int rc_exit_code(enum rc rc)
{
	switch (rc) {
	case RC_OK: return 0;
	case RC_ERR: return 1;
	case RC_INPUT:
	case RC_USAGE: return 2;
	case RC_INFEASIBLE: return 3;
	case RC_DEVICE: return 4;
	}
	return 1;
}

/* Writes prefix and the message, its control characters escaped
 * (gp_term_escape): a message quoting a file's bytes cannot move the
 * cursor, recolour the terminal or forge a line.  With lines, '\n' still
 * breaks lines (gp_info's multi-line notes); the other levels are one
 * line. */
static void vlog(const char *prefix, int lines, const char *fmt, va_list ap)
{
	char buf[2048], out[8192];
	size_t n = 0;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	for (char *line = buf; line && n + 1 < sizeof(out);) {
		char *nl = lines ? strchr(line, '\n') : NULL;

		if (nl)
			*nl = '\0';
		gp_term_escape(out + n, sizeof(out) - n, line);
		n += strlen(out + n);
		if (nl && n + 1 < sizeof(out))
			out[n++] = '\n';
		out[n] = '\0';
		line = nl ? nl + 1 : NULL;
	}
	if (guard_enter)
		guard_enter(guard_ctx);
	/* One write per message so ranks and threads do not interleave lines. */
	fprintf(stderr, "%s%s\n", prefix, out);
	if (guard_leave)
		guard_leave(guard_ctx);
}

void gp_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("error: ", 0, fmt, ap);
	va_end(ap);
}

void gp_hint(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("hint: ", 0, fmt, ap);
	va_end(ap);
}

void gp_warn(const char *fmt, ...)
{
	va_list ap;

	if (log_quiet)
		return;
	va_start(ap, fmt);
	vlog("warning: ", 0, fmt, ap);
	va_end(ap);
}

void gp_info(const char *fmt, ...)
{
	va_list ap;

	if (log_quiet)
		return;
	va_start(ap, fmt);
	vlog("", 1, fmt, ap);
	va_end(ap);
}

void gp_log_quiet(int quiet) { log_quiet = quiet; }
int gp_log_is_quiet(void) { return log_quiet; }

int gp_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (size == 0)
		return -1;
	if (n >= size) {
		memcpy(dst, src, size - 1);
		dst[size - 1] = '\0';
		return -1;
	}
	memcpy(dst, src, n + 1);
	return 0;
}

char gp_fold_name(char c)
{
	if (c >= 'A' && c <= 'Z')
		return (char)(c - 'A' + 'a');
	return c == '_' || c == ' ' ? '-' : c;
}

#define GP_EDIT_MAX 64

size_t gp_edit_distance(const char *a, size_t la, const char *b, size_t lb,
			char (*fold)(char c))
{
	size_t row[GP_EDIT_MAX + 1];

	if (la > GP_EDIT_MAX)
		la = GP_EDIT_MAX;
	if (lb > GP_EDIT_MAX)
		lb = GP_EDIT_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			char x = fold ? fold(a[i - 1]) : a[i - 1], y = fold ? fold(b[j - 1]) : b[j - 1];
			size_t up = row[j], best = diag + (x != y);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

size_t gp_suggest_limit(const char *name)
{
	size_t limit = strlen(name) / 3;

	return limit < 2 ? 2 : limit;
}

int gp_streq_nocase(const char *a, const char *b)
{
	if (!a || !b)
		return 0;
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
	return *a == *b;
}

int gp_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

struct part {
	void (*fn)(void *ctx, long begin, long end);
	void *ctx;
	long begin, end;
};

static void *part_main(void *arg)
{
	struct part *p = arg;

	p->fn(p->ctx, p->begin, p->end);
	return NULL;
}

void gp_parallel_for(long n, int threads, long min_part,
		     void (*fn)(void *ctx, long begin, long end), void *ctx)
{
	struct part *parts;
	pthread_t *tid;
	int *started, k;

	if (n <= 0)
		return;
	if (min_part < 1)
		min_part = 1;
	k = threads < 1 ? 1 : threads;
	if (n / min_part < k)
		k = (int)(n / min_part > 1 ? n / min_part : 1);
	if (k == 1) {
		fn(ctx, 0, n);
		return;
	}
	parts = xcalloc((size_t)k, sizeof(*parts));
	tid = xcalloc((size_t)k, sizeof(*tid));
	started = xcalloc((size_t)k, sizeof(*started));
	for (int i = 0; i < k; i++)
		parts[i] = (struct part){ fn, ctx, n * i / k, n * (i + 1) / k };
	for (int i = 1; i < k; i++)
		started[i] = pthread_create(&tid[i], NULL, part_main, &parts[i]) == 0;
	part_main(&parts[0]);
	for (int i = 1; i < k; i++) {
		if (started[i])
			pthread_join(tid[i], NULL);
		else
			part_main(&parts[i]);
	}
	free(started);
	free(tid);
	free(parts);
}
