/*
 * exec_predict.c - the CPU backend as a device the simulator can price,
 * and the simulator's prediction of an executor run.
 *
 * The "cpu" device is one rank of the fp32 CPU backend.  Its figures are
 * defaults measured once, on the machine this backend was written on (one
 * core of an AMD EPYC server, gcc 12 at -O2 without -march, so SSE2):
 *   GEMM: exec_cpu.c's 4 x 8 register tile runs 7.7 to 8.5 GFLOP/s at
 *     shapes 256 to 2048 (forward and backward), and `gpuplan calibrate
 *     --backend cpu` finds 7.0 to 7.6 GFLOP/s at 256 tokens whether the
 *     smallest side is 64, 128 or 256: unlike a GPU's tensor-core tiles
 *     the CPU's rate hardly depends on it.  So the efficiency curve's knee
 *     (price_gpu.gemm_dim_half) is 4, not the GPUs' SIM_GEMM_DIM_HALF
 *     (94% of peak at side 64, 98% at 256), and peak is 7.8 GFLOP/s.
 *   memory: an fp32 axpy streams 31 GB/s on one core; 20 GB/s leaves room
 *     for the other ranks sharing the memory controller.
 *   element-wise: a layer's norms, residual adds and activation do not
 *     stream: `gpuplan calibrate --backend cpu` finds 0.84 to 1.18 GB/s
 *     in the simulator's byte count for a GELU layer (its tanhf dominates)
 *     and 3.9 to 6.3 for a SwiGLU layer: 1 and 5 GB/s.
 *   attention: exec_cpu.c's loops over scores are not its GEMM tile; the
 *     calibration's core (one sequence of 256, 8 heads of 32 sharing 4)
 *     runs the simulator's FLOP count at 3.5 to 4.5 GFLOP/s: 3.5.
 *   optimizer: AdamW's square root and division make it compute-bound,
 *     6.4 to 7.3 ms over 1 Mi parameters (6.6 ns each, as in a 63M-
 *     parameter run), 7.2 to 8.3 GB/s in the simulator's byte count
 *     (sim_optimizer_bytes) at its SIM_HBM_EFF: 7.5 GB/s.
 *   between ranks: OpenMPI's shared-memory transport copies in and out,
 *     about 4 GB/s per rank one direction, 2 us per message.
 * When ranks outnumber the cores they share them, so the per-rank figures
 * are scaled by min(1, cores / ranks).  exec_cpu_gpu() is the one place
 * these figures live.
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

#define EXEC_CPU_FLOPS_PER_S 7.8e9
#define EXEC_CPU_GEMM_DIM_HALF 4.0
#define EXEC_CPU_MEM_BYTES_PER_S 20e9
#define EXEC_CPU_LINK_BYTES_PER_S 4e9
#define EXEC_CPU_ELT_GELU_BYTES_PER_S 1e9
#define EXEC_CPU_ELT_SWIGLU_BYTES_PER_S 5e9
#define EXEC_CPU_ATTN_FLOPS_PER_S 3.5e9
#define EXEC_CPU_OPT_BYTES_PER_S 7.5e9
#define EXEC_CPU_LATENCY_S 2e-6

static double machine_ram_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);

	return pages > 0 && size > 0 ? (double)pages * (double)size : 8.0 * UNIT_GIB;
}

void exec_cpu_gpu(struct price_gpu *g)
{
	memset(g, 0, sizeof(*g));
	gp_strlcpy(g->name, "cpu", sizeof(g->name));
	g->memory_bytes = machine_ram_bytes();
	g->hbm_bytes_per_s = EXEC_CPU_MEM_BYTES_PER_S;
	g->bf16_flops_per_s = EXEC_CPU_FLOPS_PER_S;
	g->tf32_flops_per_s = EXEC_CPU_FLOPS_PER_S;
	g->fp32_flops_per_s = EXEC_CPU_FLOPS_PER_S;
	g->gemm_dim_half = EXEC_CPU_GEMM_DIM_HALF;
	g->elt_bytes_per_s[0] = EXEC_CPU_ELT_GELU_BYTES_PER_S;
	g->elt_bytes_per_s[1] = EXEC_CPU_ELT_SWIGLU_BYTES_PER_S;
	g->attn_flops_per_s = EXEC_CPU_ATTN_FLOPS_PER_S;
	g->opt_bytes_per_s = EXEC_CPU_OPT_BYTES_PER_S;
	gp_strlcpy(g->intra_link, "shared memory", sizeof(g->intra_link));
	g->intra_bytes_per_s = EXEC_CPU_LINK_BYTES_PER_S;
	g->context_bytes = -1;	/* no CUDA context: malloc'd host memory */
}

void exec_cpu_cluster(struct sim_cluster *c, int ranks)
{
	struct price_gpu g;

	exec_cpu_gpu(&g);
	exec_cpu_cluster_of(c, &g, 0, ranks);
}

void exec_cpu_cluster_of(struct sim_cluster *c, const struct price_gpu *g, double latency_s,
			 int ranks)
{
	double share = 1.0, latency = latency_s > 0 ? latency_s : EXEC_CPU_LATENCY_S;
	int cores = gp_cpu_count();

	if (ranks < 1)
		ranks = 1;
	if (ranks > cores)
		share = (double)cores / ranks;
	memset(c, 0, sizeof(*c));
	c->gpu = *g;
	c->gpu.memory_bytes /= ranks;
	c->gpu.bf16_flops_per_s *= share;
	c->gpu.mfu_flops_per_s *= share;
	c->gpu.tf32_flops_per_s *= share;
	c->gpu.fp32_flops_per_s *= share;
	c->gpu.hbm_bytes_per_s *= share;
	c->gpu.elt_bytes_per_s[0] *= share;
	c->gpu.elt_bytes_per_s[1] *= share;
	c->gpu.attn_flops_per_s *= share;
	c->gpu.opt_bytes_per_s *= share;
	c->gpu.intra_bytes_per_s *= share;
	c->gpus_per_node = ranks;
	c->intra_bytes_per_s = c->gpu.intra_bytes_per_s;
	c->inter_bytes_per_s = c->gpu.intra_bytes_per_s;
	c->latency_s = latency / share;
	/* The executor calls its kernels from C, with no eager framework's
	 * per-layer dispatch cost (sim.h, host_layer_s). */
	c->host_layer_s = -1;
}

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
	 * scatters each micro-batch's (grads_end) */
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
