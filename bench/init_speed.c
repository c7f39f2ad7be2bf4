/*
 * init_speed.c - how fast the executor draws initial weights on the host:
 * values per second of the counter-based normal draw on one thread and on
 * every CPU (the trainer shares a unit's rows among threads, as
 * exec_train_params.c's unit_init_values does), and what that makes of the
 * 1.4 billion parameters of bench/gpu_check.sh's mid-size model.
 *
 *   build/bench/init_speed
 *
 * Each figure is the best of REPS draws of VALUES values (the machine is
 * shared; the minimum is the least disturbed).  Exits 1 when, with more
 * than one CPU, the threaded draw is not faster than the single thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common.h"
#include "train/exec_train.h"

#define REPS 3
#define VALUES (16L << 20)
#define ROW 4096                 /* values a row: a 4096-wide matrix */
#define MID_PARAMS 1.4e9         /* 24 x 2048 hidden, vocabulary 50304 */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void draw_rows(void *ctx, long begin, long end)
{
	float *out = ctx;

	for (long r = begin; r < end; r++)
		exec_rand_normal_fill(out + r * ROW, ROW, 1234, 7, (uint64_t)r * ROW, 0.02);
}

/* Best time of REPS draws of VALUES values on `threads` threads. */
static double best_s(float *out, int threads)
{
	double best = 1e30;

	for (int rep = 0; rep < REPS; rep++) {
		double t0 = now_s(), dt;

		gp_parallel_for(VALUES / ROW, threads, 1, draw_rows, out);
		dt = now_s() - t0;
		if (dt < best)
			best = dt;
	}
	return best;
}

int main(void)
{
	float *out = xmalloc((size_t)VALUES * sizeof(float));
	int cpus = gp_cpu_count();
	double one, all;

	one = best_s(out, 1);
	all = best_s(out, cpus);
	printf("initial weights: %.1f ns a value on 1 thread, %.1f ns on %d threads (%.2fx)\n",
	       1e9 * one / VALUES, 1e9 * all / VALUES, cpus, one / all);
	printf("gpu_check's mid-size model (%.1fB parameters): %.0f s on 1 thread, %.0f s on %d\n",
	       MID_PARAMS / 1e9, MID_PARAMS * one / VALUES, MID_PARAMS * all / VALUES, cpus);
	free(out);
	if (cpus > 1 && all >= one) {
		fprintf(stderr, "error: init_speed: %d threads no faster than one\n", cpus);
		return 1;
	}
	return 0;
}
