/*
 * exec_cuda.cu - the CUDA backend: every kernel of the CPU backend
 * (device/cpu/) on an NVIDIA GPU, behind the same table (struct
 * exec_backend), checked against the CPU backend as llm.c checks
 * train_gpt2.cu against train_gpt2.c.  This file holds the device (probe,
 * open, sync, release), the trace's timing marks and the table; each
 * operation lives in the file named after it, beside its CPU reference's
 * name (exec_cuda_internal.h lists them).
 *
 * Precision.  At EXEC_PRECISION_BF16 (the default) activations, their
 * gradients, the logits and the working copy of the weights that forward
 * and backward read are stored in bf16 (the device's activation type,
 * exec_device.h), 2 bytes each in memory and in HBM traffic, as a bf16
 * trainer keeps them; the trainer's master weights, parameter gradients
 * and AdamW's moments stay fp32, as do norm statistics, the attention
 * log-sum-exp and the loss's row statistics (Micikevicius et al., ICLR
 * 2018, sec. 3).  Every kernel computes in fp32 and rounds what it
 * stores to nearest, ties to even; it is one template instantiated for
 * float and bf16 (WITH_ACT picks the device's).  GEMMs run on tensor
 * cores with bf16 operands and fp32 accumulation (CUBLAS_COMPUTE_32F),
 * writing bf16 activations or fp32 weight gradients; attention's scores
 * and their gradients stay fp32 in its scratch and are rounded to bf16
 * only for the GEMMs that read them, and its dK and dV, summed over query
 * blocks and the heads of a KV group, are summed in fp32 and rounded once.
 * Column sums (bias and norm weight gradients) add their chunks in a
 * fixed order, without atomics: the same bits on every run and every TP
 * rank.  With exec_device.precision EXEC_PRECISION_FP32 everything is
 * fp32 and every GEMM runs exactly in fp32: the checking option, which
 * matches the CPU backend to the order of fp32 sums.
 *
 * Streams.  Kernels and cuBLAS run in order on one compute stream; the
 * NCCL communicator (exec_comm_nccl.c) runs collectives on a second stream
 * and orders the two with events, as llm.c does.  The host waits only in
 * to_host, ce_loss_sum and sync.
 *
 * Attention (exec_cuda_attention.cu) never holds the t x t score matrix:
 * it goes by blocks of query rows, rebuilding probabilities in backward.
 *
 * Errors.  Every CUDA and cuBLAS call is checked; the first failure is
 * logged with the rank, file and line, and the device stays failed: every
 * later call returns at once and sync() returns RC_DEVICE, which exec_run
 * turns into the end of the whole job.
 *
 * What it does not do: fused kernels (norm with GEMM, bias with
 * activation), flash attention's on-chip tiles, CUDA graphs.
 */
#include "device/cuda/exec_cuda_internal.h"

/* ---- the device ------------------------------------------------------ */

extern "C" enum rc exec_cuda_probe(int *count, char *why, size_t size)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess || n < 1) {
		snprintf(why, size, "no CUDA device found (%s)",
			 e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found 0");
		return RC_DEVICE;
	}
	*count = n;
	return RC_OK;
}

extern "C" enum rc exec_cuda_describe(char *name, size_t name_size, double *memory_bytes,
				      char *why, size_t size)
{
	struct cudaDeviceProp prop;
	int count = 0, dev;
	cudaError_t e;

	if (exec_cuda_probe(&count, why, size) != RC_OK)
		return RC_DEVICE;
	dev = exec_launcher_local_rank() % count;
	e = cudaGetDeviceProperties(&prop, dev);
	if (e != cudaSuccess) {
		snprintf(why, size, "cudaGetDeviceProperties(%d): %s", dev, cudaGetErrorString(e));
		return RC_DEVICE;
	}
	snprintf(name, name_size, "%s", prop.name);
	*memory_bytes = (double)prop.totalGlobalMem;
	return RC_OK;
}

static void cuda_release(struct exec_device *d)
{
	struct cuda_priv *p = priv_of(d);

	if (!p)
		return;
	/* errors here change nothing: the device is being let go */
	if (p->compute)
		cudaStreamSynchronize(p->compute);
	if (p->attn.p)
		cudaFree(p->attn.p);
	if (p->cols.p)
		cudaFree(p->cols.p);
	if (p->attn_grad.p)
		cudaFree(p->attn_grad.p);
	if (p->dsum)
		cudaFree(p->dsum);
	if (p->host_sum)
		cudaFreeHost(p->host_sum);
	if (p->blas)
		cublasDestroy(p->blas);
	if (p->order_ev)
		cudaEventDestroy(p->order_ev);
	if (p->reduce)
		cudaStreamDestroy(p->reduce);
	if (p->comm)
		cudaStreamDestroy(p->comm);
	if (p->compute)
		cudaStreamDestroy(p->compute);
	free(p);
	d->priv = NULL;
}

