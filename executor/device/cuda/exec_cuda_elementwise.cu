/*
 * exec_cuda_elementwise.cu - the element-wise steps between the
 * operations on the GPU: the residual add, a scaled add (LoRA's), adding
 * a buffer (fp32 or the activation type) into an fp32 sum, and narrowing
 * fp32 to the activation type (the weights' working copy).  The CPU reference:
 * exec_cpu_elementwise.c.
 */
#include "device/cuda/exec_cuda_internal.h"

template <typename T>
static __global__ void k_residual(T *out, const T *a, const T *b, long n)
{
	GRID_STRIDE(i, n)
		put(&out[i], ld(a[i]) + ld(b[i]));
}

template <typename T>
static __global__ void k_add_scaled(T *out, const T *x, float s, long n)
{
	GRID_STRIDE(i, n)
		put(&out[i], ld(out[i]) + s * ld(x[i]));
}

template <typename T>
static __global__ void k_accumulate(float *acc, const T *x, long n)
{
	GRID_STRIDE(i, n)
		acc[i] += ld(x[i]);
}

template <typename T>
static __global__ void k_narrow(T *dst, const float *src, long n)
{
	GRID_STRIDE(i, n)
		put(&dst[i], src[i]);
}

void cuda_residual_forward(struct exec_device *d, void *out, const void *a, const void *b,
			   long n)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_residual<T>, ew_grid(n), EW_THREADS, (T *)out,
				      (const T *)a, (const T *)b, n));
}

void cuda_add_scaled(struct exec_device *d, void *out, const void *x, float s, long n)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_add_scaled<T>, ew_grid(n), EW_THREADS, (T *)out,
				      (const T *)x, s, n));
}

void cuda_accumulate(struct exec_device *d, float *acc, const void *x, enum exec_dtype t,
		     long n)
{
	if (dead(d) || n <= 0)
		return;
	if (t == EXEC_BF16)
		LAUNCH(d, k_accumulate<bf16>, ew_grid(n), EW_THREADS, acc, (const bf16 *)x, n);
	else
		LAUNCH(d, k_accumulate<float>, ew_grid(n), EW_THREADS, acc, (const float *)x, n);
}

void cuda_narrow(struct exec_device *d, void *dst, const float *src, long n)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_narrow<T>, ew_grid(n), EW_THREADS, (T *)dst, src, n));
}
