/*
 * cmd_execute.c - `gpuplan execute [PLAN.json] [options]`: runs a plan's
 * training steps, one rank per device, and prints the measurement beside
 * the simulator's prediction for the same layout on the same device.
 *
 * Started by hand it checks the layout, then starts `mpirun` with the
 * layout's rank count (a single rank runs in this process); started by
 * mpirun or srun it is one of the ranks.  Rank 0 prints, shows progress
 * on a terminal and writes the files asked for (--json, --trace, which
 * holds every rank's timeline); the others only report errors.
 *
 * This file runs the command: the checks before a run, the launch, the
 * prediction and the run.  It calls cmd_execute_args.c for the flags and
 * cmd_execute_report.c for rank 0's printing (cmd_execute.h), the
 * executor (exec.h), the simulator's prediction and the price catalog.
 */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_calib.h"
#include "cmd_execute.h"
#include "plan.h"

/* The steps between checkpoints when --checkpoint-every is not given:
 * the plan's interval (its spot Young/Daly interval, else the planner's
 * hourly default) over the predicted step time, at least 1; without a
 * prediction, the last step only. */
static int ckpt_every_default(const struct execute_flags *f, double step_s, int steps)
{
	double interval_s = f->have_plan && f->plan.ckpt_interval_s > 0
		? f->plan.ckpt_interval_s : PLAN_DEFAULT_CKPT_INTERVAL_S;
	double n = step_s > 0 ? floor(interval_s / step_s) : steps;

	return n < 1 ? 1 : n > steps ? steps : (int)n;
}

/* Whether path (NULL: not asked for) can be written where it names: its
 * directory exists and this user can write there, and it is not a
 * directory itself.  RC_OK, or RC_USAGE after one line naming flag. */
static enum rc check_output(const char *flag, const char *path)
{
	char dir[PATH_MAX];
	const char *slash;
	struct stat st;

	if (!path)
		return RC_OK;
	if (!*path) {
		gp_error("%s: expected a file name, found ''", flag);
		return RC_USAGE;
	}
	slash = strrchr(path, '/');
	if (!slash)
		gp_strlcpy(dir, ".", sizeof(dir));
	else if (slash == path)
		gp_strlcpy(dir, "/", sizeof(dir));
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		gp_error("%s: %s: expected a file in an existing directory, found no directory %s",
			 flag, path, dir);
		return RC_USAGE;
	}
	if (access(dir, W_OK | X_OK) != 0) {
		gp_error("%s: %s: expected a file in a directory this user can write, found %s "
			 "read-only", flag, path, dir);
		return RC_USAGE;
	}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		gp_error("%s: %s: expected a file, found a directory", flag, path);
		return RC_USAGE;
	}
	return RC_OK;
}

/* " x cp N" when p has context parallelism, else "": the tail of a
 * layout's "tp x pp x dp" in messages. */
static const char *cp_str(char *buf, size_t size, const struct sim_parallel *p)
{
	buf[0] = '\0';
	if (p->cp > 1)
		snprintf(buf, size, " x cp %d", p->cp);
	return buf;
}

/* What the run is predicted on: the executor's CPU ranks; or, for a GPU,
 * the plan's cluster when its GPU is this device, else the catalog GPU
 * whose name and memory match the device, on one node.  Either with its
 * calibration applied.  *catalog_peak is the GPU's datasheet bf16 peak
 * (sim_mfu_peak: MFU is counted against it, not against a calibrated
 * one; the CPU ranks' share of theirs).  Returns RC_OK
 * with *found 0 when no catalog GPU matches (a warning says so). */
static enum rc run_cluster(const struct exec_opts *o, const struct execute_flags *f,
			   const char *dev, double dev_mem, struct sim_plan *p,
			   double *catalog_peak, int *found)
{
	int ranks = exec_opts_ranks(o);
	enum rc rc;

	*found = 0;
	memset(p, 0, sizeof(*p));
	p->par = o->par;
	if (strcmp(o->backend, "cpu") == 0) {
		p->cluster.gpu = *cli_cpu_gpu();
	} else if (f->have_plan && exec_gpu_matches(dev, dev_mem, f->plan.cluster.gpu.name,
						    f->plan.cluster.gpu.memory_bytes)) {
		p->cluster = f->plan.cluster;
	} else {
		struct price_catalog cat;
		struct price_opts po;
		const struct price_gpu *g = NULL;

		price_opts_init(&po);
		po.data_dir = cli_data_dir();
		rc = price_catalog_load(&cat, &po);
		if (rc != RC_OK)
			return rc;
		for (size_t i = 0; i < cat.n_gpus && !g; i++)
			if (exec_gpu_matches(dev, dev_mem, cat.gpus[i].name, cat.gpus[i].memory_bytes))
				p->cluster.gpu = *(g = &cat.gpus[i]);
		price_catalog_release(&cat);
		if (!g) {
			gp_warn("no GPU of gpus.csv matches '%s': no prediction", dev);
			return RC_OK;
		}
		p->cluster.gpus_per_node = ranks < 8 ? ranks : 8;
	}
	rc = cli_calibration_plan(p, f->calibration);
	/* the datasheet's peak, as the calibration keeps it (for the CPU
	 * ranks, their share of the cores): simulate's MFU */
	*catalog_peak = sim_mfu_peak(&p->cluster.gpu);
	if (rc == RC_OK)
		*found = 1;
	return rc;
}

