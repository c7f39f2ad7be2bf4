/*
 * exec_cuda.cu - the CUDA backend: every kernel of exec_cpu.c on an NVIDIA
 * GPU, behind the same table (struct exec_backend), checked against the
 * CPU backend as llm.c checks train_gpt2.cu against train_gpt2.c.
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
 * rank.  With exec_device.precision
 * EXEC_PRECISION_FP32 everything is fp32 and every GEMM runs exactly in
 * fp32: the checking option, which matches the CPU backend to the order
 * of fp32 sums.
 *
 * Streams.  Kernels and cuBLAS run in order on one compute stream; the
 * NCCL communicator (exec_comm_nccl.c) runs collectives on a second stream
 * and orders the two with events, as llm.c does.  The host waits only in
 * to_host, ce_loss_sum and sync.
 *
 * Attention (Vaswani et al. 2017, eq. 1, causal, grouped-query) never
 * holds the t x t score matrix: queries go in blocks of nb rows; for each
 * block cuBLAS computes its scores against the keys up to its last row
 * (the causal part only), a kernel turns them into probabilities keeping
 * each row's log-sum-exp, and cuBLAS multiplies them by V.  Scratch is
 * nh x nb x t floats, nb chosen to keep it under ATTN_SCRATCH_FLOATS.
 * Backward rebuilds each block's probabilities from the log-sum-exp (the
 * recomputation of Dao et al. 2022, by blocks of rows rather than tiles)
 * and runs exec_cpu.c's softmax backward, ds = p (dp - sum p dp).
 *
 * Errors.  Every CUDA and cuBLAS call is checked; the first failure is
 * logged with the rank, file and line, and the device stays failed: every
 * later call returns at once and sync() returns RC_DEVICE, which exec_run
 * turns into the end of the whole job.
 *
 * What it does not do: fused kernels (norm with GEMM, bias with
 * activation), flash attention's on-chip tiles, CUDA graphs.
 */
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

/* One score buffer of the blocked attention holds at most this many
 * floats (32 MiB); a block has at least ATTN_MIN_ROWS query rows.  (The
 * tests set both small to run several blocks on small shapes.) */
#ifndef ATTN_SCRATCH_FLOATS
#define ATTN_SCRATCH_FLOATS (8L << 20)
#endif
#ifndef ATTN_MIN_ROWS
#define ATTN_MIN_ROWS 64
#endif
/* Threads of an element-wise block, and the most blocks of a grid-stride
 * launch (enough to fill any GPU several times over). */
#define EW_THREADS 256
#define EW_MAX_BLOCKS 8192
/* Threads of a per-row block: a power of two, at most ROW_THREADS_MAX. */
#define ROW_THREADS_MAX 256
/* Column reductions: a block sums 32 columns of COL_CHUNK rows with
 * COL_ROWS row lanes, so that even a few columns of many rows fill the
 * GPU (a block per 32 columns alone leaves most SMs idle and each thread
 * waiting on a long chain of loads); a second kernel adds the chunks'
 * sums in chunk order, so the result has the same bits whatever order
 * the blocks ran in (atomic adds would not: a bias or norm weight that
 * every TP rank computes would drift apart between them).  (The tests
 * set COL_CHUNK small to sum several chunks on small shapes.) */
#define COL_ROWS 16
#ifndef COL_CHUNK
#define COL_CHUNK 256
#endif
#define NORM_EPS 1e-5f
#define GELU_SCALE 0.7978845608028654f /* sqrt(2 / pi) */

/* A buffer of the compute stream that grows when a call needs more: work
 * queued before still reads the old one, which the stream frees after
 * it. */
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

static struct cuda_priv *priv_of(struct exec_device *d)
{
	return (struct cuda_priv *)d->priv;
}

/* ---- error checks ---------------------------------------------------- */

static void report(struct exec_device *d, const char *call, const char *file,
		   int line, const char *reason)
{
	struct cuda_priv *c = d ? priv_of(d) : NULL;
	const char *paren = strchr(call, '(');

	if (c && c->failed)
		return;
	gp_error("rank %d: %s:%d: %.*s failed: %s", exec_launcher_rank(), file, line,
		 paren ? (int)(paren - call) : (int)strlen(call), call, reason);
	if (c)
		c->failed = 1;
}

extern "C" enum rc exec_cuda_check(struct exec_device *d, cudaError_t e, const char *call,
				   const char *file, int line)
{
	if (e == cudaSuccess)
		return RC_OK;
	report(d, call, file, line, cudaGetErrorString(e));
	return RC_DEVICE;
}

static enum rc blas_check(struct exec_device *d, cublasStatus_t s, const char *call,
			  const char *file, int line)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return RC_OK;
	report(d, call, file, line, cublasGetStatusString(s));
	return RC_DEVICE;
}

#define CU(d, call) exec_cuda_check((d), (call), #call, __FILE__, __LINE__)
#define BLAS(d, call) blas_check((d), (call), #call, __FILE__, __LINE__)

extern "C" void exec_cuda_mark_failed(struct exec_device *d)
{
	if (d && d->priv)
		priv_of(d)->failed = 1;
}

static int dead(struct exec_device *d)
{
	return priv_of(d)->failed;
}

/* ---- waiting ---------------------------------------------------------- */

