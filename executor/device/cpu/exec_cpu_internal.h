/*
 * exec_cpu_internal.h - what the files of the fp32 CPU backend share: the
 * vector type of its axpy, OpenBLAS's set-up, and every kernel of its
 * table (struct exec_backend), one operation a file:
 *   exec_cpu_memory.c     allocation, copies
 *   exec_cpu_embedding.c  embedding
 *   exec_cpu_norm.c       LayerNorm, RMSNorm
 *   exec_cpu_matmul.c     GEMM (OpenBLAS's sgemm), bias
 *   exec_cpu_attention.c  causal grouped-query attention
 *   exec_cpu_mlp.c        GELU, SwiGLU
 *   exec_cpu_moe.c        mixture of experts: router, permutation, combine
 *   exec_cpu_elementwise.c residual add, scaled add, accumulate, narrow
 *   exec_cpu_loss.c       vocabulary-parallel cross-entropy
 *   exec_cpu_optimizer.c  gradient norm, AdamW
 * device/cuda/ holds the CUDA version of each in a file of the same name,
 * checked against these as llm.c checks train_gpt2.cu against
 * train_gpt2.c.
 *
 * Plain C, the reference, but for the GEMMs (attention's products too),
 * which are OpenBLAS's as the CUDA backend's are cuBLAS's; one thread,
 * since one rank is one core (OPENBLAS_NUM_THREADS overrides it).  Every
 * sum runs in an order fixed by the shape, so a kernel gives the same bits
 * for the same inputs on every rank.  Its activation type is fp32
 * (exec_act_dtype): every `void *` tensor of the table is a float array.
 */
#ifndef GPUPLAN_EXEC_CPU_INTERNAL_H
#define GPUPLAN_EXEC_CPU_INTERNAL_H

#include <string.h>

#include "device/exec_device.h"

typedef float v8f __attribute__((vector_size(32)));

/* y[0..n) += a * x[0..n).  Element-wise, so the vector and the scalar tail
 * round identically. */
static inline void axpy(float *restrict y, const float *restrict x, float a, int n)
{
	int j = 0;

	for (; j + 8 <= n; j += 8) {
		v8f xv, yv;

		memcpy(&xv, x + j, sizeof(xv));
		memcpy(&yv, y + j, sizeof(yv));
		yv += a * xv;
		memcpy(y + j, &yv, sizeof(yv));
	}
	for (; j < n; j++)
		y[j] += a * x[j];
}

/* Memory (exec_cpu_memory.c), as struct exec_backend describes it; the
 * copy is memmove unless dst is src, in every direction. */
void *cpu_alloc(struct exec_device *d, size_t bytes);
void cpu_free(struct exec_device *d, void *p, size_t bytes);
void cpu_zero(struct exec_device *d, void *p, size_t bytes);
void cpu_copy(struct exec_device *d, void *dst, const void *src, size_t bytes);
/* OpenBLAS (exec_cpu_matmul.c): cpu_blas_init() sets one thread per
 * process unless OPENBLAS_NUM_THREADS is set, then OpenBLAS honours that. */
void cpu_blas_init(void);
/* The threads OpenBLAS runs a GEMM on. */
int cpu_blas_threads(void);
/* c[m, n] = alpha op(a)[m, k] op(b)[k, n] + beta c, row-major, op the
 * transpose where trans_a / trans_b are set (OpenBLAS's sgemm; nothing
 * when a side is 0). */
void cpu_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a,
	       int lda, const float *b, int ldb, float beta, float *c, int ldc);

/* The kernels, as struct exec_backend describes each. */
void cpu_embedding_forward(struct exec_device *d, void *out, const int *tok, const void *wte,
			   int n, int c, int v0, int nv);
void cpu_embedding_backward(struct exec_device *d, float *dwte, const void *dout,
			    const int *tok, int n, int c, int v0, int nv);
