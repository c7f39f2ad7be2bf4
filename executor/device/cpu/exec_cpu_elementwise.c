/*
 * exec_cpu_elementwise.c - the element-wise steps between the operations
 * on the CPU: the residual add, a scaled add (LoRA's), adding a buffer
 * into an fp32 sum, and
 * the working copy of the weights (a copy, activations being fp32 here).
 */
#include <assert.h>

#include "device/cpu/exec_cpu_internal.h"

void cpu_residual_forward(struct exec_device *d, void *out_, const void *a_,
			  const void *b_, long n)
{
	float *out = out_;
	const float *a = a_;
	const float *b = b_;
	(void)d;
	for (long i = 0; i < n; i++)
		out[i] = a[i] + b[i];
}

void cpu_add_scaled(struct exec_device *d, void *out_, const void *x_, float s, long n)
{
	float *out = out_;
	const float *x = x_;
	(void)d;
	for (long i = 0; i < n; i++)
		out[i] += s * x[i];
}

void cpu_accumulate(struct exec_device *d, float *acc, const void *x_, enum exec_dtype t,
		    long n)
{
	const float *x = x_;

	(void)d;
	assert(t == EXEC_F32);
	for (long i = 0; i < n; i++)
		acc[i] += x[i];
}

/* Activations are fp32 here: the working copy of weights is a copy. */
void cpu_narrow(struct exec_device *d, void *dst, const float *src, long n)
{
	cpu_copy(d, dst, src, (size_t)n * sizeof(float));
}
