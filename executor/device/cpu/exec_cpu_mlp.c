/*
 * exec_cpu_mlp.c - the MLP's activations on the CPU, forward and
 * backward: GELU (tanh form, as GPT-2) and SwiGLU.
 */
#include <math.h>

#include "device/cpu/exec_cpu_internal.h"

#define GELU_SCALE 0.7978845608028654f /* sqrt(2 / pi) */

/* gelu(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), Hendrycks and
 * Gimpel 2016, sec. 2, the form GPT-2 uses. */
void cpu_gelu_forward(struct exec_device *d, void *out_, const void *inp_, long n)
{
	float *out = out_;
	const float *inp = inp_;
	(void)d;
	for (long i = 0; i < n; i++) {
		float x = inp[i];

		out[i] = 0.5f * x * (1.0f + tanhf(GELU_SCALE * (x + 0.044715f * x * x * x)));
	}
}

void cpu_gelu_backward(struct exec_device *d, void *dinp_, const void *inp_,
		       const void *dout_, long n)
{
	float *dinp = dinp_;
	const float *inp = inp_;
	const float *dout = dout_;
	(void)d;
	for (long i = 0; i < n; i++) {
		float x = inp[i];
		float u = GELU_SCALE * (x + 0.044715f * x * x * x);
		float th = tanhf(u);
		float sech2 = 1.0f - th * th;
		float g = 0.5f * (1.0f + th) +
			  0.5f * x * sech2 * GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);

		dinp[i] += g * dout[i];
	}
}

/* swiglu(g, u) = g sigmoid(g) u (Shazeer 2020, eq. 6 with Swish_1). */
void cpu_swiglu_forward(struct exec_device *d, void *out_, const void *g_,
			const void *u_, long n)
{
	float *out = out_;
	const float *g = g_;
	const float *u = u_;
	(void)d;
	for (long i = 0; i < n; i++) {
		float sg = 1.0f / (1.0f + expf(-g[i]));

		out[i] = g[i] * sg * u[i];
	}
}

void cpu_swiglu_backward(struct exec_device *d, void *dg_, void *du_,
			 const void *g_, const void *u_, const void *dout_, long n)
{
	float *dg = dg_;
	float *du = du_;
	const float *g = g_;
	const float *u = u_;
	const float *dout = dout_;
	(void)d;
	for (long i = 0; i < n; i++) {
		float sg = 1.0f / (1.0f + expf(-g[i]));
		float silu = g[i] * sg;

		dg[i] += dout[i] * u[i] * sg * (1.0f + g[i] * (1.0f - sg));
		du[i] += dout[i] * silu;
	}
}
