/*
 * exec_cpu_attention.c - causal grouped-query attention on the CPU, row
 * by row, forward and backward; the reference the CUDA backend's blocked
 * attention (exec_cuda_attention.cu) is checked against.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "device/cpu/exec_cpu_internal.h"

/* Scaled dot-product attention with a causal mask (Vaswani et al. 2017,
 * eq. 1), query head h reading key/value head h / (nh / nkv) (grouped-query
 * attention, Ainslie et al. 2023).  Row (b, h, t) keeps its log-sum-exp so
 * the probabilities can be rebuilt in backward (the recomputation of Dao et
 * al. 2022, done row by row).  Query ti sits at key position q0 + ti of tk
 * keys (struct exec_backend) and sees keys 0 .. q0 + ti. */
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
	int group = nh / nkv;
	float *row = xmalloc((size_t)tk * sizeof(float));

	(void)d;
	for (int bi = 0; bi < b; bi++)
		for (int h = 0; h < nh; h++)
			for (int ti = 0; ti < t; ti++) {
				const float *qr = q + ((size_t)(bi * t + ti) * nh + h) * hd;
				float *o = out + ((size_t)(bi * t + ti) * nh + h) * hd;
				float *p = att ? att + (((size_t)bi * nh + h) * t + ti) * tk : row;
				float mx = -INFINITY;
				double sum = 0;
				int last = q0 + ti;

				for (int tj = 0; tj <= last; tj++) {
					const float *kr = k + ((size_t)(bi * tk + tj) * nkv + h / group) * hd;
					float s = 0;

					for (int j = 0; j < hd; j++)
						s += qr[j] * kr[j];
					p[tj] = s * scale;
					if (p[tj] > mx)
						mx = p[tj];
				}
				for (int tj = 0; tj <= last; tj++) {
					p[tj] = expf(p[tj] - mx);
					sum += p[tj];
				}
				for (int tj = 0; tj <= last; tj++)
					p[tj] = (float)(p[tj] / sum);
				for (int tj = last + 1; tj < tk; tj++)
					p[tj] = 0;
				lse[((size_t)bi * nh + h) * t + ti] = mx + (float)log(sum);
				memset(o, 0, hd * sizeof(float));
				for (int tj = 0; tj <= last; tj++)
					axpy(o, v + ((size_t)(bi * tk + tj) * nkv + h / group) * hd,
					     p[tj], hd);
			}
	free(row);
}

/* Softmax backward through each row: dp_j = dout . v_j,
 * ds_j = p_j (dp_j - sum_i p_i dp_i), then dq, dk from ds and dv from p. */
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
	int group = nh / nkv;
	float *prow = xmalloc((size_t)tk * sizeof(float));
	float *dp = xmalloc((size_t)tk * sizeof(float));

	(void)d;
	for (int bi = 0; bi < b; bi++)
		for (int h = 0; h < nh; h++)
			for (int ti = 0; ti < t; ti++) {
				size_t qo = ((size_t)(bi * t + ti) * nh + h) * hd;
				const float *qr = q + qo, *dor = dout + qo;
				float *dqr = dq + qo;
				const float *p;
				double dsum = 0;
				int last = q0 + ti;

				if (att) {
					p = att + (((size_t)bi * nh + h) * t + ti) * tk;
				} else {
					float l = lse[((size_t)bi * nh + h) * t + ti];

					for (int tj = 0; tj <= last; tj++) {
						const float *kr = k + ((size_t)(bi * tk + tj) * nkv + h / group) * hd;
						float s = 0;

						for (int j = 0; j < hd; j++)
							s += qr[j] * kr[j];
						prow[tj] = expf(s * scale - l);
					}
					p = prow;
				}
				for (int tj = 0; tj <= last; tj++) {
					size_t ko = ((size_t)(bi * tk + tj) * nkv + h / group) * hd;
					float s = 0;

					for (int j = 0; j < hd; j++)
						s += dor[j] * v[ko + j];
					dp[tj] = s;
					dsum += (double)p[tj] * s;
					axpy(dv + ko, dor, p[tj], hd);
				}
				for (int tj = 0; tj <= last; tj++) {
					size_t ko = ((size_t)(bi * tk + tj) * nkv + h / group) * hd;
					float ds = p[tj] * (dp[tj] - (float)dsum) * scale;

					axpy(dqr, k + ko, ds, hd);
					axpy(dk + ko, qr, ds, hd);
				}
			}
	free(prow);
	free(dp);
}
