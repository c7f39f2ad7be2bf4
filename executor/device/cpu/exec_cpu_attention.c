/*
 * exec_cpu_attention.c - causal grouped-query attention on the CPU, forward
 * and backward, a panel of query rows at a time: the scores and the
 * products with V, K and Q are OpenBLAS GEMMs (cpu_sgemm), the softmax
 * runs row by row; the reference the CUDA backend's blocked attention
 * (exec_cuda_attention.cu) is checked against.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "device/cpu/exec_cpu_internal.h"

#define ATTN_PANEL 64 /* query rows a pass: a panel sees keys 0 .. q0 + its last row */

/* Scaled dot-product attention with a causal mask (Vaswani et al. 2017,
 * eq. 1), query head h reading key/value head h / (nh / nkv) (grouped-query
 * attention, Ainslie et al. 2023).  Row (b, h, t) keeps its log-sum-exp so
 * the probabilities can be rebuilt in backward (the recomputation of Dao et
 * al. 2022).  Query ti sits at key position q0 + ti of tk keys (struct
 * exec_backend) and sees keys 0 .. q0 + ti. */
void cpu_attention_forward(struct exec_device *d, void *out_, float *lse,
			   void *att_, const void *q_, const void *k_,
			   const void *v_, int b, int t, int tk, int q0, int nh,
			   int nkv, int hd)
{
	float *out = out_;
	float *att = att_;
	const float *q = q_;
	const float *k = k_;
	const float *v = v_;
	float scale = 1.0f / sqrtf((float)hd);
	int group = nh / nkv, ldq = nh * hd, ldk = nkv * hd;
	float *panel = att ? NULL : xmalloc((size_t)ATTN_PANEL * tk * sizeof(float));

	(void)d;
	for (int bi = 0; bi < b; bi++)
		for (int h = 0; h < nh; h++)
			for (int r0 = 0; r0 < t; r0 += ATTN_PANEL) {
				int rows = t - r0 < ATTN_PANEL ? t - r0 : ATTN_PANEL;
				int keys = q0 + r0 + rows;  /* the panel's last row sees these */
				const float *qp = q + ((size_t)(bi * t + r0) * nh + h) * hd;
				const float *kh = k + ((size_t)bi * tk * nkv + h / group) * hd;
				const float *vh = v + ((size_t)bi * tk * nkv + h / group) * hd;
				float *p = att ? att + (((size_t)bi * nh + h) * t + r0) * tk : panel;

				/* p[i, j] = scale q_i . k_j, then each row's softmax */
				cpu_sgemm(0, 1, rows, keys, hd, scale, qp, ldq, kh, ldk, 0.0f, p, tk);
				for (int i = 0; i < rows; i++) {
					float *pr = p + (size_t)i * tk, mx = -INFINITY;
					int last = q0 + r0 + i;
					double sum = 0;

					for (int j = 0; j <= last; j++)
						if (pr[j] > mx)
							mx = pr[j];
					for (int j = 0; j <= last; j++) {
						pr[j] = expf(pr[j] - mx);
						sum += pr[j];
					}
					for (int j = 0; j <= last; j++)
						pr[j] = (float)(pr[j] / sum);
					for (int j = last + 1; j < tk; j++)
						pr[j] = 0;
					lse[((size_t)bi * nh + h) * t + r0 + i] = mx + (float)log(sum);
				}
				/* out = p v */
				cpu_sgemm(0, 0, rows, hd, keys, 1.0f, p, tk, vh, ldk, 0.0f,
					  out + ((size_t)(bi * t + r0) * nh + h) * hd, ldq);
			}
	free(panel);
}

/* Softmax backward, a panel of rows at a time: dp = dout v^T,
 * ds_ij = p_ij (dp_ij - sum_l p_il dp_il) scale, then dq += ds k,
 * dk += ds^T q and dv += p^T dout. */
void cpu_attention_backward(struct exec_device *d, void *dq_, void *dk_,
			    void *dv_, const void *dout_, const void *q_,
			    const void *k_, const void *v_, const float *lse,
			    const void *att_, int b, int t, int tk, int q0, int nh, int nkv,
			    int hd)
{
	float *dq = dq_;
	float *dk = dk_;
	float *dv = dv_;
	const float *dout = dout_;
	const float *q = q_;
	const float *k = k_;
	const float *v = v_;
	const float *att = att_;
	float scale = 1.0f / sqrtf((float)hd);
	int group = nh / nkv, ldq = nh * hd, ldk = nkv * hd;
	float *prec = att ? NULL : xmalloc((size_t)ATTN_PANEL * tk * sizeof(float));
	float *ds = xmalloc((size_t)ATTN_PANEL * tk * sizeof(float));

	(void)d;
	for (int bi = 0; bi < b; bi++)
		for (int h = 0; h < nh; h++)
			for (int r0 = 0; r0 < t; r0 += ATTN_PANEL) {
				int rows = t - r0 < ATTN_PANEL ? t - r0 : ATTN_PANEL;
				int keys = q0 + r0 + rows;
				size_t qo = ((size_t)(bi * t + r0) * nh + h) * hd;
				size_t ko = ((size_t)bi * tk * nkv + h / group) * hd;
				const float *p;

				if (att) {
					p = att + (((size_t)bi * nh + h) * t + r0) * tk;
				} else {
					const float *l = lse + ((size_t)bi * nh + h) * t + r0;

					cpu_sgemm(0, 1, rows, keys, hd, scale, q + qo, ldq, k + ko, ldk,
						  0.0f, prec, tk);
					for (int i = 0; i < rows; i++) {
						float *pr = prec + (size_t)i * tk;
						int last = q0 + r0 + i;

						for (int j = 0; j <= last; j++)
							pr[j] = expf(pr[j] - l[i]);
						for (int j = last + 1; j < keys; j++)
							pr[j] = 0;
					}
					p = prec;
				}
				/* ds = dout v^T, then the softmax's backward in place */
				cpu_sgemm(0, 1, rows, keys, hd, 1.0f, dout + qo, ldq, v + ko, ldk, 0.0f,
					  ds, tk);
				for (int i = 0; i < rows; i++) {
					const float *pr = p + (size_t)i * tk;
					float *dr = ds + (size_t)i * tk;
					int last = q0 + r0 + i;
					double dsum = 0;

					for (int j = 0; j <= last; j++)
						dsum += (double)pr[j] * dr[j];
					for (int j = 0; j <= last; j++)
						dr[j] = pr[j] * (dr[j] - (float)dsum) * scale;
					for (int j = last + 1; j < keys; j++)
						dr[j] = 0;
				}
				cpu_sgemm(1, 0, keys, hd, rows, 1.0f, p, tk, dout + qo, ldq, 1.0f,
					  dv + ko, ldk);
				cpu_sgemm(0, 0, rows, hd, keys, 1.0f, ds, tk, k + ko, ldk, 1.0f, dq + qo,
					  ldq);
				cpu_sgemm(1, 0, keys, hd, rows, 1.0f, ds, tk, q + qo, ldq, 1.0f, dk + ko,
					  ldk);
			}
	free(prec);
	free(ds);
}
