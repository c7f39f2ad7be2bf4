/*
 * exec_cuda_memory.cu - the CUDA backend's memory: stream-ordered
 * allocation from the device's pool, zeroing and copies on the compute
 * stream (a copy to the host waits for it), and the scratch buffers that
 * grow when a kernel needs more.
 */
#include "device/cuda/exec_cuda_internal.h"

/* Stream-ordered allocation from the device's memory pool (kept, not
 * returned to the driver, so a ZeRO-3 gather costs no cudaMalloc). */
void *cuda_alloc(struct exec_device *d, size_t bytes)
{
	struct cuda_priv *p = priv_of(d);
	void *ptr = NULL;
	cudaError_t e;

	if (bytes == 0)
		bytes = 1;
	e = cudaMallocAsync(&ptr, bytes, p->compute);
	if (e == cudaErrorMemoryAllocation) {
		/* not sticky: clear it and let exec_dalloc report */
		cudaGetLastError();
		return NULL;
	}
	if (CU(d, e) != RC_OK || CU(d, cudaMemsetAsync(ptr, 0, bytes, p->compute)) != RC_OK)
		return NULL;
	return ptr;
}

void cuda_free(struct exec_device *d, void *ptr, size_t bytes)
{
	(void)bytes;
	CU(d, cudaFreeAsync(ptr, priv_of(d)->compute));
}

void cuda_zero(struct exec_device *d, void *ptr, size_t bytes)
{
	if (!dead(d) && bytes)
		CU(d, cudaMemsetAsync(ptr, 0, bytes, priv_of(d)->compute));
}

void cuda_copy(struct exec_device *d, void *dst, const void *src, size_t bytes)
{
	if (!dead(d) && bytes && dst != src)
		CU(d, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
				      priv_of(d)->compute));
}

/* Waits: the host buffer is read right after. */
void cuda_to_host(struct exec_device *d, void *host, const void *src, size_t bytes)
{
	struct cuda_priv *p = priv_of(d);

	if (p->failed || !bytes)
		return;
	if (CU(d, cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, p->compute)) == RC_OK)
		cuda_wait_stream(d, p->compute);
}

/* From pageable memory cudaMemcpyAsync returns once the host buffer has
 * been staged (CUDA runtime API, "API synchronization behavior"), so the
 * caller may reuse it at once. */
void cuda_from_host(struct exec_device *d, void *dst, const void *host, size_t bytes)
{
	if (!dead(d) && bytes)
		CU(d, cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice,
				      priv_of(d)->compute));
}

/* s's buffer, grown to at least bytes; NULL after a failed allocation
 * (reported). */
void *cuda_scratch_at_least(struct exec_device *d, struct scratch *s, size_t bytes)
{
	struct cuda_priv *p = priv_of(d);

	if (s->bytes < bytes) {
		if (s->p)
			CU(d, cudaFreeAsync(s->p, p->compute));
		s->p = NULL;
		s->bytes = 0;
		if (CU(d, cudaMallocAsync(&s->p, bytes, p->compute)) != RC_OK)
			return NULL;
		s->bytes = bytes;
	}
	return s->p;
}