enum rc cmd_execute(int argc, char **argv)
{
	struct exec_opts o;
	struct execute_flags f;
	struct exec_result r;
	struct sim_plan cl;
	struct sim_result pred;
	struct metrics_ctx mc;
	struct step_ctx sc;
	double catalog_peak = 0, dev_mem = 0;
	int have_pred = 0, have_cluster = 0, rank0, need, launching, resume_at = 0;
	char why[PATH_MAX + 512], dev[128], cps[32];
	enum rc rc;

	rc = execute_build_opts(argc, argv, &o, &f);
	if (rc != RC_OK)
		return rc;
	if (f.help) {
		execute_help();
		return RC_OK;
	}
	if (f.quiet)
		gp_log_quiet(1);
	rank0 = exec_launcher_rank() == 0;
	/* under a launcher rank 0 speaks for the job; the others only fail */
	if (!rank0)
		gp_log_quiet(1);
	need = exec_opts_ranks(&o);
	/* Every rank fails the checks below alike; exec_world_leave keeps
	 * them until rank 0 has said why. */
	if (exec_opts_check(&o, why, sizeof(why)) != RC_OK) {
		if (rank0)
			gp_error("execute: %s", why);
		exec_world_leave();
		return RC_INPUT;
	}
	/* the ranks would each find a bad --data file, after the header */
	if (!exec_under_launcher() && o.data_path &&
	    exec_data_check(o.data_path, &o, why, sizeof(why)) != RC_OK) {
		gp_error("--data: %s", why);
		return RC_INPUT;
	}
	/* a run the machine cannot hold is refused before any allocation:
	 * every rank of a launched job on this machine, each rank under a
	 * launcher for the ranks of its node (--check asks each rank's
	 * device itself, before the model is allocated, and says more) */
	if (!o.check && exec_predict(&o, &pred, why, sizeof(why)) == RC_OK &&
	    exec_host_fits(&o, &pred, exec_under_launcher() ? exec_launcher_local_size() : need,
			   why, sizeof(why)) != RC_OK) {
		if (rank0)
			gp_error("execute: %s", why);
		exec_world_leave();
		return RC_INPUT;
	}
	/* the files rank 0 writes at the end: a directory that is not there
	 * fails now, not after the run */
	if (!exec_under_launcher() &&
	    (check_output("--json", f.json) != RC_OK || check_output("--trace", f.trace) != RC_OK ||
	     check_output("--metrics-file", f.metrics_file) != RC_OK))
		return RC_USAGE;
	/* a checkpoint directory that cannot be used, or a checkpoint of
	 * another run, fails here before any rank starts; under a launcher
	 * the ranks ask in exec_run and agree */
	if (!exec_under_launcher() &&
	    (exec_ckpt_prepare(&o, &resume_at, NULL, 0, why, sizeof(why)) != RC_OK ||
	     (resume_at > 0 && exec_ckpt_verify(&o, resume_at, why, sizeof(why)) != RC_OK))) {
		gp_error("%s", why);
		return RC_INPUT;
	}
	if (f.np && f.np != need) {
		if (rank0)
			gp_error("--np: expected %d (tp %d x pp %d x dp %d%s), found %d", need,
				 o.par.tp, o.par.pp, o.par.dp, cp_str(cps, sizeof(cps), &o.par),
				 f.np);
		exec_world_leave();
		return RC_USAGE;
	}
	/* A backend this machine cannot run fails here, before mpirun; under
	 * a launcher every rank asks in exec_run and they agree. */
	if (!exec_under_launcher() && (rc = exec_backend_probe(o.backend, why, sizeof(why))) != RC_OK) {
		gp_error("execute: %s", why);
		return rc;
	}
	/* The prediction (and --check's expectations) for this rank's device;
	 * a bad calibration file fails here, before mpirun.  The process that
	 * starts mpirun says nothing more: its rank 0 will. */
	launching = !exec_under_launcher() && need > 1;
	if (launching)
		gp_log_quiet(1);
	if (exec_backend_device(o.backend, dev, sizeof(dev), &dev_mem, why, sizeof(why)) == RC_OK) {
		rc = run_cluster(&o, &f, dev, dev_mem, &cl, &catalog_peak, &have_cluster);
		if (rc != RC_OK)
			return rc;
	}
	if (launching) {
		gp_log_quiet(f.quiet);
		cli_progress_pass();
		return exec_launch(need, argc, argv);
	}
	if (exec_launcher_size() != need) {
		if (rank0)
			gp_error("execute: layout: expected %d ranks (tp %d x pp %d x dp %d%s), "
				 "found %d", need, o.par.tp, o.par.pp, o.par.dp,
				 cp_str(cps, sizeof(cps), &o.par), exec_launcher_size());
		exec_world_leave();
		return RC_INPUT;
	}
	if (have_cluster) {
		if (exec_predict_on(&o, &cl.cluster, &cl.result, why, sizeof(why)) == RC_OK)
			have_pred = 1;
		else if (rank0)
			gp_warn("no prediction for this layout: %s", why);
	}
	if (o.check && have_pred)
		exec_expect_init(&o.expect, &o, &cl.cluster, &cl.result, CHECK_MIN_FRACTION);

