/*
 * exec_cpu_moe.c - a mixture-of-experts layer's own kernels on the CPU:
 * the router's softmax and top-k choice with its backward, the
 * permutation of token rows into expert order and back (the combine), and
 * the combine's weight gradient.  The experts themselves are the MLP's
 * GEMMs and activations, run by the trainer on each expert's rows.
 *
 * Every sum runs in a fixed order (a row's experts, then its k slots), so
 * the same inputs give the same bits on every rank, and the same choice:
 * the top-k breaks ties towards the lower expert.
 */
#include <math.h>

#include "device/cpu/exec_cpu_internal.h"

/* The router of one token (Shazeer et al., ICLR 2017, sec. 2.1, with the
 * softmax over every expert and the top-k after it, as Fedus et al., JMLR
 * 2022, sec. 2.1 and Megatron-Core's topk_softmax_with_capacity): row
 * p[e] = softmax(l)[e]; idx[j] the j-th largest; w[j] = p[idx[j]], over
 * their sum unless pre_softmax. */
void cpu_moe_route_forward(struct exec_device *d, float *probs, int *idx, float *w,
			   const void *logits_, int n, int e, int k, int pre_softmax)
{
	const float *logits = logits_;
	(void)d;
	for (int t = 0; t < n; t++) {
		const float *l = logits + (size_t)t * e;
		float *p = probs + (size_t)t * e, mx = -INFINITY, sum = 0, chosen = 0;
		int *ix = idx + (size_t)t * k;
		float *wt = w + (size_t)t * k;

		for (int i = 0; i < e; i++)
			mx = fmaxf(mx, l[i]);
		for (int i = 0; i < e; i++) {
			p[i] = expf(l[i] - mx);
			sum += p[i];
		}
		for (int i = 0; i < e; i++)
			p[i] /= sum;
		for (int j = 0; j < k; j++) {
			int best = -1;

			for (int i = 0; i < e; i++) {
				int taken = 0;

				for (int q = 0; q < j && !taken; q++)
					taken = ix[q] == i;
				/* strictly larger: a tie keeps the lower expert */
				if (!taken && (best < 0 || p[i] > p[best]))
					best = i;
			}
			ix[j] = best;
			wt[j] = p[best];
			chosen += p[best];
		}
		if (!pre_softmax)
			for (int j = 0; j < k; j++)
				wt[j] /= chosen;
	}
}

/* With g the gradient with respect to the probabilities (zero but at the
 * chosen experts), the softmax's backward is dl[i] = p[i] (g[i] - sum_e
 * p[e] g[e]).  The chosen weights' gradient gives g: dw[j] itself with
 * pre_softmax, else, w[j] = p[j] / S with S the chosen probabilities'
 * sum, g[j] = (dw[j] - sum_q dw[q] w[q]) / S. */
void cpu_moe_route_backward(struct exec_device *d, void *dlogits_, const float *dw,
			    const float *probs, const int *idx, int n, int e, int k,
			    int pre_softmax)
{
	float *dlogits = dlogits_;
	(void)d;
	for (int t = 0; t < n; t++) {
		const float *p = probs + (size_t)t * e, *dwt = dw + (size_t)t * k;
		const int *ix = idx + (size_t)t * k;
		float *dl = dlogits + (size_t)t * e;
		float s = 0, dot = 0, pg = 0;

		for (int j = 0; j < k; j++)
			s += p[ix[j]];
		for (int j = 0; j < k; j++)
			dot += dwt[j] * (p[ix[j]] / s);
		for (int j = 0; j < k; j++) {
			float g = pre_softmax ? dwt[j] : (dwt[j] - dot) / s;

			pg += p[ix[j]] * g;
		}
		for (int i = 0; i < e; i++)
			dl[i] -= p[i] * pg;
		for (int j = 0; j < k; j++) {
			float g = pre_softmax ? dwt[j] : (dwt[j] - dot) / s;

			dl[ix[j]] += p[ix[j]] * g;
		}
	}
}

void cpu_moe_permute(struct exec_device *d, void *out_, const void *inp_, const int *rows,
		     const float *w, int n, int c, int k)
{
	float *out = out_;
	const float *inp = inp_;
	(void)d;
	for (int i = 0; i < n; i++) {
		const float *x = inp + (size_t)(rows[i] / k) * c;
		float *y = out + (size_t)i * c;
		float a = w ? w[rows[i]] : 1.0f;

		for (int j = 0; j < c; j++)
			y[j] = a * x[j];
	}
}

void cpu_moe_unpermute(struct exec_device *d, void *out_, const void *inp_, const int *pos,
		       const float *w, int n, int c, int k)
{
	float *out = out_;
	const float *inp = inp_;
	(void)d;
	for (int t = 0; t < n; t++)
		for (int j = 0; j < k; j++) {
			size_t s = (size_t)t * k + j;

			axpy(out + (size_t)t * c, inp + (size_t)pos[s] * c, w ? w[s] : 1.0f, c);
		}
}

void cpu_moe_weights_backward(struct exec_device *d, float *dw, const void *dout_,
			      const void *y_, const int *pos, int n, int c, int k)
{
	const float *dout = dout_, *y = y_;
	(void)d;
	for (long s = 0; s < (long)n * k; s++) {
		const float *a = dout + (size_t)(s / k) * c, *b = y + (size_t)pos[s] * c;
		float acc = 0;

		for (int j = 0; j < c; j++)
			acc += a[j] * b[j];
		dw[s] += acc;
	}
}
