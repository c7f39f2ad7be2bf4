/*
 * exec_check.c - the pre-flight check of `gpuplan execute --check`: before
 * the first step, is every rank's device the plan's GPU, is the memory the
 * plan needs free, and does an all-reduce over each TP, CP, PP and DP group
 * reach the stated fraction of the bus bandwidth the simulator assumed;
 * after it, how much device memory the run really holds against the
 * prediction.  A plan that will not fit says so before it runs.
 *
 * Bus bandwidth follows nccl-tests' doc/PERFORMANCE.md: an all-reduce of
 * B bytes over n ranks in t seconds moves busbw = 2 (n-1)/n B / t through
 * each rank's link, comparable with the link's own figure whatever n.
 *
 * It does not print results (the CLI does); only the lowest failing rank
 * says why a check failed.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "run/exec_run.h"
#include "sim_internal.h"

/* The all-reduce's buffer: big enough to reach bus bandwidth on NVLink
 * (nccl-tests' curves flatten above 64 MiB), smaller for the CPU, whose
 * shared-memory transport flattens at a few MiB. */
#define CHECK_GPU_BYTES (64.0 * 1024 * 1024)
#define CHECK_CPU_BYTES (4.0 * 1024 * 1024)
#define CHECK_ITERS 5

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Word w (len chars) appears in s as a word of its own, case-insensitive. */
static int has_word(const char *s, const char *w, size_t len)
{
	for (const char *p = s; *p; p++) {
		size_t i = 0;

		if (p != s && isalnum((unsigned char)p[-1]))
			continue;
		while (i < len && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)w[i]))
			i++;
		if (i == len && !isalnum((unsigned char)p[i]))
			return 1;
	}
	return 0;
}

int exec_gpu_matches(const char *device, double device_memory_bytes, const char *gpu,
		     double gpu_memory_bytes)
{
	size_t len;

	if (!device || !gpu || !*gpu)
		return 0;
	if (gp_streq_nocase(device, "cpu") || gp_streq_nocase(gpu, "cpu"))
		return gp_streq_nocase(device, gpu);
	len = strcspn(gpu, "- _");
	if (len == 0 || !has_word(device, gpu, len))
		return 0;
	if (device_memory_bytes > 0 && gpu_memory_bytes > 0) {
		double r = device_memory_bytes / gpu_memory_bytes;

		if (r < 1 / 1.15 || r > 1.15)
			return 0;
	}
	return 1;
}

/* Bus bandwidth of an all-reduce over g: CHECK_ITERS timed after one warm
 * one, every member starting together.  0 for a group of one. */
static enum rc group_busbw(struct exec_job *j, struct exec_group *g, double bytes, double *out)
{
	struct exec_device *d = &j->dev;
	size_t n = (size_t)(bytes / sizeof(float));
	float *buf;
	double t0, t = 0;
	enum rc rc = RC_OK;

	*out = 0;
	if (g->size < 2)
		return RC_OK;
	buf = exec_dalloc(d, n * sizeof(float));
	for (int i = 0; i <= CHECK_ITERS && rc == RC_OK; i++) {
		rc = g->comm->barrier(g);
		t0 = now_s();
		if (rc == RC_OK)
			rc = g->comm->all_reduce(g, buf, n, EXEC_F32, EXEC_SUM);
		if (rc == RC_OK)
			rc = exec_device_sync(d);
		if (i > 0)
			t += now_s() - t0;
	}
	exec_dfree(d, buf, n * sizeof(float));
	if (rc == RC_OK && t > 0)
		*out = 2.0 * (g->size - 1) / g->size * (double)(n * sizeof(float)) /
		       (t / CHECK_ITERS);
	return rc;
}

const char *const exec_check_group_names[EXEC_CHECK_GROUPS] = { "tp", "cp", "pp", "dp" };

int exec_check_group_size(const struct exec_opts *o, int k)
{
	const struct sim_parallel *p = &o->par;
	const int n[EXEC_CHECK_GROUPS] = { p->tp, p->cp, p->pp, p->dp * p->cp };

	return n[k];
}

void exec_expect_init(struct exec_expect *e, const struct exec_opts *o,
		      const struct sim_cluster *c, const struct sim_result *pred,
		      double min_fraction)
{
	const struct sim_parallel *p = &o->par;
	/* ranks: TP innermost, then CP, DP, PP (exec_layout.c); the dp group
	 * is the dp x cp ranks of one weight shard, tp apart */
	const int stride[EXEC_CHECK_GROUPS] = { 1, p->tp, p->tp * p->cp * p->dp, p->tp };
	int cpu = gp_streq_nocase(c->gpu.name, "cpu");

	memset(e, 0, sizeof(*e));
	gp_strlcpy(e->gpu, c->gpu.name, sizeof(e->gpu));
	/* the CPU cluster splits the machine's memory between its ranks */
	e->gpu_memory_bytes = cpu ? 0 : c->gpu.memory_bytes;
	e->memory_bytes = cpu ? exec_predicted_memory(pred) : pred->memory.total;
	for (int k = 0; k < EXEC_CHECK_GROUPS; k++) {
		int n = exec_check_group_size(o, k);
		struct sim_link l;

		sim_group_link(c, n, stride[k], &l);
		e->bus_bytes_per_s[k] = n > 1 ? l.bytes_per_s : 0;
	}
	e->min_fraction = min_fraction;
}

