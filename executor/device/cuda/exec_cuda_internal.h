/*
 * exec_cuda_internal.h - what the files of the CUDA backend share, C++
 * only: the device's private state, the one way a CUDA or cuBLAS failure
 * is reported and a device found dead, launching a kernel, the block
 * reductions and element types every kernel uses, the helpers one
 * operation lends another (GEMMs, column sums, scratch), and the
 * functions of the backend's table, one operation a file:
 *   exec_cuda_runtime.cu     failures, waits, streams
 *   exec_cuda_memory.cu      allocation, copies, scratch
 *   exec_cuda_embedding.cu   embedding
 *   exec_cuda_norm.cu        LayerNorm, RMSNorm
 *   exec_cuda_matmul.cu      GEMMs (cuBLAS), bias, column sums
 *   exec_cuda_attention.cu   blocked causal grouped-query attention
 *   exec_cuda_mlp.cu         GELU, SwiGLU
 *   exec_cuda_moe.cu         mixture of experts: router, permutation, combine
 *   exec_cuda_elementwise.cu residual add, scaled add, accumulate, narrow
 *   exec_cuda_loss.cu        vocabulary-parallel cross-entropy
 *   exec_cuda_optimizer.cu   gradient norm, AdamW
 *   exec_cuda.cu             the device (open, sync, release), timing
 *                            marks and the table
 * Each operation's CPU reference is device/cpu/'s file of the same name.
 * Built by nvcc, or by a host C++ compiler against tests/cuda_emu/.
 */
#ifndef GPUPLAN_EXEC_CUDA_INTERNAL_H
#define GPUPLAN_EXEC_CUDA_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

extern "C" {
#include "device/cuda/exec_cuda.h"
}

/* Threads of an element-wise block, and the most blocks of a grid-stride
 * launch (enough to fill any GPU several times over). */
#define EW_THREADS 256
#define EW_MAX_BLOCKS 8192
/* Threads of a per-row block: a power of two, at most ROW_THREADS_MAX. */
#define ROW_THREADS_MAX 256

/* A buffer of the compute stream that grows when a call needs more: work
 * queued before still reads the old one, which the stream frees after
 * it (cuda_scratch_at_least). */
struct scratch {
	void *p;
	size_t bytes;
};

struct cuda_priv {
	int ordinal;
	cudaStream_t compute, comm, reduce;   /* EXEC_STREAM_* */
	cudaEvent_t order_ev;
	cublasHandle_t blas;
	struct scratch attn;     /* struct attn_bufs */
	struct scratch attn_grad; /* fp32 dK and dV of a bf16 attention backward */
	struct scratch cols;     /* k_col_reduce's sums per chunk */
	double *dsum;            /* device accumulator of the loss */
	double *host_sum;        /* pinned copy of it */
	enum rc (*watch)(void *ctx); /* exec_cuda_set_watch */
	void *watch_ctx;
	int failed;
};

static inline struct cuda_priv *priv_of(struct exec_device *d)
{
	return (struct cuda_priv *)d->priv;
}

/* ---- failures and waits (exec_cuda_runtime.cu) -------------------------- */

/* exec_cuda_check (exec_cuda.h) for a cuBLAS status. */
enum rc cuda_blas_check(struct exec_device *d, cublasStatus_t s, const char *call,
			const char *file, int line);
#define CU(d, call) exec_cuda_check((d), (call), #call, __FILE__, __LINE__)
#define BLAS(d, call) cuda_blas_check((d), (call), #call, __FILE__, __LINE__)

/* 1 when d has failed: every later call returns at once. */
static inline int dead(struct exec_device *d)
{
	return priv_of(d)->failed;
}

/* Waits for the work queued on stream s (or up to event ev) so far,
 * watched as exec_cuda_set_watch says.  RC_OK, or RC_DEVICE after the
 * failure's message. */
enum rc cuda_wait_stream(struct exec_device *d, cudaStream_t s);
enum rc cuda_wait_event(struct exec_device *d, cudaEvent_t ev);

/* ---- launching ------------------------------------------------------- */

/* The launch itself; the CPU stand-in the tests build this file against
 * (tests/cuda_emu/) brings its own. */
#ifndef GPUPLAN_CUDA_EMU
template <typename... P, typename... A>
static cudaError_t kernel_launch(void (*k)(P...), unsigned grid, unsigned block,
				 cudaStream_t s, A... a)
{
	k<<<grid, block, 0, s>>>(a...);
	return cudaGetLastError();
}
#endif

