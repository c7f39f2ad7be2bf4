/*
 * exec_run.c - one rank's life: join the job (MPI under a launcher, alone
 * otherwise), agree on the layout, open the device (a GPU: the one of the
 * launcher's local rank), build the groups (MPI, or NCCL for the CUDA
 * backend), build the trainer, run and time the steps (waiting for the
 * device at the end of each), gather peak memory, leave.
 *
 * Failures before the first step are agreed on by every rank (an
 * all-reduce of the status over MPI, on the host) so all ranks return the
 * same status and only the lowest failing rank explains; a failure during
 * a step, when peers may be blocked in a collective waiting for this rank,
 * ends the job with MPI_Abort after one message naming the rank.
 */
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec_internal.h"

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

enum rc exec_job_agree(const struct exec_job *j, enum rc mine, const char *what,
		       const char *why)
{
	double v[2];

	v[0] = mine == RC_OK ? 0 : mine == RC_DEVICE ? 2 : 1;
	v[1] = mine == RC_OK ? -(double)j->world : -(double)j->rank;
	if (j->mpi && exec_mpi_world_max(v, 2) != RC_OK)
		return RC_DEVICE;
	if (v[0] == 0)
		return RC_OK;
	if (mine != RC_OK && -(int)v[1] == j->rank && why && *why)
		gp_error("%s: %s", what, why);
	return v[0] == 2 ? RC_DEVICE : RC_INPUT;
}

enum rc exec_job_open(struct exec_job *j, const char *what, const char *backend,
		      enum exec_precision precision, const struct sim_parallel *par)
{
	const struct exec_backend *be;
	char why[512] = "";
	enum rc rc;

	memset(j, 0, sizeof(*j));
	j->mpi = exec_under_launcher();
	j->world = 1;
	if (j->mpi && exec_mpi_init(&j->rank, &j->world) != RC_OK)
		return RC_DEVICE;
	if (par) {
		if (par->tp * par->pp * par->dp * par->cp != j->world) {
			char cps[32] = "";

			if (par->cp > 1)
				snprintf(cps, sizeof(cps), " x cp %d", par->cp);
			if (j->rank == 0)
				gp_error("%s: layout: expected %d ranks (tp %d x pp %d x dp %d%s), "
					 "found %d", what, par->tp * par->pp * par->dp * par->cp,
					 par->tp, par->pp, par->dp, cps, j->world);
			exec_world_leave();
			return RC_INPUT;
		}
		exec_layout_init(&j->l, par, j->rank);
	} else {
		struct sim_parallel p;

		sim_parallel_init(&p);
		p.dp = j->world;
		exec_layout_init(&j->l, &p, j->rank);
	}
	/* Whether the backend exists here is every rank's own question (one
	 * node may have GPUs, another none); the lowest failing rank says why. */
	rc = exec_backend_probe(backend, why, sizeof(why));
	be = rc == RC_OK ? exec_backend_find(backend) : NULL;
	if ((rc = exec_job_agree(j, rc, what, why)) != RC_OK)
		goto fail_mpi_rc;
	exec_device_init(&j->dev, be);
	j->dev.precision = precision;
	rc = exec_device_open(&j->dev);
	if ((rc = exec_job_agree(j, rc, what, "")) != RC_OK)
		goto fail_dev;
	if (!j->mpi) {
		exec_group_self(&j->g.world, &j->dev);
		exec_group_self(&j->g.tp, &j->dev);
		exec_group_self(&j->g.pp, &j->dev);
		exec_group_self(&j->g.dp, &j->dev);
		exec_group_self(&j->g.cp, &j->dev);
		return RC_OK;
	}
#ifdef GPUPLAN_CUDA
	if (be == &exec_cuda_backend)
		rc = exec_nccl_groups(&j->l, &j->dev, &j->g);
	else
#endif
		rc = exec_mpi_groups(&j->l, &j->dev, &j->g);
	/* a rank that failed here may leave others blocked in the group's
	 * creation: only ending the job frees them */
	if (rc != RC_OK)
		exec_mpi_abort(rc_exit_code(rc));
	return RC_OK;
fail_dev:
	exec_device_release(&j->dev);
fail_mpi_rc:
	exec_mpi_finalize();
	return rc;
}

