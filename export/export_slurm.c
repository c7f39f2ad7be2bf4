/*
 * export_slurm.c - the slurm format (an sbatch script starting the trainer
 * under srun and torchrun, requeueing itself until the training is done)
 * and slurm-execute (gpuplan execute under srun: a measurement, not
 * training).  Directives as Slurm's sbatch manual names them.  Names no
 * partition or account: those are the site's.
 */
#include "export_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest job a Slurm export asks for: a day, within the limit most
 * GPU partitions set (24 to 48 hours); longer runs continue in requeued
 * jobs from their checkpoints. */
#define SLURM_JOB_CAP_S 86400.0
/* Time kept at the end of a job for the trainer's last checkpoint. */
#define SLURM_SAVE_MARGIN_S 1200.0

/* One job's time limit: the whole run with 10% and an hour to spare when
 * that is under SLURM_JOB_CAP_S, else the cap. */
static double slurm_limit_s(const struct sim_plan *p)
{
	double t = p->time_to_train_s * 1.1 + 3600;

	return p->time_to_train_s > 0 && t < SLURM_JOB_CAP_S ? t : SLURM_JOB_CAP_S;
}

/* Slurm's time format D-HH:MM:SS of seconds, rounded up. */
static void slurm_time(char *out, size_t size, double seconds)
{
	/* The epsilon keeps 10 d x 1.1 from rounding up to an extra second. */
	long long t = (long long)ceil(seconds - 1e-6);
	long long d = t / 86400, h = t % 86400 / 3600, m = t % 3600 / 60, sec = t % 60;

	snprintf(out, size, "%lld-%02lld:%02lld:%02lld", d, h, m, sec);
}

/* The Slurm batch script: fw under srun, one torchrun a node meeting at
 * the first node of the allocation, in jobs of at most SLURM_JOB_CAP_S
 * that requeue themselves until the training is done.  Megatron-LM saves
 * and exits before the limit (--exit-duration-in-mins), and the script
 * requeues while latest_checkpointed_iteration.txt is short of the
 * iterations; spot plans also save on the SIGTERM Slurm sends two minutes
 * before a preemption's kill (torchrun passes TERM to its workers).  A
 * DeepSpeed script's progress is its own: Slurm signals the batch script
 * SLURM_SAVE_MARGIN_S before the limit (--signal=B:USR1), which requeues
 * the job, and a script that returns ends it. */
