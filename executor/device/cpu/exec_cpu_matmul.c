/*
 * exec_cpu_matmul.c - y = x W^T + b on the CPU and its gradients, through
 * one register-tiled kernel (gemm_acc), the only place the CPU backend
 * is fast; and the bias added alone.
 */
#include <string.h>

#include "device/cpu/exec_cpu_internal.h"

#define PANEL_ROWS 64 /* rows of the input per pass, so a weight panel stays in cache */

/* c[r, j] += sum over p of a[r, p] b[p, j] for r < rows, j < cols, with
 * a[r, p] = a[r * a_rs + p * a_ps], b[p, j] = b[p * b_ps + j] and
 * c[r, j] = c[r * c_rs + j]; p runs 0 .. np - 1 in order for every
 * element.  The 4 x 8 register tile is the whole of the blocking: one load
 * of b's eight values serves four rows, and c stays in registers across
 * p.  Edge tiles take the scalar path, which rounds identically (each
 * element sees the same additions in the same order, no fused multiply-add
 * under -std=c11). */
static void gemm_acc(float *c, long c_rs, int rows, int cols, const float *a,
		     long a_rs, long a_ps, const float *b, long b_ps, int np)
{
	for (int r0 = 0; r0 < rows; r0 += 4)
		for (int j0 = 0; j0 < cols; j0 += 8) {
			float *c0 = c + r0 * c_rs + j0;
			const float *a0 = a + r0 * a_rs, *b0 = b + j0;

			if (r0 + 4 <= rows && j0 + 8 <= cols) {
				v8f acc[4], bv;

				for (int r = 0; r < 4; r++)
					memcpy(&acc[r], c0 + r * c_rs, sizeof(bv));
				for (int p = 0; p < np; p++) {
					memcpy(&bv, b0 + p * b_ps, sizeof(bv));
					for (int r = 0; r < 4; r++)
						acc[r] += a0[r * a_rs + p * a_ps] * bv;
				}
				for (int r = 0; r < 4; r++)
					memcpy(c0 + r * c_rs, &acc[r], sizeof(bv));
				continue;
			}
			for (int r = 0; r < 4 && r0 + r < rows; r++)
				for (int j = 0; j < 8 && j0 + j < cols; j++) {
					float acc = c0[r * c_rs + j];

					for (int p = 0; p < np; p++)
						acc += a0[r * a_rs + p * a_ps] * b0[p * b_ps + j];
					c0[r * c_rs + j] = acc;
				}
		}
}

void cpu_matmul_forward(struct exec_device *d, void *out_, const void *inp_,
			const void *w_, const void *bias_, int n, int ic, int oc)
{
	float *out = out_;
	const float *inp = inp_;
	const float *w = w_;
	const float *bias = bias_;
	float *wt = cpu_scratch(d, (size_t)ic * oc);

	for (int o = 0; o < oc; o++)
		for (int k = 0; k < ic; k++)
			wt[(size_t)k * oc + o] = w[(size_t)o * ic + k];
	for (int i = 0; i < n; i++) {
		if (bias)
			memcpy(out + (size_t)i * oc, bias, oc * sizeof(float));
		else
			memset(out + (size_t)i * oc, 0, oc * sizeof(float));
	}
	for (int i0 = 0; i0 < n; i0 += PANEL_ROWS)
		for (int o0 = 0; o0 < oc; o0 += 256)
			gemm_acc(out + (size_t)i0 * oc + o0, oc,
				 n - i0 < PANEL_ROWS ? n - i0 : PANEL_ROWS,
				 oc - o0 < 256 ? oc - o0 : 256,
				 inp + (size_t)i0 * ic, ic, 1, wt + o0, oc, ic);
}

void cpu_matmul_backward(struct exec_device *d, void *dinp_, float *dw,
			 float *dbias, const void *dout_, const void *inp_,
			 const void *w_, int n, int ic, int oc)
{
	float *dinp = dinp_;
	const float *dout = dout_;
	const float *inp = inp_;
	const float *w = w_;
	(void)d;
	/* dinp[i, k] += sum_o dout[i, o] w[o, k] */
	if (dinp)
		for (int i0 = 0; i0 < n; i0 += PANEL_ROWS)
			gemm_acc(dinp + (size_t)i0 * ic, ic,
				 n - i0 < PANEL_ROWS ? n - i0 : PANEL_ROWS, ic,
				 dout + (size_t)i0 * oc, oc, 1, w, ic, oc);
	/* dw[o, k] += sum_i dout[i, o] inp[i, k] */
	for (int o0 = 0; dw && o0 < oc; o0 += PANEL_ROWS)
		gemm_acc(dw + (size_t)o0 * ic, ic, oc - o0 < PANEL_ROWS ? oc - o0 : PANEL_ROWS,
			 ic, dout + o0, 1, oc, inp, ic, n);
	if (dbias)
		for (int i = 0; i < n; i++)
			axpy(dbias, dout + (size_t)i * oc, 1.0f, oc);
}

void cpu_add_bias(struct exec_device *d, void *out_, const void *bias_, int n, int c)
{
	float *out = out_;
	const float *bias = bias_;
	(void)d;
	for (int i = 0; i < n; i++)
		axpy(out + (size_t)i * c, bias, 1.0f, c);
}
