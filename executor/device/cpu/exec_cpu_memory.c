/*
 * exec_cpu_memory.c - the CPU backend's memory: the process heap, zeroed
 * on allocation.
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
