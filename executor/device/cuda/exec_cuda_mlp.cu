/*
 * exec_cuda_mlp.cu - the MLP's activations on the GPU, forward and
 * backward: GELU (tanh form, as GPT-2) and SwiGLU.  The CPU reference:
 * exec_cpu_mlp.c.
 */
#include "device/cuda/exec_cuda_internal.h"

#define GELU_SCALE 0.7978845608028654f /* sqrt(2 / pi) */

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

void cuda_gelu_forward(struct exec_device *d, void *out, const void *inp, long n)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_gelu_fwd<T>, ew_grid(n), EW_THREADS, (T *)out,
				      (const T *)inp, n));
}

void cuda_gelu_backward(struct exec_device *d, void *dinp, const void *inp, const void *dout,
			long n)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_gelu_bwd<T>, ew_grid(n), EW_THREADS, (T *)dinp,
				      (const T *)inp, (const T *)dout, n));
}

void cuda_swiglu_forward(struct exec_device *d, void *out, const void *g, const void *u,
			 long n)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_swiglu_fwd<T>, ew_grid(n), EW_THREADS, (T *)out,
				      (const T *)g, (const T *)u, n));
}

void cuda_swiglu_backward(struct exec_device *d, void *dg, void *du, const void *g,
			  const void *u, const void *dout, long n)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_swiglu_bwd<T>, ew_grid(n), EW_THREADS, (T *)dg, (T *)du,
				      (const T *)g, (const T *)u, (const T *)dout, n));
}