extern "C" void exec_cuda_set_watch(struct exec_device *d, enum rc (*watch)(void *ctx),
				    void *ctx)
{
	priv_of(d)->watch = watch;
	priv_of(d)->watch_ctx = ctx;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One turn of a watched wait, whose last query found the work not done:
 * the watch, when a millisecond has passed since it last ran (*next). */
static enum rc watch_turn(struct exec_device *d, double *next)
{
	struct cuda_priv *p = priv_of(d);
	double t = now_s();

	if (t < *next)
		return RC_OK;
	*next = t + 1e-3;
	if (p->watch(p->watch_ctx) == RC_OK)
		return RC_OK;
	p->failed = 1;
	return RC_DEVICE;
}

/* Waits for the work queued on s so far.  Under a watch the host polls
 * instead of blocking: a collective whose peer has failed never ends, and
 * only the communicator's asynchronous error says so (NCCL user guide,
 * "Asynchronous errors and error handling"). */
static enum rc wait_stream(struct exec_device *d, cudaStream_t s)
{
	double next = 0;

	if (!priv_of(d)->watch)
		return CU(d, cudaStreamSynchronize(s));
	while (cudaStreamQuery(s) == cudaErrorNotReady)
		if (watch_turn(d, &next) != RC_OK)
			return RC_DEVICE;
	/* done, or failed: asked once more, so a failure names the call */
	return CU(d, cudaStreamQuery(s));
}

/* The same for an event. */
static enum rc wait_event(struct exec_device *d, cudaEvent_t ev)
{
	double next = 0;

	if (!priv_of(d)->watch)
		return CU(d, cudaEventSynchronize(ev));
	while (cudaEventQuery(ev) == cudaErrorNotReady)
		if (watch_turn(d, &next) != RC_OK)
			return RC_DEVICE;
	return CU(d, cudaEventQuery(ev));
}

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

/* Blocks of a k_col_reduce over n rows of c columns. */
static unsigned col_grid(long n, long c)
{
	long g = (c + 31) / 32 * ((n + COL_CHUNK - 1) / COL_CHUNK);

	return (unsigned)(g < 1 ? 1 : g);
}

static unsigned ew_grid(long n)
{
	long b = (n + EW_THREADS - 1) / EW_THREADS;

	return (unsigned)(b > EW_MAX_BLOCKS ? EW_MAX_BLOCKS : b < 1 ? 1 : b);
}

/* Threads for one block per row of c elements: the power of two >= c
 * within [32, ROW_THREADS_MAX]. */
static unsigned row_threads(long c)
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
static __device__ float block_sum(float v, float *sh)
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

static __device__ float block_max(float v, float *sh)
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

static __device__ double block_sum_d(double v, double *sh)
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
static cudaDataType act_type(const struct exec_device *d)
{
	return d->act == EXEC_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

/* Element i of p, an array of activations. */
static void *act_at(const struct exec_device *d, const void *p, size_t i)
{
	return (char *)p + i * exec_dtype_size(d->act);
}

/* ---- kernels --------------------------------------------------------- */

template <typename T>
static __global__ void k_add_bias(T *out, const T *bias, long n, int c)
{
	GRID_STRIDE(i, n)
		put(&out[i], ld(out[i]) + ld(bias[i % c]));
}

enum { COL_SUM, COL_LAYERNORM, COL_RMSNORM };

/* Column sums over the n rows of [n, c] arrays, by chunks of COL_CHUNK
 * rows: chunk k's sums go to part[k c + j] and, for LayerNorm's bias,
 * part[(chunks + k) c + j]:
 * COL_SUM: sum_i dy[i, j] (a bias gradient);
 * COL_LAYERNORM: sum_i (x - mean_i) rstd_i dy, and sum_i dy;
 * COL_RMSNORM: sum_i x rstd_i dy.  Block b covers columns (b mod nc)
 * 32 .. + 31 (nc = ceil(c / 32)) of chunk b / nc; its thread (tx, ty)
 * sums rows ty, ty + COL_ROWS, ... of that chunk in column tx.
 * k_col_finish adds the chunks up. */
template <typename T>
static __global__ void k_col_reduce(float *part, const T *dy, const T *x, const float *mean,
				    const float *rstd, int n, int c, int kind)
{
	__shared__ float sw[COL_ROWS][33], sb[COL_ROWS][33];
	int nc = (c + 31) / 32, tx = threadIdx.x % 32, ty = threadIdx.x / 32;
	int chunk = (int)(blockIdx.x / nc), chunks = (n + COL_CHUNK - 1) / COL_CHUNK;
	int j = (int)(blockIdx.x % nc) * 32 + tx, r0 = chunk * COL_CHUNK;
	int rend = n - r0 < COL_CHUNK ? n : r0 + COL_CHUNK;
	float aw = 0, ab = 0;

	if (j < c)
		for (int i = r0 + ty; i < rend; i += COL_ROWS) {
			size_t o = (size_t)i * c + j;
			float g = ld(dy[o]);

			ab += g;
			if (kind == COL_LAYERNORM)
				aw += (ld(x[o]) - mean[i]) * rstd[i] * g;
			else if (kind == COL_RMSNORM)
				aw += ld(x[o]) * rstd[i] * g;
		}
	sw[ty][tx] = aw;
	sb[ty][tx] = ab;
	__syncthreads();
	if (ty == 0 && j < c) {
		for (int r = 1; r < COL_ROWS; r++) {
			aw += sw[r][tx];
			ab += sb[r][tx];
		}
		part[(size_t)chunk * c + j] = kind == COL_SUM ? ab : aw;
		if (kind == COL_LAYERNORM)
			part[(size_t)(chunks + chunk) * c + j] = ab;
	}
}

/* dw[j] += the chunks' first sums of column j, in chunk order; db[j] +=
 * their second (LayerNorm's bias) when db is given. */
static __global__ void k_col_finish(float *dw, float *db, const float *part, int chunks, int c)
{
	GRID_STRIDE(j, c) {
		float w = 0, b = 0;

		for (int k = 0; k < chunks; k++)
			w += part[(size_t)k * c + j];
		dw[j] += w;
		if (db) {
			for (int k = 0; k < chunks; k++)
				b += part[(size_t)(chunks + k) * c + j];
			db[j] += b;
		}
	}
}

/* LayerNorm (Ba et al. 2016), one block per row. */
template <typename T>
static __global__ void k_layernorm_fwd(T *out, float *mean, float *rstd, const T *inp,
				       const T *w, const T *b, int c)
{
	__shared__ float sh[ROW_THREADS_MAX];
	const T *x = inp + (size_t)blockIdx.x * c;
	T *y = out + (size_t)blockIdx.x * c;
	float s = 0, v = 0, m, r;

	for (int j = threadIdx.x; j < c; j += blockDim.x)
		s += ld(x[j]);
	m = block_sum(s, sh) / c;
	for (int j = threadIdx.x; j < c; j += blockDim.x)
		v += (ld(x[j]) - m) * (ld(x[j]) - m);
	r = 1.0f / sqrtf(block_sum(v, sh) / c + NORM_EPS);
	for (int j = threadIdx.x; j < c; j += blockDim.x)
		put(&y[j], ((ld(x[j]) - m) * r) * ld(w[j]) + (b ? ld(b[j]) : 0.0f));
	if (threadIdx.x == 0) {
		mean[blockIdx.x] = m;
		rstd[blockIdx.x] = r;
	}
}

/* LayerNorm's input gradient, as exec_cpu.c:
 * dx += rstd (dn - mean(dn) - n mean(dn n)), n the normalised input,
 * dn = dout w. */
template <typename T>
static __global__ void k_layernorm_bwd(T *dinp, const T *dout, const T *inp, const T *w,
				       const float *mean, const float *rstd, int c)
{
	__shared__ float sh[ROW_THREADS_MAX];
	size_t o = (size_t)blockIdx.x * c;
	float m = mean[blockIdx.x], s = rstd[blockIdx.x], a = 0, bb = 0, dm, dnm;

	for (int j = threadIdx.x; j < c; j += blockDim.x) {
		float nrm = (ld(inp[o + j]) - m) * s, dn = ld(dout[o + j]) * ld(w[j]);

		a += dn;
		bb += dn * nrm;
	}
	dm = block_sum(a, sh) / c;
	dnm = block_sum(bb, sh) / c;
	for (int j = threadIdx.x; j < c; j += blockDim.x) {
		float nrm = (ld(inp[o + j]) - m) * s, dn = ld(dout[o + j]) * ld(w[j]);

		put(&dinp[o + j], ld(dinp[o + j]) + (dn - dm - nrm * dnm) * s);
	}
}

/* RMSNorm (Zhang and Sennrich 2019), one block per row. */
template <typename T>
static __global__ void k_rmsnorm_fwd(T *out, float *rstd, const T *inp, const T *w, int c)
{
	__shared__ float sh[ROW_THREADS_MAX];
	const T *x = inp + (size_t)blockIdx.x * c;
	T *y = out + (size_t)blockIdx.x * c;
	float ms = 0, r;

	for (int j = threadIdx.x; j < c; j += blockDim.x)
		ms += ld(x[j]) * ld(x[j]);
	r = 1.0f / sqrtf(block_sum(ms, sh) / c + NORM_EPS);
	for (int j = threadIdx.x; j < c; j += blockDim.x)
		put(&y[j], (ld(x[j]) * r) * ld(w[j]));
	if (threadIdx.x == 0)
		rstd[blockIdx.x] = r;
}

/* dx += rstd (dn - n mean(dn n)), n = x rstd, dn = dout w. */
template <typename T>
static __global__ void k_rmsnorm_bwd(T *dinp, const T *dout, const T *inp, const T *w,
				     const float *rstd, int c)
{
	__shared__ float sh[ROW_THREADS_MAX];
	size_t o = (size_t)blockIdx.x * c;
	float s = rstd[blockIdx.x], a = 0, dnm;

	for (int j = threadIdx.x; j < c; j += blockDim.x)
		a += ld(dout[o + j]) * ld(w[j]) * (ld(inp[o + j]) * s);
	dnm = block_sum(a, sh) / c;
	for (int j = threadIdx.x; j < c; j += blockDim.x)
		put(&dinp[o + j], ld(dinp[o + j]) +
			(ld(dout[o + j]) * ld(w[j]) - ld(inp[o + j]) * s * dnm) * s);
}

/* One block per row (h, r) of a block of scaled scores S[nh][rows][kend]
 * (fp32) belonging to query row i = i0 + r of sequence bi, at key
 * position q0 + i of tk: probabilities into P (same layout, activation
 * type; P may be S itself when that is fp32), exp(s - lse) up to the
 * causal limit (key q0 + i) and 0 after; lse stored at [(bi nh + h) t +
 * i]; the row of att ([b, nh, t, tk]) filled when att is given (the
 * probabilities kept for backward when flash attention is off). */
template <typename T>
static __global__ void k_attn_softmax(const float *S, T *P, float *lse, T *att, int rows,
				      int kend, int i0, int t, int tk, int q0, int nh, int bi)
{
	__shared__ float sh[ROW_THREADS_MAX];
	int h = blockIdx.x / rows, i = i0 + blockIdx.x % rows, last = q0 + i;
	const float *row = S + (size_t)blockIdx.x * kend;
	T *prow = P + (size_t)blockIdx.x * kend;
	T *a = att ? att + ((size_t)(bi * nh + h) * t + i) * tk : NULL;
	float mx = -INFINITY, sum = 0, l;

	for (int j = threadIdx.x; j <= last; j += blockDim.x)
		mx = fmaxf(mx, row[j]);
	mx = block_max(mx, sh);
	for (int j = threadIdx.x; j <= last; j += blockDim.x)
		sum += expf(row[j] - mx);
	l = mx + logf(block_sum(sum, sh));
	/* each thread reads only the scores it then overwrites */
	for (int j = threadIdx.x; j < kend; j += blockDim.x) {
		float p = j <= last ? expf(row[j] - l) : 0.0f;

		put(&prow[j], p);
		if (a)
			put(&a[j], p);
	}
	for (int j = kend + threadIdx.x; a && j < tk; j += blockDim.x)
		put(&a[j], 0.0f);
	if (threadIdx.x == 0)
		lse[(size_t)(bi * nh + h) * t + i] = l;
}

/* Softmax backward of one row, as k_attn_softmax's blocks: S holds the
 * scaled scores and dP holds dp_j = dout . v_j (both fp32); P receives
 * p = exp(s - lse) and dS ds_j = p_j (dp_j - sum_k p_k dp_k) scale, in
 * the activation type (where that is fp32, P may be S and dS be dP).
 * Each thread computes p twice rather than store and reread it, and
 * reads S[j] and dP[j] before it overwrites them. */
template <typename T>
static __global__ void k_attn_softmax_bwd(const float *S, const float *dP, T *P, T *dS,
					  const float *lse, int rows, int kend, int i0, int t,
					  int q0, int nh, int bi, float scale)
{
	__shared__ float sh[ROW_THREADS_MAX];
	int h = blockIdx.x / rows, i = i0 + blockIdx.x % rows, last = q0 + i;
	size_t o = (size_t)blockIdx.x * kend;
	float l = lse[(size_t)(bi * nh + h) * t + i], acc = 0, dsum;

	for (int j = threadIdx.x; j <= last && j < kend; j += blockDim.x)
		acc += expf(S[o + j] - l) * dP[o + j];
	dsum = block_sum(acc, sh);
	for (int j = threadIdx.x; j < kend; j += blockDim.x) {
		float p = j <= last ? expf(S[o + j] - l) : 0.0f;
		float ds = p * (dP[o + j] - dsum) * scale;

		put(&dS[o + j], ds);
		put(&P[o + j], p);
	}
}

/* gelu(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), Hendrycks and
 * Gimpel 2016, sec. 2. */
template <typename T>
static __global__ void k_gelu_fwd(T *out, const T *inp, long n)
{
	GRID_STRIDE(i, n) {
		float x = ld(inp[i]);

		put(&out[i], 0.5f * x * (1.0f + tanhf(GELU_SCALE * (x + 0.044715f * x * x * x))));
	}
}

template <typename T>
static __global__ void k_gelu_bwd(T *dinp, const T *inp, const T *dout, long n)
{
	GRID_STRIDE(i, n) {
		float x = ld(inp[i]);
		float th = tanhf(GELU_SCALE * (x + 0.044715f * x * x * x));
		float g = 0.5f * (1.0f + th) +
			  0.5f * x * (1.0f - th * th) * GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);

		put(&dinp[i], ld(dinp[i]) + g * ld(dout[i]));
	}
}

/* swiglu(g, u) = g sigmoid(g) u (Shazeer 2020, eq. 6 with Swish_1). */
template <typename T>
static __global__ void k_swiglu_fwd(T *out, const T *g, const T *u, long n)
{
	GRID_STRIDE(i, n) {
		float gi = ld(g[i]), sg = 1.0f / (1.0f + expf(-gi));

		put(&out[i], gi * sg * ld(u[i]));
	}
}

template <typename T>
static __global__ void k_swiglu_bwd(T *dg, T *du, const T *g, const T *u, const T *dout, long n)
{
	GRID_STRIDE(i, n) {
		float gi = ld(g[i]), ui = ld(u[i]), dy = ld(dout[i]);
		float sg = 1.0f / (1.0f + expf(-gi));

		put(&dg[i], ld(dg[i]) + dy * ui * sg * (1.0f + gi * (1.0f - sg)));
		put(&du[i], ld(du[i]) + dy * gi * sg);
	}
}

template <typename T>
static __global__ void k_residual(T *out, const T *a, const T *b, long n)
{
	GRID_STRIDE(i, n)
		put(&out[i], ld(a[i]) + ld(b[i]));
}

template <typename T>
static __global__ void k_accumulate(float *acc, const T *x, long n)
{
	GRID_STRIDE(i, n)
		acc[i] += ld(x[i]);
}

template <typename T>
static __global__ void k_narrow(T *dst, const float *src, long n)
{
	GRID_STRIDE(i, n)
		put(&dst[i], src[i]);
}

/* Vocabulary-parallel embedding (Shoeybi et al. 2019, sec. 3). */
template <typename T>
static __global__ void k_embedding_fwd(T *out, const int *tok, const T *wte, long n, int c,
				       int v0, int nv)
{
	GRID_STRIDE(i, n) {
		int r = tok[i / c] - v0;

		put(&out[i], r >= 0 && r < nv ? ld(wte[(size_t)r * c + i % c]) : 0.0f);
	}
}

/* Rows of dwte receive the gradients of every token that reads them;
 * several tokens may share a row, hence the atomic add. */
template <typename T>
static __global__ void k_embedding_bwd(float *dwte, const T *dout, const int *tok, long n,
				       int c, int v0, int nv)
{
	GRID_STRIDE(i, n) {
		int r = tok[i / c] - v0;

		if (r >= 0 && r < nv)
			atomicAdd(&dwte[(size_t)r * c + i % c], ld(dout[i]));
	}
}

template <typename T>
static __global__ void k_ce_row_max(float *rmax, const T *logits, int nv)
{
	__shared__ float sh[ROW_THREADS_MAX];
	const T *l = logits + (size_t)blockIdx.x * nv;
	float m = -INFINITY;

	for (int j = threadIdx.x; j < nv; j += blockDim.x)
		m = fmaxf(m, ld(l[j]));
	m = block_max(m, sh);
	if (threadIdx.x == 0)
		rmax[blockIdx.x] = m;
}

template <typename T>
static __global__ void k_ce_row_stats(float *stats, const T *logits, const float *rmax,
				      const int *target, int n, int nv, int v0)
{
	__shared__ float sh[ROW_THREADS_MAX];
	int i = blockIdx.x, r = target[i] - v0;
	const T *l = logits + (size_t)i * nv;
	float s = 0;

	for (int j = threadIdx.x; j < nv; j += blockDim.x)
		s += expf(ld(l[j]) - rmax[i]);
	s = block_sum(s, sh);
	if (threadIdx.x == 0) {
		stats[i] = s;
		stats[n + i] = r >= 0 && r < nv ? ld(l[r]) : 0.0f;
	}
}

/* -log softmax(l)_y = log sum_j exp(l_j - max) + max - l_y, summed over
 * the n rows by one block into *out. */
static __global__ void k_ce_loss(double *out, const float *rmax, const float *stats, int n)
{
	__shared__ double sh[ROW_THREADS_MAX];
	double s = 0;

	for (int i = threadIdx.x; i < n; i += blockDim.x)
		s += log((double)stats[i]) + rmax[i] - stats[n + i];
	s = block_sum_d(s, sh);
	if (threadIdx.x == 0)
		*out = s;
}

template <typename T>
static __global__ void k_ce_bwd(T *logits, const float *rmax, const float *stats,
				const int *target, long n, int nv, int v0, float scale)
{
	GRID_STRIDE(idx, n) {
		int i = (int)(idx / nv), j = (int)(idx % nv);
		float inv = 1.0f / stats[i];

		put(&logits[idx], (expf(ld(logits[idx]) - rmax[i]) * inv -
				   (j == target[i] - v0 ? 1.0f : 0.0f)) * scale);
	}
}

static __global__ void k_sumsq(double *acc, const float *x, long n)
{
	__shared__ double sh[EW_THREADS];
	double s = 0;

	GRID_STRIDE(i, n)
		s += (double)x[i] * x[i];
	s = block_sum_d(s, sh);
	if (threadIdx.x == 0)
		atomicAdd(acc, s);
}

/* AdamW (Loshchilov and Hutter, ICLR 2019, algorithm 2); c1, c2 are the
 * bias corrections 1 - beta^t. */
static __global__ void k_adamw(float *p, const float *g, float *m, float *v, long n, float lr,
			       float beta1, float beta2, float eps, float wd, float c1,
			       float c2, float gscale)
{
	GRID_STRIDE(i, n) {
		float gi = g[i] * gscale;

		m[i] = beta1 * m[i] + (1.0f - beta1) * gi;
		v[i] = beta2 * v[i] + (1.0f - beta2) * gi * gi;
		p[i] -= lr * ((m[i] / c1) / (sqrtf(v[i] / c2) + eps) + wd * p[i]);
	}
}

/* ---- scratch and column sums ----------------------------------------- */

/* s's buffer, grown to at least bytes; NULL after a failed allocation
 * (reported). */
static void *scratch_at_least(struct exec_device *d, struct scratch *s, size_t bytes)
{
	struct cuda_priv *p = priv_of(d);

	if (s->bytes < bytes) {
		if (s->p)
			CU(d, cudaFreeAsync(s->p, p->compute));
		s->p = NULL;
		s->bytes = 0;
		if (CU(d, cudaMallocAsync(&s->p, bytes, p->compute)) != RC_OK)
			return NULL;
		s->bytes = bytes;
	}
	return s->p;
}

/* dw (and db) += k_col_reduce's column sums of n rows of c columns, the
 * same bits whatever order its blocks run in. */
static void col_reduce(struct exec_device *d, float *dw, float *db, const void *dy,
		       const void *x, const float *mean, const float *rstd, int n, int c,
		       int kind)
{
	long chunks = (n + COL_CHUNK - 1) / COL_CHUNK;
	float *part;

	if (dead(d) || n == 0)
		return;
	part = (float *)scratch_at_least(d, &priv_of(d)->cols,
					 (size_t)(kind == COL_LAYERNORM ? 2 : 1) * chunks * c *
					 sizeof(float));
	if (!part)
		return;
	WITH_ACT(d, T, LAUNCH(d, k_col_reduce<T>, col_grid(n, c), 32 * COL_ROWS, part,
			      (const T *)dy, (const T *)x, mean, rstd, n, c, kind));
	LAUNCH(d, k_col_finish, ew_grid(c), EW_THREADS, dw, db, (const float *)part, (int)chunks,
	       c);
}

/* ---- GEMMs ----------------------------------------------------------- */

/* C = alpha op(A) op(B) + beta C in cuBLAS's column-major terms; A and B
 * of type abt, C of type ct.  fp32 accumulation (CUBLAS_COMPUTE_32F):
 * bf16 operands run on the tensor cores, fp32 ones exactly in fp32. */
static void gemm(struct exec_device *d, cublasOperation_t ta, cublasOperation_t tb, int m,
		 int n, int k, float alpha, const void *a, int lda, const void *b, int ldb,
		 float beta, void *c, int ldc, cudaDataType abt, cudaDataType ct)
{
	struct cuda_priv *p = priv_of(d);

	if (p->failed || m == 0 || n == 0)
		return;
	BLAS(d, cublasGemmEx(p->blas, ta, tb, m, n, k, &alpha, a, abt, lda, b, abt, ldb, &beta,
			     c, ct, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

static void gemm_batched(struct exec_device *d, cublasOperation_t ta, cublasOperation_t tb,
			 int m, int n, int k, float alpha, const void *a, int lda,
			 long long sa, const void *b, int ldb, long long sb, float beta,
			 void *c, int ldc, long long sc, int batch, cudaDataType abt,
			 cudaDataType ct)
{
	struct cuda_priv *p = priv_of(d);

	if (p->failed || m == 0 || n == 0 || batch == 0)
		return;
	BLAS(d, cublasGemmStridedBatchedEx(p->blas, ta, tb, m, n, k, &alpha, a, abt, lda, sa, b,
					   abt, ldb, sb, &beta, c, ct, ldc, sc, batch,
					   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/* Row-major out[n, oc] = inp[n, ic] w[oc, ic]^T.  cuBLAS is column-major,
 * so it sees every row-major array transposed: w as (ic x oc), inp as
 * (ic x n), out as (oc x n) = op_T(w) op_N(inp). */
static void matmul_forward(struct exec_device *d, void *out, const void *inp, const void *w,
			   const void *bias, int n, int ic, int oc)
{
	cudaDataType at = act_type(d);

	gemm(d, CUBLAS_OP_T, CUBLAS_OP_N, oc, n, ic, 1.0f, w, ic, inp, ic, 0.0f, out, oc, at, at);
	if (bias && !dead(d))
		WITH_ACT(d, T, LAUNCH(d, k_add_bias<T>, ew_grid((long)n * oc), EW_THREADS,
				      (T *)out, (const T *)bias, (long)n * oc, oc));
}

/* dinp (ic x n) += w (ic x oc) dout (oc x n); dw (ic x oc, fp32) += inp
 * (ic x n) dout^T (n x oc); dbias += column sums of dout. */
static void matmul_backward(struct exec_device *d, void *dinp, float *dw, float *dbias,
			    const void *dout, const void *inp, const void *w, int n, int ic,
			    int oc)
{
	cudaDataType at = act_type(d);

	if (dinp)
		gemm(d, CUBLAS_OP_N, CUBLAS_OP_N, ic, n, oc, 1.0f, w, ic, dout, oc, 1.0f, dinp, ic,
		     at, at);
	gemm(d, CUBLAS_OP_N, CUBLAS_OP_T, ic, oc, n, 1.0f, inp, ic, dout, oc, 1.0f, dw, ic, at,
	     CUDA_R_32F);
	if (dbias)
		col_reduce(d, dbias, NULL, dout, NULL, NULL, NULL, n, oc, COL_SUM);
}

static void add_bias(struct exec_device *d, void *out, const void *bias, int n, int c)
{
	if (!dead(d))
		WITH_ACT(d, T, LAUNCH(d, k_add_bias<T>, ew_grid((long)n * c), EW_THREADS,
				      (T *)out, (const T *)bias, (long)n * c, c));
}

/* ---- normalisation --------------------------------------------------- */

static void layernorm_forward(struct exec_device *d, void *out, float *mean, float *rstd,
			      const void *inp, const void *w, const void *b, int n, int c)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_layernorm_fwd<T>, (unsigned)n, row_threads(c),
				      (T *)out, mean, rstd, (const T *)inp, (const T *)w,
				      (const T *)b, c));
}

static void layernorm_backward(struct exec_device *d, void *dinp, float *dw, float *db,
			       const void *dout, const void *inp, const void *w,
			       const float *mean, const float *rstd, int n, int c)
{
	if (dead(d) || n == 0)
		return;
	WITH_ACT(d, T, LAUNCH(d, k_layernorm_bwd<T>, (unsigned)n, row_threads(c), (T *)dinp,
			      (const T *)dout, (const T *)inp, (const T *)w, mean, rstd, c));
	col_reduce(d, dw, db, dout, inp, mean, rstd, n, c, COL_LAYERNORM);
}

static void rmsnorm_forward(struct exec_device *d, void *out, float *rstd, const void *inp,
			    const void *w, int n, int c)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_rmsnorm_fwd<T>, (unsigned)n, row_threads(c), (T *)out,
				      rstd, (const T *)inp, (const T *)w, c));
}

static void rmsnorm_backward(struct exec_device *d, void *dinp, float *dw, const void *dout,
			     const void *inp, const void *w, const float *rstd, int n, int c)
{
	if (dead(d) || n == 0)
		return;
	WITH_ACT(d, T, LAUNCH(d, k_rmsnorm_bwd<T>, (unsigned)n, row_threads(c), (T *)dinp,
			      (const T *)dout, (const T *)inp, (const T *)w, rstd, c));
	col_reduce(d, dw, NULL, dout, inp, NULL, rstd, n, c, COL_RMSNORM);
}

/* ---- attention ------------------------------------------------------- */

static void accumulate(struct exec_device *d, float *acc, const void *x, enum exec_dtype t,
		       long n);
static void narrow(struct exec_device *d, void *dst, const float *src, long n);
static void cuda_zero(struct exec_device *d, void *ptr, size_t bytes);

/* Query rows per block: all t when nh x t x tk floats fit the scratch
 * bound, else the largest multiple of ATTN_MIN_ROWS that fits, at least
 * ATTN_MIN_ROWS. */
static int attn_rows(int t, int tk, int nh)
{
	long per_row = (long)nh * tk, nb;

	if (per_row * t <= ATTN_SCRATCH_FLOATS)
		return t;
	nb = ATTN_SCRATCH_FLOATS / per_row / ATTN_MIN_ROWS * ATTN_MIN_ROWS;
	if (nb < ATTN_MIN_ROWS)
		nb = ATTN_MIN_ROWS;
	return (int)(nb < t ? nb : t);
}

/* The scratch of one query block, `each` elements a buffer: scores S and
 * their gradient dP in fp32, and the probabilities P and score gradients
 * dS the GEMMs read, in the activation type (where that is fp32, P is S
 * and dS is dP).  False after a failed allocation (reported). */
struct attn_bufs {
	float *S, *dP;
	void *P, *dS;
};

static bool attn_scratch(struct exec_device *d, size_t each, struct attn_bufs *b)
{
	size_t ab = d->act == EXEC_F32 ? 0 : exec_dtype_size(d->act);

	b->S = (float *)scratch_at_least(d, &priv_of(d)->attn, 2 * each * (sizeof(float) + ab));
	if (!b->S)
		return false;
	b->dP = b->S + each;
	b->P = ab ? (void *)(b->dP + each) : (void *)b->S;
	b->dS = ab ? act_at(d, b->P, each) : (void *)b->dP;
	return true;
}

/* S_h = scale Q_h K_g^T (fp32) for the rows of one query block: with
 * row-major Q (rows x hd, stride nh hd) and K (kend x hd, stride nkv hd),
 * cuBLAS computes S^T (kend x rows) = op_T(K as hd x kend) op_N(Q as hd x
 * rows).  One strided batch per member j of a KV group covers its nkv
 * heads h = g group + j; S is [nh][rows][kend]. */
static void attn_scores(struct exec_device *d, float *S, const void *qb, const void *kb,
			int rows, int kend, int nh, int nkv, int hd, float alpha)
{
	int group = nh / nkv;

	for (int j = 0; j < group; j++)
		gemm_batched(d, CUBLAS_OP_T, CUBLAS_OP_N, kend, rows, hd, alpha, kb, nkv * hd,
			     hd, act_at(d, qb, (size_t)j * hd), nh * hd, (long long)group * hd,
			     0.0f, S + (size_t)j * rows * kend, kend,
			     (long long)group * rows * kend, nkv, act_type(d), CUDA_R_32F);
}

/* A block of query rows i0 .. i0 + rows - 1 reads keys 0 .. q0 + i0 +
 * rows - 1 (kend), the causal limit of its last row. */
static void attention_forward(struct exec_device *d, void *out, float *lse, void *att,
			      const void *q, const void *k, const void *v, int b, int t,
			      int tk, int q0, int nh, int nkv, int hd)
{
	int group = nh / nkv, nb = attn_rows(t, tk, nh);
	float scale = 1.0f / sqrtf((float)hd);
	cudaDataType at = act_type(d);
	struct attn_bufs s;

	if (dead(d) || !attn_scratch(d, (size_t)nh * nb * tk, &s))
		return;
	for (int bi = 0; bi < b; bi++)
		for (int i0 = 0; i0 < t; i0 += nb) {
			int rows = t - i0 < nb ? t - i0 : nb, kend = q0 + i0 + rows;
			const void *qb = act_at(d, q, ((size_t)bi * t + i0) * nh * hd);
			const void *kb = act_at(d, k, (size_t)bi * tk * nkv * hd);
			const void *vb = act_at(d, v, (size_t)bi * tk * nkv * hd);
			void *ob = act_at(d, out, ((size_t)bi * t + i0) * nh * hd);

			attn_scores(d, s.S, qb, kb, rows, kend, nh, nkv, hd, scale);
			if (!dead(d))
				WITH_ACT(d, T, LAUNCH(d, k_attn_softmax<T>, (unsigned)(nh * rows),
						      row_threads(kend), (const float *)s.S,
						      (T *)s.P, lse, (T *)att, rows, kend, i0, t,
						      tk, q0, nh, bi));
			/* O_h (rows x hd) is column-major O^T (hd x rows) =
			 * op_N(V as hd x kend) op_N(P as kend x rows) */
			for (int j = 0; j < group; j++)
				gemm_batched(d, CUBLAS_OP_N, CUBLAS_OP_N, hd, rows, kend, 1.0f, vb,
					     nkv * hd, hd, act_at(d, s.P, (size_t)j * rows * kend),
					     kend, (long long)group * rows * kend, 0.0f,
					     act_at(d, ob, (size_t)j * hd), nh * hd,
					     (long long)group * hd, nkv, at, at);
		}
}

static void attention_backward(struct exec_device *d, void *dq, void *dk, void *dv,
			       const void *dout, const void *q, const void *k, const void *v,
			       const float *lse, const void *att, int b, int t, int tk, int q0,
			       int nh, int nkv, int hd)
{
	int group = nh / nkv, nb = attn_rows(t, tk, nh);
	float scale = 1.0f / sqrtf((float)hd);
	cudaDataType at = act_type(d);
	size_t nk = (size_t)b * tk * nkv * hd;
	float *dk32 = NULL, *dv32 = NULL;
	cudaDataType gt = at;
	struct attn_bufs s;

	/* the probabilities are rebuilt from lse whether or not att kept them */
	(void)att;
	if (dead(d) || !attn_scratch(d, (size_t)nh * nb * tk, &s))
		return;
	/* dK and dV add up over the query blocks and the heads of a KV
	 * group: in fp32, rounded to the activation type once at the end
	 * (a bf16 sum rounds at every addition, ~0.4% each) */
	if (d->act != EXEC_F32) {
		dk32 = (float *)scratch_at_least(d, &priv_of(d)->attn_grad, 2 * nk * sizeof(float));
		if (!dk32)
			return;
		dv32 = dk32 + nk;
		cuda_zero(d, dk32, 2 * nk * sizeof(float));
		accumulate(d, dk32, dk, d->act, (long)nk);
		accumulate(d, dv32, dv, d->act, (long)nk);
		gt = CUDA_R_32F;
	}
	for (int bi = 0; bi < b; bi++)
		for (int i0 = 0; i0 < t; i0 += nb) {
			int rows = t - i0 < nb ? t - i0 : nb, kend = q0 + i0 + rows;
			size_t qoff = ((size_t)bi * t + i0) * nh * hd, koff = (size_t)bi * tk * nkv * hd;
			void *dkb = dk32 ? (void *)(dk32 + koff) : act_at(d, dk, koff);
			void *dvb = dv32 ? (void *)(dv32 + koff) : act_at(d, dv, koff);

			attn_scores(d, s.S, act_at(d, q, qoff), act_at(d, k, koff), rows, kend, nh,
				    nkv, hd, scale);
			/* dP_h = dO_h V_g^T, the same product as the scores */
			attn_scores(d, s.dP, act_at(d, dout, qoff), act_at(d, v, koff), rows, kend,
				    nh, nkv, hd, 1.0f);
			if (!dead(d))
				WITH_ACT(d, T, LAUNCH(d, k_attn_softmax_bwd<T>, (unsigned)(nh * rows),
						      row_threads(kend), (const float *)s.S,
						      (const float *)s.dP, (T *)s.P, (T *)s.dS, lse,
						      rows, kend, i0, t, q0, nh, bi, scale));
			for (int j = 0; j < group; j++) {
				size_t so = (size_t)j * rows * kend, jo = (size_t)j * hd;
				long long ss = (long long)group * rows * kend;

				/* dQ_h (hd x rows) += op_N(K as hd x kend) op_N(dS as kend x rows) */
				gemm_batched(d, CUBLAS_OP_N, CUBLAS_OP_N, hd, rows, kend, 1.0f,
					     act_at(d, k, koff), nkv * hd, hd, act_at(d, s.dS, so),
					     kend, ss, 1.0f, act_at(d, dq, qoff + jo), nh * hd,
					     (long long)group * hd, nkv, at, at);
				/* dK_g (hd x kend) += op_N(Q as hd x rows) op_T(dS as kend x rows) */
				gemm_batched(d, CUBLAS_OP_N, CUBLAS_OP_T, hd, kend, rows, 1.0f,
					     act_at(d, q, qoff + jo), nh * hd, (long long)group * hd,
					     act_at(d, s.dS, so), kend, ss, 1.0f, dkb, nkv * hd, hd,
					     nkv, at, gt);
				/* dV_g (hd x kend) += op_N(dO as hd x rows) op_T(P as kend x rows) */
				gemm_batched(d, CUBLAS_OP_N, CUBLAS_OP_T, hd, kend, rows, 1.0f,
					     act_at(d, dout, qoff + jo), nh * hd,
					     (long long)group * hd, act_at(d, s.P, so), kend, ss, 1.0f,
					     dvb, nkv * hd, hd, nkv, at, gt);
			}
		}
	if (dk32) {
		narrow(d, dk, dk32, (long)nk);
		narrow(d, dv, dv32, (long)nk);
	}
}

/* ---- element-wise ---------------------------------------------------- */

static void gelu_forward(struct exec_device *d, void *out, const void *inp, long n)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_gelu_fwd<T>, ew_grid(n), EW_THREADS, (T *)out,
				      (const T *)inp, n));
}

