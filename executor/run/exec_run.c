/*
 * exec_run.c - one rank's life: join the job (exec_job.c: MPI under a
 * launcher, the layout, the device, the groups), build the trainer, run
 * and time the steps (waiting for the device at the end of each), gather
 * peak memory, leave.
 *
 * Failures before the first step are agreed on by every rank (an
 * all-reduce of the status over MPI, on the host, exec_job_agree) so all
 * ranks return the same status and only the lowest failing rank explains;
 * a failure during a step, when peers may be blocked in a collective
 * waiting for this rank, ends the job with MPI_Abort after one message
 * naming the rank.
 */
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run/exec_run.h"

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
	uint64_t frozen0 = 0;

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
	rc = exec_ckpt_prepare(o, &done, NULL, 0, why, sizeof(why));
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
	r.step_cpu_s = xcalloc((size_t)r.steps, sizeof(double));
	{
		double v[2] = { exec_trainer_local_params(t), exec_trainer_local_trainable(t) };
		struct exec_state_bytes st;
		double m[3];

		if (exec_job_world_sum(&j, v, 2) != RC_OK)
			exec_mpi_abort(rc_exit_code(RC_DEVICE));
		r.params = v[0];
		r.trainable_params = v[1];
		exec_trainer_states(t, &st);
		m[0] = st.weights_bytes;
		m[1] = st.grads_bytes;
		m[2] = st.optimizer_bytes;
		if (j.mpi && exec_mpi_world_max(m, 3) != RC_OK)
			exec_mpi_abort(rc_exit_code(RC_DEVICE));
		r.state_weights_bytes = m[0];
		r.state_grads_bytes = m[1];
		r.state_optimizer_bytes = m[2];
	}
	/* what LoRA must leave as it is, hashed now and after the last step */
	r.frozen_unchanged = -1;
	if (o->par.ft.method == SIM_FT_LORA)
		frozen0 = exec_trainer_frozen_hash(t);
	for (int s = done + 1; s <= o->steps; s++) {
		struct exec_step_info info;
		int i = s - done - 1;
		double t0, c0;

		exec_watchdog_arm(o->timeout_s, rank, s);
		maybe_fault(o, rank, s);
		exec_fault_hang(o, rank, s);
		exec_watchdog_where(EXEC_WATCH_WAITING);
		if (j.g.world.comm->barrier(&j.g.world) != RC_OK)
			exec_mpi_abort(rc_exit_code(RC_DEVICE));
		exec_watchdog_where(EXEC_WATCH_IN_STEP);
		t0 = now_s();
		c0 = exec_thread_cpu_s();
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
		r.step_cpu_s[i] = exec_thread_cpu_s() - c0;
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
			info.cpu_s = r.step_cpu_s[i];
			info.cpu_timed = j.dev.cpu_timed;
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
	if (r.frozen_unchanged == -1 && o->par.ft.method == SIM_FT_LORA) {
		double changed = exec_trainer_frozen_hash(t) != frozen0;

		if (exec_job_world_sum(&j, &changed, 1) != RC_OK)
			exec_mpi_abort(rc_exit_code(RC_DEVICE));
		r.frozen_unchanged = changed == 0;
	}
	r.step_time_median_s = median(r.step_time_s, r.steps);
	{
		/* each step's CPU time summed over the ranks, over the cores
		 * they had; and whether every rank's CPU time is its kernels'
		 * (the last slot) */
		double *v = xmalloc(((size_t)r.steps + 1) * sizeof(double));
		int cores = gp_cpu_count() < j.world ? gp_cpu_count() : j.world;

		memcpy(v, r.step_cpu_s, (size_t)r.steps * sizeof(double));
		v[r.steps] = j.dev.cpu_timed;
		if (exec_job_world_sum(&j, v, r.steps + 1) != RC_OK)
			exec_mpi_abort(rc_exit_code(RC_DEVICE));
		for (int i = 0; i < r.steps; i++)
			r.step_cpu_s[i] = v[i] / (cores > 0 ? cores : 1);
		r.cpu_timed = v[r.steps] == j.world;
		free(v);
	}
	r.step_cpu_median_s = median(r.step_cpu_s, r.steps);
	r.tokens_per_s = r.step_time_median_s > 0
		? (double)o->par.gbs * o->model.seq / r.step_time_median_s : 0;
	{
		struct sim_model m = o->model;

		m.tied_embeddings = 0;
		/* LoRA's: no weight gradients of the base, the adapters' GEMMs
		 * (sim_finetune_train_flops; pre-training's without one) */
		r.model_flops_per_rank_s = r.step_time_median_s > 0
			? sim_finetune_train_flops(&m, &o->par.ft, o->par.gbs, SIM_RECOMPUTE_NONE) /
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
	free(r->step_cpu_s);
	free(r->peak_memory_bytes);
	exec_trace_release(&r->trace);
	memset(r, 0, sizeof(*r));
}
