/*
 * exec_cpu_loss.c - the vocabulary-parallel softmax cross-entropy on the
 * CPU in its three passes (row maxima, row statistics, losses) and its
 * gradient, written into the logits.
 */
#include <math.h>

#include "device/cpu/exec_cpu_internal.h"

void cpu_ce_row_max(struct exec_device *d, float *rmax, const void *logits_,
		    int n, int nv)
{
	const float *logits = logits_;
	(void)d;
	for (int i = 0; i < n; i++) {
		const float *l = logits + (size_t)i * nv;
		float m = -INFINITY;

		for (int j = 0; j < nv; j++)
			if (l[j] > m)
				m = l[j];
		rmax[i] = m;
	}
}

void cpu_ce_row_stats(struct exec_device *d, float *stats, const void *logits_,
		      const float *rmax, const int *target, int n, int nv, int v0)
{
	const float *logits = logits_;
	(void)d;
	for (int i = 0; i < n; i++) {
		const float *l = logits + (size_t)i * nv;
		int r = target[i] - v0;
		double s = 0;

		for (int j = 0; j < nv; j++)
			s += expf(l[j] - rmax[i]);
		stats[i] = (float)s;
		stats[n + i] = r >= 0 && r < nv ? l[r] : 0.0f;
	}
}

/* -log softmax(l)_y = log sum_j exp(l_j - max) + max - l_y */
double cpu_ce_loss_sum(struct exec_device *d, const float *rmax,
		       const float *stats, int n)
{
	double s = 0;

	(void)d;
	for (int i = 0; i < n; i++)
		s += log((double)stats[i]) + rmax[i] - stats[n + i];
	return s;
}

void cpu_ce_backward(struct exec_device *d, void *logits_, const float *rmax,
		     const float *stats, const int *target, int n, int nv,
		     int v0, float scale)
{
	float *logits = logits_;
	(void)d;
	for (int i = 0; i < n; i++) {
		float *l = logits + (size_t)i * nv;
		int r = target[i] - v0;
		float inv = 1.0f / stats[i];

		for (int j = 0; j < nv; j++)
			l[j] = (expf(l[j] - rmax[i]) * inv - (j == r ? 1.0f : 0.0f)) * scale;
	}
}
