/*
 * exec_cpu.c - the fp32 CPU backend: every kernel of the decoder's forward
 * and backward pass, each pair side by side, in plain C (the reference the
 * CUDA backend is checked against, as llm.c's train_gpt2.c is for its GPU
 * code).  Memory is the process heap.
 *
 * Speed comes only from the GEMM's 4 x 8 register tile (GCC/Clang vector
 * extensions, so it builds for any target); no threads, since one rank is
 * one core.
 * Every sum runs in a fixed order, so a kernel gives the same bits for the
 * same inputs on every rank.  Its activation type is fp32
 * (exec_act_dtype): every `void *` tensor of the table is a float array.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ---- memory ---------------------------------------------------------- */

static void *cpu_alloc(struct exec_device *d, size_t bytes)
{
	(void)d;
	return calloc(1, bytes ? bytes : 1);
}

static void cpu_free(struct exec_device *d, void *p, size_t bytes)
{
	(void)d;
	(void)bytes;
	free(p);
}

static void cpu_zero(struct exec_device *d, void *p, size_t bytes)
{
	(void)d;
	memset(p, 0, bytes);
}

static void cpu_copy(struct exec_device *d, void *dst, const void *src, size_t bytes)
{
	(void)d;
	if (dst != src)
		memmove(dst, src, bytes);
}

/* ---- matmul ---------------------------------------------------------- */

/* c[r, j] += sum over p of a[r, p] b[p, j] for r < rows, j < cols, with
 * a[r, p] = a[r * a_rs + p * a_ps], b[p, j] = b[p * b_ps + j] and
 * c[r, j] = c[r * c_rs + j]; p runs 0 .. np - 1 in order for every
 * element.  The 4 x 8 register tile is the whole of the blocking: one load
 * of b's eight values serves four rows, and c stays in registers across
 * p.  Edge tiles take the scalar path, which rounds identically (each
 * element sees the same additions in the same order, no fused multiply-add
 * under -std=c11). */
static void gemm_acc(float *c, long c_rs, int rows, int cols, const float *a,
		     long a_rs, long a_ps, const float *b, long b_ps, int np)
{
	for (int r0 = 0; r0 < rows; r0 += 4)
		for (int j0 = 0; j0 < cols; j0 += 8) {
			float *c0 = c + r0 * c_rs + j0;
			const float *a0 = a + r0 * a_rs, *b0 = b + j0;

			if (r0 + 4 <= rows && j0 + 8 <= cols) {
				v8f acc[4], bv;

				for (int r = 0; r < 4; r++)
					memcpy(&acc[r], c0 + r * c_rs, sizeof(bv));
				for (int p = 0; p < np; p++) {
					memcpy(&bv, b0 + p * b_ps, sizeof(bv));
					for (int r = 0; r < 4; r++)
						acc[r] += a0[r * a_rs + p * a_ps] * bv;
				}
				for (int r = 0; r < 4; r++)
					memcpy(c0 + r * c_rs, &acc[r], sizeof(bv));
				continue;
			}
			for (int r = 0; r < 4 && r0 + r < rows; r++)
				for (int j = 0; j < 8 && j0 + j < cols; j++) {
					float acc = c0[r * c_rs + j];

					for (int p = 0; p < np; p++)
						acc += a0[r * a_rs + p * a_ps] * b0[p * b_ps + j];
					c0[r * c_rs + j] = acc;
				}
		}
}

/* The transposed weight [ic, oc] of the forward pass; grows to the
 * largest weight and belongs to the device. */
struct cpu_priv {
	float *wt;
	size_t wt_n;
};

static float *cpu_scratch(struct exec_device *d, size_t n)
{
	struct cpu_priv *p = d->priv;

	if (!p)
		p = d->priv = xcalloc(1, sizeof(*p));
	if (p->wt_n < n) {
		free(p->wt);
		p->wt = xmalloc(n * sizeof(float));
		p->wt_n = n;
	}
	return p->wt;
}

#define PANEL_ROWS 64 /* rows of the input per pass, so a weight panel stays in cache */