static void gelu_backward(struct exec_device *d, void *dinp, const void *inp, const void *dout,
			  long n)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_gelu_bwd<T>, ew_grid(n), EW_THREADS, (T *)dinp,
				      (const T *)inp, (const T *)dout, n));
}

static void swiglu_forward(struct exec_device *d, void *out, const void *g, const void *u,
			   long n)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_swiglu_fwd<T>, ew_grid(n), EW_THREADS, (T *)out,
				      (const T *)g, (const T *)u, n));
}

static void swiglu_backward(struct exec_device *d, void *dg, void *du, const void *g,
			    const void *u, const void *dout, long n)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_swiglu_bwd<T>, ew_grid(n), EW_THREADS, (T *)dg, (T *)du,
				      (const T *)g, (const T *)u, (const T *)dout, n));
}

static void residual_forward(struct exec_device *d, void *out, const void *a, const void *b,
			     long n)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_residual<T>, ew_grid(n), EW_THREADS, (T *)out,
				      (const T *)a, (const T *)b, n));
}

static void accumulate(struct exec_device *d, float *acc, const void *x, enum exec_dtype t,
		       long n)
{
	if (dead(d) || n <= 0)
		return;
	if (t == EXEC_BF16)
		LAUNCH(d, k_accumulate<bf16>, ew_grid(n), EW_THREADS, acc, (const bf16 *)x, n);
	else
		LAUNCH(d, k_accumulate<float>, ew_grid(n), EW_THREADS, acc, (const float *)x, n);
}

