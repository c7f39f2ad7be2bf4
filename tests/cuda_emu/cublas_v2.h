/*
 * cublas_v2.h - a CPU stand-in for the two cuBLAS GEMMs the CUDA backend
 * calls (cublasGemmEx, cublasGemmStridedBatchedEx), column-major with
 * cuBLAS's argument conventions, so that a wrong transpose, leading
 * dimension or stride in executor/device/cuda/ shows in the tests.
 * CUBLAS_COMPUTE_32F_FAST_16BF rounds both operands to bf16 (to nearest,
 * ties to even) before multiplying, as the tensor cores do; the sums are
 * kept in double.  Operands fp32 or bf16 (the two of one type), results
 * fp32 or bf16 (rounded to nearest, ties to even), as cuBLAS allows with
 * CUBLAS_COMPUTE_32F.
 */
#ifndef GPUPLAN_CUDA_EMU_CUBLAS_H
#define GPUPLAN_CUDA_EMU_CUBLAS_H

#include "cuda_runtime.h"

typedef struct emu_blas *cublasHandle_t;
typedef enum {
	CUBLAS_STATUS_SUCCESS = 0,
	CUBLAS_STATUS_NOT_INITIALIZED = 1,
	CUBLAS_STATUS_INVALID_VALUE = 7,
	CUBLAS_STATUS_NOT_SUPPORTED = 15,
} cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
typedef enum { CUDA_R_32F = 0, CUDA_R_16BF = 14 } cudaDataType;
typedef enum { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_16BF = 75 } cublasComputeType_t;
typedef enum { CUBLAS_GEMM_DEFAULT = -1 } cublasGemmAlgo_t;

const char *cublasGetStatusString(cublasStatus_t s);
cublasStatus_t cublasCreate(cublasHandle_t *h);
cublasStatus_t cublasDestroy(cublasHandle_t h);
cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s);
cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
			    int m, int n, int k, const void *alpha, const void *a,
			    cudaDataType at, int lda, const void *b, cudaDataType bt, int ldb,
			    const void *beta, void *c, cudaDataType ct, int ldc,
			    cublasComputeType_t compute, cublasGemmAlgo_t algo);
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta,
					  cublasOperation_t tb, int m, int n, int k,
					  const void *alpha, const void *a, cudaDataType at,
					  int lda, long long sa, const void *b, cudaDataType bt,
					  int ldb, long long sb, const void *beta, void *c,
					  cudaDataType ct, int ldc, long long sc, int batch,
					  cublasComputeType_t compute, cublasGemmAlgo_t algo);

/* Test hook: GEMM calls so far. */
long emu_gemms(void);

#endif
