/*
 * cuda_emu.h - the hooks a C test has into the CPU stand-in for CUDA
 * (cuda_emu.cc): how many devices it reports, and what it has counted.
 */
#ifndef GPUPLAN_CUDA_EMU_HOOKS_H
#define GPUPLAN_CUDA_EMU_HOOKS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Devices cudaGetDeviceCount reports: 1 by default; 0 makes it fail as
 * on a machine without a GPU. */
void cuda_emu_set_devices(int n);
/* Run a launch's blocks last to first (1) or first to last (0, the
 * default): a kernel whose result depends on the order its blocks run
 * in gives other bits, as it may on a GPU. */
void cuda_emu_set_reverse_blocks(int on);
/* Device bytes allocated and not freed. */
size_t cuda_emu_bytes_in_use(void);
/* Kernel launches and cuBLAS GEMM calls so far. */
long cuda_emu_launches(void);
long cuda_emu_gemms(void);
/* cudaEventElapsedTime calls that succeeded so far. */
long cuda_emu_elapsed_calls(void);
/* The next n stream or event queries answer not ready (work still
 * running); 0 ends it. */
void cuda_emu_set_not_ready(long n);

#ifdef __cplusplus
}
#endif

#endif
