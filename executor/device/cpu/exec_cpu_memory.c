/*
 * exec_cpu_memory.c - the CPU backend's memory: the process heap, zeroed
 * on allocation, and the scratch its forward GEMM transposes weights
 * into (the device's, freed with it).
 */
#include <stdlib.h>
#include <string.h>

#include "device/cpu/exec_cpu_internal.h"

void *cpu_alloc(struct exec_device *d, size_t bytes)
{
	(void)d;
	return calloc(1, bytes ? bytes : 1);
}

void cpu_free(struct exec_device *d, void *p, size_t bytes)
{
	(void)d;
	(void)bytes;
	free(p);
}

void cpu_zero(struct exec_device *d, void *p, size_t bytes)
{
	(void)d;
	memset(p, 0, bytes);
}

void cpu_copy(struct exec_device *d, void *dst, const void *src, size_t bytes)
{
	(void)d;
	if (dst != src)
		memmove(dst, src, bytes);
}

/* The transposed weight [ic, oc] of the forward pass; grows to the
 * largest weight and belongs to the device. */
struct cpu_priv {
	float *wt;
	size_t wt_n;
};

float *cpu_scratch(struct exec_device *d, size_t n)
{
	struct cpu_priv *p = d->priv;

	if (!p)
		p = d->priv = xcalloc(1, sizeof(*p));
	if (p->wt_n < n) {
		free(p->wt);
		p->wt = xmalloc(n * sizeof(float));
		p->wt_n = n;
	}
	return p->wt;
}

void cpu_scratch_free(struct exec_device *d)
{
	struct cpu_priv *p = d->priv;

	if (p)
		free(p->wt);
	free(p);
	d->priv = NULL;
}
