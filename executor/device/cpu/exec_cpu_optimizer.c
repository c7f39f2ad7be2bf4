/*
 * exec_cpu_optimizer.c - what the optimizer step runs on the CPU: the
 * squared norm of a gradient (summed in double) and AdamW.
 */
#include <math.h>

#include "device/cpu/exec_cpu_internal.h"

void cpu_sumsq(struct exec_device *d, double *acc, const float *x, long n)
{
	double s = 0;

	(void)d;
	for (long i = 0; i < n; i++)
		s += (double)x[i] * x[i];
	*acc += s;
}

/* AdamW (Loshchilov and Hutter, ICLR 2019, algorithm 2): Adam's moments
 * with bias correction, weight decay applied to the weight directly. */
void cpu_adamw(struct exec_device *d, float *p, const float *g, float *m,
	       float *v, long n, float lr, float beta1, float beta2, float eps,
	       float wd, int t, float gscale)
{
	float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);

	(void)d;
	for (long i = 0; i < n; i++) {
		float gi = g[i] * gscale;

		m[i] = beta1 * m[i] + (1.0f - beta1) * gi;
		v[i] = beta2 * v[i] + (1.0f - beta2) * gi * gi;
		p[i] -= lr * ((m[i] / c1) / (sqrtf(v[i] / c2) + eps) + wd * p[i]);
	}
}