void exec_world_leave(void)
{
	int rank, size;
	double v = 0;

	if (!exec_under_launcher() || exec_mpi_init(&rank, &size) != RC_OK)
		return;
	fflush(stdout);
	fflush(stderr);
	exec_mpi_world_max(&v, 1);
	exec_mpi_finalize();
}

void exec_job_close(struct exec_job *j)
{
	exec_groups_release(&j->g);
	exec_device_release(&j->dev);
	if (j->mpi)
		exec_mpi_finalize();
}

enum rc exec_job_world_sum(struct exec_job *j, double *v, int n)
{
	struct exec_device *d = &j->dev;
	size_t bytes = (size_t)n * sizeof(double);
	double *buf = exec_dalloc(d, bytes);
	enum rc rc;

	d->be->from_host(d, buf, v, bytes);
	rc = j->g.world.comm->all_reduce(&j->g.world, buf, (size_t)n, EXEC_F64, EXEC_SUM);
	d->be->to_host(d, v, buf, bytes);
	exec_dfree(d, buf, bytes);
	if (rc == RC_OK)
		rc = exec_device_sync(d);
	return rc;
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
	struct exec_job j;
	struct exec_result r;
	struct exec_trainer *t;
	char why[PATH_MAX + 512] = "";
	enum rc rc;
	int rank, done = 0;

	/* Every rank checks the same options and finds the same answer, so
	 * no communication is needed to agree on these. */
	if (exec_opts_check(o, why, sizeof(why)) != RC_OK) {
		if (exec_launcher_rank() == 0)
			gp_error("execute: %s", why);
		return RC_INPUT;
	}
	rc = exec_job_open(&j, "execute", o->backend, o->precision, &o->par);
	if (rc != RC_OK)
		return rc;
	rank = j.rank;
	if (o->max_memory_bytes >= 1 && o->max_memory_bytes < 1e18)
		j.dev.limit_bytes = (size_t)o->max_memory_bytes;
	if (rank == o->oom_rank)
		j.dev.limit_bytes = 1;
	memset(&r, 0, sizeof(r));
	/* before the model takes its memory: a plan that will not fit says so */
	if (o->check && (rc = exec_preflight(&j, o, &r.check)) != RC_OK) {
		exec_job_close(&j);
		return rc;
	}
	/* Every rank sees the same checkpoint directory (one machine, or a
	 * shared file system), so they find the same newest step. */
	rc = exec_ckpt_prepare(o, &done, why, sizeof(why));
	rc = exec_job_agree(&j, rc, "execute", why);
	if (rc == RC_OK && j.mpi) {
		double v[2] = { done, -done };

		if (exec_mpi_world_max(v, 2) != RC_OK)
			rc = RC_DEVICE;
		else if (v[0] != -v[1]) {
			if (rank == 0)
				gp_error("--resume: %s: expected every rank to find the same newest "
					 "checkpoint, found steps %.0f to %.0f", o->ckpt_dir, -v[1],
					 v[0]);
			rc = RC_INPUT;
		}
	}
	if (rc != RC_OK) {
		exec_job_close(&j);
		return rc;
	}
	t = exec_trainer_new(o, &j.l, &j.dev, &j.g, why, sizeof(why));
	/* Every rank reads the same options and data file, so a failure is
	 * normally everyone's: the lowest failing rank alone says why. */
	rc = exec_job_agree(&j, t ? RC_OK : RC_INPUT, "execute", why);
	if (rc != RC_OK)
		goto out;
	if (done > 0 && (rc = exec_ckpt_load(&j, t, o, done)) != RC_OK)
		goto out;

