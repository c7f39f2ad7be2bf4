/*
 * cuda_emu.cc - the CPU stand-in declared in cuda_runtime.h and
 * cublas_v2.h: kernel launches, memory, streams and events, and the two
 * GEMMs.
 *
 * A block's threads are coroutines.  Each is started once with
 * makecontext on a stack of its own and then switched with _setjmp and
 * _longjmp, which cost no system call (swapcontext saves the signal mask
 * with one): the scheduler resumes every thread of the block in turn; a
 * thread comes back at __syncthreads or when its kernel returns; when
 * every live thread waits at the barrier, the next round begins.  Threads
 * are kept and reused by later blocks and launches.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include <map>

#include "cublas_v2.h"
#include "cuda_bf16.h"
#include "cuda_emu.h"
#include "cuda_runtime.h"

emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

/* ---- coroutines ------------------------------------------------------ */

enum { T_READY, T_BARRIER, T_DONE };

#define EMU_MAX_THREADS 1024
#define EMU_STACK_BYTES (256 * 1024)

struct emu_thread {
	jmp_buf jb;
	ucontext_t uc;
	char *stack;
	int state;
};

static emu_thread threads[EMU_MAX_THREADS];
static int n_threads;            /* started so far */
static int cur;                  /* the one running */
static jmp_buf sched_jb;
static ucontext_t boot_uc;
static const std::function<void()> *body;
static long launches;

static void thread_main(int me)
{
	/* started: note where to resume, and go back to the creator */
	if (!_setjmp(threads[me].jb))
		swapcontext(&threads[me].uc, &boot_uc);
	for (;;) {
		(*body)();
		threads[me].state = T_DONE;
		if (!_setjmp(threads[me].jb))
			_longjmp(sched_jb, 1);
	}
}

static void start_threads(int n)
{
	for (; n_threads < n; n_threads++) {
		emu_thread *t = &threads[n_threads];

		t->stack = (char *)malloc(EMU_STACK_BYTES);
		if (!t->stack) {
			fprintf(stderr, "cuda_emu: out of memory for thread stacks\n");
			abort();
		}
		getcontext(&t->uc);
		t->uc.uc_stack.ss_sp = t->stack;
		t->uc.uc_stack.ss_size = EMU_STACK_BYTES;
		t->uc.uc_link = NULL;
		makecontext(&t->uc, (void (*)(void))thread_main, 1, n_threads);
		swapcontext(&boot_uc, &t->uc);
	}
}

void __syncthreads(void)
{
	threads[cur].state = T_BARRIER;
	if (!_setjmp(threads[cur].jb))
		_longjmp(sched_jb, 1);
}

static int reverse_blocks;

cudaError_t emu_run(unsigned grid, unsigned block, const std::function<void()> &b)
{
	if (grid < 1 || block < 1 || block > EMU_MAX_THREADS)
		return cudaErrorInvalidValue;
	launches++;
	start_threads((int)block);
	body = &b;
	gridDim = { grid, 1, 1 };
	blockDim = { block, 1, 1 };
	for (unsigned i = 0; i < grid; i++) {
		unsigned bx = reverse_blocks ? grid - 1 - i : i;
		int waiting;

		blockIdx = { bx, 0, 0 };
		for (unsigned t = 0; t < block; t++)
			threads[t].state = T_READY;
		do {
			waiting = 0;
			for (unsigned t = 0; t < block; t++) {
				if (threads[t].state == T_DONE)
					continue;
				cur = (int)t;
				threadIdx = { t, 0, 0 };
				if (!_setjmp(sched_jb))
					_longjmp(threads[t].jb, 1);
				if (threads[t].state == T_BARRIER)
					waiting++;
			}
			for (unsigned t = 0; t < block; t++)
				if (threads[t].state == T_BARRIER)
					threads[t].state = T_READY;
		} while (waiting);
	}
	body = NULL;
	return cudaSuccess;
}

float atomicAdd(float *a, float v)
{
	float old = *a;

	*a = old + v;
	return old;
}

double atomicAdd(double *a, double v)
{
	double old = *a;

	*a = old + v;
	return old;
}

long emu_launches(void)
{
	return launches;
}

/* ---- the runtime ----------------------------------------------------- */

#define EMU_MEMORY_BYTES (8ull << 30)

static int device_count = 1;
static std::map<void *, size_t> allocations;
static size_t in_use;

void emu_set_device_count(int n)
{
	device_count = n;
}

size_t emu_bytes_in_use(void)
{
	return in_use;
}

const char *cudaGetErrorString(cudaError_t e)
{
	switch (e) {
	case cudaSuccess: return "no error";
	case cudaErrorInvalidValue: return "invalid argument";
	case cudaErrorMemoryAllocation: return "out of memory";
	case cudaErrorNoDevice: return "no CUDA-capable device is detected";
	case cudaErrorNotReady: return "device not ready";
	default: return "unknown error";
	}
}

