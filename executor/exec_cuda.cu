/*
 * exec_cuda.cu - the CUDA backend: every kernel of exec_cpu.c on an NVIDIA
 * GPU, behind the same table (struct exec_backend), checked against the
 * CPU backend as llm.c checks train_gpt2.cu against train_gpt2.c.
 *
 * Precision.  The backend interface passes float pointers, so every tensor
 * is stored in fp32: weights, activations, gradients, AdamW's moments.  By
 * default the GEMMs (the model's and attention's) run on tensor cores with
 * bf16 operands and fp32 accumulation (cuBLAS's
 * CUBLAS_COMPUTE_32F_FAST_16BF rounds the fp32 operands to bf16 inside the
 * GEMM); with exec_device.precision EXEC_PRECISION_FP32 they run exactly
 * in fp32 (CUBLAS_COMPUTE_32F), the checking option.  So the arithmetic of
 * a GEMM is bf16 mixed precision with fp32 master weights and optimizer
 * state, but activations take 4 bytes each in memory and in HBM traffic,
 * not the 2 a bf16 trainer spends.  Storing them in bf16 needs a dtype in
 * the backend interface: an element size per allocation, kernels taking
 * `void *` with a dtype (as exec_comm's all_reduce already does) and bf16
 * instances of the element-wise kernels, the trainer keeping its fp32
 * master weights and handing a bf16 copy to the forward pass.
 *
 * Streams.  Kernels and cuBLAS run in order on one compute stream; the
 * NCCL communicator (exec_comm_nccl.c) runs collectives on a second stream
 * and orders the two with events, as llm.c does.  The host waits only in
 * to_host, ce_loss_sum, sumsq and sync.
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

#include <cublas_v2.h>
#include <cuda_runtime.h>

extern "C" {
#include "exec_cuda.h"
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
/* Column reductions: 32 columns by COL_ROWS row lanes per block. */
#define COL_ROWS 16
#define NORM_EPS 1e-5f
#define GELU_SCALE 0.7978845608028654f /* sqrt(2 / pi) */

