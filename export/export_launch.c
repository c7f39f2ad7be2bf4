/*
 * export_launch.c - the launch shape every launcher shares: how the plan's
 * GPUs start as nodes x GPUs per node, the training length and checkpoint
 * interval the trainer is told, the NCCL environment, the torchrun line
 * and its MASTER_ADDR check, a job's label.  Writes no whole script and
 * names no trainer's flags.
 */
#include "export_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int export_gpus(const struct sim_plan *p)
{
	return p->par.tp * p->par.pp * p->par.dp * p->par.cp;
}

/* How the plan's GPUs are started: *nodes x *gpn processes, as many on
 * every node (torchrun, srun and a PyTorchJob start the same number on
 * each).  All on one node when they fit; else the most GPUs per node that
 * divide the plan's GPUs over at most the plan's nodes, each tensor-
 * parallel group inside one node as the simulator placed it.  12 GPUs on
 * 8-GPU nodes start as 2 x 6, never 16.  Returns 0, or -1 with a reason in
 * why[size] when no such split exists. */
int export_launch_shape(const struct sim_plan *p, int *nodes, int *gpn, char *why, size_t size)
{
	int g = export_gpus(p), n = p->cluster.gpus_per_node > 0 ? p->cluster.gpus_per_node : g;
	int have = (g + n - 1) / n;

	/* the plan's nodes when it rents more than its GPUs fill */
	if (p->nodes > have)
		have = p->nodes;
	if (g <= n) {
		*nodes = 1;
		*gpn = g;
		return 0;
	}
	for (int k = n; k >= 1; k--) {
		if (g % k || g / k > have || (p->par.tp <= n && k % p->par.tp))
			continue;
		*nodes = g / k;
		*gpn = k;
		return 0;
	}
	if (why && size)
		snprintf(why, size, "cluster: expected the plan's %d GPUs split evenly over at most "
			 "%d nodes of %d (a multiple of tp %d on each), found no such split",
			 g, have, n, p->par.tp);
	return -1;
}

/* GPUs per node and nodes as launched (export_launch_shape; export_check refuses
 * a plan without one before anything is written). */
int export_gpus_per_node(const struct sim_plan *p)
{
	int nodes, gpn;

	return export_launch_shape(p, &nodes, &gpn, NULL, 0) == 0 ? gpn : export_gpus(p);
}

int export_nodes(const struct sim_plan *p)
{
	return export_gpus(p) / export_gpus_per_node(p);
}

int export_grad_accum(const struct sim_plan *p)
{
	return p->par.gbs / (p->par.mbs * p->par.dp);
}

/* NCCL settings the layout needs.  GPUs without peer-to-peer (RTX 4090:
 * disabled in the stock driver, NVIDIA/nccl#1127) must not try it;
 * Megatron wants one CUDA connection so that TP communication keeps its
 * order with compute (Megatron-LM README, CUDA_DEVICE_MAX_CONNECTIONS),
 * except under Megatron-FSDP (one_connection 0), which refuses it:
 * arguments.py asserts CUDA_DEVICE_MAX_CONNECTIONS != "1" with
 * --use-megatron-fsdp, and the Megatron-FSDP user guide unsets it. */
void export_nccl_env(struct export_buf *b, const struct sim_plan *p, const char *prefix,
		     int one_connection)
{
	if (one_connection)
		export_printf(b, "%sCUDA_DEVICE_MAX_CONNECTIONS=1\n", prefix);
	else
		export_printf(b, "# Megatron-FSDP asserts CUDA_DEVICE_MAX_CONNECTIONS is not 1 "
				 "(megatron/training/arguments.py)\nunset CUDA_DEVICE_MAX_CONNECTIONS\n");
	if (!p->cluster.gpu.p2p)
		export_printf(b, "%sNCCL_P2P_DISABLE=1\n", prefix);
	if (export_nodes(p) > 1)
		export_printf(b, "%sNCCL_IB_DISABLE=0\n", prefix);
}

/* Sequences to train: the plan's tokens over its sequence length,
 * rounded up; 0 when the plan has no tokens. */