#define LAUNCH(d, k, grid, block, ...)                                        \
	exec_cuda_check((d), kernel_launch(k, (grid), (block), priv_of(d)->compute, \
					   __VA_ARGS__), #k "()", __FILE__, __LINE__)

static inline unsigned ew_grid(long n)
{
	long b = (n + EW_THREADS - 1) / EW_THREADS;

	return (unsigned)(b > EW_MAX_BLOCKS ? EW_MAX_BLOCKS : b < 1 ? 1 : b);
}

/* Threads for one block per row of c elements: the power of two >= c
 * within [32, ROW_THREADS_MAX]. */
static inline unsigned row_threads(long c)
{
	unsigned t = 32;

	while (t < ROW_THREADS_MAX && t < c)
		t *= 2;
	return t;
}

#define GRID_STRIDE(i, n)                                                    \
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < (n);   \
	     i += (long)gridDim.x * blockDim.x)

/* Sum (or maximum) of v over the block; every thread gets the result.
 * blockDim.x is a power of two; sh has room for blockDim.x values.  Every
 * thread of the block must call it. */
static __device__ __forceinline__ float block_sum(float v, float *sh)
{
	int t = threadIdx.x;

	sh[t] = v;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (t < s)
			sh[t] += sh[t + s];
		__syncthreads();
	}
	v = sh[0];
	__syncthreads();
	return v;
}

static __device__ __forceinline__ float block_max(float v, float *sh)
{
	int t = threadIdx.x;

	sh[t] = v;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (t < s)
			sh[t] = fmaxf(sh[t], sh[t + s]);
		__syncthreads();
	}
	v = sh[0];
	__syncthreads();
	return v;
}

static __device__ __forceinline__ double block_sum_d(double v, double *sh)
{
	int t = threadIdx.x;

	sh[t] = v;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (t < s)
			sh[t] += sh[t + s];
		__syncthreads();
	}
	v = sh[0];
	__syncthreads();
	return v;
}

/* ---- element types --------------------------------------------------- */

/* Kernels compute in fp32; an activation array holds T, fp32 or bf16
 * (the device's activation type, exec_device.h), read through ld() and
 * written through put(), which rounds to nearest, ties to even. */
typedef __nv_bfloat16 bf16;

static __device__ __forceinline__ float ld(float x)
{
	return x;
}

static __device__ __forceinline__ float ld(bf16 x)
{
	return __bfloat162float(x);
}

static __device__ __forceinline__ void put(float *p, float x)
{
	*p = x;
}

static __device__ __forceinline__ void put(bf16 *p, float x)
{
	*p = __float2bfloat16(x);
}

/* Runs the statements with T the activation type of device d. */
#define WITH_ACT(d, T, ...)                                                  \
	do {                                                                 \
		if ((d)->act == EXEC_BF16) {                                 \
			typedef bf16 T;                                      \
			__VA_ARGS__;                                         \
		} else {                                                     \
			typedef float T;                                     \
			__VA_ARGS__;                                         \
		}                                                            \
	} while (0)