static void narrow(struct exec_device *d, void *dst, const float *src, long n)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_narrow<T>, ew_grid(n), EW_THREADS, (T *)dst, src, n));
}

/* ---- embedding and loss ---------------------------------------------- */

static void embedding_forward(struct exec_device *d, void *out, const int *tok, const void *wte,
			      int n, int c, int v0, int nv)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_embedding_fwd<T>, ew_grid((long)n * c), EW_THREADS,
				      (T *)out, tok, (const T *)wte, (long)n * c, c, v0, nv));
}

static void embedding_backward(struct exec_device *d, float *dwte, const void *dout,
			       const int *tok, int n, int c, int v0, int nv)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_embedding_bwd<T>, ew_grid((long)n * c), EW_THREADS,
				      dwte, (const T *)dout, tok, (long)n * c, c, v0, nv));
}

static void ce_row_max(struct exec_device *d, float *rmax, const void *logits, int n, int nv)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_ce_row_max<T>, (unsigned)n, row_threads(nv), rmax,
				      (const T *)logits, nv));
}

static void ce_row_stats(struct exec_device *d, float *stats, const void *logits,
			 const float *rmax, const int *target, int n, int nv, int v0)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_ce_row_stats<T>, (unsigned)n, row_threads(nv), stats,
				      (const T *)logits, rmax, target, n, nv, v0));
}

