/*
 * exec_calibrate_fit.c - how `gpuplan calibrate`'s measurements become the
 * figures the simulator reads (exec_calibration_fit), and how a
 * calibration replaces a device's figures (exec_calibration_apply).
 *
 * The fit keeps the simulator's own model and finds its inputs
 * (simulator/sim_const.h); exec_calibrate.c says what each one is fitted
 * to.  It does not measure, read or write files.
 */
#include <math.h>
#include <string.h>

#include "run/exec_run.h"
#include "sim_internal.h"

/* The simulator's time for c's GEMM i at knee, peak and hbm, its
 * operands of the backend's activation type (as exec_predict prices a
 * run): a backward pass is two GEMMs of the forward's shape (sim.c's
 * layer_time).  The CPU backend's GEMMs compute from cache
 * (price_gpu.gemm_cached, set by exec_cpu_gpu): no memory term, as the
 * prediction prices them (sim_gemm_hbm). */
static double sim_gemm_s(const struct exec_calibration *c, int i, double knee, double peak,
			 double hbm)
{
	const struct exec_calib_gemm *g = &c->gemm[i];

	if (strcmp(c->backend, "cpu") == 0)
		hbm = HUGE_VAL;
	return (g->backward ? 2.0 : 1.0)
	       * sim_gemm_time_s(1, g->m, g->n, g->k, exec_act_bytes(c->backend, c->precision),
				 knee, peak, hbm);
}

/* Sum of the simulator's times for c's GEMMs at knee, peak and hbm. */
static double sim_gemms_s(const struct exec_calibration *c, double knee, double peak,
			  double hbm)
{
	double s = 0;

	for (int i = 0; i < c->n_gemm; i++)
		s += sim_gemm_s(c, i, knee, peak, hbm);
	return s;
}

/* The peak at which c's largest GEMM (the most FLOPs), at knee, spends
 * its whole measured time computing: the simulator's flops / (peak x
 * efficiency) term alone, its measured rate over its efficiency. */
static double largest_gemm_peak(const struct exec_calibration *c, double knee)
{
	const struct exec_calib_gemm *g = NULL;
	double dmin, eff;

	for (int i = 0; i < c->n_gemm; i++)
		if (!g || c->gemm[i].flops_per_s * c->gemm[i].time_s > g->flops_per_s * g->time_s)
			g = &c->gemm[i];
	dmin = fmin(g->m, fmin(g->n, g->k));
	eff = SIM_GEMM_EFF_MAX * dmin / (dmin + sim_gemm_dim_half(knee));
	return (g->backward ? 4.0 : 2.0) * g->m * g->n * g->k / (eff * g->time_s);
}

/* The peak with which the simulator's times for c's GEMMs at knee add up
 * to the measured ones (geometric bisection: the peak spans twelve
 * decades); on the CPU backend, and wherever no peak adds up, the one at
 * which the largest GEMM's compute alone takes its measured time
 * (largest_gemm_peak).  OpenBLAS packs its operands into cache as it
 * computes, so a CPU GEMM's time is its compute: the simulator's memory
 * term, a GPU's HBM traffic, fitted on the calibration's small shapes
 * would price the memory twice and leave a peak that a large GEMM does
 * not reach (172 GFLOP/s fitted on one Sapphire Rapids core whose
 * sgemm ran GPT-2's 1024-token GEMMs at 127 to 140).  Small GEMMs can
 * also take less than the simulator's floor (their bytes at the measured
 * copy rate plus a launch each, as under ASan, whose checked memmove
 * slows the copy); then the bisection would stop at its range's top, a
 * peak no machine has. */
static double fit_peak(const struct exec_calibration *c, double knee, double measured)
{
	double lo = 1e6, hi = 1e18;

	if (strcmp(c->backend, "cpu") == 0 || sim_gemms_s(c, knee, hi, c->hbm_bytes_per_s) > measured)
		return largest_gemm_peak(c, knee);
	for (int it = 0; it < 200 && hi / lo > 1 + 1e-9; it++) {
		double mid = sqrt(lo * hi);

		if (sim_gemms_s(c, knee, mid, c->hbm_bytes_per_s) > measured)
			lo = mid;
		else
			hi = mid;
	}
	return sqrt(lo * hi);
}

/* Sum of squared log ratios of the simulator's GEMM times at knee (and
 * the peak fitted for it) to the measured ones. */
