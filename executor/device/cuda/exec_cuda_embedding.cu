/*
 * exec_cuda_embedding.cu - the vocabulary-parallel embedding on the GPU:
 * a token's row of this rank's slice of the table, zero for a token
 * another rank holds; backward adds the output gradient's rows into the
 * table's rows this rank holds (atomically: tokens repeat).  The CPU
 * reference: exec_cpu_embedding.c.
 */
#include "device/cuda/exec_cuda_internal.h"

/* Vocabulary-parallel embedding (Shoeybi et al. 2019, sec. 3). */
template <typename T>
static __global__ void k_embedding_fwd(T *out, const int *tok, const T *wte, long n, int c,
				       int v0, int nv)
{
	GRID_STRIDE(i, n) {
		int r = tok[i / c] - v0;

		put(&out[i], r >= 0 && r < nv ? ld(wte[(size_t)r * c + i % c]) : 0.0f);
	}
}

/* Rows of dwte receive the gradients of every token that reads them;
 * several tokens may share a row, hence the atomic add. */
template <typename T>
static __global__ void k_embedding_bwd(float *dwte, const T *dout, const int *tok, long n,
				       int c, int v0, int nv)
{
	GRID_STRIDE(i, n) {
		int r = tok[i / c] - v0;

		if (r >= 0 && r < nv)
			atomicAdd(&dwte[(size_t)r * c + i % c], ld(dout[i]));
	}
}

void cuda_embedding_forward(struct exec_device *d, void *out, const int *tok, const void *wte,
			    int n, int c, int v0, int nv)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_embedding_fwd<T>, ew_grid((long)n * c), EW_THREADS,
				      (T *)out, tok, (const T *)wte, (long)n * c, c, v0, nv));
}

void cuda_embedding_backward(struct exec_device *d, float *dwte, const void *dout,
			     const int *tok, int n, int c, int v0, int nv)
{
	if (!dead(d) && n > 0)
		WITH_ACT(d, T, LAUNCH(d, k_embedding_bwd<T>, ew_grid((long)n * c), EW_THREADS,
				      dwte, (const T *)dout, tok, (long)n * c, c, v0, nv));
}