struct cuda_priv {
	int ordinal;
	cudaStream_t compute, comm;
	cudaEvent_t order_ev;
	cublasHandle_t blas;
	cublasComputeType_t gemm_compute;
	float *scratch;          /* attention: two score buffers */
	size_t scratch_n;        /* floats in all */
	double *dsum;            /* device accumulator of sumsq and the loss */
	double *host_sum;        /* pinned copy of it */
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

/* ---- kernels --------------------------------------------------------- */

static __global__ void k_add_bias(float *out, const float *bias, long n, int c)
{
	GRID_STRIDE(i, n)
		out[i] += bias[i % c];
}

enum { COL_SUM, COL_LAYERNORM, COL_RMSNORM };

/* Column sums over the n rows of [n, c] arrays, added to dw (and db):
 * COL_SUM: dw[j] += sum_i dy[i, j] (a bias gradient);
 * COL_LAYERNORM: dw[j] += sum_i (x - mean_i) rstd_i dy, db[j] += sum_i dy;
 * COL_RMSNORM: dw[j] += sum_i x rstd_i dy.  Thread (tx, ty) of a block
 * sums rows ty, ty + COL_ROWS, ... of column blockIdx.x * 32 + tx. */
static __global__ void k_col_reduce(float *dw, float *db, const float *dy, const float *x,
				    const float *mean, const float *rstd, int n, int c, int kind)
{
	__shared__ float sw[COL_ROWS][33], sb[COL_ROWS][33];
	int tx = threadIdx.x % 32, ty = threadIdx.x / 32, j = blockIdx.x * 32 + tx;
	float aw = 0, ab = 0;

	if (j < c)
		for (int i = ty; i < n; i += COL_ROWS) {
			size_t o = (size_t)i * c + j;
			float g = dy[o];

			ab += g;
			if (kind == COL_LAYERNORM)
				aw += (x[o] - mean[i]) * rstd[i] * g;
			else if (kind == COL_RMSNORM)
				aw += x[o] * rstd[i] * g;
		}
	sw[ty][tx] = aw;
	sb[ty][tx] = ab;
	__syncthreads();
	if (ty == 0 && j < c) {
		for (int r = 1; r < COL_ROWS; r++) {
			aw += sw[r][tx];
			ab += sb[r][tx];
		}
		if (kind == COL_SUM) {
			dw[j] += ab;
		} else {
			dw[j] += aw;
			if (db)
				db[j] += ab;
		}
	}
}

/* LayerNorm (Ba et al. 2016), one block per row. */
static __global__ void k_layernorm_fwd(float *out, float *mean, float *rstd, const float *inp,
				       const float *w, const float *b, int c)
{
	__shared__ float sh[ROW_THREADS_MAX];
	const float *x = inp + (size_t)blockIdx.x * c;
	float *y = out + (size_t)blockIdx.x * c;
	float s = 0, v = 0, m, r;

	for (int j = threadIdx.x; j < c; j += blockDim.x)
		s += x[j];
	m = block_sum(s, sh) / c;
	for (int j = threadIdx.x; j < c; j += blockDim.x)
		v += (x[j] - m) * (x[j] - m);
	r = 1.0f / sqrtf(block_sum(v, sh) / c + NORM_EPS);
	for (int j = threadIdx.x; j < c; j += blockDim.x)
		y[j] = ((x[j] - m) * r) * w[j] + (b ? b[j] : 0.0f);
	if (threadIdx.x == 0) {
		mean[blockIdx.x] = m;
		rstd[blockIdx.x] = r;
	}
}

/* LayerNorm's input gradient, as exec_cpu.c:
 * dx += rstd (dn - mean(dn) - n mean(dn n)), n the normalised input,
 * dn = dout w. */
static __global__ void k_layernorm_bwd(float *dinp, const float *dout, const float *inp,
				       const float *w, const float *mean, const float *rstd,
				       int c)
{
	__shared__ float sh[ROW_THREADS_MAX];
	size_t o = (size_t)blockIdx.x * c;
	float m = mean[blockIdx.x], s = rstd[blockIdx.x], a = 0, bb = 0, dm, dnm;

	for (int j = threadIdx.x; j < c; j += blockDim.x) {
		float nrm = (inp[o + j] - m) * s, dn = dout[o + j] * w[j];

		a += dn;
		bb += dn * nrm;
	}
	dm = block_sum(a, sh) / c;
	dnm = block_sum(bb, sh) / c;
	for (int j = threadIdx.x; j < c; j += blockDim.x) {
		float nrm = (inp[o + j] - m) * s, dn = dout[o + j] * w[j];

		dinp[o + j] += (dn - dm - nrm * dnm) * s;
	}
}

/* RMSNorm (Zhang and Sennrich 2019), one block per row. */
static __global__ void k_rmsnorm_fwd(float *out, float *rstd, const float *inp,
				     const float *w, int c)
{
	__shared__ float sh[ROW_THREADS_MAX];
	const float *x = inp + (size_t)blockIdx.x * c;
	float *y = out + (size_t)blockIdx.x * c;
	float ms = 0, r;

	for (int j = threadIdx.x; j < c; j += blockDim.x)
		ms += x[j] * x[j];
	r = 1.0f / sqrtf(block_sum(ms, sh) / c + NORM_EPS);
	for (int j = threadIdx.x; j < c; j += blockDim.x)
		y[j] = (x[j] * r) * w[j];
	if (threadIdx.x == 0)
		rstd[blockIdx.x] = r;
}

/* dx += rstd (dn - n mean(dn n)), n = x rstd, dn = dout w. */
static __global__ void k_rmsnorm_bwd(float *dinp, const float *dout, const float *inp,
				     const float *w, const float *rstd, int c)
{
	__shared__ float sh[ROW_THREADS_MAX];
	size_t o = (size_t)blockIdx.x * c;
	float s = rstd[blockIdx.x], a = 0, dnm;

	for (int j = threadIdx.x; j < c; j += blockDim.x)
		a += dout[o + j] * w[j] * (inp[o + j] * s);
	dnm = block_sum(a, sh) / c;
	for (int j = threadIdx.x; j < c; j += blockDim.x)
		dinp[o + j] += (dout[o + j] * w[j] - inp[o + j] * s * dnm) * s;
}

/* One block per row (h, r) of a block of scaled scores S[nh][rows][kend]
 * belonging to query row i = i0 + r of sequence bi: probabilities in
 * place, exp(s - lse) up to the causal limit (key i) and 0 after; lse
 * stored at [(bi nh + h) t + i]; the row of att filled when att is given
 * (the probabilities kept for backward when flash attention is off). */
static __global__ void k_attn_softmax(float *S, float *lse, float *att, int rows, int kend,
				      int i0, int t, int nh, int bi)
{
	__shared__ float sh[ROW_THREADS_MAX];
	int h = blockIdx.x / rows, i = i0 + blockIdx.x % rows;
	float *row = S + (size_t)blockIdx.x * kend;
	float mx = -INFINITY, sum = 0, l;

	for (int j = threadIdx.x; j <= i; j += blockDim.x)
		mx = fmaxf(mx, row[j]);
	mx = block_max(mx, sh);
	for (int j = threadIdx.x; j <= i; j += blockDim.x)
		sum += expf(row[j] - mx);
	l = mx + logf(block_sum(sum, sh));
	for (int j = threadIdx.x; j < kend; j += blockDim.x)
		row[j] = j <= i ? expf(row[j] - l) : 0.0f;
	if (att) {
		float *a = att + ((size_t)(bi * nh + h) * t + i) * t;

		/* each thread reads back only what it wrote */
		for (int j = threadIdx.x; j < t; j += blockDim.x)
			a[j] = j <= i ? row[j] : 0.0f;
	}
	if (threadIdx.x == 0)
		lse[(size_t)(bi * nh + h) * t + i] = l;
}

/* Softmax backward of one row, as k_attn_softmax's blocks: S holds the
 * scaled scores and becomes p = exp(s - lse); dP holds dp_j = dout . v_j
 * and becomes ds_j = p_j (dp_j - sum_k p_k dp_k) scale. */
static __global__ void k_attn_softmax_bwd(float *S, float *dP, const float *lse, int rows,
					  int kend, int i0, int t, int nh, int bi, float scale)
{
	__shared__ float sh[ROW_THREADS_MAX];
	int h = blockIdx.x / rows, i = i0 + blockIdx.x % rows;
	float *srow = S + (size_t)blockIdx.x * kend, *drow = dP + (size_t)blockIdx.x * kend;
	float l = lse[(size_t)(bi * nh + h) * t + i], acc = 0, dsum;

	for (int j = threadIdx.x; j < kend; j += blockDim.x) {
		float p = j <= i ? expf(srow[j] - l) : 0.0f;

		srow[j] = p;
		acc += p * drow[j];
	}
	dsum = block_sum(acc, sh);
	for (int j = threadIdx.x; j < kend; j += blockDim.x)
		drow[j] = srow[j] * (drow[j] - dsum) * scale;
}

/* gelu(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), Hendrycks and
 * Gimpel 2016, sec. 2. */
static __global__ void k_gelu_fwd(float *out, const float *inp, long n)
{
	GRID_STRIDE(i, n) {
		float x = inp[i];

		out[i] = 0.5f * x * (1.0f + tanhf(GELU_SCALE * (x + 0.044715f * x * x * x)));
	}
}

static __global__ void k_gelu_bwd(float *dinp, const float *inp, const float *dout, long n)
{
	GRID_STRIDE(i, n) {
		float x = inp[i];
		float th = tanhf(GELU_SCALE * (x + 0.044715f * x * x * x));
		float g = 0.5f * (1.0f + th) +
			  0.5f * x * (1.0f - th * th) * GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);

		dinp[i] += g * dout[i];
	}
}

