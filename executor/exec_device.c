/*
 * exec_device.c - picking a backend by name and counting what a device
 * allocates (the peak is the run's measured memory per rank).
 */
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"

const struct exec_backend *exec_backend_find(const char *name)
{
	if (name && strcmp(name, exec_cpu_backend.name) == 0)
		return &exec_cpu_backend;
	return NULL;
}

void exec_device_init(struct exec_device *d, const struct exec_backend *be)
{
	memset(d, 0, sizeof(*d));
	d->be = be;
}

void exec_device_release(struct exec_device *d)
{
	if (d && d->be && d->be->release)
		d->be->release(d);
}

void *exec_dalloc(struct exec_device *d, size_t bytes)
{
	void *p = d->be->alloc(d, bytes);

	if (!p) {
		gp_error("%s backend: out of memory allocating %zu bytes (%zu in use)",
			 d->be->name, bytes, d->bytes_in_use);
		abort();
	}
	d->bytes_in_use += bytes;
	if (d->bytes_in_use > d->peak_bytes)
		d->peak_bytes = d->bytes_in_use;
	return p;
}

void exec_dfree(struct exec_device *d, void *p, size_t bytes)
{
	if (!p)
		return;
	d->be->free(d, p, bytes);
	d->bytes_in_use -= bytes;
}