long long export_train_samples(const struct sim_plan *p)
{
	return p->tokens > 0 ? (long long)ceil(p->tokens / p->model.seq - 1e-9) : 0;
}

/* The plan's checkpoint interval (PLAN_DEFAULT_CKPT_INTERVAL_S when it
 * has none, a plan from `simulate`) in seconds. */
double export_ckpt_interval_s(const struct sim_plan *p)
{
	return p->ckpt_interval_s > 0 ? p->ckpt_interval_s : PLAN_DEFAULT_CKPT_INTERVAL_S;
}

/* The interval in optimizer steps at the predicted step time: at least 1. */
long long export_save_interval_steps(const struct sim_plan *p)
{
	double step = p->result.step_time_s, n;

	if (!(step > 0))
		return 1;
	n = floor(export_ckpt_interval_s(p) / step + 0.5);
	return n >= 1 ? (long long)n : 1;
}

/* The torchrun line that starts nodes x gpn workers of p: one node
 * standalone, else a c10d rendezvous at MASTER_ADDR (which the script
 * checks first: export_master_addr_check). */
void export_torchrun_line(struct export_buf *b, const struct sim_plan *p)
{
	export_printf(b, "torchrun --nnodes %d --nproc-per-node %d", export_nodes(p),
		      export_gpus_per_node(p));
	if (export_nodes(p) > 1) {
		char id[PRICE_NAME_MAX + 16], *q;

		snprintf(id, sizeof(id), "gpuplan-%s", p->model.name);
		q = gp_shell_quote(id);
		export_printf(b, " --rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:29500\""
				 " --rdzv-id %s", q);
		free(q);
	} else {
		export_printf(b, " --standalone");
	}
}

/* A multi-node torchrun needs the rendezvous host: stop with what to set
 * rather than torchrun's own error about an empty endpoint. */
void export_master_addr_check(struct export_buf *b, const struct sim_plan *p)
{
	if (export_nodes(p) > 1)
		export_printf(b, ": \"${MASTER_ADDR:?set MASTER_ADDR to the address of the first node and run "
				 "this script on each of the %d nodes}\"\n", export_nodes(p));
}

/* Where p's tokenizer is gated on the Hugging Face Hub, the line that
 * stops the script until HF_TOKEN is set, and its export: every rank
 * loads the tokenizer, so every node needs the token (read from the
 * environment, never written here). */
void export_hf_token_check(struct export_buf *b, const struct sim_plan *p)
{
	char e[4 * PRICE_NAME_MAX];

	if (!p->model.tokenizer_gated)
		return;
	export_printf(b, "# the tokenizer %s is gated on the Hugging Face Hub: every node needs HF_TOKEN\n"
			 ": \"${HF_TOKEN:?set HF_TOKEN to a Hugging Face token with access to the "
			 "gated tokenizer, on every node}\"\nexport HF_TOKEN\n",
		      gp_term_escape(e, sizeof(e), p->model.tokenizer));
}

/* name as a job's label into buf[size]: what is not a letter, a digit,
 * '.', '_' or '-' becomes '-'.  With k8s, an RFC 1035 label as the
 * PyTorchJob webhook and the TrainJob's CRD want it: lower-case letters,
 * digits and '-' ('.' and '_' too become '-'), at most 40 characters so
 * that the pod names the operators make ("-master-0", "-worker-123",
 * "-node-0-0") stay within 63, starting with a letter ("gpuplan-" comes
 * first), no '-' at the end.  A label, not a quoted word: Slurm reads
 * #SBATCH lines with its own rules.  Returns buf. */
char *export_job_label(char *buf, size_t size, const char *name, int k8s)
{
	size_t n = 0, max = k8s && size > 41 ? 41 : size;

	for (const char *s = name; *s && n + 1 < max; s++) {
		char c = *s;

		if (k8s && c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || ((c == '.' || c == '_') && !k8s)))
			c = '-';
		buf[n++] = c;
	}
	while (k8s && n > 0 && buf[n - 1] == '-')
		n--;
	buf[n] = '\0';
	return buf;
}
