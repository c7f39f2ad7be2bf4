/*
 * exec_cpu.c - the fp32 CPU backend's device (its name and memory, from
 * the machine's; OpenBLAS's threads set on opening) and its table: memory from exec_cpu_memory.c, the
 * kernels one operation a file beside it.
 */
#include <unistd.h>

#include "device/cpu/exec_cpu_internal.h"

static enum rc cpu_open(struct exec_device *d)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);

	cpu_blas_init();
	d->cpu_timed = cpu_blas_threads() == 1;
	gp_strlcpy(d->name, "cpu", sizeof(d->name));
	d->memory_bytes = pages > 0 && size > 0 ? (double)pages * (double)size : 0;
	return RC_OK;
}

static enum rc cpu_mem_info(struct exec_device *d, double *free_bytes, double *total_bytes)
{
	long avail = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);

	*total_bytes = d->memory_bytes;
	*free_bytes = avail > 0 && size > 0 ? (double)avail * (double)size : 0;
	return RC_OK;
}

const struct exec_backend exec_cpu_backend = {
	.name = "cpu",
	.open = cpu_open,
	.mem_info = cpu_mem_info,
	.alloc = cpu_alloc,
	.free = cpu_free,
	.zero = cpu_zero,
	.copy = cpu_copy,
	.to_host = cpu_copy,
	.from_host = cpu_copy,
	.matmul_forward = cpu_matmul_forward,
	.matmul_backward = cpu_matmul_backward,
	.add_bias = cpu_add_bias,
	.layernorm_forward = cpu_layernorm_forward,
	.layernorm_backward = cpu_layernorm_backward,
	.rmsnorm_forward = cpu_rmsnorm_forward,
	.rmsnorm_backward = cpu_rmsnorm_backward,
	.attention_forward = cpu_attention_forward,
	.attention_backward = cpu_attention_backward,
	.gelu_forward = cpu_gelu_forward,
	.gelu_backward = cpu_gelu_backward,
	.swiglu_forward = cpu_swiglu_forward,
	.swiglu_backward = cpu_swiglu_backward,
	.residual_forward = cpu_residual_forward,
	.add_scaled = cpu_add_scaled,
	.accumulate = cpu_accumulate,
	.narrow = cpu_narrow,
	.embedding_forward = cpu_embedding_forward,
	.embedding_backward = cpu_embedding_backward,
	.ce_row_max = cpu_ce_row_max,
	.ce_row_stats = cpu_ce_row_stats,
	.ce_loss_sum = cpu_ce_loss_sum,
	.ce_backward = cpu_ce_backward,
	.moe_route_forward = cpu_moe_route_forward,
	.moe_route_backward = cpu_moe_route_backward,
	.moe_permute = cpu_moe_permute,
	.moe_unpermute = cpu_moe_unpermute,
	.moe_weights_backward = cpu_moe_weights_backward,
	.sumsq = cpu_sumsq,
	.adamw = cpu_adamw,
};
