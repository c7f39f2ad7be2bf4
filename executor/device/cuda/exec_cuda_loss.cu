/*
 * exec_cuda_loss.cu - the vocabulary-parallel softmax cross-entropy on
 * the GPU in its three passes (row maxima, row statistics, the loss summed
 * by one block and read back, the one place forward waits for the
 * device) and its gradient, written into the logits.  The CPU reference:
 * exec_cpu_loss.c.
 */
#include "device/cuda/exec_cuda_internal.h"

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

void cuda_ce_row_max(struct exec_device *d, float *rmax, const void *logits, int n, int nv)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_ce_row_max<T>, (unsigned)n, row_threads(nv), rmax,
				      (const T *)logits, nv));
}

void cuda_ce_row_stats(struct exec_device *d, float *stats, const void *logits,
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
	    cuda_wait_stream(d, p->compute) != RC_OK)
		return 0;
	return *p->host_sum;
}

double cuda_ce_loss_sum(struct exec_device *d, const float *rmax, const float *stats, int n)
{
	if (dead(d) || n == 0)
		return 0;
	if (LAUNCH(d, k_ce_loss, 1u, (unsigned)ROW_THREADS_MAX, priv_of(d)->dsum, rmax, stats,
		   n) != RC_OK)
		return 0;
	return read_sum(d);
}

void cuda_ce_backward(struct exec_device *d, void *logits, const float *rmax,
		      const float *stats, const int *target, int n, int nv, int v0,
		      float scale)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_ce_bwd<T>, ew_grid((long)n * nv), EW_THREADS,
				      (T *)logits, rmax, stats, target, (long)n * nv, nv, v0,
				      scale));
}
