/*
 * cuda_runtime.h - a CPU stand-in for the part of the CUDA runtime the
 * CUDA backend (executor/device/cuda/) uses, so its files can be built
 * with a host C++ compiler and its kernels run, unchanged, in the tests of
 * a machine without a GPU (tests/test_exec_cuda.c).
 *
 * A kernel launch runs every block in turn (first to last, or last to
 * first after cuda_emu_set_reverse_blocks(1), which shows a result that
 * depends on the order); the threads of a block are
 * coroutines on one OS thread that switch only at __syncthreads, which is
 * as much as CUDA promises a block's threads.  Device memory is host
 * memory, every stream is the same serial queue, events order nothing
 * because everything is already in order; an event's time is the host
 * clock's when it was recorded.  Warp-level primitives are not
 * provided: a kernel that needs them does not build here.
 *
 * It does not model a GPU's speed, memory limits beyond a fixed total, or
 * concurrency between streams.
 */
#ifndef GPUPLAN_CUDA_EMU_RUNTIME_H
#define GPUPLAN_CUDA_EMU_RUNTIME_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <functional>

#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __forceinline__ inline

struct emu_dim3 {
	unsigned x, y, z;
};
extern emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

void __syncthreads(void);
/* The threads of a block never run at the same time, so a plain add is
 * atomic. */
float atomicAdd(float *a, float v);
double atomicAdd(double *a, double v);

typedef int cudaError_t;
enum {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorNoDevice = 100,
	cudaErrorNotReady = 600,
	cudaErrorInvalidResourceHandle = 400,
};

typedef struct emu_stream *cudaStream_t;
typedef struct emu_event *cudaEvent_t;
typedef struct emu_pool *cudaMemPool_t;

enum cudaMemcpyKind {
	cudaMemcpyHostToHost,
	cudaMemcpyHostToDevice,
	cudaMemcpyDeviceToHost,
	cudaMemcpyDeviceToDevice,
	cudaMemcpyDefault,
};
enum cudaMemPoolAttr { cudaMemPoolReuseAllowInternalDependencies, cudaMemPoolAttrReleaseThreshold };
#define cudaStreamNonBlocking 0x1
#define cudaEventDefault 0x0
#define cudaEventDisableTiming 0x2

struct cudaDeviceProp {
	char name[256];
	size_t totalGlobalMem;
	int major, minor;
	int multiProcessorCount;
};

const char *cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetLastError(void);
cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaSetDevice(int dev);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
/* cudaSuccess: work is done at once here, except that the next
 * cuda_emu_set_not_ready(n) queries of either kind answer
 * cudaErrorNotReady, as a GPU's would while a kernel runs. */
cudaError_t cudaStreamQuery(cudaStream_t s);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *p, int dev);
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t p, enum cudaMemPoolAttr a, void *v);
cudaError_t cudaMalloc(void **p, size_t bytes);
cudaError_t cudaFree(void *p);
cudaError_t cudaMallocHost(void **p, size_t bytes);
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t s);
cudaError_t cudaFreeAsync(void *p, cudaStream_t s);
cudaError_t cudaMemsetAsync(void *p, int v, size_t bytes, cudaStream_t s);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind k,
			    cudaStream_t s);
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);

/* Runs body once per thread of every block of a grid x block launch. */
cudaError_t emu_run(unsigned grid, unsigned block, const std::function<void()> &body);

template <typename... P, typename... A>
static cudaError_t kernel_launch(void (*k)(P...), unsigned grid, unsigned block,
				 cudaStream_t s, A... a)
{
	(void)s;
	return emu_run(grid, block, [&]() { k(a...); });
}

/* Test hooks: the number of devices cudaGetDeviceCount reports (default
 * 1; 0 makes it fail as on a machine without a GPU), the bytes of memory
 * in use, and the number of launches so far. */
void emu_set_device_count(int n);
size_t emu_bytes_in_use(void);
long emu_launches(void);

#endif
