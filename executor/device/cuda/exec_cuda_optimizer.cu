/*
 * exec_cuda_optimizer.cu - what the optimizer step runs on the GPU: the
 * squared norm of a gradient (summed in double, into backend memory) and
 * AdamW.  The CPU reference: exec_cpu_optimizer.c.
 */
#include "device/cuda/exec_cuda_internal.h"

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

void cuda_sumsq(struct exec_device *d, double *acc, const float *x, long n)
{
	if (!dead(d) && n > 0)
		LAUNCH(d, k_sumsq, ew_grid(n), EW_THREADS, acc, x, n);
}

void cuda_adamw(struct exec_device *d, float *p, const float *g, float *m, float *v, long n,
		float lr, float beta1, float beta2, float eps, float wd, int t, float gscale)
{
	float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);

	if (!dead(d) && n > 0)
		LAUNCH(d, k_adamw, ew_grid(n), EW_THREADS, p, g, m, v, n, lr, beta1, beta2, eps,
		       wd, c1, c2, gscale);
}