static enum rc cuda_open(struct exec_device *d)
{
	struct cuda_priv *p;
	struct cudaDeviceProp prop;
	cudaMemPool_t pool;
	uint64_t keep = UINT64_MAX;
	int no = 0;
	char why[256];
	int count = 0;

	if (exec_cuda_probe(&count, why, sizeof(why)) != RC_OK) {
		gp_error("rank %d: %s", exec_launcher_rank(), why);
		return RC_DEVICE;
	}
	p = (struct cuda_priv *)xcalloc(1, sizeof(*p));
	d->priv = p;
	p->ordinal = exec_launcher_local_rank() % count;
	if (CU(d, cudaSetDevice(p->ordinal)) != RC_OK ||
	    CU(d, cudaGetDeviceProperties(&prop, p->ordinal)) != RC_OK)
		goto fail;
	if (prop.major < 8) {
		gp_error("rank %d: GPU %d (%s) is compute capability %d.%d; the CUDA backend "
			 "needs 8.0 or later (bf16 tensor cores)", exec_launcher_rank(),
			 p->ordinal, prop.name, prop.major, prop.minor);
		goto fail;
	}
	gp_strlcpy(d->name, prop.name, sizeof(d->name));
	d->memory_bytes = (double)prop.totalGlobalMem;
	if (CU(d, cudaStreamCreateWithFlags(&p->compute, cudaStreamNonBlocking)) != RC_OK ||
	    CU(d, cudaStreamCreateWithFlags(&p->comm, cudaStreamNonBlocking)) != RC_OK ||
	    CU(d, cudaStreamCreateWithFlags(&p->reduce, cudaStreamNonBlocking)) != RC_OK ||
	    CU(d, cudaEventCreateWithFlags(&p->order_ev, cudaEventDisableTiming)) != RC_OK ||
	    CU(d, cudaDeviceGetDefaultMemPool(&pool, p->ordinal)) != RC_OK ||
	    CU(d, cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep)) != RC_OK ||
	    /* a pipeline send's staging buffer is freed on its link's
	     * stream once the peer has received it; were the pool to hand it
	     * to the compute stream before then, with a wait inserted for
	     * the free, compute would wait for the receive and the send
	     * would no longer be buffered (exec_comm_nccl.c): no such waits */
	    CU(d, cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &no))
		    != RC_OK ||
	    CU(d, cudaMalloc((void **)&p->dsum, sizeof(double))) != RC_OK ||
	    CU(d, cudaMallocHost((void **)&p->host_sum, sizeof(double))) != RC_OK ||
	    BLAS(d, cublasCreate(&p->blas)) != RC_OK ||
	    BLAS(d, cublasSetStream(p->blas, p->compute)) != RC_OK)
		goto fail;
	return RC_OK;
fail:
	cuda_release(d);
	return RC_DEVICE;
}

static enum rc cuda_sync(struct exec_device *d)
{
	struct cuda_priv *p = priv_of(d);

	if (!p || p->failed)
		return RC_DEVICE;
	if (cuda_wait_stream(d, p->compute) != RC_OK || cuda_wait_stream(d, p->comm) != RC_OK ||
	    cuda_wait_stream(d, p->reduce) != RC_OK || CU(d, cudaGetLastError()) != RC_OK)
		return RC_DEVICE;
	return RC_OK;
}

static enum rc cuda_mem_info(struct exec_device *d, double *free_bytes, double *total_bytes)
{
	size_t f = 0, t = 0;

	if (CU(d, cudaMemGetInfo(&f, &t)) != RC_OK)
		return RC_DEVICE;
	*free_bytes = (double)f;
	*total_bytes = (double)t;
	return RC_OK;
}

/* ---- timing marks for a trace (exec_trace.c) ------------------------- */

/* CUDA events with timing: a mark on the compute stream times the point
 * its queued work reaches; on the communication or the reduction stream,
 * the point where that stream, having waited for the compute stream's
 * work so far, would start a collective (exec_comm_nccl.c orders each the
 * same way). */
struct cuda_timer {
	cudaEvent_t *ev;
	int n;
};

static void timer_free(struct exec_device *d, void *timer, int n)
{
	struct cuda_timer *t = (struct cuda_timer *)timer;

	(void)d;
	if (!t)
		return;
	for (int i = 0; i < n && i < t->n; i++)
		if (t->ev[i])
			cudaEventDestroy(t->ev[i]);
	free(t->ev);
	free(t);
}