void export_write_slurm(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	int nodes = export_nodes(p), gpn = export_gpus_per_node(p);
	int spot = p->purchase == PRICE_PURCHASE_SPOT, ds = fw == PLAN_FRAMEWORK_DEEPSPEED;
	double limit = slurm_limit_s(p);
	long long samples = export_train_samples(p);
	char lab[4 * PRICE_NAME_MAX], t[64], run[32];
	struct words ws = { 0 };

	slurm_time(t, sizeof(t), limit);
	export_printf(b, "#!/usr/bin/env bash\n");
	export_printf(b, "#SBATCH --job-name=gpuplan-%s\n", export_job_label(lab, sizeof(lab), p->model.name, 0));
	export_printf(b, "#SBATCH --nodes=%d\n#SBATCH --ntasks-per-node=1\n", nodes);
	export_printf(b, "#SBATCH --gpus-per-node=%d\n#SBATCH --exclusive\n", gpn);
	export_printf(b, "#SBATCH --time=%s\n#SBATCH --requeue\n", t);
	if (ds)
		export_printf(b, "#SBATCH --signal=B:USR1@%.0f\n", SLURM_SAVE_MARGIN_S);
	else if (spot)
		export_printf(b, "#SBATCH --signal=TERM@120\n");
	export_printf(b, "#SBATCH --output=%%x-%%j.out\n#SBATCH --open-mode=append\n");
	export_printf(b, "# Your site's partition and account: uncomment, or give them to sbatch\n"
			 "# (sbatch -p PARTITION -A ACCOUNT THIS.sh):\n"
			 "##SBATCH --partition=PARTITION\n##SBATCH --account=ACCOUNT\n");
	export_printf(b, "# %s for %s on %d nodes x %d GPUs (written by gpuplan).\n", export_framework_title(fw),
		      gp_term_escape(lab, sizeof(lab), p->model.name), nodes, gpn);
	if (p->time_to_train_s > 0)
		export_printf(b, "# The run takes %s; ", unit_fmt_duration(run, sizeof(run),
									 p->time_to_train_s));
	else
		export_printf(b, "# ");
	if (ds)
		export_printf(b, "each job runs at most %s (--time); Slurm signals this script\n"
				 "# %.0f min before it (--signal), which requeues the job: your script "
				 "resumes from its last\n# checkpoint and returns when GPUPLAN_TRAIN_SAMPLES "
				 "are done.\n", t, SLURM_SAVE_MARGIN_S / 60);
	else
		export_printf(b, "each job runs at most %s (--time), Megatron-LM saving a\n"
				 "# checkpoint and exiting %.0f min before it (--exit-duration-in-mins); the "
				 "job requeues\n# itself until the training samples are done, resuming from "
				 "CKPT_DIR.\n", t, SLURM_SAVE_MARGIN_S / 60);
	if (spot)
		export_printf(b, "# Spot: a preempted node requeues the job (--requeue), which resumes "
				 "from the last\n# checkpoint%s.\n",
			      ds ? "" : "; SIGTERM before the limit saves one (--exit-signal-handler)");
	export_trainer_head(b, p, fw, 0, DS_CONFIG);
	export_printf(b, ": \"${SLURM_JOB_ID:?submit this script with sbatch}\"\n");
	export_printf(b, "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1)\n"
			 "export MASTER_ADDR\n");
	if (ds)
		export_printf(b, "trap 'scontrol requeue \"$SLURM_JOB_ID\"' USR1\n");
	export_printf(b, "srun --ntasks-per-node=1 --kill-on-bad-exit=1 torchrun --nnodes %d "
			 "--nproc-per-node %d \\\n  --rdzv-backend c10d --rdzv-endpoint "
			 "\"$MASTER_ADDR:29500\" --rdzv-id \"$SLURM_JOB_ID\" \\\n ", nodes, gpn);
	export_trainer_words(&ws, p, fw, DS_CONFIG);
	if (!ds)
		export_words_line(&ws, "--exit-duration-in-mins %.0f%s",
				  floor((limit - SLURM_SAVE_MARGIN_S) / 60) > 1
					  ? floor((limit - SLURM_SAVE_MARGIN_S) / 60) : 1,
				  spot ? " --exit-signal-handler" : "");
	export_words_shell(b, &ws);
	export_words_release(&ws);
	if (ds) {
		/* in the background: bash runs a trap only between commands,
		 * and wait is one it interrupts */
		export_printf(b, " &\nwait $!\n");
		return;
	}
	export_printf(b, "\n# Megatron-LM trains train-samples / global-batch iterations and writes the\n"
			 "# last one saved to latest_checkpointed_iteration.txt.\n");
	if (samples > 0)
		export_printf(b, "iters=%lld\n", samples / p->par.gbs);
	else
		export_printf(b, "iters=$((TRAIN_SAMPLES / %d))\n", p->par.gbs);
	export_printf(b, "done_iters=$(cat \"$CKPT_DIR/latest_checkpointed_iteration.txt\" 2>/dev/null "
			 "|| echo 0)\n"
			 "if [ \"$done_iters\" != release ] && [ \"$done_iters\" -lt \"$iters\" ]; then\n"
			 "  echo \"gpuplan: $done_iters of $iters iterations done: requeueing\"\n"
			 "  scontrol requeue \"$SLURM_JOB_ID\"\nfi\n");
}

/* The slurm-execute format: gpuplan's own measurement of p under srun. */
void export_write_slurm_execute(struct export_buf *b, const struct sim_plan *p,
				enum plan_framework fw)
{
	int nodes = export_nodes(p), gpn = export_gpus_per_node(p);
	char e1[4 * PRICE_NAME_MAX];

	(void)fw;
	export_printf(b, "#!/usr/bin/env bash\n# gpuplan's own measurement run of the plan "
		      "(gpuplan execute), not training\n");
	export_printf(b, "#SBATCH --job-name=gpuplan-execute-%s\n",
		      export_job_label(e1, sizeof(e1), p->model.name, 0));
	export_printf(b, "#SBATCH --nodes=%d\n#SBATCH --ntasks-per-node=%d\n", nodes, gpn);
	export_printf(b, "#SBATCH --gpus-per-node=%d\n#SBATCH --exclusive\n", gpn);
	export_printf(b, "#SBATCH --time=01:00:00\n");
	export_nccl_env(b, p, "export ", 1);
	export_printf(b, "srun --mpi=pmix gpuplan execute \"${PLAN:-plan.json}\" --backend cuda\n");
}