/* Copies the device accumulator to the host and waits for it. */
static double read_sum(struct exec_device *d)
{
	struct cuda_priv *p = priv_of(d);

	if (p->failed ||
	    CU(d, cudaMemcpyAsync(p->host_sum, p->dsum, sizeof(double), cudaMemcpyDeviceToHost,
				  p->compute)) != RC_OK ||
	    wait_stream(d, p->compute) != RC_OK)
		return 0;
	return *p->host_sum;
}

static double ce_loss_sum(struct exec_device *d, const float *rmax, const float *stats, int n)
{
	if (dead(d) || n == 0)
		return 0;
	if (LAUNCH(d, k_ce_loss, 1u, (unsigned)ROW_THREADS_MAX, priv_of(d)->dsum, rmax, stats,
		   n) != RC_OK)
		return 0;
	return read_sum(d);
}

static void ce_backward(struct exec_device *d, void *logits, const float *rmax,
			const float *stats, const int *target, int n, int nv, int v0,
			float scale)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_ce_bwd<T>, ew_grid((long)n * nv), EW_THREADS,
				      (T *)logits, rmax, stats, target, (long)n * nv, nv, v0,
				      scale));
}

/* ---- optimizer ------------------------------------------------------- */

static void sumsq(struct exec_device *d, double *acc, const float *x, long n)
{
	if (!dead(d) && n > 0)
		LAUNCH(d, k_sumsq, ew_grid(n), EW_THREADS, acc, x, n);
}

