/*
 * exec_device.c - picking a backend by name, asking whether it can run
 * here, and counting what a device allocates (the peak is the run's
 * measured memory per rank).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device/exec_device.h"

#ifdef GPUPLAN_CUDA
#include <cuda_runtime.h>

#include "device/cuda/exec_cuda.h"
#endif

const struct exec_backend *exec_backend_find(const char *name)
{
	if (name && strcmp(name, exec_cpu_backend.name) == 0)
		return &exec_cpu_backend;
#ifdef GPUPLAN_CUDA
	if (name && strcmp(name, exec_cuda_backend.name) == 0)
		return &exec_cuda_backend;
#endif
	return NULL;
}

const char *exec_backends_built(void)
{
#ifdef GPUPLAN_CUDA
	return "cpu, cuda";
#else
	return "cpu";
#endif
}

enum rc exec_backend_probe(const char *name, char *why, size_t size)
{
	if (name && strcmp(name, "cpu") == 0)
		return RC_OK;
	if (!name || strcmp(name, "cuda") != 0) {
		snprintf(why, size, "backend: expected cpu or cuda, found '%s'", name ? name : "");
		return RC_INPUT;
	}
#ifdef GPUPLAN_CUDA
	{
		int count = 0;

		return exec_cuda_probe(&count, why, size);
	}
#else
	snprintf(why, size, "no CUDA device found (this gpuplan was built without nvcc, so "
		 "without the cuda backend)");
	return RC_DEVICE;
#endif
}

enum rc exec_backend_device(const char *name, char *dev, size_t dev_size, double *memory_bytes,
			    char *why, size_t size)
{
	enum rc rc = exec_backend_probe(name, why, size);

	if (rc != RC_OK)
		return rc;
	if (strcmp(name, "cpu") == 0) {
		struct price_gpu g;

		exec_cpu_gpu(&g);
		snprintf(dev, dev_size, "cpu");
		*memory_bytes = g.memory_bytes;
		return RC_OK;
	}
#ifdef GPUPLAN_CUDA
	return exec_cuda_describe(dev, dev_size, memory_bytes, why, size);
#else
	return RC_DEVICE;
#endif
}

void exec_device_init(struct exec_device *d, const struct exec_backend *be)
{
	memset(d, 0, sizeof(*d));
	d->be = be;
}

enum rc exec_device_open(struct exec_device *d)
{
	d->act = exec_act_dtype(d->be->name, d->precision);
	return d->be->open ? d->be->open(d) : RC_OK;
}

enum rc exec_device_sync(struct exec_device *d)
{
	return d->be->sync ? d->be->sync(d) : RC_OK;
}

void exec_device_release(struct exec_device *d)
{
	if (d && d->be && d->be->release)
		d->be->release(d);
}

/* What ends the job when an allocation fails: abort() until a
 * communicator that can end every rank says how (exec_device_on_abort). */
static void (*abort_job)(int code);

void exec_device_on_abort(void (*fn)(int code))
{
	abort_job = fn;
}

void *exec_dalloc(struct exec_device *d, size_t bytes)
{
	int over = d->limit_bytes && bytes > d->limit_bytes - d->bytes_in_use;
	void *p = over ? NULL : d->be->alloc(d, bytes);

	if (!p) {
		/* peers may be waiting for this rank: the whole job ends */
		if (over)
			gp_error("rank %d: %s backend: out of memory allocating %zu bytes (%zu in "
				 "use of a %zu-byte limit); ending the job", exec_launcher_rank(),
				 d->be->name, bytes, d->bytes_in_use, d->limit_bytes);
		else
			gp_error("rank %d: %s backend: out of memory allocating %zu bytes (%zu in "
				 "use); ending the job", exec_launcher_rank(), d->be->name, bytes,
				 d->bytes_in_use);
		fflush(stderr);
		if (abort_job)
			abort_job(1);
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

double exec_thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
