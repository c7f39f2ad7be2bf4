/*
 * exec_cuda_attention.cu - causal grouped-query attention on the GPU
 * (Vaswani et al. 2017, eq. 1), which never holds the t x t score
 * matrix: queries go in blocks of nb rows; for each block cuBLAS computes
 * its scores against the keys up to its last row (the causal part only),
 * a kernel turns them into probabilities keeping each row's log-sum-exp,
 * and cuBLAS multiplies them by V.  Scratch is nh x nb x t floats, nb
 * chosen to keep it under ATTN_SCRATCH_FLOATS.  Backward rebuilds each
 * block's probabilities from the log-sum-exp (the recomputation of Dao et
 * al. 2022, by blocks of rows rather than tiles) and runs the CPU
 * reference's softmax backward (exec_cpu_attention.c), ds = p (dp - sum
 * p dp).
 */
#include "device/cuda/exec_cuda_internal.h"

/* One score buffer of the blocked attention holds at most this many
 * floats (32 MiB); a block has at least ATTN_MIN_ROWS query rows.  (The
 * tests set both small to run several blocks on small shapes.) */
#ifndef ATTN_SCRATCH_FLOATS
#define ATTN_SCRATCH_FLOATS (8L << 20)
#endif
#ifndef ATTN_MIN_ROWS
#define ATTN_MIN_ROWS 64
#endif

/* One block per row (h, r) of a block of scaled scores S[nh][rows][kend]
 * (fp32) belonging to query row i = i0 + r of sequence bi, at key
 * position q0 + i of tk: probabilities into P (same layout, activation
 * type; P may be S itself when that is fp32), exp(s - lse) up to the
 * causal limit (key q0 + i) and 0 after; lse stored at [(bi nh + h) t +
 * i]; the row of att ([b, nh, t, tk]) filled when att is given (the
 * probabilities kept for backward when flash attention is off). */
template <typename T>
static __global__ void k_attn_softmax(const float *S, T *P, float *lse, T *att, int rows,
				      int kend, int i0, int t, int tk, int q0, int nh, int bi)
{
	__shared__ float sh[ROW_THREADS_MAX];
	int h = blockIdx.x / rows, i = i0 + blockIdx.x % rows, last = q0 + i;
	const float *row = S + (size_t)blockIdx.x * kend;
	T *prow = P + (size_t)blockIdx.x * kend;
	T *a = att ? att + ((size_t)(bi * nh + h) * t + i) * tk : NULL;
	float mx = -INFINITY, sum = 0, l;

	for (int j = threadIdx.x; j <= last; j += blockDim.x)
		mx = fmaxf(mx, row[j]);
	mx = block_max(mx, sh);
	for (int j = threadIdx.x; j <= last; j += blockDim.x)
		sum += expf(row[j] - mx);
	l = mx + logf(block_sum(sum, sh));
	/* each thread reads only the scores it then overwrites */
	for (int j = threadIdx.x; j < kend; j += blockDim.x) {
		float p = j <= last ? expf(row[j] - l) : 0.0f;

		put(&prow[j], p);
		if (a)
			put(&a[j], p);
	}
	for (int j = kend + threadIdx.x; a && j < tk; j += blockDim.x)
		put(&a[j], 0.0f);
	if (threadIdx.x == 0)
		lse[(size_t)(bi * nh + h) * t + i] = l;
}

/* Softmax backward of one row, as k_attn_softmax's blocks: S holds the
 * scaled scores and dP holds dp_j = dout . v_j (both fp32); P receives
 * p = exp(s - lse) and dS ds_j = p_j (dp_j - sum_k p_k dp_k) scale, in
 * the activation type (where that is fp32, P may be S and dS be dP).
 * Each thread computes p twice rather than store and reread it, and
 * reads S[j] and dP[j] before it overwrites them. */
template <typename T>
static __global__ void k_attn_softmax_bwd(const float *S, const float *dP, T *P, T *dS,
					  const float *lse, int rows, int kend, int i0, int t,
					  int q0, int nh, int bi, float scale)
{
	__shared__ float sh[ROW_THREADS_MAX];
	int h = blockIdx.x / rows, i = i0 + blockIdx.x % rows, last = q0 + i;
	size_t o = (size_t)blockIdx.x * kend;
	float l = lse[(size_t)(bi * nh + h) * t + i], acc = 0, dsum;

	for (int j = threadIdx.x; j <= last && j < kend; j += blockDim.x)
		acc += expf(S[o + j] - l) * dP[o + j];
	dsum = block_sum(acc, sh);
	for (int j = threadIdx.x; j < kend; j += blockDim.x) {
		float p = j <= last ? expf(S[o + j] - l) : 0.0f;
		float ds = p * (dP[o + j] - dsum) * scale;

		put(&dS[o + j], ds);
		put(&P[o + j], p);
	}
}