/* swiglu(g, u) = g sigmoid(g) u (Shazeer 2020, eq. 6 with Swish_1). */
static __global__ void k_swiglu_fwd(float *out, const float *g, const float *u, long n)
{
	GRID_STRIDE(i, n) {
		float sg = 1.0f / (1.0f + expf(-g[i]));

		out[i] = g[i] * sg * u[i];
	}
}

static __global__ void k_swiglu_bwd(float *dg, float *du, const float *g, const float *u,
				    const float *dout, long n)
{
	GRID_STRIDE(i, n) {
		float sg = 1.0f / (1.0f + expf(-g[i]));

		dg[i] += dout[i] * u[i] * sg * (1.0f + g[i] * (1.0f - sg));
		du[i] += dout[i] * g[i] * sg;
	}
}

static __global__ void k_residual(float *out, const float *a, const float *b, long n)
{
	GRID_STRIDE(i, n)
		out[i] = a[i] + b[i];
}

static __global__ void k_accumulate(float *acc, const float *x, long n)
{
	GRID_STRIDE(i, n)
		acc[i] += x[i];
}

/* Vocabulary-parallel embedding (Shoeybi et al. 2019, sec. 3). */
static __global__ void k_embedding_fwd(float *out, const int *tok, const float *wte, long n,
				       int c, int v0, int nv)
{
	GRID_STRIDE(i, n) {
		int r = tok[i / c] - v0;

		out[i] = r >= 0 && r < nv ? wte[(size_t)r * c + i % c] : 0.0f;
	}
}