static void *timer_new(struct exec_device *d, int n)
{
	struct cuda_timer *t = (struct cuda_timer *)xcalloc(1, sizeof(*t));

	t->ev = (cudaEvent_t *)xcalloc((size_t)n, sizeof(*t->ev));
	t->n = n;
	for (int i = 0; i < n; i++)
		if (CU(d, cudaEventCreateWithFlags(&t->ev[i], cudaEventDefault)) != RC_OK) {
			timer_free(d, t, n);
			return NULL;
		}
	return t;
}

static enum rc timer_mark(struct exec_device *d, void *timer, int i, int stream)
{
	struct cuda_timer *t = (struct cuda_timer *)timer;
	struct cuda_priv *p = priv_of(d);
	cudaStream_t s = p->compute;

	if (p->failed || i < 0 || i >= t->n)
		return RC_DEVICE;
	if (stream != EXEC_STREAM_COMPUTE) {
		s = stream == EXEC_STREAM_COMM ? p->comm : p->reduce;
		if (exec_cuda_order(d, p->compute, s) != RC_OK)
			return RC_DEVICE;
	}
	return CU(d, cudaEventRecord(t->ev[i], s));
}

static enum rc timer_elapsed(struct exec_device *d, void *timer, int from, int to,
			     double *seconds)
{
	struct cuda_timer *t = (struct cuda_timer *)timer;
	float ms = 0;

	if (priv_of(d)->failed || from < 0 || to < 0 || from >= t->n || to >= t->n)
		return RC_DEVICE;
	if (cuda_wait_event(d, t->ev[to]) != RC_OK ||
	    CU(d, cudaEventElapsedTime(&ms, t->ev[from], t->ev[to])) != RC_OK)
		return RC_DEVICE;
	*seconds = 1e-3 * (double)ms;
	return RC_OK;
}

extern "C" const struct exec_backend exec_cuda_backend = {
	/* .name = */ "cuda",
	/* .open = */ cuda_open,
	/* .sync = */ cuda_sync,
	/* .mem_info = */ cuda_mem_info,
	/* .release = */ cuda_release,
	/* .alloc = */ cuda_alloc,
	/* .free = */ cuda_free,
	/* .zero = */ cuda_zero,
	/* .copy = */ cuda_copy,
	/* .to_host = */ cuda_to_host,
	/* .from_host = */ cuda_from_host,
	/* .matmul_forward = */ cuda_matmul_forward,
	/* .matmul_backward = */ cuda_matmul_backward,
	/* .add_bias = */ cuda_add_bias,
	/* .layernorm_forward = */ cuda_layernorm_forward,
	/* .layernorm_backward = */ cuda_layernorm_backward,
	/* .rmsnorm_forward = */ cuda_rmsnorm_forward,
	/* .rmsnorm_backward = */ cuda_rmsnorm_backward,
	/* .attention_forward = */ cuda_attention_forward,
	/* .attention_backward = */ cuda_attention_backward,
	/* .gelu_forward = */ cuda_gelu_forward,
	/* .gelu_backward = */ cuda_gelu_backward,
	/* .swiglu_forward = */ cuda_swiglu_forward,
	/* .swiglu_backward = */ cuda_swiglu_backward,
	/* .residual_forward = */ cuda_residual_forward,
	/* .add_scaled = */ cuda_add_scaled,
	/* .accumulate = */ cuda_accumulate,
	/* .narrow = */ cuda_narrow,
	/* .embedding_forward = */ cuda_embedding_forward,
	/* .embedding_backward = */ cuda_embedding_backward,
	/* .ce_row_max = */ cuda_ce_row_max,
	/* .ce_row_stats = */ cuda_ce_row_stats,
	/* .ce_loss_sum = */ cuda_ce_loss_sum,
	/* .ce_backward = */ cuda_ce_backward,
	/* .moe_route_forward = */ cuda_moe_route_forward,
	/* .moe_route_backward = */ cuda_moe_route_backward,
	/* .moe_permute = */ cuda_moe_permute,
	/* .moe_unpermute = */ cuda_moe_unpermute,
	/* .moe_weights_backward = */ cuda_moe_weights_backward,
	/* .sumsq = */ cuda_sumsq,
	/* .adamw = */ cuda_adamw,
	/* .timer_new = */ timer_new,
	/* .timer_mark = */ timer_mark,
	/* .timer_elapsed = */ timer_elapsed,
	/* .timer_free = */ timer_free,
};