/* Query rows per block: all t when nh x t x tk floats fit the scratch
 * bound, else the largest multiple of ATTN_MIN_ROWS that fits, at least
 * ATTN_MIN_ROWS. */
static int attn_rows(int t, int tk, int nh)
{
	long per_row = (long)nh * tk, nb;

	if (per_row * t <= ATTN_SCRATCH_FLOATS)
		return t;
	nb = ATTN_SCRATCH_FLOATS / per_row / ATTN_MIN_ROWS * ATTN_MIN_ROWS;
	if (nb < ATTN_MIN_ROWS)
		nb = ATTN_MIN_ROWS;
	return (int)(nb < t ? nb : t);
}

/* The scratch of one query block, `each` elements a buffer: scores S and
 * their gradient dP in fp32, and the probabilities P and score gradients
 * dS the GEMMs read, in the activation type (where that is fp32, P is S
 * and dS is dP).  False after a failed allocation (reported). */
struct attn_bufs {
	float *S, *dP;
	void *P, *dS;
};

static bool attn_scratch(struct exec_device *d, size_t each, struct attn_bufs *b)
{
	size_t ab = d->act == EXEC_F32 ? 0 : exec_dtype_size(d->act);

	b->S = (float *)cuda_scratch_at_least(d, &priv_of(d)->attn, 2 * each * (sizeof(float) + ab));
	if (!b->S)
		return false;
	b->dP = b->S + each;
	b->P = ab ? (void *)(b->dP + each) : (void *)b->S;
	b->dS = ab ? act_at(d, b->P, each) : (void *)b->dP;
	return true;
}

/* S_h = scale Q_h K_g^T (fp32) for the rows of one query block: with
 * row-major Q (rows x hd, stride nh hd) and K (kend x hd, stride nkv hd),
 * cuBLAS computes S^T (kend x rows) = op_T(K as hd x kend) op_N(Q as hd x
 * rows).  One strided batch per member j of a KV group covers its nkv
 * heads h = g group + j; S is [nh][rows][kend]. */
static void attn_scores(struct exec_device *d, float *S, const void *qb, const void *kb,
			int rows, int kend, int nh, int nkv, int hd, float alpha)
{
	int group = nh / nkv;

	for (int j = 0; j < group; j++)
		cuda_gemm_batched(d, CUBLAS_OP_T, CUBLAS_OP_N, kend, rows, hd, alpha, kb, nkv * hd,
			     hd, act_at(d, qb, (size_t)j * hd), nh * hd, (long long)group * hd,
			     0.0f, S + (size_t)j * rows * kend, kend,
			     (long long)group * rows * kend, nkv, act_type(d), CUDA_R_32F);
}

/* A block of query rows i0 .. i0 + rows - 1 reads keys 0 .. q0 + i0 +
 * rows - 1 (kend), the causal limit of its last row. */
void cuda_attention_forward(struct exec_device *d, void *out, float *lse, void *att,
			    const void *q, const void *k, const void *v, int b, int t,
			    int tk, int q0, int nh, int nkv, int hd)
{
	int group = nh / nkv, nb = attn_rows(t, tk, nh);
	float scale = 1.0f / sqrtf((float)hd);
	cudaDataType at = act_type(d);
	struct attn_bufs s;

	if (dead(d) || !attn_scratch(d, (size_t)nh * nb * tk, &s))
		return;
	for (int bi = 0; bi < b; bi++)
		for (int i0 = 0; i0 < t; i0 += nb) {
			int rows = t - i0 < nb ? t - i0 : nb, kend = q0 + i0 + rows;
			const void *qb = act_at(d, q, ((size_t)bi * t + i0) * nh * hd);
			const void *kb = act_at(d, k, (size_t)bi * tk * nkv * hd);
			const void *vb = act_at(d, v, (size_t)bi * tk * nkv * hd);
			void *ob = act_at(d, out, ((size_t)bi * t + i0) * nh * hd);

			attn_scores(d, s.S, qb, kb, rows, kend, nh, nkv, hd, scale);
			if (!dead(d))
				WITH_ACT(d, T, LAUNCH(d, k_attn_softmax<T>, (unsigned)(nh * rows),
						      row_threads(kend), (const float *)s.S,
						      (T *)s.P, lse, (T *)att, rows, kend, i0, t,
						      tk, q0, nh, bi));
			/* O_h (rows x hd) is column-major O^T (hd x rows) =
			 * op_N(V as hd x kend) op_N(P as kend x rows) */
			for (int j = 0; j < group; j++)
				cuda_gemm_batched(d, CUBLAS_OP_N, CUBLAS_OP_N, hd, rows, kend, 1.0f, vb,
					     nkv * hd, hd, act_at(d, s.P, (size_t)j * rows * kend),
					     kend, (long long)group * rows * kend, 0.0f,
					     act_at(d, ob, (size_t)j * hd), nh * hd,
					     (long long)group * hd, nkv, at, at);
		}
}