static void matmul_forward(struct exec_device *d, void *out_, const void *inp_,
			   const void *w_, const void *bias_, int n, int ic, int oc)
{
	float *out = out_;
	const float *inp = inp_;
	const float *w = w_;
	const float *bias = bias_;
	float *wt = cpu_scratch(d, (size_t)ic * oc);

	for (int o = 0; o < oc; o++)
		for (int k = 0; k < ic; k++)
			wt[(size_t)k * oc + o] = w[(size_t)o * ic + k];
	for (int i = 0; i < n; i++) {
		if (bias)
			memcpy(out + (size_t)i * oc, bias, oc * sizeof(float));
		else
			memset(out + (size_t)i * oc, 0, oc * sizeof(float));
	}
	for (int i0 = 0; i0 < n; i0 += PANEL_ROWS)
		for (int o0 = 0; o0 < oc; o0 += 256)
			gemm_acc(out + (size_t)i0 * oc + o0, oc,
				 n - i0 < PANEL_ROWS ? n - i0 : PANEL_ROWS,
				 oc - o0 < 256 ? oc - o0 : 256,
				 inp + (size_t)i0 * ic, ic, 1, wt + o0, oc, ic);
}

static void matmul_backward(struct exec_device *d, void *dinp_, float *dw,
			    float *dbias, const void *dout_, const void *inp_,
			    const void *w_, int n, int ic, int oc)
{
	float *dinp = dinp_;
	const float *dout = dout_;
	const float *inp = inp_;
	const float *w = w_;
	(void)d;
	/* dinp[i, k] += sum_o dout[i, o] w[o, k] */
	if (dinp)
		for (int i0 = 0; i0 < n; i0 += PANEL_ROWS)
			gemm_acc(dinp + (size_t)i0 * ic, ic,
				 n - i0 < PANEL_ROWS ? n - i0 : PANEL_ROWS, ic,
				 dout + (size_t)i0 * oc, oc, 1, w, ic, oc);
	/* dw[o, k] += sum_i dout[i, o] inp[i, k] */
	for (int o0 = 0; o0 < oc; o0 += PANEL_ROWS)
		gemm_acc(dw + (size_t)o0 * ic, ic, oc - o0 < PANEL_ROWS ? oc - o0 : PANEL_ROWS,
			 ic, dout + o0, 1, oc, inp, ic, n);
	if (dbias)
		for (int i = 0; i < n; i++)
			axpy(dbias, dout + (size_t)i * oc, 1.0f, oc);
}

static void add_bias(struct exec_device *d, void *out_, const void *bias_, int n, int c)
{
	float *out = out_;
	const float *bias = bias_;
	(void)d;
	for (int i = 0; i < n; i++)
		axpy(out + (size_t)i * c, bias, 1.0f, c);
}

/* ---- normalisation --------------------------------------------------- */

#define NORM_EPS 1e-5

static void layernorm_forward(struct exec_device *d, void *out_, float *mean,
			      float *rstd, const void *inp_, const void *w_,
			      const void *b_, int n, int c)
{
	float *out = out_;
	const float *inp = inp_;
	const float *w = w_;
	const float *b = b_;
	(void)d;
	for (int i = 0; i < n; i++) {
		const float *x = inp + (size_t)i * c;
		float *y = out + (size_t)i * c;
		double m = 0, var = 0;
		float s;

		for (int j = 0; j < c; j++)
			m += x[j];
		m /= c;
		for (int j = 0; j < c; j++)
			var += (x[j] - m) * (x[j] - m);
		var /= c;
		s = (float)(1.0 / sqrt(var + NORM_EPS));
		for (int j = 0; j < c; j++)
			y[j] = ((x[j] - (float)m) * s) * w[j] + (b ? b[j] : 0.0f);
		mean[i] = (float)m;
		rstd[i] = s;
	}
}

/* LayerNorm's input gradient (Ba et al. 2016), written as in llm.c:
 * dx = rstd (dn - mean(dn) - n mean(dn n)), n the normalised input and
 * dn = dout w. */