	r.layout = j.l;
	r.world = j.world;
	r.first_step = done + 1;
	r.steps = o->steps - done;
	gp_strlcpy(r.device, j.dev.name, sizeof(r.device));
	r.device_memory_bytes = j.dev.memory_bytes;
	r.losses = xcalloc((size_t)r.steps, sizeof(double));
	r.grad_norms = xcalloc((size_t)r.steps, sizeof(double));
	r.step_time_s = xcalloc((size_t)r.steps, sizeof(double));
	{
		double v = j.l.dp_rank == 0 && j.l.cp_rank == 0 ? exec_trainer_local_params(t) : 0;

		if (exec_job_world_sum(&j, &v, 1) != RC_OK)
			exec_mpi_abort(rc_exit_code(RC_DEVICE));
		r.params = v;
	}
	for (int s = done + 1; s <= o->steps; s++) {
		struct exec_step_info info;
		int i = s - done - 1;
		double t0;

		exec_watchdog_arm(o->timeout_s, rank, s);
		maybe_fault(o, rank, s);
		exec_fault_hang(o, rank, s);
		exec_watchdog_where(EXEC_WATCH_WAITING);
		if (j.g.world.comm->barrier(&j.g.world) != RC_OK)
			exec_mpi_abort(rc_exit_code(RC_DEVICE));
		exec_watchdog_where(EXEC_WATCH_IN_STEP);
		t0 = now_s();
		rc = exec_trainer_step(t, s, &r.losses[i], &r.grad_norms[i]);
		/* the step's kernels are queued, not done, until the device says so */
		if (rc == RC_OK)
			rc = exec_device_sync(&j.dev);
		if (rc != RC_OK) {
			gp_error("rank %d: step %d failed (%s); ending the job", rank, s,
				 rc_str(rc));
			fflush(stderr);
			/* peers may be blocked waiting for this rank */
			if (j.mpi)
				exec_mpi_abort(rc_exit_code(rc));
			goto out_r;
		}
		r.step_time_s[i] = now_s() - t0;
		/* every rank has the same loss, so all stop here alike: a
		 * diverged run is a failure, not steps of NaN */
		if (!isfinite(r.losses[i])) {
			if (rank == 0)
				gp_error("execute: step %d: expected a finite loss, found %s (the run "
					 "diverged; try a lower --lr)", s,
					 isnan(r.losses[i]) ? "nan" : "inf");
			rc = RC_ERR;
			goto out_r;
		}
		if (s == done + 1 && o->check) {
			rc = exec_preflight_after_step(&j, &r.check);
			if (rc != RC_OK)
				goto out_r;
		}
		if (rank == 0 && o->on_step) {
			info.step = s;
			info.steps = o->steps;
			info.loss = r.losses[i];
			info.grad_norm = r.grad_norms[i];
			info.time_s = r.step_time_s[i];
			o->on_step(o->on_step_ctx, &info);
		}
		if (o->ckpt_dir && o->ckpt_every > 0 && (s % o->ckpt_every == 0 || s == o->steps)) {
			/* a checkpoint is no step: the watchdog waits for it */
			exec_watchdog_disarm();
			rc = exec_ckpt_save(&j, t, o, s);
			if (rc != RC_OK)
				goto out_r;
		}
	}
	r.step_time_median_s = median(r.step_time_s, r.steps);
	r.tokens_per_s = r.step_time_median_s > 0
		? (double)o->par.gbs * o->model.seq / r.step_time_median_s : 0;
	{
		struct sim_model m = o->model;

		m.tied_embeddings = 0;
		r.model_flops_per_rank_s = r.step_time_median_s > 0
			? sim_train_flops(&m, o->par.gbs, SIM_RECOMPUTE_NONE) /
			  r.step_time_median_s / j.world : 0;
	}
	{
		double *peaks = xcalloc((size_t)j.world, sizeof(double));

		rc = gather_peaks(&j.dev, &j.g, rank, j.world, peaks);
		if (rank == 0)
			r.peak_memory_bytes = peaks;
		else
			free(peaks);
	}
	if (rc == RC_OK)
		rc = exec_trainer_trace(t, j.mpi, &r.trace);
	if (rc != RC_OK)
		goto out_r;
	*out = r;
	goto out;
out_r:
	exec_result_release(&r);
out:
	exec_watchdog_disarm();
	exec_trainer_free(t);
	exec_job_close(&j);
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
	exec_trace_release(&r->trace);
	memset(r, 0, sizeof(*r));
}
