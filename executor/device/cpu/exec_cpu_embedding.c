/*
 * exec_cpu_embedding.c - the vocabulary-parallel embedding on the CPU
 * (struct exec_backend.embedding_*): a token's row of this rank's slice
 * of the table, zero for a token another rank holds; backward adds the
 * output gradient's rows into the rows of the table this rank holds.
 */
#include <string.h>

#include "device/cpu/exec_cpu_internal.h"

void cpu_embedding_forward(struct exec_device *d, void *out_, const int *tok,
			   const void *wte_, int n, int c, int v0, int nv)
{
	float *out = out_;
	const float *wte = wte_;
	(void)d;
	for (int i = 0; i < n; i++) {
		float *y = out + (size_t)i * c;
		int r = tok[i] - v0;

		if (r >= 0 && r < nv)
			memcpy(y, wte + (size_t)r * c, c * sizeof(float));
		else
			memset(y, 0, c * sizeof(float));
	}
}

void cpu_embedding_backward(struct exec_device *d, float *dwte, const void *dout_,
			    const int *tok, int n, int c, int v0, int nv)
{
	const float *dout = dout_;
	(void)d;
	for (int i = 0; i < n; i++) {
		int r = tok[i] - v0;

		if (r >= 0 && r < nv)
			axpy(dwte + (size_t)r * c, dout + (size_t)i * c, 1.0f, c);
	}
}