cudaError_t cudaGetLastError(void)
{
	return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int *n)
{
	if (device_count < 1) {
		*n = 0;
		return cudaErrorNoDevice;
	}
	*n = device_count;
	return cudaSuccess;
}

cudaError_t cudaSetDevice(int dev)
{
	return dev >= 0 && dev < device_count ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev)
{
	if (dev < 0 || dev >= device_count)
		return cudaErrorInvalidValue;
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "emulated GPU");
	p->totalGlobalMem = EMU_MEMORY_BYTES;
	p->major = 9;
	p->minor = 0;
	p->multiProcessorCount = 1;
	return cudaSuccess;
}

/* Streams and pools are tokens: everything already runs in order. */
static int token;
static long emu_elapsed_calls;

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
	(void)flags;
	*s = (cudaStream_t)&token;
	return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
	return s ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	(void)s;
	return cudaSuccess;
}

static long not_ready;   /* queries still to answer cudaErrorNotReady */

static cudaError_t query(void)
{
	if (not_ready > 0) {
		not_ready--;
		return cudaErrorNotReady;
	}
	return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t s)
{
	return s ? query() : cudaErrorInvalidValue;
}

/* An event keeps the host's monotonic time of its last record: work
 * queued before it is already done, so that is when a GPU would reach
 * it.  Events made without timing refuse cudaEventElapsedTime, as CUDA's
 * do. */
struct emu_event {
	unsigned flags;
	int recorded;
	double time_ms;
};