static void layernorm_backward(struct exec_device *d, void *dinp_, float *dw,
			       float *db, const void *dout_, const void *inp_,
			       const void *w_, const float *mean,
			       const float *rstd, int n, int c)
{
	float *dinp = dinp_;
	const float *dout = dout_;
	const float *inp = inp_;
	const float *w = w_;
	(void)d;
	for (int i = 0; i < n; i++) {
		const float *x = inp + (size_t)i * c, *dy = dout + (size_t)i * c;
		float *dx = dinp + (size_t)i * c;
		float m = mean[i], s = rstd[i];
		double dmean = 0, dnmean = 0;

		for (int j = 0; j < c; j++) {
			float nrm = (x[j] - m) * s, dn = dy[j] * w[j];

			dmean += dn;
			dnmean += dn * nrm;
		}
		dmean /= c;
		dnmean /= c;
		for (int j = 0; j < c; j++) {
			float nrm = (x[j] - m) * s, dn = dy[j] * w[j];

			if (db)
				db[j] += dy[j];
			dw[j] += nrm * dy[j];
			dx[j] += (dn - (float)dmean - nrm * (float)dnmean) * s;
		}
	}
}

static void rmsnorm_forward(struct exec_device *d, void *out_, float *rstd,
			    const void *inp_, const void *w_, int n, int c)
{
	float *out = out_;
	const float *inp = inp_;
	const float *w = w_;
	(void)d;
	for (int i = 0; i < n; i++) {
		const float *x = inp + (size_t)i * c;
		float *y = out + (size_t)i * c;
		double ms = 0;
		float s;

		for (int j = 0; j < c; j++)
			ms += (double)x[j] * x[j];
		s = (float)(1.0 / sqrt(ms / c + NORM_EPS));
		for (int j = 0; j < c; j++)
			y[j] = (x[j] * s) * w[j];
		rstd[i] = s;
	}
}

/* RMSNorm's input gradient (Zhang and Sennrich 2019, eq. 4 differentiated):
 * dx = rstd (dn - n mean(dn n)), n = x rstd, dn = dout w. */
static void rmsnorm_backward(struct exec_device *d, void *dinp_, float *dw,
			     const void *dout_, const void *inp_, const void *w_,
			     const float *rstd, int n, int c)
{
	float *dinp = dinp_;
	const float *dout = dout_;
	const float *inp = inp_;
	const float *w = w_;
	(void)d;
	for (int i = 0; i < n; i++) {
		const float *x = inp + (size_t)i * c, *dy = dout + (size_t)i * c;
		float *dx = dinp + (size_t)i * c;
		float s = rstd[i];
		double dnmean = 0;

		for (int j = 0; j < c; j++)
			dnmean += (double)dy[j] * w[j] * (x[j] * s);
		dnmean /= c;
		for (int j = 0; j < c; j++) {
			float nrm = x[j] * s;

			dw[j] += nrm * dy[j];
			dx[j] += (dy[j] * w[j] - nrm * (float)dnmean) * s;
		}
	}
}

/* ---- attention ------------------------------------------------------- */

/* Scaled dot-product attention with a causal mask (Vaswani et al. 2017,
 * eq. 1), query head h reading key/value head h / (nh / nkv) (grouped-query
 * attention, Ainslie et al. 2023).  Row (b, h, t) keeps its log-sum-exp so
 * the probabilities can be rebuilt in backward (the recomputation of Dao et
 * al. 2022, done row by row).  Query ti sits at key position q0 + ti of tk
 * keys (struct exec_backend) and sees keys 0 .. q0 + ti. */