	memset(&sc, 0, sizeof(sc));
	if (rank0) {
		execute_print_header(&o);
		o.on_step = execute_on_step;
		o.on_step_ctx = &sc;
	}
	memset(&mc, 0, sizeof(mc));
	if (rank0 && (f.metrics_port || f.metrics_file)) {
		rc = exec_metrics_new(f.metrics_port ? f.metrics_port : -1, f.metrics_file, &mc.m);
		if (rc != RC_OK)
			return rc;
		mc.o = &o;
		mc.model_flops_per_step = sim_finetune_train_flops(&o.model, &o.par.ft, o.par.gbs,
								   SIM_RECOMPUTE_NONE);
		mc.peak_flops_per_s = catalog_peak * need;
		mc.predicted_step_s = have_pred ? cl.result.step_time_s : 0;
		sc.mc = &mc;
	}
	if (o.ckpt_dir && !f.ckpt_every_set)
		o.ckpt_every = ckpt_every_default(&f, have_pred ? cl.result.step_time_s : 0, o.steps);
	/* the header says where the run starts (exec_run finds it again on
	 * every rank) */
	if (rank0 && o.ckpt_dir) {
		char note[1200];

		if (exec_ckpt_prepare(&o, &resume_at, note, sizeof(note), why, sizeof(why)) != RC_OK)
			resume_at = 0;
		else if (*note)
			gp_info("%s", note);
		execute_print_ckpt(&o, resume_at);
	}
	if (!f.timeout_set) {
		double steps_s = EXEC_TIMEOUT_STEPS * (have_pred ? cl.result.step_time_s : 0);

		o.timeout_s = steps_s > EXEC_TIMEOUT_MIN_S ? steps_s : EXEC_TIMEOUT_MIN_S;
	}
	if (rank0)
		execute_progress_step(&sc, resume_at + 1, o.steps);
	rc = exec_run(&o, &r);
	gp_progress_done(sc.prog);
	if (rc != RC_OK) {
		exec_metrics_free(mc.m);
		return rc;
	}
	if (mc.m) {
		struct exec_metrics_sample x;

		execute_metrics_sample(&mc, &x);
		x.step = r.first_step + r.steps - 1;
		x.loss = r.steps > 0 ? r.losses[r.steps - 1] : -1;
		x.step_time_s = r.step_time_median_s;
		x.tokens_per_s = r.tokens_per_s;
		x.mfu = catalog_peak > 0 ? r.model_flops_per_rank_s / catalog_peak : -1;
		x.peak_memory_bytes = r.peak_memory_bytes;
		x.ranks = need;
		rc = exec_metrics_update(mc.m, &x);
		exec_metrics_free(mc.m);
		if (rc != RC_OK) {
			exec_result_release(&r);
			return rc;
		}
	}
	if (rank0) {
		if (o.check)
			execute_print_check(&r.check, &o.expect, &o, r.device);
		execute_print_summary(&r, have_pred ? &cl.result : NULL, catalog_peak);
		if (f.json)
			rc = exec_run_write_json(f.json, &o, &r, have_pred ? &cl.result : NULL);
		if (rc == RC_OK && f.trace)
			rc = exec_trace_write(f.trace, &o, &r.trace);
		if (rc == RC_OK && f.trace)
			gp_info("trace of %d rank%s, %ld events over %d step%s written to %s",
				r.trace.world, r.trace.world > 1 ? "s" : "", r.trace.n,
				r.trace.steps, r.trace.steps == 1 ? "" : "s", f.trace);
		if (rc == RC_OK && f.trace && r.trace.dropped > 0)
			gp_warn("--trace: %ld events were not recorded (the buffer was full)",
				r.trace.dropped);
	}
	exec_result_release(&r);
	return rc;
}