static void adamw(struct exec_device *d, float *p, const float *g, float *m, float *v, long n,
		  float lr, float beta1, float beta2, float eps, float wd, int t, float gscale)
{
	float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);

	if (!dead(d) && n > 0)
		LAUNCH(d, k_adamw, ew_grid(n), EW_THREADS, p, g, m, v, n, lr, beta1, beta2, eps,
		       wd, c1, c2, gscale);
}

/* ---- memory ---------------------------------------------------------- */

/* Stream-ordered allocation from the device's memory pool (kept, not
 * returned to the driver, so a ZeRO-3 gather costs no cudaMalloc). */
static void *cuda_alloc(struct exec_device *d, size_t bytes)
{
	struct cuda_priv *p = priv_of(d);
	void *ptr = NULL;
	cudaError_t e;

	if (bytes == 0)
		bytes = 1;
	e = cudaMallocAsync(&ptr, bytes, p->compute);
	if (e == cudaErrorMemoryAllocation) {
		/* not sticky: clear it and let exec_dalloc report */
		cudaGetLastError();
		return NULL;
	}
	if (CU(d, e) != RC_OK || CU(d, cudaMemsetAsync(ptr, 0, bytes, p->compute)) != RC_OK)
		return NULL;
	return ptr;
}

static void cuda_free(struct exec_device *d, void *ptr, size_t bytes)
{
	(void)bytes;
	CU(d, cudaFreeAsync(ptr, priv_of(d)->compute));
}

