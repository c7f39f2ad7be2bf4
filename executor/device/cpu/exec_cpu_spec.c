/*
 * exec_cpu_spec.c - the CPU backend as a device the simulator can price:
 * its figures as a catalog GPU (exec_cpu_gpu) and a cluster of ranks
 * sharing one machine (exec_cpu_cluster).
 *
 * The "cpu" device is one rank of the fp32 CPU backend.  Its figures are
 * defaults measured once, on one core of a shared 2-core x86-64 virtual
 * machine (Sapphire Rapids, AVX-512; /proc/cpuinfo: "Intel(R) Xeon(R)
 * Processor"), OpenBLAS 0.3.21 (Debian's libopenblas0-pthread) on one
 * thread, gcc 12 at -O2, on 2026-12-06: the medians of ten runs of
 * `gpuplan calibrate --backend cpu`, which times each kernel by its
 * thread's CPU time (the machine's other load made the wall clock 1.5 to
 * 5 times longer), the optimizer's of the five runs that measured it at
 * 16 Mi parameters:
 *   GEMM: 138 to 152 GFLOP/s fitted on the calibration's 256-token
 *     shapes (hidden 64 to 256) with a knee of 1: so peak 140 GFLOP/s.
 *     GPT-2 124M's GEMMs at the benchmark's 1024 tokens (seq 256 x batch
 *     4: 1024 x 2304 x 768, 768 x 768, 3072 x 768, 768 x 3072) ran 151
 *     to 162 GFLOP/s the same hour, 127 to 140 on a busier day: the
 *     other vCPU's work slows even the CPU time of a core through the
 *     caches and memory it shares.  The efficiency curve's knee
 *     (price_gpu.gemm_dim_half) is 4, not the GPUs' SIM_GEMM_DIM_HALF
 *     (94% of peak at side 64, 98% at 256): unlike a GPU's tensor-core
 *     tiles the CPU's rate hardly depends on the smallest side, and the
 *     fit's 1 is the bottom of its range.  The hand-written 4 x 8 tile
 *     before OpenBLAS ran 7.8 GFLOP/s.  OpenBLAS packs its operands into
 *     cache as it computes, so the simulator prices these GEMMs by their
 *     FLOPs alone, with no memory term (price_gpu.gemm_cached).  These
 *     are GEMMs on operands in cache, without biases; calibrate now times
 *     them with their biases on operands from memory, as a run has them
 *     (exec_calibrate.c, calib_sets), and fits a knee of 40 to 55 with a
 *     peak of 141 to 150 GFLOP/s (hidden up to 512, load average 5 to 9):
 *     the figures here are kept until a quiet machine measures them again.
 *   memory: a 64 MiB copy moves 12.9 to 13.5 GB/s (read plus write),
 *     16.1 to 16.9 GB/s at the simulator's SIM_HBM_EFF: 16.5.
 *   element-wise: a layer's norms, residual adds and activation do not
 *     stream: 1.39 to 1.51 GB/s in the simulator's byte count for a GELU
 *     layer (its tanhf dominates; 1.42 at 1024 tokens x 768) and 8.0 to
 *     8.8 for a SwiGLU layer, timed together on buffers in cache.  Timed
 *     apart, on buffers past the caches, with the zeroing of the
 *     gradients the trainer's backward accumulates into (six calibrations
 *     the same day, load average 3 to 8): the norms and adds 15.1 to 17.4
 *     GB/s in a GELU (LayerNorm) layer and 20.3 to 24.3 in a SwiGLU
 *     (RMSNorm) one, the activation alone 0.59 to 0.66 (GELU: 94% of its
 *     layer's time) and 4.3 to 4.7 (SwiGLU: 82%): 15.7, 22.6, 0.62 and
 *     4.6 GB/s.  Tensor parallelism splits the activation and not the
 *     norms, so a layer's one rate priced a TP rank's GELU layer at 79% of
 *     one rank's where it takes 53%.
 *   attention: its scores and products are sgemm panels of 64 query
 *     rows; the calibration's core (one sequence of 256, 8 heads of 32
 *     sharing 4) runs the simulator's FLOP count at 39.7 to 44.2 GFLOP/s:
 *     41 (GPT-2's heads of 64 at 4 sequences ran 60; the loops before
 *     OpenBLAS, 3.5).
 *   optimizer: AdamW's square root and division make it compute-bound:
 *     5.9 to 6.1 ns a parameter over 16 Mi parameters (5.8 over GPT-2's
 *     124M; 4.1 over 1 Mi, from cache), 8.2 to 8.5 GB/s in the
 *     simulator's byte count (sim_optimizer_bytes) at SIM_HBM_EFF: 8.4.
 *   between ranks: OpenMPI's shared-memory transport copies in and out,
 *     about 4 GB/s per rank one direction, 2 us per message.
 * When ranks outnumber the cores they share them, so the per-rank figures
 * are scaled by min(1, cores / ranks).  exec_cpu_gpu() is the one place
 * these figures live.
 */
#include <string.h>
#include <unistd.h>

#include "exec.h"

#define EXEC_CPU_FLOPS_PER_S 140e9
#define EXEC_CPU_GEMM_DIM_HALF 4.0
#define EXEC_CPU_MEM_BYTES_PER_S 16.5e9
#define EXEC_CPU_LINK_BYTES_PER_S 4e9
#define EXEC_CPU_ELT_GELU_BYTES_PER_S 15.7e9
#define EXEC_CPU_ELT_SWIGLU_BYTES_PER_S 22.6e9
#define EXEC_CPU_ACT_GELU_BYTES_PER_S 0.62e9
#define EXEC_CPU_ACT_SWIGLU_BYTES_PER_S 4.6e9
#define EXEC_CPU_ATTN_FLOPS_PER_S 41e9
#define EXEC_CPU_OPT_BYTES_PER_S 8.4e9
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
	g->gemm_cached = 1;	/* OpenBLAS packs its operands into cache */
	g->elt_bytes_per_s[0] = EXEC_CPU_ELT_GELU_BYTES_PER_S;
	g->elt_bytes_per_s[1] = EXEC_CPU_ELT_SWIGLU_BYTES_PER_S;
	g->act_bytes_per_s[0] = EXEC_CPU_ACT_GELU_BYTES_PER_S;
	g->act_bytes_per_s[1] = EXEC_CPU_ACT_SWIGLU_BYTES_PER_S;
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
	c->gpu.act_bytes_per_s[0] *= share;
	c->gpu.act_bytes_per_s[1] *= share;
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
