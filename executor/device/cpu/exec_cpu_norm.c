/*
 * exec_cpu_norm.c - LayerNorm (Ba et al. 2016) and RMSNorm (Zhang and
 * Sennrich 2019) on the CPU, forward and backward, each row's statistics
 * summed in double in a fixed order.
 */
#include <math.h>

#include "device/cpu/exec_cpu_internal.h"

#define NORM_EPS 1e-5

void cpu_layernorm_forward(struct exec_device *d, void *out_, float *mean,
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
void cpu_layernorm_backward(struct exec_device *d, void *dinp_, float *dw,
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
			if (dw)
				dw[j] += nrm * dy[j];
			dx[j] += (dn - (float)dmean - nrm * (float)dnmean) * s;
		}
	}
}

void cpu_rmsnorm_forward(struct exec_device *d, void *out_, float *rstd,
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
void cpu_rmsnorm_backward(struct exec_device *d, void *dinp_, float *dw,
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

			if (dw)
				dw[j] += nrm * dy[j];
			dx[j] += (dy[j] * w[j] - nrm * (float)dnmean) * s;
		}
	}
}
