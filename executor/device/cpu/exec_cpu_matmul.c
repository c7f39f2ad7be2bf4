/*
 * exec_cpu_matmul.c - y = x W^T + b on the CPU and its gradients, each one
 * CBLAS sgemm of OpenBLAS (as the CUDA backend's are cuBLAS calls), and the
 * bias added alone; cpu_sgemm for attention's products.  The only file
 * that includes <cblas.h>.
 *
 * OpenBLAS runs one thread per rank unless OPENBLAS_NUM_THREADS says
 * otherwise (cpu_blas_init): the ranks are the parallelism, and a rank's
 * threads would contend with its neighbours' for the same cores.  Single
 * threaded, OpenBLAS's sgemm sums in an order fixed by the shape, so a
 * kernel gives the same bits for the same inputs and shape on every rank;
 * a layout that splits a GEMM (tp, a pipeline's micro-batches, an expert's
 * tokens) sums in another order, which is why the layout tests compare
 * with a tolerance.
 */
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "device/cpu/exec_cpu_internal.h"

void cpu_blas_init(void)
{
	const char *s = getenv("OPENBLAS_NUM_THREADS");

	if (!s || !*s)
		openblas_set_num_threads(1);
}

int cpu_blas_threads(void)
{
	return openblas_get_num_threads();
}

void cpu_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a,
	       int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
	if (m <= 0 || n <= 0 || k <= 0)
		return;
	cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
		    trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta,
		    c, ldc);
}

void cpu_matmul_forward(struct exec_device *d, void *out_, const void *inp_,
			const void *w_, const void *bias_, int n, int ic, int oc)
{
	float *out = out_;
	const float *bias = bias_;
	(void)d;
	if (n <= 0 || oc <= 0)
		return;
	for (int i = 0; bias && i < n; i++)
		memcpy(out + (size_t)i * oc, bias, oc * sizeof(float));
	if (ic <= 0) {
		if (!bias)
			memset(out, 0, (size_t)n * oc * sizeof(float));
		return;
	}
	/* out[n, oc] = inp[n, ic] w[oc, ic]^T (+ out, the bias) */
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, oc, ic, 1.0f, inp_, ic, w_,
		    ic, bias ? 1.0f : 0.0f, out, oc);
}

void cpu_matmul_backward(struct exec_device *d, void *dinp, float *dw, float *dbias,
			 const void *dout_, const void *inp, const void *w, int n, int ic,
			 int oc)
{
	const float *dout = dout_;
	(void)d;
	if (n <= 0 || ic <= 0 || oc <= 0)
		return;
	/* dinp[n, ic] += dout[n, oc] w[oc, ic] */
	if (dinp)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, ic, oc, 1.0f, dout, oc,
			    w, ic, 1.0f, dinp, ic);
	/* dw[oc, ic] += dout[n, oc]^T inp[n, ic] */
	if (dw)
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, oc, ic, n, 1.0f, dout, oc,
			    inp, ic, 1.0f, dw, ic);
	if (dbias)
		for (int i = 0; i < n; i++)
			axpy(dbias, dout + (size_t)i * oc, 1.0f, oc);
}

void cpu_add_bias(struct exec_device *d, void *out_, const void *bias_, int n, int c)
{
	float *out = out_;
	const float *bias = bias_;
	(void)d;
	for (int i = 0; i < n; i++)
		axpy(out + (size_t)i * c, bias, 1.0f, c);
}
