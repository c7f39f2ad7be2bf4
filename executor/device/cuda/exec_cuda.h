/*
 * exec_cuda.h - what the CUDA backend (exec_cuda.cu) shares with the NCCL
 * communicator (exec_comm_nccl.c): the device's streams, ordering between
 * streams, and the one way a CUDA failure is reported.
 *
 * Included only by the executor's CUDA files, after <cuda_runtime.h>; from
 * C++ inside extern "C".  Nothing outside executor/ sees a CUDA type.
 */
#ifndef GPUPLAN_EXEC_CUDA_H
#define GPUPLAN_EXEC_CUDA_H

#include "device/exec_device.h"

/* The stream every kernel and GEMM of device d runs on, in order. */
cudaStream_t exec_cuda_stream(struct exec_device *d);
/* The stream collectives run on (exec_comm_nccl.c); ordered against the
 * compute stream with exec_cuda_order(). */
cudaStream_t exec_cuda_comm_stream(struct exec_device *d);
/* The stream of the gradient sums left running
 * (exec_comm.all_reduce_start, reduce_scatter_start): beside the communication stream, so that
 * tensor-parallel collectives, which compute waits for, never queue
 * behind them. */
cudaStream_t exec_cuda_reduce_stream(struct exec_device *d);
/* The CUDA ordinal device d opened. */
int exec_cuda_ordinal(const struct exec_device *d);

/* Makes work queued on `then` from now on wait for the work queued on
 * `first` so far (an event recorded on first, waited on by then).
 * Returns RC_OK, or RC_DEVICE after exec_cuda_check's message. */
enum rc exec_cuda_order(struct exec_device *d, cudaStream_t first, cudaStream_t then);

/* Checks a CUDA runtime status: RC_OK on success, else one message
 * "rank R: FILE:LINE: CALL failed: REASON" (the first failure of the
 * device only; later ones are its consequences), the device marked
 * failed, and RC_DEVICE.  d may be NULL before a device exists. */
enum rc exec_cuda_check(struct exec_device *d, cudaError_t e, const char *call,
			const char *file, int line);
#define EXEC_CUDA_CHECK(d, call) exec_cuda_check((d), (call), #call, __FILE__, __LINE__)

/* While the host waits for device d (sync, reading a value back, a trace
 * mark) it calls watch(ctx) about once a millisecond, and gives up with
 * RC_DEVICE, d marked failed, when the watch fails: exec_comm_nccl.c's
 * looks for the communicators' asynchronous errors, which a failed peer
 * raises while this rank's kernels would wait for it for ever.  NULL:
 * waits block until the work is done. */
void exec_cuda_set_watch(struct exec_device *d, enum rc (*watch)(void *ctx), void *ctx);

/* Marks d failed (a communicator's error, already reported), so the next
 * sync returns RC_DEVICE. */
void exec_cuda_mark_failed(struct exec_device *d);

/* The name and memory of the device a rank with this launcher local rank
 * opens.  Returns RC_OK, or RC_DEVICE with the reason in why[size]. */
enum rc exec_cuda_describe(char *name, size_t name_size, double *memory_bytes, char *why,
			   size_t size);

/* The number of CUDA devices this process sees.  Returns RC_OK with
 * *count >= 1, or RC_DEVICE with "no CUDA device found (REASON)" in
 * why[size]; prints nothing. */
enum rc exec_cuda_probe(int *count, char *why, size_t size);

#endif
