/*
 * exec_cuda_moe.cu - a mixture-of-experts layer's own kernels on the GPU:
 * the router's softmax and top-k with its backward, the permutation of
 * token rows into expert order and the combine back, and the combine's
 * weight gradient.  The CPU reference: exec_cpu_moe.c.  The experts'
 * GEMMs are the backend's matmul (cuBLAS), one per expert on its rows.
 *
 * The router gives each token one thread: a row holds the layer's
 * experts (8 to 384 in the published models), and one thread keeps the
 * CPU's order of sums and its tie-break exactly.  Permutations give each
 * element a thread; the weight gradient each slot one, summing its row in
 * order: no atomics, the same bits on every run.
 */
#include "device/cuda/exec_cuda_internal.h"

template <typename T>
static __global__ void k_moe_route_fwd(float *probs, int *idx, float *w, const T *logits,
				       int n, int e, int k, int pre_softmax)
{
	GRID_STRIDE(t, n) {
		const T *l = logits + (size_t)t * e;
		float *p = probs + (size_t)t * e, mx = -INFINITY, sum = 0, chosen = 0;
		int *ix = idx + (size_t)t * k;
		float *wt = w + (size_t)t * k;

		for (int i = 0; i < e; i++)
			mx = fmaxf(mx, ld(l[i]));
		for (int i = 0; i < e; i++) {
			p[i] = expf(ld(l[i]) - mx);
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

template <typename T>
static __global__ void k_moe_route_bwd(T *dlogits, const float *dw, const float *probs,
				       const int *idx, int n, int e, int k, int pre_softmax)
{
	GRID_STRIDE(t, n) {
		const float *p = probs + (size_t)t * e, *dwt = dw + (size_t)t * k;
		const int *ix = idx + (size_t)t * k;
		T *dl = dlogits + (size_t)t * e;
		float s = 0, dot = 0, pg = 0;

		for (int j = 0; j < k; j++)
			s += p[ix[j]];
		for (int j = 0; j < k; j++)
			dot += dwt[j] * (p[ix[j]] / s);
		for (int j = 0; j < k; j++) {
			float g = pre_softmax ? dwt[j] : (dwt[j] - dot) / s;

			pg += p[ix[j]] * g;
		}
		/* in fp32 first: a bf16 row is rounded once */
		for (int i = 0; i < e; i++) {
			float v = ld(dl[i]) - p[i] * pg;

			for (int j = 0; j < k; j++)
				if (ix[j] == i)
					v += p[i] * (pre_softmax ? dwt[j] : (dwt[j] - dot) / s);
			put(&dl[i], v);
		}
	}
}

template <typename T>
static __global__ void k_moe_permute(T *out, const T *inp, const int *rows, const float *w,
				     long n, int c, int k)
{
	GRID_STRIDE(i, n * c) {
		long r = i / c, j = i % c;
		float a = w ? w[rows[r]] : 1.0f;

		put(&out[i], a * ld(inp[(size_t)(rows[r] / k) * c + j]));
	}
}

template <typename T>
static __global__ void k_moe_unpermute(T *out, const T *inp, const int *pos, const float *w,
				       long n, int c, int k)
{
	GRID_STRIDE(i, n * c) {
		long t = i / c, j = i % c;
		float v = ld(out[i]);

		for (int q = 0; q < k; q++) {
			size_t s = (size_t)t * k + q;

			v += (w ? w[s] : 1.0f) * ld(inp[(size_t)pos[s] * c + j]);
		}
		put(&out[i], v);
	}
}

template <typename T>
static __global__ void k_moe_weights_bwd(float *dw, const T *dout, const T *y, const int *pos,
					 long ns, int c, int k)
{
	GRID_STRIDE(s, ns) {
		const T *a = dout + (size_t)(s / k) * c, *b = y + (size_t)pos[s] * c;
		float acc = 0;

		for (int j = 0; j < c; j++)
			acc += ld(a[j]) * ld(b[j]);
		dw[s] += acc;
	}
}

void cuda_moe_route_forward(struct exec_device *d, float *probs, int *idx, float *w,
			    const void *logits, int n, int e, int k, int pre_softmax)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_moe_route_fwd<T>, ew_grid(n), EW_THREADS, probs, idx, w,
				      (const T *)logits, n, e, k, pre_softmax));
}

void cuda_moe_route_backward(struct exec_device *d, void *dlogits, const float *dw,
			     const float *probs, const int *idx, int n, int e, int k,
			     int pre_softmax)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_moe_route_bwd<T>, ew_grid(n), EW_THREADS, (T *)dlogits,
				      dw, probs, idx, n, e, k, pre_softmax));
}

void cuda_moe_permute(struct exec_device *d, void *out, const void *inp, const int *rows,
		      const float *w, int n, int c, int k)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_moe_permute<T>, ew_grid((long)n * c), EW_THREADS,
				      (T *)out, (const T *)inp, rows, w, (long)n, c, k));
}

void cuda_moe_unpermute(struct exec_device *d, void *out, const void *inp, const int *pos,
			const float *w, int n, int c, int k)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_moe_unpermute<T>, ew_grid((long)n * c), EW_THREADS,
				      (T *)out, (const T *)inp, pos, w, (long)n, c, k));
}

void cuda_moe_weights_backward(struct exec_device *d, float *dw, const void *dout,
			       const void *y, const int *pos, int n, int c, int k)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_moe_weights_bwd<T>, ew_grid((long)n * k), EW_THREADS,
				      dw, (const T *)dout, (const T *)y, pos, (long)n * k, c, k));
}
