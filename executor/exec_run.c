/*
 * exec_run.c - one rank's life: join the job (MPI under a launcher, alone
 * otherwise), agree on the layout, build the trainer, run and time the
 * steps, gather peak memory, leave.
 *
 * Failures before the first step are agreed on by every rank (an
 * all-reduce of the status) so all ranks return the same status; a failure
 * during a step, when peers may be blocked in a collective waiting for this
 * rank, ends the job with MPI_Abort after one message naming the rank.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec_internal.h"

int exec_under_launcher(void)
{
	const char *a = getenv("OMPI_COMM_WORLD_SIZE"), *b = getenv("PMI_SIZE");

	return (a && *a) || (b && *b);
}

int exec_launcher_rank(void)
{
	const char *r = getenv("OMPI_COMM_WORLD_RANK");

	if (!r || !*r)
		r = getenv("PMI_RANK");
	return r && *r ? atoi(r) : 0;
}

int exec_launcher_size(void)
{
	const char *r = getenv("OMPI_COMM_WORLD_SIZE");

	if (!r || !*r)
		r = getenv("PMI_SIZE");
	return r && *r ? atoi(r) : 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
	double *s = xmalloc((size_t)n * sizeof(double)), m;

	memcpy(s, v, (size_t)n * sizeof(double));
	qsort(s, (size_t)n, sizeof(double), cmp_double);
	m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
	free(s);
	return m;
}

static void groups_release(struct exec_groups *g)
{
	exec_group_release(&g->dp);
	exec_group_release(&g->pp);
	exec_group_release(&g->tp);
	exec_group_release(&g->world);
}

static void maybe_fault(const struct exec_opts *o, int rank, int step)
{
	if (rank != o->fault_rank || step != o->fault_step)
		return;
	gp_error("rank %d: fault injected at step %d (%s), killing this rank",
		 rank, step, EXEC_FAULT_ENV);
	fflush(stderr);
	raise(SIGKILL);
}

/* Gathers every rank's peak bytes to the world (each fills its slot). */
static enum rc gather_peaks(struct exec_device *d, struct exec_groups *g,
			    int rank, int world, double *out)
{
	double *buf;
	enum rc rc;

	memset(out, 0, (size_t)world * sizeof(double));
	out[rank] = (double)d->peak_bytes;
	buf = exec_dalloc(d, (size_t)world * sizeof(double));
	d->be->from_host(d, buf, out, (size_t)world * sizeof(double));
	rc = g->world.comm->all_reduce(&g->world, buf, (size_t)world, EXEC_F64, EXEC_SUM);
	d->be->to_host(d, out, buf, (size_t)world * sizeof(double));
	exec_dfree(d, buf, (size_t)world * sizeof(double));
	return rc;
}

enum rc exec_run(const struct exec_opts *o, struct exec_result *out)
{
	int mpi = exec_under_launcher(), rank = 0, world = 1, need;
	struct exec_result r;
	struct exec_layout l;
	struct exec_device dev;
	struct exec_groups g;
	struct exec_trainer *t = NULL;
	char why[512] = "";
	enum rc rc;

	if (mpi && exec_mpi_init(&rank, &world) != RC_OK)
		return RC_DEVICE;
	need = exec_opts_ranks(o);
	/* Every rank checks the same options and finds the same answer, so
	 * no communication is needed to agree on these. */
	rc = exec_opts_check(o, why, sizeof(why));
	if (rc == RC_OK && world != need) {
		snprintf(why, sizeof(why), "layout: expected %d ranks (tp %d x pp %d x dp %d), "
			 "found %d", need, o->par.tp, o->par.pp, o->par.dp, world);
		rc = RC_INPUT;
	}
	if (rc != RC_OK) {
		if (rank == 0)
			gp_error("execute: %s", why);
		exec_mpi_finalize();
		return rc;
	}
	exec_layout_init(&l, &o->par, rank);
	exec_device_init(&dev, exec_backend_find(o->backend));
	if (mpi) {
		rc = exec_mpi_groups(&l, &dev, &g);
		if (rc != RC_OK) {
			exec_mpi_abort(rc_exit_code(rc));
			return rc;
		}
	} else {
		exec_group_self(&g.world, &dev);
		exec_group_self(&g.tp, &dev);
		exec_group_self(&g.pp, &dev);
		exec_group_self(&g.dp, &dev);
	}
	t = exec_trainer_new(o, &l, &dev, &g, why, sizeof(why));
	/* Every rank reads the same options and data file, so a failure is
	 * normally everyone's: the lowest failing rank alone says why. */
	{
		double v = t ? -(double)world : -(double)rank;

		if (g.world.comm->all_reduce(&g.world, &v, 1, EXEC_F64, EXEC_MAX) != RC_OK)
			exec_mpi_abort(rc_exit_code(RC_DEVICE));
		if (!t && -(int)v == rank)
			gp_error("execute: %s", why);
		rc = v > -(double)world ? RC_INPUT : RC_OK;
	}
	if (rc != RC_OK)
		goto out;