static void attention_forward(struct exec_device *d, void *out_, float *lse,
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
static void attention_backward(struct exec_device *d, void *dq_, void *dk_,
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

/* ---- element-wise ---------------------------------------------------- */

#define GELU_SCALE 0.7978845608028654f /* sqrt(2 / pi) */

/* gelu(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), Hendrycks and
 * Gimpel 2016, sec. 2, the form GPT-2 uses. */
static void gelu_forward(struct exec_device *d, void *out_, const void *inp_, long n)
{
	float *out = out_;
	const float *inp = inp_;
	(void)d;
	for (long i = 0; i < n; i++) {
		float x = inp[i];

		out[i] = 0.5f * x * (1.0f + tanhf(GELU_SCALE * (x + 0.044715f * x * x * x)));
	}
}

static void gelu_backward(struct exec_device *d, void *dinp_, const void *inp_,
			  const void *dout_, long n)
{
	float *dinp = dinp_;
	const float *inp = inp_;
	const float *dout = dout_;
	(void)d;
	for (long i = 0; i < n; i++) {
		float x = inp[i];
		float u = GELU_SCALE * (x + 0.044715f * x * x * x);
		float th = tanhf(u);
		float sech2 = 1.0f - th * th;
		float g = 0.5f * (1.0f + th) +
			  0.5f * x * sech2 * GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);

		dinp[i] += g * dout[i];
	}
}

/* swiglu(g, u) = g sigmoid(g) u (Shazeer 2020, eq. 6 with Swish_1). */
static void swiglu_forward(struct exec_device *d, void *out_, const void *g_,
			   const void *u_, long n)
{
	float *out = out_;
	const float *g = g_;
	const float *u = u_;
	(void)d;
	for (long i = 0; i < n; i++) {
		float sg = 1.0f / (1.0f + expf(-g[i]));

		out[i] = g[i] * sg * u[i];
	}
}

static void swiglu_backward(struct exec_device *d, void *dg_, void *du_,
			    const void *g_, const void *u_, const void *dout_, long n)
{
	float *dg = dg_;
	float *du = du_;
	const float *g = g_;
	const float *u = u_;
	const float *dout = dout_;
	(void)d;
	for (long i = 0; i < n; i++) {
		float sg = 1.0f / (1.0f + expf(-g[i]));
		float silu = g[i] * sg;

		dg[i] += dout[i] * u[i] * sg * (1.0f + g[i] * (1.0f - sg));
		du[i] += dout[i] * silu;
	}
}

static void residual_forward(struct exec_device *d, void *out_, const void *a_,
			     const void *b_, long n)
{
	float *out = out_;
	const float *a = a_;
	const float *b = b_;
	(void)d;
	for (long i = 0; i < n; i++)
		out[i] = a[i] + b[i];
}

static void accumulate(struct exec_device *d, float *acc, const void *x_, enum exec_dtype t,
		       long n)
{
	const float *x = x_;

	(void)d;
	assert(t == EXEC_F32);
	for (long i = 0; i < n; i++)
		acc[i] += x[i];
}

/* Activations are fp32 here: the working copy of weights is a copy. */
static void narrow(struct exec_device *d, void *dst, const float *src, long n)
{
	cpu_copy(d, dst, src, (size_t)n * sizeof(float));
}

/* ---- embedding and loss ---------------------------------------------- */

static void embedding_forward(struct exec_device *d, void *out_, const int *tok,
			      const void *wte_, int n, int c, int v0, int nv)
{
	float *out = out_;
	const float *wte = wte_;
	(void)d;
	for (int i = 0; i < n; i++) {
		float *y = out + (size_t)i * c;
		int r = tok[i] - v0;

		if (r >= 0 && r < nv)
			memcpy(y, wte + (size_t)r * c, c * sizeof(float));
		else
			memset(y, 0, c * sizeof(float));
	}
}

static void embedding_backward(struct exec_device *d, float *dwte, const void *dout_,
			       const int *tok, int n, int c, int v0, int nv)
{
	const float *dout = dout_;
	(void)d;
	for (int i = 0; i < n; i++) {
		int r = tok[i] - v0;

		if (r >= 0 && r < nv)
			axpy(dwte + (size_t)r * c, dout + (size_t)i * c, 1.0f, c);
	}
}

static void ce_row_max(struct exec_device *d, float *rmax, const void *logits_,
		       int n, int nv)
{
	const float *logits = logits_;
	(void)d;
	for (int i = 0; i < n; i++) {
		const float *l = logits + (size_t)i * nv;
		float m = -INFINITY;

		for (int j = 0; j < nv; j++)
			if (l[j] > m)
				m = l[j];
		rmax[i] = m;
	}
}

static void ce_row_stats(struct exec_device *d, float *stats, const void *logits_,
			 const float *rmax, const int *target, int n, int nv, int v0)
{
	const float *logits = logits_;
	(void)d;
	for (int i = 0; i < n; i++) {
		const float *l = logits + (size_t)i * nv;
		int r = target[i] - v0;
		double s = 0;

		for (int j = 0; j < nv; j++)
			s += expf(l[j] - rmax[i]);
		stats[i] = (float)s;
		stats[n + i] = r >= 0 && r < nv ? l[r] : 0.0f;
	}
}

/* -log softmax(l)_y = log sum_j exp(l_j - max) + max - l_y */
static double ce_loss_sum(struct exec_device *d, const float *rmax,
			  const float *stats, int n)
{
	double s = 0;

	(void)d;
	for (int i = 0; i < n; i++)
		s += log((double)stats[i]) + rmax[i] - stats[n + i];
	return s;
}

static void ce_backward(struct exec_device *d, void *logits_, const float *rmax,
			const float *stats, const int *target, int n, int nv,
			int v0, float scale)
{
	float *logits = logits_;
	(void)d;
	for (int i = 0; i < n; i++) {
		float *l = logits + (size_t)i * nv;
		int r = target[i] - v0;
		float inv = 1.0f / stats[i];

		for (int j = 0; j < nv; j++)
			l[j] = (expf(l[j] - rmax[i]) * inv - (j == r ? 1.0f : 0.0f)) * scale;
	}
}

/* ---- optimizer ------------------------------------------------------- */

static void sumsq(struct exec_device *d, double *acc, const float *x, long n)
{
	double s = 0;

	(void)d;
	for (long i = 0; i < n; i++)
		s += (double)x[i] * x[i];
	*acc += s;
}

/* AdamW (Loshchilov and Hutter, ICLR 2019, algorithm 2): Adam's moments
 * with bias correction, weight decay applied to the weight directly. */
static void adamw(struct exec_device *d, float *p, const float *g, float *m,
		  float *v, long n, float lr, float beta1, float beta2, float eps,
		  float wd, int t, float gscale)
{
	float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);

	(void)d;
	for (long i = 0; i < n; i++) {
		float gi = g[i] * gscale;

		m[i] = beta1 * m[i] + (1.0f - beta1) * gi;
		v[i] = beta2 * v[i] + (1.0f - beta2) * gi * gi;
		p[i] -= lr * ((m[i] / c1) / (sqrtf(v[i] / c2) + eps) + wd * p[i]);
	}
}