void cuda_attention_backward(struct exec_device *d, void *dq, void *dk, void *dv,
			     const void *dout, const void *q, const void *k, const void *v,
			     const float *lse, const void *att, int b, int t, int tk, int q0,
			     int nh, int nkv, int hd)
{
	int group = nh / nkv, nb = attn_rows(t, tk, nh);
	float scale = 1.0f / sqrtf((float)hd);
	cudaDataType at = act_type(d);
	size_t nk = (size_t)b * tk * nkv * hd;
	float *dk32 = NULL, *dv32 = NULL;
	cudaDataType gt = at;
	struct attn_bufs s;

	/* the probabilities are rebuilt from lse whether or not att kept them */
	(void)att;
	if (dead(d) || !attn_scratch(d, (size_t)nh * nb * tk, &s))
		return;
	/* dK and dV add up over the query blocks and the heads of a KV
	 * group: in fp32, rounded to the activation type once at the end
	 * (a bf16 sum rounds at every addition, ~0.4% each) */
	if (d->act != EXEC_F32) {
		dk32 = (float *)cuda_scratch_at_least(d, &priv_of(d)->attn_grad, 2 * nk * sizeof(float));
		if (!dk32)
			return;
		dv32 = dk32 + nk;
		cuda_zero(d, dk32, 2 * nk * sizeof(float));
		cuda_accumulate(d, dk32, dk, d->act, (long)nk);
		cuda_accumulate(d, dv32, dv, d->act, (long)nk);
		gt = CUDA_R_32F;
	}
	for (int bi = 0; bi < b; bi++)
		for (int i0 = 0; i0 < t; i0 += nb) {
			int rows = t - i0 < nb ? t - i0 : nb, kend = q0 + i0 + rows;
			size_t qoff = ((size_t)bi * t + i0) * nh * hd, koff = (size_t)bi * tk * nkv * hd;
			void *dkb = dk32 ? (void *)(dk32 + koff) : act_at(d, dk, koff);
			void *dvb = dv32 ? (void *)(dv32 + koff) : act_at(d, dv, koff);

			attn_scores(d, s.S, act_at(d, q, qoff), act_at(d, k, koff), rows, kend, nh,
				    nkv, hd, scale);
			/* dP_h = dO_h V_g^T, the same product as the scores */
			attn_scores(d, s.dP, act_at(d, dout, qoff), act_at(d, v, koff), rows, kend,
				    nh, nkv, hd, 1.0f);
			if (!dead(d))
				WITH_ACT(d, T, LAUNCH(d, k_attn_softmax_bwd<T>, (unsigned)(nh * rows),
						      row_threads(kend), (const float *)s.S,
						      (const float *)s.dP, (T *)s.P, (T *)s.dS, lse,
						      rows, kend, i0, t, q0, nh, bi, scale));
			for (int j = 0; j < group; j++) {
				size_t so = (size_t)j * rows * kend, jo = (size_t)j * hd;
				long long ss = (long long)group * rows * kend;

				/* dQ_h (hd x rows) += op_N(K as hd x kend) op_N(dS as kend x rows) */
				cuda_gemm_batched(d, CUBLAS_OP_N, CUBLAS_OP_N, hd, rows, kend, 1.0f,
					     act_at(d, k, koff), nkv * hd, hd, act_at(d, s.dS, so),
					     kend, ss, 1.0f, act_at(d, dq, qoff + jo), nh * hd,
					     (long long)group * hd, nkv, at, at);
				/* dK_g (hd x kend) += op_N(Q as hd x rows) op_T(dS as kend x rows) */
				cuda_gemm_batched(d, CUBLAS_OP_N, CUBLAS_OP_T, hd, kend, rows, 1.0f,
					     act_at(d, q, qoff + jo), nh * hd, (long long)group * hd,
					     act_at(d, s.dS, so), kend, ss, 1.0f, dkb, nkv * hd, hd,
					     nkv, at, gt);
				/* dV_g (hd x kend) += op_N(dO as hd x rows) op_T(P as kend x rows) */
				cuda_gemm_batched(d, CUBLAS_OP_N, CUBLAS_OP_T, hd, kend, rows, 1.0f,
					     act_at(d, dout, qoff + jo), nh * hd,
					     (long long)group * hd, act_at(d, s.P, so), kend, ss, 1.0f,
					     dvb, nkv * hd, hd, nkv, at, gt);
			}
		}
	if (dk32) {
		cuda_narrow(d, dk, dk32, (long)nk);
		cuda_narrow(d, dv, dv32, (long)nk);
	}
}
