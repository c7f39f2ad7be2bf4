/*
 * exec_predict.c - the simulator's prediction of an executor run: the
 * CPU cluster of a run's ranks (exec_cpu_spec.c's figures), the layout
 * priced as the executor's backend runs it, and what of a prediction a
 * run's own measurements cover.
 *
 * Activations are priced at the element size the backend stores them in
 * (exec_act_bytes): 2 bytes for the bf16 CUDA backend, 4 for the fp32
 * ones, which the simulator also takes for fp32 weights with no master
 * copy (4 + 4 + 8 bytes a parameter); gradients are fp32 in every backend
 * (the bf16 CUDA one keeps 2 + 4 + 12 = 18).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exec.h"

double exec_predicted_memory(const struct sim_result *pred)
{
	return pred->memory.total - pred->memory.other;
}

double exec_predicted_fwd_bwd(const struct sim_result *pred)
{
	return pred->breakdown.compute_s + pred->breakdown.tp_comm_s + pred->breakdown.cp_comm_s;
}

double exec_peak_memory(const struct exec_result *r)
{
	double peak = 0;

	for (int i = 0; r->peak_memory_bytes && i < r->world; i++)
		if (r->peak_memory_bytes[i] > peak)
			peak = r->peak_memory_bytes[i];
	return peak;
}

enum rc exec_predict(const struct exec_opts *o, struct sim_result *out,
		     char *why, size_t size)
{
	struct sim_cluster c;

	exec_cpu_cluster(&c, exec_opts_ranks(o));
	return exec_predict_on(o, &c, out, why, size);
}

void exec_price_parallel(const char *backend, enum exec_precision precision,
			 struct sim_parallel *par)
{
	int cuda = backend && strcmp(backend, "cuda") == 0;

	/* the simulator prices a bf16 trainer's 2-byte activations; an fp32
	 * backend keeps them wider */
	par->act_bytes_per_element = exec_act_bytes(backend, precision);
	/* and its gradients are fp32 in every backend: the fp32 ones keep
	 * 4 (weights) + 4 (gradients) + 8 (AdamW) bytes a parameter, the
	 * bf16 CUDA one a 2-byte working copy of the weights beside the fp32
	 * master, 2 + 4 + 12 = 18 (sim_model_states); the gradients are
	 * reduced at 4 bytes */
	par->grad_bytes_per_param = 4;
	/* its trainer sums ZeRO 0 and 1's gradients over DP under the
	 * backward, a unit at a time (ZeRO 1 by a reduce-scatter), but
	 * gathers ZeRO 1's updated weights in the optimizer step; it waits
	 * for ZeRO 2 and 3's reductions and gathers where it issues them,
	 * and on the CPU the sums take the cores the compute runs on (and
	 * Open MPI moves them on only inside MPI calls): nothing hides those */
	if (par->zero >= 2 || !cuda)
		par->dp_overlap = SIM_DP_OVERLAP_NONE;
	else if (par->zero == 1)
		par->dp_overlap = SIM_DP_OVERLAP_SUMS;
	else
		par->dp_overlap = SIM_DP_OVERLAP_ALL;
	/* and its ZeRO-2 keeps only a shard of the gradients: it reduce-
	 * scatters each micro-batch's (train_grads_end) */
	par->zero2_every_micro_batch = 1;
}

enum rc exec_predict_on(const struct exec_opts *o, const struct sim_cluster *c,
			struct sim_result *out, char *why, size_t size)
{
	struct sim_parallel par = o->par;
	enum rc rc;

	exec_price_parallel(o->backend, o->precision, &par);
	rc = sim_check(&o->model, &par, c, why, size);
	if (rc != RC_OK)
		return rc;
	sim_step(&o->model, &par, c, out);
	return RC_OK;
}

double exec_host_available_bytes(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	double kib = -1;
	long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	if (kib >= 0)
		return kib * 1024.0;
	return pages > 0 && page > 0 ? (double)pages * (double)page : 0;
}

enum rc exec_host_fits(const struct exec_opts *o, const struct sim_result *pred,
		       int local_ranks, char *why, size_t size)
{
	double avail = exec_host_available_bytes(), per = pred->memory.total, need;
	char a[32], b[32];

	if (!o->backend || strcmp(o->backend, "cpu") != 0 || avail <= 0)
		return RC_OK;
	need = per * local_ranks;
	if (isfinite(need) && need <= avail)
		return RC_OK;
	snprintf(why, size, "memory: expected the run to fit the %s this machine has available, "
		 "found %d CPU rank%s x %s (the simulator's memory per rank); shrink the model for "
		 "a trial with --layers or --hidden", unit_fmt_bytes(a, sizeof(a), avail),
		 local_ranks, local_ranks == 1 ? "" : "s", unit_fmt_bytes(b, sizeof(b), per));
	return RC_INPUT;
}