void cpu_layernorm_forward(struct exec_device *d, void *out, float *mean, float *rstd,
			   const void *inp, const void *w, const void *b, int n, int c);
void cpu_layernorm_backward(struct exec_device *d, void *dinp, float *dw, float *db,
			    const void *dout, const void *inp, const void *w,
			    const float *mean, const float *rstd, int n, int c);
void cpu_rmsnorm_forward(struct exec_device *d, void *out, float *rstd, const void *inp,
			 const void *w, int n, int c);
void cpu_rmsnorm_backward(struct exec_device *d, void *dinp, float *dw, const void *dout,
			  const void *inp, const void *w, const float *rstd, int n, int c);
void cpu_matmul_forward(struct exec_device *d, void *out, const void *inp, const void *w,
			const void *bias, int n, int ic, int oc);
void cpu_matmul_backward(struct exec_device *d, void *dinp, float *dw, float *dbias,
			 const void *dout, const void *inp, const void *w, int n, int ic,
			 int oc);
void cpu_add_bias(struct exec_device *d, void *out, const void *bias, int n, int c);
void cpu_attention_forward(struct exec_device *d, void *out, float *lse, void *att,
			   const void *q, const void *k, const void *v, int b, int t, int tk,
			   int q0, int nh, int nkv, int hd);
void cpu_attention_backward(struct exec_device *d, void *dq, void *dk, void *dv,
			    const void *dout, const void *q, const void *k, const void *v,
			    const float *lse, const void *att, int b, int t, int tk, int q0,
			    int nh, int nkv, int hd);
void cpu_gelu_forward(struct exec_device *d, void *out, const void *inp, long n);
void cpu_gelu_backward(struct exec_device *d, void *dinp, const void *inp, const void *dout,
		       long n);
void cpu_swiglu_forward(struct exec_device *d, void *out, const void *g, const void *u,
			long n);
void cpu_swiglu_backward(struct exec_device *d, void *dg, void *du, const void *g,
			 const void *u, const void *dout, long n);
void cpu_moe_route_forward(struct exec_device *d, float *probs, int *idx, float *w,
			   const void *logits, int n, int e, int k, int pre_softmax);
void cpu_moe_route_backward(struct exec_device *d, void *dlogits, const float *dw,
			    const float *probs, const int *idx, int n, int e, int k,
			    int pre_softmax);
void cpu_moe_permute(struct exec_device *d, void *out, const void *inp, const int *rows,
		     const float *w, int n, int c, int k);
void cpu_moe_unpermute(struct exec_device *d, void *out, const void *inp, const int *pos,
		       const float *w, int n, int c, int k);
void cpu_moe_weights_backward(struct exec_device *d, float *dw, const void *dout,
			      const void *y, const int *pos, int n, int c, int k);
void cpu_residual_forward(struct exec_device *d, void *out, const void *a, const void *b,
			  long n);
void cpu_add_scaled(struct exec_device *d, void *out, const void *x, float s, long n);
void cpu_accumulate(struct exec_device *d, float *acc, const void *x, enum exec_dtype t,
		    long n);
void cpu_narrow(struct exec_device *d, void *dst, const float *src, long n);
void cpu_ce_row_max(struct exec_device *d, float *rmax, const void *logits, int n, int nv);
void cpu_ce_row_stats(struct exec_device *d, float *stats, const void *logits,
		      const float *rmax, const int *target, int n, int nv, int v0);
double cpu_ce_loss_sum(struct exec_device *d, const float *rmax, const float *stats, int n);
void cpu_ce_backward(struct exec_device *d, void *logits, const float *rmax,
		     const float *stats, const int *target, int n, int nv, int v0,
		     float scale);
void cpu_sumsq(struct exec_device *d, double *acc, const float *x, long n);
void cpu_adamw(struct exec_device *d, float *p, const float *g, float *m, float *v, long n,
	       float lr, float beta1, float beta2, float eps, float wd, int t, float gscale);

#endif