static void cuda_zero(struct exec_device *d, void *ptr, size_t bytes)
{
	if (!dead(d) && bytes)
		CU(d, cudaMemsetAsync(ptr, 0, bytes, priv_of(d)->compute));
}

static void cuda_copy(struct exec_device *d, void *dst, const void *src, size_t bytes)
{
	if (!dead(d) && bytes && dst != src)
		CU(d, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
				      priv_of(d)->compute));
}

/* Waits: the host buffer is read right after. */
static void cuda_to_host(struct exec_device *d, void *host, const void *src, size_t bytes)
{
	struct cuda_priv *p = priv_of(d);

	if (p->failed || !bytes)
		return;
	if (CU(d, cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, p->compute)) == RC_OK)
		wait_stream(d, p->compute);
}

/* From pageable memory cudaMemcpyAsync returns once the host buffer has
 * been staged (CUDA runtime API, "API synchronization behavior"), so the
 * caller may reuse it at once. */
static void cuda_from_host(struct exec_device *d, void *dst, const void *host, size_t bytes)
{
	if (!dead(d) && bytes)
		CU(d, cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice,
				      priv_of(d)->compute));
}

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
	if (wait_stream(d, p->compute) != RC_OK || wait_stream(d, p->comm) != RC_OK ||
	    wait_stream(d, p->reduce) != RC_OK || CU(d, cudaGetLastError()) != RC_OK)
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

