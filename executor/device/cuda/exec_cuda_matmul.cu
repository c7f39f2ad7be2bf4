/*
 * exec_cuda_matmul.cu - y = x W^T + b on the GPU and its gradients:
 * cuBLAS GEMMs with fp32 accumulation (bf16 operands on the tensor cores,
 * or exactly fp32), the bias added by a kernel, and its gradient summed
 * over rows in a fixed order (cuda_col_reduce, which the norms' weight
 * gradients share).  The CPU reference: exec_cpu_matmul.c.
 */
#include "device/cuda/exec_cuda_internal.h"

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

template <typename T>
static __global__ void k_add_bias(T *out, const T *bias, long n, int c)
{
	GRID_STRIDE(i, n)
		put(&out[i], ld(out[i]) + ld(bias[i % c]));
}

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

/* Blocks of a k_col_reduce over n rows of c columns. */
static unsigned col_grid(long n, long c)
{
	long g = (c + 31) / 32 * ((n + COL_CHUNK - 1) / COL_CHUNK);

	return (unsigned)(g < 1 ? 1 : g);
}

/* dw (and db) += k_col_reduce's column sums of n rows of c columns, the
 * same bits whatever order its blocks run in. */
void cuda_col_reduce(struct exec_device *d, float *dw, float *db, const void *dy,
		     const void *x, const float *mean, const float *rstd, int n, int c,
		     int kind)
{
	long chunks = (n + COL_CHUNK - 1) / COL_CHUNK;
	float *part;

	/* a frozen norm has no weight gradient (nor a bias one) */
	if (dead(d) || n == 0 || !dw)
		return;
	part = (float *)cuda_scratch_at_least(d, &priv_of(d)->cols,
					 (size_t)(kind == COL_LAYERNORM ? 2 : 1) * chunks * c *
					 sizeof(float));
	if (!part)
		return;
	WITH_ACT(d, T, LAUNCH(d, k_col_reduce<T>, col_grid(n, c), 32 * COL_ROWS, part,
			      (const T *)dy, (const T *)x, mean, rstd, n, c, kind));
	LAUNCH(d, k_col_finish, ew_grid(c), EW_THREADS, dw, db, (const float *)part, (int)chunks,
	       c);
}

/* C = alpha op(A) op(B) + beta C in cuBLAS's column-major terms; A and B
 * of type abt, C of type ct.  fp32 accumulation (CUBLAS_COMPUTE_32F):
 * bf16 operands run on the tensor cores, fp32 ones exactly in fp32. */
void cuda_gemm(struct exec_device *d, cublasOperation_t ta, cublasOperation_t tb, int m,
	       int n, int k, float alpha, const void *a, int lda, const void *b, int ldb,
	       float beta, void *c, int ldc, cudaDataType abt, cudaDataType ct)
{
	struct cuda_priv *p = priv_of(d);

	if (p->failed || m == 0 || n == 0)
		return;
	BLAS(d, cublasGemmEx(p->blas, ta, tb, m, n, k, &alpha, a, abt, lda, b, abt, ldb, &beta,
			     c, ct, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void cuda_gemm_batched(struct exec_device *d, cublasOperation_t ta, cublasOperation_t tb,
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
void cuda_matmul_forward(struct exec_device *d, void *out, const void *inp, const void *w,
			 const void *bias, int n, int ic, int oc)
{
	cudaDataType at = act_type(d);

	cuda_gemm(d, CUBLAS_OP_T, CUBLAS_OP_N, oc, n, ic, 1.0f, w, ic, inp, ic, 0.0f, out, oc, at, at);
	if (bias && !dead(d))
		WITH_ACT(d, T, LAUNCH(d, k_add_bias<T>, ew_grid((long)n * oc), EW_THREADS,
				      (T *)out, (const T *)bias, (long)n * oc, oc));
}

/* dinp (ic x n) += w (ic x oc) dout (oc x n); dw (ic x oc, fp32) += inp
 * (ic x n) dout^T (n x oc); dbias += column sums of dout. */
void cuda_matmul_backward(struct exec_device *d, void *dinp, float *dw, float *dbias,
			  const void *dout, const void *inp, const void *w, int n, int ic,
			  int oc)
{
	cudaDataType at = act_type(d);

	if (dinp)
		cuda_gemm(d, CUBLAS_OP_N, CUBLAS_OP_N, ic, n, oc, 1.0f, w, ic, dout, oc, 1.0f, dinp, ic,
		     at, at);
	if (dw)
		cuda_gemm(d, CUBLAS_OP_N, CUBLAS_OP_T, ic, oc, n, 1.0f, inp, ic, dout, oc, 1.0f, dw,
			  ic, at, CUDA_R_32F);
	if (dbias)
		cuda_col_reduce(d, dbias, NULL, dout, NULL, NULL, NULL, n, oc, COL_SUM);
}

void cuda_add_bias(struct exec_device *d, void *out, const void *bias, int n, int c)
{
	if (!dead(d))
		WITH_ACT(d, T, LAUNCH(d, k_add_bias<T>, ew_grid((long)n * c), EW_THREADS,
				      (T *)out, (const T *)bias, (long)n * c, c));
}
