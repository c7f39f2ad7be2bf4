/*
 * exec_cuda_runtime.cu - what every CUDA file stands on: the one way a
 * CUDA or cuBLAS failure is reported (once, with the rank, file and
 * line; the device then stays failed), waiting for a stream or an event
 * while watching the communicators for a failed peer, and the device's
 * streams and their ordering, which the NCCL communicator shares
 * (exec_cuda.h).
 */
#include "device/cuda/exec_cuda_internal.h"

static void report(struct exec_device *d, const char *call, const char *file,
		   int line, const char *reason)
{
	struct cuda_priv *c = d ? priv_of(d) : NULL;
	const char *paren = strchr(call, '(');

	if (c && c->failed)
		return;
	gp_error("rank %d: %s:%d: %.*s failed: %s", exec_launcher_rank(), file, line,
		 paren ? (int)(paren - call) : (int)strlen(call), call, reason);
	if (c)
		c->failed = 1;
}

extern "C" enum rc exec_cuda_check(struct exec_device *d, cudaError_t e, const char *call,
				   const char *file, int line)
{
	if (e == cudaSuccess)
		return RC_OK;
	report(d, call, file, line, cudaGetErrorString(e));
	return RC_DEVICE;
}

enum rc cuda_blas_check(struct exec_device *d, cublasStatus_t s, const char *call,
			const char *file, int line)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return RC_OK;
	report(d, call, file, line, cublasGetStatusString(s));
	return RC_DEVICE;
}

extern "C" void exec_cuda_mark_failed(struct exec_device *d)
{
	if (d && d->priv)
		priv_of(d)->failed = 1;
}

extern "C" void exec_cuda_set_watch(struct exec_device *d, enum rc (*watch)(void *ctx),
				    void *ctx)
{
	priv_of(d)->watch = watch;
	priv_of(d)->watch_ctx = ctx;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One turn of a watched wait, whose last query found the work not done:
 * the watch, when a millisecond has passed since it last ran (*next). */
static enum rc watch_turn(struct exec_device *d, double *next)
{
	struct cuda_priv *p = priv_of(d);
	double t = now_s();

	if (t < *next)
		return RC_OK;
	*next = t + 1e-3;
	if (p->watch(p->watch_ctx) == RC_OK)
		return RC_OK;
	p->failed = 1;
	return RC_DEVICE;
}

/* Waits for the work queued on s so far.  Under a watch the host polls
 * instead of blocking: a collective whose peer has failed never ends, and
 * only the communicator's asynchronous error says so (NCCL user guide,
 * "Asynchronous errors and error handling"). */
enum rc cuda_wait_stream(struct exec_device *d, cudaStream_t s)
{
	double next = 0;

	if (!priv_of(d)->watch)
		return CU(d, cudaStreamSynchronize(s));
	while (cudaStreamQuery(s) == cudaErrorNotReady)
		if (watch_turn(d, &next) != RC_OK)
			return RC_DEVICE;
	/* done, or failed: asked once more, so a failure names the call */
	return CU(d, cudaStreamQuery(s));
}

/* The same for an event. */
enum rc cuda_wait_event(struct exec_device *d, cudaEvent_t ev)
{
	double next = 0;

	if (!priv_of(d)->watch)
		return CU(d, cudaEventSynchronize(ev));
	while (cudaEventQuery(ev) == cudaErrorNotReady)
		if (watch_turn(d, &next) != RC_OK)
			return RC_DEVICE;
	return CU(d, cudaEventQuery(ev));
}

extern "C" cudaStream_t exec_cuda_stream(struct exec_device *d)
{
	return priv_of(d)->compute;
}

extern "C" cudaStream_t exec_cuda_comm_stream(struct exec_device *d)
{
	return priv_of(d)->comm;
}

extern "C" cudaStream_t exec_cuda_reduce_stream(struct exec_device *d)
{
	return priv_of(d)->reduce;
}

extern "C" int exec_cuda_ordinal(const struct exec_device *d)
{
	return ((const struct cuda_priv *)d->priv)->ordinal;
}

extern "C" enum rc exec_cuda_order(struct exec_device *d, cudaStream_t first, cudaStream_t then)
{
	struct cuda_priv *p = priv_of(d);

	if (p->failed)
		return RC_DEVICE;
	/* cudaStreamWaitEvent captures the event's state when it is called,
	 * so one event serves every ordering in turn */
	if (CU(d, cudaEventRecord(p->order_ev, first)) != RC_OK ||
	    CU(d, cudaStreamWaitEvent(then, p->order_ev, 0)) != RC_OK)
		return RC_DEVICE;
	return RC_OK;
}