static double emu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags)
{
	*e = (cudaEvent_t)calloc(1, sizeof(struct emu_event));
	if (!*e)
		return cudaErrorMemoryAllocation;
	(*e)->flags = flags;
	return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
	if (!e)
		return cudaErrorInvalidValue;
	free(e);
	return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
	if (!e || !s)
		return cudaErrorInvalidValue;
	e->recorded = 1;
	e->time_ms = emu_now_ms();
	return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
	return e ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaEventQuery(cudaEvent_t e)
{
	return e ? query() : cudaErrorInvalidValue;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	if (!ms || !start || !end || (start->flags & cudaEventDisableTiming) ||
	    (end->flags & cudaEventDisableTiming))
		return cudaErrorInvalidValue;
	if (!start->recorded || !end->recorded)
		return cudaErrorInvalidResourceHandle;
	*ms = (float)(end->time_ms - start->time_ms);
	emu_elapsed_calls++;
	return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags)
{
	(void)flags;
	return e && s ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *p, int dev)
{
	*p = (cudaMemPool_t)&token;
	return dev >= 0 && dev < device_count ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t p, enum cudaMemPoolAttr a, void *v)
{
	(void)a;
	return p && v ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
	if (in_use + bytes > EMU_MEMORY_BYTES) {
		*p = NULL;
		return cudaErrorMemoryAllocation;
	}
	/* uninitialised, like cudaMalloc's: fill with a pattern that turns
	 * into NaN when read as floats */
	*p = malloc(bytes ? bytes : 1);
	if (!*p)
		return cudaErrorMemoryAllocation;
	memset(*p, 0xff, bytes);
	allocations[*p] = bytes;
	in_use += bytes;
	return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
	std::map<void *, size_t>::iterator it;

	if (!p)
		return cudaSuccess;
	it = allocations.find(p);
	if (it == allocations.end())
		return cudaErrorInvalidValue;
	in_use -= it->second;
	allocations.erase(it);
	free(p);
	return cudaSuccess;
}

cudaError_t cudaMallocHost(void **p, size_t bytes)
{
	*p = calloc(1, bytes ? bytes : 1);
	return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFreeHost(void *p)
{
	free(p);
	return cudaSuccess;
}

cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t s)
{
	(void)s;
	return cudaMalloc(p, bytes);
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
	(void)s;
	return cudaFree(p);
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t bytes, cudaStream_t s)
{
	(void)s;
	memset(p, v, bytes);
	return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind k,
			    cudaStream_t s)
{
	(void)k;
	(void)s;
	memmove(dst, src, bytes);
	return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
	*total_bytes = EMU_MEMORY_BYTES;
	*free_bytes = EMU_MEMORY_BYTES - in_use;
	return cudaSuccess;
}

/* ---- cuBLAS ---------------------------------------------------------- */

static long gemms;

long emu_gemms(void)
{
	return gemms;
}

const char *cublasGetStatusString(cublasStatus_t s)
{
	switch (s) {
	case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
	case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
	case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
	default: return "unknown cuBLAS status";
	}
}

cublasStatus_t cublasCreate(cublasHandle_t *h)
{
	*h = (cublasHandle_t)&token;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t h)
{
	return h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s)
{
	(void)s;
	return h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

/* x rounded to the nearest bf16 (8 bits of mantissa), ties to even. */
static float to_bf16(float x)
{
	return __bfloat162float(__float2bfloat16(x));
}

/* Element i of an array of type t, as fp32; and v stored there. */
static float get(const void *p, cudaDataType t, size_t i)
{
	return t == CUDA_R_16BF ? __bfloat162float(((const __nv_bfloat16 *)p)[i])
				: ((const float *)p)[i];
}

static void put(void *p, cudaDataType t, size_t i, float v)
{
	if (t == CUDA_R_16BF)
		((__nv_bfloat16 *)p)[i] = __float2bfloat16(v);
	else
		((float *)p)[i] = v;
}

/* One column-major GEMM with cuBLAS's argument checks: a and b of type
 * abt, c of type ct. */
static cublasStatus_t gemm1(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
			    float alpha, const void *a, int lda, const void *b, int ldb,
			    float beta, void *c, int ldc, cudaDataType abt, cudaDataType ct,
			    int bf16)
{
	int arows = ta == CUBLAS_OP_N ? m : k, brows = tb == CUBLAS_OP_N ? k : n;

	if (m < 0 || n < 0 || k < 0 || lda < (arows > 1 ? arows : 1) ||
	    ldb < (brows > 1 ? brows : 1) || ldc < (m > 1 ? m : 1))
		return CUBLAS_STATUS_INVALID_VALUE;
	for (int j = 0; j < n; j++)
		for (int i = 0; i < m; i++) {
			double s = 0;

			for (int p = 0; p < k; p++) {
				float x = get(a, abt, ta == CUBLAS_OP_N ? i + (size_t)p * lda
							       : p + (size_t)i * lda);
				float y = get(b, abt, tb == CUBLAS_OP_N ? p + (size_t)j * ldb
							       : j + (size_t)p * ldb);

				if (bf16) {
					x = to_bf16(x);
					y = to_bf16(y);
				}
				s += (double)x * y;
			}
			/* beta = 0 ignores C, NaN included, as BLAS does */
			put(c, ct, i + (size_t)j * ldc, (float)(alpha * s +
				(beta != 0 ? (double)beta * get(c, ct, i + (size_t)j * ldc) : 0.0)));
		}
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
			    int m, int n, int k, const void *alpha, const void *a,
			    cudaDataType at, int lda, const void *b, cudaDataType bt, int ldb,
			    const void *beta, void *c, cudaDataType ct, int ldc,
			    cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
	return cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, alpha, a, at, lda, 0, b, bt, ldb,
					  0, beta, c, ct, ldc, 0, 1, compute, algo);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta,
					  cublasOperation_t tb, int m, int n, int k,
					  const void *alpha, const void *a, cudaDataType at,
					  int lda, long long sa, const void *b, cudaDataType bt,
					  int ldb, long long sb, const void *beta, void *c,
					  cudaDataType ct, int ldc, long long sc, int batch,
					  cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
	size_t ab = at == CUDA_R_16BF ? 2 : 4, cb = ct == CUDA_R_16BF ? 2 : 4;

	(void)algo;
	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	/* cuBLAS's table of cublasGemmEx types: the two operands alike; the
	 * fast bf16 mode is for fp32 data only */
	if (at != bt || (at != CUDA_R_32F && at != CUDA_R_16BF) ||
	    (ct != CUDA_R_32F && ct != CUDA_R_16BF) || (at == CUDA_R_32F && ct != CUDA_R_32F) ||
	    (compute == CUBLAS_COMPUTE_32F_FAST_16BF && at != CUDA_R_32F) || batch < 0)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	gemms++;
	for (int i = 0; i < batch; i++) {
		cublasStatus_t s = gemm1(ta, tb, m, n, k, *(const float *)alpha,
					 (const char *)a + i * sa * ab, lda,
					 (const char *)b + i * sb * ab, ldb, *(const float *)beta,
					 (char *)c + i * sc * cb, ldc, at, ct,
					 compute == CUBLAS_COMPUTE_32F_FAST_16BF);

		if (s != CUBLAS_STATUS_SUCCESS)
			return s;
	}
	return CUBLAS_STATUS_SUCCESS;
}

/* ---- hooks for C tests (cuda_emu.h) ---------------------------------- */

extern "C" void cuda_emu_set_devices(int n)
{
	emu_set_device_count(n);
}

extern "C" void cuda_emu_set_reverse_blocks(int on)
{
	reverse_blocks = on;
}

extern "C" size_t cuda_emu_bytes_in_use(void)
{
	return emu_bytes_in_use();
}

extern "C" long cuda_emu_launches(void)
{
	return emu_launches();
}

extern "C" long cuda_emu_gemms(void)
{
	return emu_gemms();
}

extern "C" long cuda_emu_elapsed_calls(void)
{
	return emu_elapsed_calls;
}

extern "C" void cuda_emu_set_not_ready(long n)
{
	not_ready = n;
}