static double knee_error(const struct exec_calibration *c, double knee, double measured)
{
	double peak = fit_peak(c, knee, measured), e = 0;

	for (int i = 0; i < c->n_gemm; i++) {
		double r = log(sim_gemm_s(c, i, knee, peak, c->hbm_bytes_per_s)
			       / c->gemm[i].time_s);

		e += r * r;
	}
	return e;
}

/* The knee between EXEC_CALIB_KNEE_MIN and _MAX that best fits c's GEMMs,
 * or 0 (the simulator's default) when their smallest dimensions are all
 * the same, which says nothing about it: a scan over powers of two, then
 * a golden-section search around the best. */
#define EXEC_CALIB_KNEE_MIN 1.0
#define EXEC_CALIB_KNEE_MAX 4096.0
static double fit_knee(const struct exec_calibration *c, double measured)
{
	double best = 0, best_e = INFINITY, lo, hi, a, b;
	int shapes = 0;

	for (int i = 0; i < c->n_gemm && !shapes; i++)
		for (int j = 0; j < i; j++) {
			const struct exec_calib_gemm *x = &c->gemm[i], *y = &c->gemm[j];
			double dx = fmin(x->m, fmin(x->n, x->k)), dy = fmin(y->m, fmin(y->n, y->k));

			if (dx != dy) {
				shapes = 1;
				break;
			}
		}
	if (!shapes)
		return 0;
	for (double k = EXEC_CALIB_KNEE_MIN; k <= EXEC_CALIB_KNEE_MAX; k *= 2) {
		double e = knee_error(c, k, measured);

		if (e < best_e) {
			best_e = e;
			best = k;
		}
	}
	/* golden section on log(knee) over the neighbouring powers of two */
	lo = log(fmax(best / 2, EXEC_CALIB_KNEE_MIN));
	hi = log(fmin(best * 2, EXEC_CALIB_KNEE_MAX));
	a = hi - 0.618034 * (hi - lo);
	b = lo + 0.618034 * (hi - lo);
	for (int it = 0; it < 40; it++) {
		if (knee_error(c, exp(a), measured) < knee_error(c, exp(b), measured)) {
			hi = b;
			b = a;
			a = hi - 0.618034 * (hi - lo);
		} else {
			lo = a;
			a = b;
			b = lo + 0.618034 * (hi - lo);
		}
	}
	return exp(0.5 * (lo + hi));
}

void exec_calibration_fit(struct exec_calibration *c)
{
	double measured = 0;

	if (c->n_copy > 0)
		c->hbm_bytes_per_s = c->copy[c->n_copy - 1].bytes_per_s / SIM_HBM_EFF;
	for (int i = 0; i < c->n_gemm; i++)
		measured += c->gemm[i].time_s;
	if (c->n_gemm > 0 && c->hbm_bytes_per_s > 0) {
		c->gemm_dim_half = fit_knee(c, measured);
		c->bf16_flops_per_s = fit_peak(c, c->gemm_dim_half, measured);
		for (int i = 0; i < c->n_gemm; i++)
			c->gemm[i].predicted_s = sim_gemm_s(c, i, c->gemm_dim_half,
							    c->bf16_flops_per_s,
							    c->hbm_bytes_per_s);
	}
	/* sim: bytes / (rate x SIM_HBM_EFF) + kernels x SIM_KERNEL_S; with the
	 * activation timed apart, the norms and adds with the rest of the
	 * kernels at one rate and the activation's one kernel at another, or,
	 * where either part is shorter than its kernels' fixed cost (a quick
	 * calibration's tiny layer), the layer at one rate */
	for (int i = 0; i < c->n_elt; i++) {
		const struct exec_calib_elt *e = &c->elt[i];
		int swiglu = strcmp(e->mlp, "swiglu") == 0;
		double k = (1.0 + SIM_ELT_BWD) * SIM_KERNEL_S;
		double rest = e->time_s - e->act_time_s - (SIM_ELT_KERNELS - 1) * k;
		double act = e->act_time_s - k;

		c->elt_bytes_per_s[swiglu] = c->act_bytes_per_s[swiglu] = 0;
		if (e->act_bytes > 0 && e->act_bytes < e->bytes && rest > 0 && act > 0) {
			c->elt_bytes_per_s[swiglu] = (e->bytes - e->act_bytes) / rest / SIM_HBM_EFF;
			c->act_bytes_per_s[swiglu] = e->act_bytes / act / SIM_HBM_EFF;
		} else if (e->time_s - SIM_ELT_KERNELS * k > 0) {
			c->elt_bytes_per_s[swiglu] =
				e->bytes / (e->time_s - SIM_ELT_KERNELS * k) / SIM_HBM_EFF;
		}
	}
	if (c->attn.batch > 0 && c->attn.time_s > 0)
		c->attn_flops_per_s = c->attn.flops / c->attn.time_s;
	if (c->opt.params > 0) {
		double rest = c->opt.time_s - SIM_OPT_KERNELS * SIM_KERNEL_S;

		if (rest > 0)
			c->opt_bytes_per_s = c->opt.bytes / rest / SIM_HBM_EFF;
	}
	{
		const struct exec_calib_coll *small = NULL, *best = NULL;

		/* the link is the best bus bandwidth any size reached (nccl-tests'
		 * curves rise to a plateau; a shared machine's dip below it) */
		for (int i = 0; i < c->n_coll; i++)
			if (strcmp(c->coll[i].op, "all_reduce") == 0) {
				if (!small || c->coll[i].bytes < small->bytes)
					small = &c->coll[i];
				if (!best || c->coll[i].busbw_bytes_per_s > best->busbw_bytes_per_s)
					best = &c->coll[i];
			}
		if (best && best->ranks > 1) {
			int n = best->ranks;
			double link = best->busbw_bytes_per_s, rest;

			c->intra_bytes_per_s = link / SIM_LINK_EFF;
			/* sim_allreduce_s: 2(n-1)/n B / link + 2(n-1) latency */
			rest = small->time_s - 2.0 * (n - 1) / n * small->bytes / link;
			c->latency_s = rest > 0 ? rest / (2.0 * (n - 1)) : 0;
		}
	}
}