/* Rows of dwte receive the gradients of every token that reads them;
 * several tokens may share a row, hence the atomic add. */
static __global__ void k_embedding_bwd(float *dwte, const float *dout, const int *tok, long n,
				       int c, int v0, int nv)
{
	GRID_STRIDE(i, n) {
		int r = tok[i / c] - v0;

		if (r >= 0 && r < nv)
			atomicAdd(&dwte[(size_t)r * c + i % c], dout[i]);
	}
}

static __global__ void k_ce_row_max(float *rmax, const float *logits, int nv)
{
	__shared__ float sh[ROW_THREADS_MAX];
	const float *l = logits + (size_t)blockIdx.x * nv;
	float m = -INFINITY;

	for (int j = threadIdx.x; j < nv; j += blockDim.x)
		m = fmaxf(m, l[j]);
	m = block_max(m, sh);
	if (threadIdx.x == 0)
		rmax[blockIdx.x] = m;
}

static __global__ void k_ce_row_stats(float *stats, const float *logits, const float *rmax,
				      const int *target, int n, int nv, int v0)
{
	__shared__ float sh[ROW_THREADS_MAX];
	int i = blockIdx.x, r = target[i] - v0;
	const float *l = logits + (size_t)i * nv;
	float s = 0;

	for (int j = threadIdx.x; j < nv; j += blockDim.x)
		s += expf(l[j] - rmax[i]);
	s = block_sum(s, sh);
	if (threadIdx.x == 0) {
		stats[i] = s;
		stats[n + i] = r >= 0 && r < nv ? l[r] : 0.0f;
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

static __global__ void k_ce_bwd(float *logits, const float *rmax, const float *stats,
				const int *target, long n, int nv, int v0, float scale)
{
	GRID_STRIDE(idx, n) {
		int i = (int)(idx / nv), j = (int)(idx % nv);
		float inv = 1.0f / stats[i];

		logits[idx] = (expf(logits[idx] - rmax[i]) * inv -
			       (j == target[i] - v0 ? 1.0f : 0.0f)) * scale;
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

/* ---- GEMMs ----------------------------------------------------------- */

/* C = alpha op(A) op(B) + beta C in cuBLAS's column-major terms. */
static void gemm(struct exec_device *d, cublasOperation_t ta, cublasOperation_t tb, int m,
		 int n, int k, float alpha, const float *a, int lda, const float *b, int ldb,
		 float beta, float *c, int ldc)
{
	struct cuda_priv *p = priv_of(d);

	if (p->failed || m == 0 || n == 0)
		return;
	BLAS(d, cublasGemmEx(p->blas, ta, tb, m, n, k, &alpha, a, CUDA_R_32F, lda, b,
			     CUDA_R_32F, ldb, &beta, c, CUDA_R_32F, ldc, p->gemm_compute,
			     CUBLAS_GEMM_DEFAULT));
}

static void gemm_batched(struct exec_device *d, cublasOperation_t ta, cublasOperation_t tb,
			 int m, int n, int k, float alpha, const float *a, int lda,
			 long long sa, const float *b, int ldb, long long sb, float beta,
			 float *c, int ldc, long long sc, int batch)
{
	struct cuda_priv *p = priv_of(d);

	if (p->failed || m == 0 || n == 0 || batch == 0)
		return;
	BLAS(d, cublasGemmStridedBatchedEx(p->blas, ta, tb, m, n, k, &alpha, a, CUDA_R_32F,
					   lda, sa, b, CUDA_R_32F, ldb, sb, &beta, c,
					   CUDA_R_32F, ldc, sc, batch, p->gemm_compute,
					   CUBLAS_GEMM_DEFAULT));
}

/* Row-major out[n, oc] = inp[n, ic] w[oc, ic]^T.  cuBLAS is column-major,
 * so it sees every row-major array transposed: w as (ic x oc), inp as
 * (ic x n), out as (oc x n) = op_T(w) op_N(inp). */
static void matmul_forward(struct exec_device *d, float *out, const float *inp,
			   const float *w, const float *bias, int n, int ic, int oc)
{
	gemm(d, CUBLAS_OP_T, CUBLAS_OP_N, oc, n, ic, 1.0f, w, ic, inp, ic, 0.0f, out, oc);
	if (bias && !dead(d))
		LAUNCH(d, k_add_bias, ew_grid((long)n * oc), EW_THREADS, out, bias,
		       (long)n * oc, oc);
}

/* dinp (ic x n) += w (ic x oc) dout (oc x n); dw (ic x oc) += inp (ic x n)
 * dout^T (n x oc); dbias += column sums of dout. */
static void matmul_backward(struct exec_device *d, float *dinp, float *dw, float *dbias,
			    const float *dout, const float *inp, const float *w, int n,
			    int ic, int oc)
{
	if (dinp)
		gemm(d, CUBLAS_OP_N, CUBLAS_OP_N, ic, n, oc, 1.0f, w, ic, dout, oc, 1.0f, dinp, ic);
	gemm(d, CUBLAS_OP_N, CUBLAS_OP_T, ic, oc, n, 1.0f, inp, ic, dout, oc, 1.0f, dw, ic);
	if (dbias && !dead(d))
		LAUNCH(d, k_col_reduce, (unsigned)((oc + 31) / 32), 32 * COL_ROWS, dbias,
		       (float *)NULL, dout, (const float *)NULL, (const float *)NULL,
		       (const float *)NULL, n, oc, (int)COL_SUM);
}

static void add_bias(struct exec_device *d, float *out, const float *bias, int n, int c)
{
	if (!dead(d))
		LAUNCH(d, k_add_bias, ew_grid((long)n * c), EW_THREADS, out, bias, (long)n * c, c);
}

/* ---- normalisation --------------------------------------------------- */

static void layernorm_forward(struct exec_device *d, float *out, float *mean, float *rstd,
			      const float *inp, const float *w, const float *b, int n, int c)
{
	if (!dead(d) && n > 0)
		LAUNCH(d, k_layernorm_fwd, (unsigned)n, row_threads(c), out, mean, rstd, inp, w,
		       b, c);
}

static void layernorm_backward(struct exec_device *d, float *dinp, float *dw, float *db,
			       const float *dout, const float *inp, const float *w,
			       const float *mean, const float *rstd, int n, int c)
{
	if (dead(d) || n == 0)
		return;
	LAUNCH(d, k_layernorm_bwd, (unsigned)n, row_threads(c), dinp, dout, inp, w, mean,
	       rstd, c);
	LAUNCH(d, k_col_reduce, (unsigned)((c + 31) / 32), 32 * COL_ROWS, dw, db, dout, inp,
	       mean, rstd, n, c, (int)COL_LAYERNORM);
}

static void rmsnorm_forward(struct exec_device *d, float *out, float *rstd, const float *inp,
			    const float *w, int n, int c)
{
	if (!dead(d) && n > 0)
		LAUNCH(d, k_rmsnorm_fwd, (unsigned)n, row_threads(c), out, rstd, inp, w, c);
}

static void rmsnorm_backward(struct exec_device *d, float *dinp, float *dw, const float *dout,
			     const float *inp, const float *w, const float *rstd, int n, int c)
{
	if (dead(d) || n == 0)
		return;
	LAUNCH(d, k_rmsnorm_bwd, (unsigned)n, row_threads(c), dinp, dout, inp, w, rstd, c);
	LAUNCH(d, k_col_reduce, (unsigned)((c + 31) / 32), 32 * COL_ROWS, dw, (float *)NULL,
	       dout, inp, (const float *)NULL, rstd, n, c, (int)COL_RMSNORM);
}

/* ---- attention ------------------------------------------------------- */

/* Query rows per block: all t when nh x t x t floats fit the scratch
 * bound, else the largest multiple of ATTN_MIN_ROWS that fits, at least
 * ATTN_MIN_ROWS. */
static int attn_rows(int t, int nh)
{
	long per_row = (long)nh * t, nb;

	if (per_row * t <= ATTN_SCRATCH_FLOATS)
		return t;
	nb = ATTN_SCRATCH_FLOATS / per_row / ATTN_MIN_ROWS * ATTN_MIN_ROWS;
	if (nb < ATTN_MIN_ROWS)
		nb = ATTN_MIN_ROWS;
	return (int)(nb < t ? nb : t);
}

/* The two score buffers of nh x nb x t floats each; NULL after a failed
 * allocation (reported). */
static float *attn_scratch(struct exec_device *d, size_t each)
{
	struct cuda_priv *p = priv_of(d);

	if (p->scratch_n < 2 * each) {
		if (p->scratch)
			CU(d, cudaFreeAsync(p->scratch, p->compute));
		p->scratch = NULL;
		p->scratch_n = 0;
		if (CU(d, cudaMallocAsync((void **)&p->scratch, 2 * each * sizeof(float),
					  p->compute)) != RC_OK)
			return NULL;
		p->scratch_n = 2 * each;
	}
	return p->scratch;
}

/* S_h = scale Q_h K_g^T for the rows of one query block: with row-major
 * Q (rows x hd, stride nh hd) and K (kend x hd, stride nkv hd), cuBLAS
 * computes S^T (kend x rows) = op_T(K as hd x kend) op_N(Q as hd x rows).
 * One strided batch per member j of a KV group covers its nkv heads
 * h = g group + j; S is [nh][rows][kend]. */
static void attn_scores(struct exec_device *d, float *S, const float *qb, const float *kb,
			int rows, int kend, int nh, int nkv, int hd, float alpha)
{
	int group = nh / nkv;

	for (int j = 0; j < group; j++)
		gemm_batched(d, CUBLAS_OP_T, CUBLAS_OP_N, kend, rows, hd, alpha, kb, nkv * hd,
			     hd, qb + (size_t)j * hd, nh * hd, (long long)group * hd, 0.0f,
			     S + (size_t)j * rows * kend, kend, (long long)group * rows * kend,
			     nkv);
}

static void attention_forward(struct exec_device *d, float *out, float *lse, float *att,
			      const float *q, const float *k, const float *v, int b, int t,
			      int nh, int nkv, int hd)
{
	int group = nh / nkv, nb = attn_rows(t, nh);
	float scale = 1.0f / sqrtf((float)hd);
	float *S = dead(d) ? NULL : attn_scratch(d, (size_t)nh * nb * t);

	if (!S)
		return;
	for (int bi = 0; bi < b; bi++)
		for (int i0 = 0; i0 < t; i0 += nb) {
			int rows = t - i0 < nb ? t - i0 : nb, kend = i0 + rows;
			const float *qb = q + ((size_t)bi * t + i0) * nh * hd;
			const float *kb = k + (size_t)bi * t * nkv * hd;
			const float *vb = v + (size_t)bi * t * nkv * hd;
			float *ob = out + ((size_t)bi * t + i0) * nh * hd;

			attn_scores(d, S, qb, kb, rows, kend, nh, nkv, hd, scale);
			if (!dead(d))
				LAUNCH(d, k_attn_softmax, (unsigned)(nh * rows), row_threads(kend), S,
				       lse, att, rows, kend, i0, t, nh, bi);
			/* O_h (rows x hd) is column-major O^T (hd x rows) =
			 * op_N(V as hd x kend) op_N(P as kend x rows) */
			for (int j = 0; j < group; j++)
				gemm_batched(d, CUBLAS_OP_N, CUBLAS_OP_N, hd, rows, kend, 1.0f, vb,
					     nkv * hd, hd, S + (size_t)j * rows * kend, kend,
					     (long long)group * rows * kend, 0.0f,
					     ob + (size_t)j * hd, nh * hd, (long long)group * hd, nkv);
		}
}

static void attention_backward(struct exec_device *d, float *dq, float *dk, float *dv,
			       const float *dout, const float *q, const float *k,
			       const float *v, const float *lse, const float *att, int b, int t,
			       int nh, int nkv, int hd)
{
	int group = nh / nkv, nb = attn_rows(t, nh);
	float scale = 1.0f / sqrtf((float)hd);
	size_t each = (size_t)nh * nb * t;
	float *S = dead(d) ? NULL : attn_scratch(d, each), *dP = S ? S + each : NULL;

	/* the probabilities are rebuilt from lse whether or not att kept them */
	(void)att;
	if (!S)
		return;
	for (int bi = 0; bi < b; bi++)
		for (int i0 = 0; i0 < t; i0 += nb) {
			int rows = t - i0 < nb ? t - i0 : nb, kend = i0 + rows;
			size_t qoff = ((size_t)bi * t + i0) * nh * hd, koff = (size_t)bi * t * nkv * hd;

			attn_scores(d, S, q + qoff, k + koff, rows, kend, nh, nkv, hd, scale);
			/* dP_h = dO_h V_g^T, the same product as the scores */
			attn_scores(d, dP, dout + qoff, v + koff, rows, kend, nh, nkv, hd, 1.0f);
			if (!dead(d))
				LAUNCH(d, k_attn_softmax_bwd, (unsigned)(nh * rows), row_threads(kend),
				       S, dP, lse, rows, kend, i0, t, nh, bi, scale);
			for (int j = 0; j < group; j++) {
				size_t so = (size_t)j * rows * kend;
				long long ss = (long long)group * rows * kend;

				/* dQ_h (hd x rows) += op_N(K as hd x kend) op_N(dS as kend x rows) */
				gemm_batched(d, CUBLAS_OP_N, CUBLAS_OP_N, hd, rows, kend, 1.0f,
					     k + koff, nkv * hd, hd, dP + so, kend, ss, 1.0f,
					     dq + qoff + (size_t)j * hd, nh * hd,
					     (long long)group * hd, nkv);
				/* dK_g (hd x kend) += op_N(Q as hd x rows) op_T(dS as kend x rows) */
				gemm_batched(d, CUBLAS_OP_N, CUBLAS_OP_T, hd, kend, rows, 1.0f,
					     q + qoff + (size_t)j * hd, nh * hd,
					     (long long)group * hd, dP + so, kend, ss, 1.0f,
					     dk + koff, nkv * hd, hd, nkv);
				/* dV_g (hd x kend) += op_N(dO as hd x rows) op_T(P as kend x rows) */
				gemm_batched(d, CUBLAS_OP_N, CUBLAS_OP_T, hd, kend, rows, 1.0f,
					     dout + qoff + (size_t)j * hd, nh * hd,
					     (long long)group * hd, S + so, kend, ss, 1.0f,
					     dv + koff, nkv * hd, hd, nkv);
			}
		}
}

/* ---- element-wise ---------------------------------------------------- */

static void gelu_forward(struct exec_device *d, float *out, const float *inp, long n)
{
	if (!dead(d) && n > 0)
		LAUNCH(d, k_gelu_fwd, ew_grid(n), EW_THREADS, out, inp, n);
}

static void gelu_backward(struct exec_device *d, float *dinp, const float *inp,
			  const float *dout, long n)
{
	if (!dead(d) && n > 0)
		LAUNCH(d, k_gelu_bwd, ew_grid(n), EW_THREADS, dinp, inp, dout, n);
}

static void swiglu_forward(struct exec_device *d, float *out, const float *g, const float *u,
			   long n)
{
	if (!dead(d) && n > 0)
		LAUNCH(d, k_swiglu_fwd, ew_grid(n), EW_THREADS, out, g, u, n);
}

static void swiglu_backward(struct exec_device *d, float *dg, float *du, const float *g,
			    const float *u, const float *dout, long n)
{
	if (!dead(d) && n > 0)
		LAUNCH(d, k_swiglu_bwd, ew_grid(n), EW_THREADS, dg, du, g, u, dout, n);
}

static void residual_forward(struct exec_device *d, float *out, const float *a, const float *b,
			     long n)
{
	if (!dead(d) && n > 0)
		LAUNCH(d, k_residual, ew_grid(n), EW_THREADS, out, a, b, n);
}

static void accumulate(struct exec_device *d, float *acc, const float *x, long n)
{
	if (!dead(d) && n > 0)
		LAUNCH(d, k_accumulate, ew_grid(n), EW_THREADS, acc, x, n);
}

/* ---- embedding and loss ---------------------------------------------- */

static void embedding_forward(struct exec_device *d, float *out, const int *tok,
			      const float *wte, int n, int c, int v0, int nv)
{
	if (!dead(d) && n > 0)
		LAUNCH(d, k_embedding_fwd, ew_grid((long)n * c), EW_THREADS, out, tok, wte,
		       (long)n * c, c, v0, nv);
}

static void embedding_backward(struct exec_device *d, float *dwte, const float *dout,
			       const int *tok, int n, int c, int v0, int nv)
{
	if (!dead(d) && n > 0)
		LAUNCH(d, k_embedding_bwd, ew_grid((long)n * c), EW_THREADS, dwte, dout, tok,
		       (long)n * c, c, v0, nv);
}

static void ce_row_max(struct exec_device *d, float *rmax, const float *logits, int n, int nv)
{
	if (!dead(d) && n > 0)
		LAUNCH(d, k_ce_row_max, (unsigned)n, row_threads(nv), rmax, logits, nv);
}

static void ce_row_stats(struct exec_device *d, float *stats, const float *logits,
			 const float *rmax, const int *target, int n, int nv, int v0)
{
	if (!dead(d) && n > 0)
		LAUNCH(d, k_ce_row_stats, (unsigned)n, row_threads(nv), stats, logits, rmax,
		       target, n, nv, v0);
}

/* Copies the device accumulator to the host and waits for it. */
static double read_sum(struct exec_device *d)
{
	struct cuda_priv *p = priv_of(d);

	if (p->failed ||
	    CU(d, cudaMemcpyAsync(p->host_sum, p->dsum, sizeof(double), cudaMemcpyDeviceToHost,
				  p->compute)) != RC_OK ||
	    CU(d, cudaStreamSynchronize(p->compute)) != RC_OK)
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

static void ce_backward(struct exec_device *d, float *logits, const float *rmax,
			const float *stats, const int *target, int n, int nv, int v0,
			float scale)
{
	if (!dead(d) && n > 0)
		LAUNCH(d, k_ce_bwd, ew_grid((long)n * nv), EW_THREADS, logits, rmax, stats, target,
		       (long)n * nv, nv, v0, scale);
}

/* ---- optimizer ------------------------------------------------------- */

static double sumsq(struct exec_device *d, const float *x, long n)
{
	struct cuda_priv *p = priv_of(d);

	if (p->failed || n == 0)
		return 0;
	if (CU(d, cudaMemsetAsync(p->dsum, 0, sizeof(double), p->compute)) != RC_OK ||
	    LAUNCH(d, k_sumsq, ew_grid(n), EW_THREADS, p->dsum, x, n) != RC_OK)
		return 0;
	return read_sum(d);
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
		CU(d, cudaStreamSynchronize(p->compute));
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
	if (p->scratch)
		cudaFree(p->scratch);
	if (p->dsum)
		cudaFree(p->dsum);
	if (p->host_sum)
		cudaFreeHost(p->host_sum);
	if (p->blas)
		cublasDestroy(p->blas);
	if (p->order_ev)
		cudaEventDestroy(p->order_ev);
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
	char why[256];
	int count = 0;

	if (exec_cuda_probe(&count, why, sizeof(why)) != RC_OK) {
		gp_error("rank %d: %s", exec_launcher_rank(), why);
		return RC_DEVICE;
	}
	p = (struct cuda_priv *)xcalloc(1, sizeof(*p));
	d->priv = p;
	p->ordinal = exec_launcher_local_rank() % count;
	p->gemm_compute = d->precision == EXEC_PRECISION_FP32 ? CUBLAS_COMPUTE_32F
							      : CUBLAS_COMPUTE_32F_FAST_16BF;
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
	    CU(d, cudaEventCreateWithFlags(&p->order_ev, cudaEventDisableTiming)) != RC_OK ||
	    CU(d, cudaDeviceGetDefaultMemPool(&pool, p->ordinal)) != RC_OK ||
	    CU(d, cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep)) != RC_OK ||
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
	if (CU(d, cudaStreamSynchronize(p->compute)) != RC_OK ||
	    CU(d, cudaStreamSynchronize(p->comm)) != RC_OK ||
	    CU(d, cudaGetLastError()) != RC_OK)
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
 * its queued work reaches; on the communication stream, the point where
 * that stream, having waited for the compute stream's work so far, would
 * start a collective (exec_comm_nccl.c orders each the same way). */
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
	if (stream == EXEC_STREAM_COMM) {
		if (exec_cuda_order(d, p->compute, p->comm) != RC_OK)
			return RC_DEVICE;
		s = p->comm;
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
	if (CU(d, cudaEventSynchronize(t->ev[to])) != RC_OK ||
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