static enum rc cpu_open(struct exec_device *d)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);

	gp_strlcpy(d->name, "cpu", sizeof(d->name));
	d->memory_bytes = pages > 0 && size > 0 ? (double)pages * (double)size : 0;
	return RC_OK;
}

static enum rc cpu_mem_info(struct exec_device *d, double *free_bytes, double *total_bytes)
{
	long avail = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);

	*total_bytes = d->memory_bytes;
	*free_bytes = avail > 0 && size > 0 ? (double)avail * (double)size : 0;
	return RC_OK;
}

static void cpu_release(struct exec_device *d)
{
	struct cpu_priv *p = d->priv;

	if (p)
		free(p->wt);
	free(p);
	d->priv = NULL;
}

const struct exec_backend exec_cpu_backend = {
	.name = "cpu",
	.open = cpu_open,
	.mem_info = cpu_mem_info,
	.release = cpu_release,
	.alloc = cpu_alloc,
	.free = cpu_free,
	.zero = cpu_zero,
	.copy = cpu_copy,
	.to_host = cpu_copy,
	.from_host = cpu_copy,
	.matmul_forward = matmul_forward,
	.matmul_backward = matmul_backward,
	.add_bias = add_bias,
	.layernorm_forward = layernorm_forward,
	.layernorm_backward = layernorm_backward,
	.rmsnorm_forward = rmsnorm_forward,
	.rmsnorm_backward = rmsnorm_backward,
	.attention_forward = attention_forward,
	.attention_backward = attention_backward,
	.gelu_forward = gelu_forward,
	.gelu_backward = gelu_backward,
	.swiglu_forward = swiglu_forward,
	.swiglu_backward = swiglu_backward,
	.residual_forward = residual_forward,
	.accumulate = accumulate,
	.narrow = narrow,
	.embedding_forward = embedding_forward,
	.embedding_backward = embedding_backward,
	.ce_row_max = ce_row_max,
	.ce_row_stats = ce_row_stats,
	.ce_loss_sum = ce_loss_sum,
	.ce_backward = ce_backward,
	.sumsq = sumsq,
	.adamw = adamw,
};