extern "C" cudaStream_t exec_cuda_stream(struct exec_device *d)
{
	return priv_of(d)->compute;
}

extern "C" cudaStream_t exec_cuda_comm_stream(struct exec_device *d)
{
	return priv_of(d)->comm;
}

extern "C" cudaStream_t exec_cuda_reduce_stream(struct exec_device *d)
{
	return priv_of(d)->reduce;
}

extern "C" int exec_cuda_ordinal(const struct exec_device *d)
{
	return ((const struct cuda_priv *)d->priv)->ordinal;
}

extern "C" enum rc exec_cuda_order(struct exec_device *d, cudaStream_t first, cudaStream_t then)
{
	struct cuda_priv *p = priv_of(d);

	if (p->failed)
		return RC_DEVICE;
	/* cudaStreamWaitEvent captures the event's state when it is called,
	 * so one event serves every ordering in turn */
	if (CU(d, cudaEventRecord(p->order_ev, first)) != RC_OK ||
	    CU(d, cudaStreamWaitEvent(then, p->order_ev, 0)) != RC_OK)
		return RC_DEVICE;
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
	if (wait_event(d, t->ev[to]) != RC_OK ||
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
	/* .matmul_forward = */ matmul_forward,
	/* .matmul_backward = */ matmul_backward,
	/* .add_bias = */ add_bias,
	/* .layernorm_forward = */ layernorm_forward,
	/* .layernorm_backward = */ layernorm_backward,
	/* .rmsnorm_forward = */ rmsnorm_forward,
	/* .rmsnorm_backward = */ rmsnorm_backward,
	/* .attention_forward = */ attention_forward,
	/* .attention_backward = */ attention_backward,
	/* .gelu_forward = */ gelu_forward,
	/* .gelu_backward = */ gelu_backward,
	/* .swiglu_forward = */ swiglu_forward,
	/* .swiglu_backward = */ swiglu_backward,
	/* .residual_forward = */ residual_forward,
	/* .accumulate = */ accumulate,
	/* .narrow = */ narrow,
	/* .embedding_forward = */ embedding_forward,
	/* .embedding_backward = */ embedding_backward,
	/* .ce_row_max = */ ce_row_max,
	/* .ce_row_stats = */ ce_row_stats,
	/* .ce_loss_sum = */ ce_loss_sum,
	/* .ce_backward = */ ce_backward,
	/* .sumsq = */ sumsq,
	/* .adamw = */ adamw,
	/* .timer_new = */ timer_new,
	/* .timer_mark = */ timer_mark,
	/* .timer_elapsed = */ timer_elapsed,
	/* .timer_free = */ timer_free,
};