double exec_calibration_catalog_attn(const struct exec_calibration *c,
				     const struct price_gpu *g)
{
	const struct exec_calib_attn *a = &c->attn;
	double hbm = g->hbm_bytes_per_s > 0 ? g->hbm_bytes_per_s
					    : g->bf16_flops_per_s / SIM_DEFAULT_FLOPS_PER_BYTE;

	if (a->batch <= 0 || g->bf16_flops_per_s <= 0 || hbm <= 0)
		return 0;
	/* bf16 elements, as the catalog's figures are */
	return sim_attn_flops((double)a->batch * a->heads, a->seq, a->seq, a->head_dim) /
	       sim_flash_attn_s(a->batch, a->heads, a->kv_heads, a->seq, a->seq, a->head_dim, 2,
				g->gemm_dim_half, g->bf16_flops_per_s, hbm);
}

void exec_calibration_apply_gpu(const struct exec_calibration *c, struct price_gpu *g)
{
	if (c->bf16_flops_per_s > 0) {
		double f = g->bf16_flops_per_s > 0 ? c->bf16_flops_per_s / g->bf16_flops_per_s : 0;

		/* other precisions keep their ratio to bf16 (the catalog's) */
		g->fp8_flops_per_s *= f;
		g->tf32_flops_per_s *= f;
		g->fp32_flops_per_s *= f;
		/* MFU stays counted against the datasheet's peak */
		if (!(g->mfu_flops_per_s > 0))
			g->mfu_flops_per_s = g->bf16_flops_per_s;
		g->bf16_flops_per_s = c->bf16_flops_per_s;
	}
	if (c->hbm_bytes_per_s > 0)
		g->hbm_bytes_per_s = c->hbm_bytes_per_s;
	/* a layer's rate alone (an older file) prices its activation with it */
	for (int i = 0; i < 2; i++)
		if (c->elt_bytes_per_s[i] > 0) {
			g->elt_bytes_per_s[i] = c->elt_bytes_per_s[i];
			g->act_bytes_per_s[i] = c->act_bytes_per_s[i];
		}
	if (c->attn_flops_per_s > 0)
		g->attn_flops_per_s = c->attn_flops_per_s;
	if (c->opt_bytes_per_s > 0)
		g->opt_bytes_per_s = c->opt_bytes_per_s;
	if (c->intra_bytes_per_s > 0)
		g->intra_bytes_per_s = c->intra_bytes_per_s;
	if (c->gemm_dim_half > 0)
		g->gemm_dim_half = c->gemm_dim_half;
}

void exec_calibration_apply(const struct exec_calibration *c, struct sim_cluster *cl)
{
	exec_calibration_apply_gpu(c, &cl->gpu);
	if (c->intra_bytes_per_s > 0)
		cl->intra_bytes_per_s = c->intra_bytes_per_s;
	if (c->latency_s > 0)
		cl->latency_s = c->latency_s;
}
