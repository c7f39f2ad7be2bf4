/*
 * progress.c - the one-line progress indicator of progress.h: a drawing
 * thread woken on a monotonic clock, state shared under one mutex.
 *
 * It calls alloc.c and common.c.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "progress.h"

struct gp_progress {
	struct gp_progress_opts o;
	char what[96];
	char detail[64];
	size_t done, total;
	struct timespec t0;
	int stop, drawn, have_thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
};

void gp_progress_opts_init(struct gp_progress_opts *o)
{
	const char *env = getenv("GPUPLAN_PROGRESS_DELAY");

	o->out = stderr;
	o->enabled = isatty(STDERR_FILENO) && !gp_log_is_quiet();
	o->delay_s = GP_PROGRESS_DELAY_S;
	o->interval_s = GP_PROGRESS_INTERVAL_S;
	if (env && *env) {
		char *end;
		double d = strtod(env, &end);

		if (*end == '\0' && isfinite(d) && d >= 0)
			o->delay_s = d;
	}
}

char *gp_progress_format(char *buf, size_t size, const char *what, size_t done,
			 size_t total, const char *detail, double elapsed_s)
{
	size_t n;

	snprintf(buf, size, "%s", what);
	n = strlen(buf);
	if (total > 0 && n < size)
		n += (size_t)snprintf(buf + n, size - n, ": %zu/%zu (%.0f%%)", done, total,
				      100.0 * (double)(done < total ? done : total) / (double)total);
	if (detail && *detail && n < size)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", total > 0 ? ", " : ": ", detail);
	if (n < size)
		snprintf(buf + n, size - n, "%s%.1f s", total > 0 || (detail && *detail) ? ", " : ": ",
			 elapsed_s);
	return buf;
}

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static struct timespec after(double s)
{
	struct timespec t;
	long long ns;

	clock_gettime(CLOCK_MONOTONIC, &t);
	ns = (long long)t.tv_nsec + (long long)(s * 1e9);
	t.tv_sec += (time_t)(ns / 1000000000LL);
	t.tv_nsec = (long)(ns % 1000000000LL);
	return t;
}

/* Called with p->mu held. */
static void draw(struct gp_progress *p)
{
	char line[256];

	gp_progress_format(line, sizeof(line), p->what, p->done, p->total, p->detail, since(&p->t0));
	/* \r back to the start, \033[K erases what a longer line left. */
	fprintf(p->o.out, "\r%s\033[K", line);
	fflush(p->o.out);
	p->drawn = 1;
}

static void *drawer(void *arg)
{
	struct gp_progress *p = arg;

	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		/* The first draw comes at the delay, the next ones every interval. */
		double wait = p->drawn ? p->o.interval_s : p->o.delay_s - since(&p->t0);
		struct timespec until = after(wait > 0 ? wait : 0);

		pthread_cond_timedwait(&p->cv, &p->mu, &until);
		if (!p->stop && since(&p->t0) >= p->o.delay_s)
			draw(p);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* A message is about to be logged: hold the drawer and erase the line;
 * the drawer's next tick draws it again below the message. */
static void guard_enter(void *arg)
{
	struct gp_progress *p = arg;

	pthread_mutex_lock(&p->mu);
	if (p->drawn) {
		fputs("\r\033[K", p->o.out);
		fflush(p->o.out);
		p->drawn = 0;
	}
}

static void guard_leave(void *arg)
{
	struct gp_progress *p = arg;

	pthread_mutex_unlock(&p->mu);
}

struct gp_progress *gp_progress_start_opts(const struct gp_progress_opts *o,
					   const char *what, size_t total)
{
	struct gp_progress *p = xcalloc(1, sizeof(*p));
	pthread_condattr_t ca;

	p->o = *o;
	if (!(p->o.interval_s > 0))
		p->o.interval_s = GP_PROGRESS_INTERVAL_S;
	gp_strlcpy(p->what, what ? what : "", sizeof(p->what));
	p->total = total;
	clock_gettime(CLOCK_MONOTONIC, &p->t0);
	if (!p->o.enabled || !p->o.out)
		return p;
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* No delay: the first line is drawn now, before any work, so even
	 * work that ends at once has shown it started. */
	if (p->o.delay_s <= 0)
		draw(p);
	/* Without a thread the work still runs; it only goes unreported. */
	if (pthread_create(&p->thread, NULL, drawer, p) != 0) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
		return p;
	}
	p->have_thread = 1;
	gp_log_set_guard(guard_enter, guard_leave, p);
	return p;
}

struct gp_progress *gp_progress_start(const char *what, size_t total)
{
	struct gp_progress_opts o;

	gp_progress_opts_init(&o);
	return gp_progress_start_opts(&o, what, total);
}

void gp_progress_update(struct gp_progress *p, size_t done, const char *detail)
{
	if (!p || !p->have_thread)
		return;
	pthread_mutex_lock(&p->mu);
	p->done = done;
	gp_strlcpy(p->detail, detail ? detail : "", sizeof(p->detail));
	pthread_mutex_unlock(&p->mu);
}

void gp_progress_done(struct gp_progress *p)
{
	if (!p)
		return;
	if (p->have_thread) {
		gp_log_set_guard(NULL, NULL, NULL);
		pthread_mutex_lock(&p->mu);
		p->stop = 1;
		pthread_cond_signal(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
		if (p->drawn) {
			fputs("\r\033[K", p->o.out);
			fflush(p->o.out);
		}
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
	}
	free(p);
}