enum rc exec_preflight(struct exec_job *j, const struct exec_opts *o, struct exec_check *out)
{
	const struct exec_expect *e = &o->expect;
	struct exec_group *groups[EXEC_CHECK_GROUPS] = { &j->g.tp, &j->g.cp, &j->g.pp, &j->g.dp };
	double free_b = 0, total_b = 0, v[1 + EXEC_CHECK_GROUPS];
	char why[512] = "";
	enum rc rc = RC_OK;
	int is_gpu;

	memset(out, 0, sizeof(*out));
	is_gpu = strcmp(j->dev.be->name, "cpu") != 0;
	out->msg_bytes = is_gpu ? CHECK_GPU_BYTES : CHECK_CPU_BYTES;
	if (j->dev.be->mem_info)
		rc = j->dev.be->mem_info(&j->dev, &free_b, &total_b);
	if (rc == RC_OK && e->gpu[0] &&
	    !exec_gpu_matches(j->dev.name, j->dev.memory_bytes, e->gpu, e->gpu_memory_bytes)) {
		snprintf(why, sizeof(why), "rank %d: expected a %s (the plan's GPU), found '%s'",
			 j->rank, e->gpu, j->dev.name);
		rc = RC_DEVICE;
	}
	if (rc == RC_OK && e->memory_bytes > 0 && free_b < e->memory_bytes) {
		char a[32], b[32];

		snprintf(why, sizeof(why), "rank %d: the plan needs %s per device, %s is free on %s",
			 j->rank, unit_fmt_bytes(a, sizeof(a), e->memory_bytes),
			 unit_fmt_bytes(b, sizeof(b), free_b), j->dev.name);
		rc = RC_DEVICE;
	}
	out->gpu_match = 1;
	out->total_bytes = total_b;
	if ((rc = exec_job_agree(j, rc, "execute --check", why)) != RC_OK)
		return rc;
	for (int k = 0; k < EXEC_CHECK_GROUPS; k++) {
		rc = group_busbw(j, groups[k], out->msg_bytes, &out->bus_bytes_per_s[k]);
		if (rc != RC_OK)
			return exec_job_agree(j, rc, "execute --check", "");
	}
	/* least over ranks: maximum of the negatives */
	v[0] = -free_b;
	for (int k = 0; k < EXEC_CHECK_GROUPS; k++)
		v[1 + k] = groups[k]->size > 1 ? -out->bus_bytes_per_s[k] : 0;
	if (j->mpi && exec_mpi_world_max(v, 1 + EXEC_CHECK_GROUPS) != RC_OK)
		return RC_DEVICE;
	out->free_bytes_min = -v[0];
	rc = RC_OK;
	why[0] = 0;
	for (int k = 0; k < EXEC_CHECK_GROUPS; k++) {
		double want = e->bus_bytes_per_s[k] * e->min_fraction;

		out->bus_bytes_per_s[k] = -v[1 + k];
		if (rc == RC_OK && groups[k]->size > 1 && want > 0 && out->bus_bytes_per_s[k] < want) {
			snprintf(why, sizeof(why), "%s all-reduce: expected at least %.0f%% of the "
				 "%.1f GB/s bus bandwidth the simulator assumed, found %.1f GB/s",
				 exec_check_group_names[k], 100 * e->min_fraction,
				 e->bus_bytes_per_s[k] / 1e9,
				 out->bus_bytes_per_s[k] / 1e9);
			rc = RC_DEVICE;
		}
	}
	/* every rank holds the same reduced figures, so every rank decides
	 * alike; rank 0 says why */
	if (rc != RC_OK && j->rank == 0)
		gp_error("execute --check: %s", why);
	out->done = 1;
	return rc;
}

enum rc exec_preflight_after_step(struct exec_job *j, struct exec_check *out)
{
	double free_b = 0, total_b = 0, v[2];
	enum rc rc = RC_OK;

	if (j->dev.be->mem_info)
		rc = j->dev.be->mem_info(&j->dev, &free_b, &total_b);
	if ((rc = exec_job_agree(j, rc, "execute --check", "")) != RC_OK)
		return rc;
	/* the CPU's "in use" would be the whole machine's: count the run's
	 * own allocations there */
	v[0] = strcmp(j->dev.be->name, "cpu") != 0 ? total_b - free_b : (double)j->dev.peak_bytes;
	v[1] = (double)j->dev.peak_bytes;
	if (j->mpi && exec_mpi_world_max(v, 2) != RC_OK)
		return RC_DEVICE;
	out->used_after_step_bytes = v[0];
	out->counted_after_step_bytes = v[1];
	return RC_OK;
}