/* cuBLAS's name for the activation type, and its size. */
static inline cudaDataType act_type(const struct exec_device *d)
{
	return d->act == EXEC_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

/* Element i of p, an array of activations. */
static inline void *act_at(const struct exec_device *d, const void *p, size_t i)
{
	return (char *)p + i * exec_dtype_size(d->act);
}

/* ---- helpers one operation lends another -------------------------------- */

/* s's buffer, grown to at least bytes; NULL after a failed allocation
 * (reported) (exec_cuda_memory.cu). */
void *cuda_scratch_at_least(struct exec_device *d, struct scratch *s, size_t bytes);

/* C = alpha op(A) op(B) + beta C in cuBLAS's column-major terms, one
 * product or a strided batch of them (exec_cuda_matmul.cu). */
void cuda_gemm(struct exec_device *d, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
	       int k, float alpha, const void *a, int lda, const void *b, int ldb, float beta,
	       void *c, int ldc, cudaDataType abt, cudaDataType ct);
void cuda_gemm_batched(struct exec_device *d, cublasOperation_t ta, cublasOperation_t tb,
		       int m, int n, int k, float alpha, const void *a, int lda, long long sa,
		       const void *b, int ldb, long long sb, float beta, void *c, int ldc,
		       long long sc, int batch, cudaDataType abt, cudaDataType ct);

/* What a column sum adds up (k_col_reduce, exec_cuda_matmul.cu): a bias
 * gradient, or a norm's weight (and LayerNorm's bias) gradient. */
enum { COL_SUM, COL_LAYERNORM, COL_RMSNORM };
/* dw (and db) += the column sums of n rows of c columns, the same bits
 * whatever order the GPU's blocks run in. */
void cuda_col_reduce(struct exec_device *d, float *dw, float *db, const void *dy,
		     const void *x, const float *mean, const float *rstd, int n, int c,
		     int kind);

/* ---- the table's functions, one operation a file ----------------------- */

/* exec_cuda_memory.cu */
void *cuda_alloc(struct exec_device *d, size_t bytes);
void cuda_free(struct exec_device *d, void *ptr, size_t bytes);
void cuda_zero(struct exec_device *d, void *ptr, size_t bytes);
void cuda_copy(struct exec_device *d, void *dst, const void *src, size_t bytes);
void cuda_to_host(struct exec_device *d, void *host, const void *src, size_t bytes);
void cuda_from_host(struct exec_device *d, void *dst, const void *host, size_t bytes);
/* exec_cuda_embedding.cu */
void cuda_embedding_forward(struct exec_device *d, void *out, const int *tok, const void *wte,
			    int n, int c, int v0, int nv);
void cuda_embedding_backward(struct exec_device *d, float *dwte, const void *dout,
			     const int *tok, int n, int c, int v0, int nv);
/* exec_cuda_norm.cu */
void cuda_layernorm_forward(struct exec_device *d, void *out, float *mean, float *rstd,
			    const void *inp, const void *w, const void *b, int n, int c);
void cuda_layernorm_backward(struct exec_device *d, void *dinp, float *dw, float *db,
			     const void *dout, const void *inp, const void *w,
			     const float *mean, const float *rstd, int n, int c);
void cuda_rmsnorm_forward(struct exec_device *d, void *out, float *rstd, const void *inp,
			  const void *w, int n, int c);
void cuda_rmsnorm_backward(struct exec_device *d, void *dinp, float *dw, const void *dout,
			   const void *inp, const void *w, const float *rstd, int n, int c);
/* exec_cuda_matmul.cu */
void cuda_matmul_forward(struct exec_device *d, void *out, const void *inp, const void *w,
			 const void *bias, int n, int ic, int oc);
void cuda_matmul_backward(struct exec_device *d, void *dinp, float *dw, float *dbias,
			  const void *dout, const void *inp, const void *w, int n, int ic,
			  int oc);
void cuda_add_bias(struct exec_device *d, void *out, const void *bias, int n, int c);
/* exec_cuda_attention.cu */
void cuda_attention_forward(struct exec_device *d, void *out, float *lse, void *att,
			    const void *q, const void *k, const void *v, int b, int t, int tk,
			    int q0, int nh, int nkv, int hd);
void cuda_attention_backward(struct exec_device *d, void *dq, void *dk, void *dv,
			     const void *dout, const void *q, const void *k, const void *v,
			     const float *lse, const void *att, int b, int t, int tk, int q0,
			     int nh, int nkv, int hd);
/* exec_cuda_mlp.cu */
void cuda_gelu_forward(struct exec_device *d, void *out, const void *inp, long n);
void cuda_gelu_backward(struct exec_device *d, void *dinp, const void *inp, const void *dout,
			long n);
void cuda_swiglu_forward(struct exec_device *d, void *out, const void *g, const void *u,
			 long n);
void cuda_swiglu_backward(struct exec_device *d, void *dg, void *du, const void *g,
			  const void *u, const void *dout, long n);
/* exec_cuda_moe.cu */
void cuda_moe_route_forward(struct exec_device *d, float *probs, int *idx, float *w,
			    const void *logits, int n, int e, int k, int pre_softmax);
void cuda_moe_route_backward(struct exec_device *d, void *dlogits, const float *dw,
			     const float *probs, const int *idx, int n, int e, int k,
			     int pre_softmax);
void cuda_moe_permute(struct exec_device *d, void *out, const void *inp, const int *rows,
		      const float *w, int n, int c, int k);
void cuda_moe_unpermute(struct exec_device *d, void *out, const void *inp, const int *pos,
			const float *w, int n, int c, int k);
void cuda_moe_weights_backward(struct exec_device *d, float *dw, const void *dout,
			       const void *y, const int *pos, int n, int c, int k);
/* exec_cuda_elementwise.cu */
void cuda_residual_forward(struct exec_device *d, void *out, const void *a, const void *b,
			   long n);
void cuda_add_scaled(struct exec_device *d, void *out, const void *x, float s, long n);
void cuda_accumulate(struct exec_device *d, float *acc, const void *x, enum exec_dtype t,
		     long n);
void cuda_narrow(struct exec_device *d, void *dst, const float *src, long n);
/* exec_cuda_loss.cu */
void cuda_ce_row_max(struct exec_device *d, float *rmax, const void *logits, int n, int nv);
void cuda_ce_row_stats(struct exec_device *d, float *stats, const void *logits,
		       const float *rmax, const int *target, int n, int nv, int v0);
double cuda_ce_loss_sum(struct exec_device *d, const float *rmax, const float *stats, int n);
void cuda_ce_backward(struct exec_device *d, void *logits, const float *rmax,
		      const float *stats, const int *target, int n, int nv, int v0,
		      float scale);
/* exec_cuda_optimizer.cu */
void cuda_sumsq(struct exec_device *d, double *acc, const float *x, long n);
void cuda_adamw(struct exec_device *d, float *p, const float *g, float *m, float *v, long n,
		float lr, float beta1, float beta2, float eps, float wd, int t, float gscale);

#endif