	memset(&r, 0, sizeof(r));
	r.layout = l;
	r.world = world;
	r.steps = o->steps;
	r.losses = xcalloc((size_t)o->steps, sizeof(double));
	r.grad_norms = xcalloc((size_t)o->steps, sizeof(double));
	r.step_time_s = xcalloc((size_t)o->steps, sizeof(double));
	{
		double v = l.dp_rank == 0 ? exec_trainer_local_params(t) : 0;

		if (g.world.comm->all_reduce(&g.world, &v, 1, EXEC_F64, EXEC_SUM) != RC_OK)
			exec_mpi_abort(rc_exit_code(RC_DEVICE));
		r.params = v;
	}
	for (int s = 1; s <= o->steps; s++) {
		struct exec_step_info info;
		double t0;

		maybe_fault(o, rank, s);
		if (g.world.comm->barrier(&g.world) != RC_OK)
			exec_mpi_abort(rc_exit_code(RC_DEVICE));
		t0 = now_s();
		rc = exec_trainer_step(t, s, &r.losses[s - 1], &r.grad_norms[s - 1]);
		if (rc != RC_OK) {
			gp_error("rank %d: step %d failed (%s); ending the job", rank, s,
				 rc_str(rc));
			fflush(stderr);
			/* peers may be blocked waiting for this rank */
			if (mpi)
				exec_mpi_abort(rc_exit_code(rc));
			goto out_r;
		}
		r.step_time_s[s - 1] = now_s() - t0;
		if (rank == 0 && o->on_step) {
			info.step = s;
			info.steps = o->steps;
			info.loss = r.losses[s - 1];
			info.grad_norm = r.grad_norms[s - 1];
			info.time_s = r.step_time_s[s - 1];
			o->on_step(o->on_step_ctx, &info);
		}
	}
	r.step_time_median_s = median(r.step_time_s, o->steps);
	r.tokens_per_s = r.step_time_median_s > 0
		? (double)o->par.gbs * o->model.seq / r.step_time_median_s : 0;
	{
		struct sim_model m = o->model;

		m.tied_embeddings = 0;
		r.model_flops_per_rank_s = r.step_time_median_s > 0
			? sim_train_flops(&m, o->par.gbs, SIM_RECOMPUTE_NONE) /
			  r.step_time_median_s / world : 0;
	}
	{
		double *peaks = xcalloc((size_t)world, sizeof(double));

		rc = gather_peaks(&dev, &g, rank, world, peaks);
		if (rank == 0)
			r.peak_memory_bytes = peaks;
		else
			free(peaks);
	}
	if (rc != RC_OK)
		goto out_r;
	*out = r;
	goto out;
out_r:
	exec_result_release(&r);
out:
	exec_trainer_free(t);
	groups_release(&g);
	exec_device_release(&dev);
	if (mpi)
		exec_mpi_finalize();
	return rc;
}

void exec_result_release(struct exec_result *r)
{
	if (!r)
		return;
	free(r->losses);
	free(r->grad_norms);
	free(r->step_time_s);
	free(r->peak_memory_bytes);
	memset(r, 0, sizeof(*r));
}
