/*
 * exec_cuda_norm.cu - LayerNorm (Ba et al. 2016) and RMSNorm (Zhang and
 * Sennrich 2019) on the GPU, one block per row; the weights' gradients
 * are column sums (cuda_col_reduce), the same bits on every TP rank.  The
 * CPU reference: exec_cpu_norm.c.
 */
#include "device/cuda/exec_cuda_internal.h"

#define NORM_EPS 1e-5f

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

void cuda_layernorm_forward(struct exec_device *d, void *out, float *mean, float *rstd,
			    const void *inp, const void *w, const void *b, int n, int c)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_layernorm_fwd<T>, (unsigned)n, row_threads(c),
				      (T *)out, mean, rstd, (const T *)inp, (const T *)w,
				      (const T *)b, c));
}

void cuda_layernorm_backward(struct exec_device *d, void *dinp, float *dw, float *db,
			     const void *dout, const void *inp, const void *w,
			     const float *mean, const float *rstd, int n, int c)
{
	if (dead(d) || n == 0)
		return;
	WITH_ACT(d, T, LAUNCH(d, k_layernorm_bwd<T>, (unsigned)n, row_threads(c), (T *)dinp,
			      (const T *)dout, (const T *)inp, (const T *)w, mean, rstd, c));
	cuda_col_reduce(d, dw, db, dout, inp, mean, rstd, n, c, COL_LAYERNORM);
}

void cuda_rmsnorm_forward(struct exec_device *d, void *out, float *rstd, const void *inp,
			  const void *w, int n, int c)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_rmsnorm_fwd<T>, (unsigned)n, row_threads(c), (T *)out,
				      rstd, (const T *)inp, (const T *)w, c));
}

void cuda_rmsnorm_backward(struct exec_device *d, void *dinp, float *dw, const void *dout,
			   const void *inp, const void *w, const float *rstd, int n, int c)
{
	if (dead(d) || n == 0)
		return;
	WITH_ACT(d, T, LAUNCH(d, k_rmsnorm_bwd<T>, (unsigned)n, row_threads(c), (T *)dinp,
			      (const T *)dout, (const T *)inp, (const T *)w, rstd, c));
	cuda_col_reduce(d, dw, NULL, dout, inp, NULL, rstd, n, c, COL_RMSNORM);
}
