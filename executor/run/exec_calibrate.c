/*
 * exec_calibrate.c - what `gpuplan calibrate` measures, and what of the
 * simulator's figures each measurement sets (exec_calibrate_fit.c fits
 * them).
 *
 * Measured through the same backend and communicator tables the trainer
 * uses, so the figures are the executor's own:
 * - GEMMs of a transformer layer's shapes (QKV, output projection, MLP up
 *   and down: (tokens, 3h, h), (tokens, h, h), (tokens, 4h, h),
 *   (tokens, h, 4h)) at several hidden sizes, forward and backward (the
 *   input and weight gradients, which the simulator prices at twice the
 *   forward) with their biases, on world rank 0's device;
 * - device-to-device copies (HBM on a GPU, DRAM on the CPU);
 * - one layer's element-wise kernels forward and backward, as the trainer
 *   runs them (norms, residual adds, the MLP activation, the zeroing of
 *   the gradients the backward accumulates into), for a GELU and a SwiGLU
 *   layer at the largest hidden size, the activation timed apart;
 * - on the CPU, whose caches hold these shapes, each GEMM and element-wise
 *   call on operands of its own from 64 MiB of them (calib_sets), as a
 *   run reads its weights and saved activations from memory;
 * - one layer's attention core forward and backward (scores, causal
 *   softmax, values; the probabilities recomputed in backward), at a
 *   sequence and head size typical of the device's models;
 * - with more than one rank, nccl-tests' sweep (src/common.cu): all-reduce,
 *   all-gather and reduce-scatter over the world at growing sizes, with
 *   algorithm and bus bandwidth as doc/PERFORMANCE.md defines them.
 *
 * On the CPU backend with one BLAS thread a rank's kernels are timed by
 * its thread's CPU time, so a machine busy with other work does not make
 * them look slower (on a shared 2-core machine the wall clock read 3 to 5
 * times the CPU time); a GPU's, and the collectives, whose time is also
 * the wait for the other ranks, by the wall clock.
 *
 * The fit keeps the simulator's own model and finds its inputs
 * (simulator/sim_const.h): the knee of sim_gemm_time_s's efficiency
 * curve (the smallest dimension at which a GEMM reaches half the peak)
 * that best follows how the measured GEMM rates change with their
 * smallest dimension, and the bf16 peak with which that curve adds up to
 * the measured GEMM times (bisection; the curve is monotone in the peak),
 * the HBM bandwidth whose SIM_HBM_EFF
 * share is the measured copy rate, the element-wise bandwidths with which
 * the simulator's element-wise time (sim_layer_elt_bytes, SIM_ELT_BWD,
 * SIM_ELT_KERNELS) is the measured one, the norms' and adds' and the
 * activation's (sim_layer_act_bytes) each (a GPU's bandwidth-bound kernels
 * come near the copy rate; a CPU's transcendental functions do not, and
 * tensor parallelism splits the activation and not the norms), the
 * attention rate at which the simulator's FLOP count of it (sim_attn_flops,
 * SIM_ATTN_BWD) takes the measured time (the executor's attention keeps
 * each block's scores in memory, which flash attention does not), the
 * optimizer's bandwidth with which the simulator's time for its bytes
 * (sim_optimizer_bytes, SIM_OPT_KERNELS) is the measured one (a CPU's
 * AdamW, with its square root and division, is not bound by memory), the
 * intra-node bandwidth whose
 * SIM_LINK_EFF share is the best all-reduce bus bandwidth, and the
 * per-step latency that the smallest all-reduce leaves once its bytes are
 * paid for (the alpha-beta model of sim_allreduce_s).
 *
 * It does not name the catalog GPU (the caller matches the device), write
 * files or print.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run/exec_run.h"
#include "sim_internal.h"

#define CAL_PATTERN 65536    /* distinct random floats tiled over inputs */
/* operands a CPU's measurement cycles through (calib_sets): the copy's
 * largest size, past the caches */
#define EXEC_CALIB_SETS_BYTES (64.0 * (1 << 20))
#define EXEC_CALIB_MAX_SETS 64

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void exec_calibrate_opts_init(struct exec_calibrate_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = "cpu";
	o->precision = EXEC_PRECISION_BF16;
}

/* What to measure on one backend. */
struct plan {
	const int *hidden;
	int n_hidden;
	int tokens;
	struct exec_calib_attn attn;            /* the attention core's shape */
	double opt_params;                      /* the optimizer step's parameters */
	const double *copy_bytes;
	int n_copy;
	double coll_min, coll_max, coll_step;  /* bytes */
	double target_s;                       /* time one measurement runs */
	/* the operands a GEMM or element-wise measurement cycles through, in
	 * all (calib_sets); 0: one set */
	double sets_bytes;
	/* progress on world rank 0 (exec_calibrate_opts.on_phase) */
	const struct exec_calibrate_opts *o;
	int report, total;
};

/* Tells the caller that the measurement after c's so far begins. */
static void phase(const struct plan *p, const char *what, const struct exec_calibration *c)
{
	if (p->report && p->o->on_phase)
		p->o->on_phase(p->o->on_phase_ctx, what,
			       c->n_copy + c->n_gemm + c->n_elt + (c->attn.batch > 0) +
			       (c->opt.params > 0) + c->n_coll,
			       p->total);
}

/* The collectives measure_collectives() times: three operations at each
 * size, at most EXEC_CALIB_MAX_POINTS in all. */
static int coll_points(const struct plan *p)
{
	int n = 0;

	for (double b = p->coll_min; b <= p->coll_max; b *= p->coll_step)
		n++;
	return 3 * n < EXEC_CALIB_MAX_POINTS ? 3 * n : EXEC_CALIB_MAX_POINTS;
}

static const int gpu_hidden[] = { 1024, 2048, 4096, 8192 };
static const int gpu_hidden_quick[] = { 1024 };
static const int cpu_hidden[] = { 64, 128, 256, 512 };
static const int cpu_hidden_quick[] = { 32, 64 };
static const double gpu_copy[] = { 64.0 * (1 << 20), 1024.0 * (1 << 20) };
static const double cpu_copy[] = { 4.0 * (1 << 20), 64.0 * (1 << 20) };
static const double quick_copy[] = { 1.0 * (1 << 20), 8.0 * (1 << 20) };

static void plan_for(const struct exec_calibrate_opts *o, int gpu, struct plan *p)
{
	memset(p, 0, sizeof(*p));
	if (o->quick) {
		p->hidden = gpu ? gpu_hidden_quick : cpu_hidden_quick;
		p->n_hidden = gpu ? (int)GP_ARRAY_LEN(gpu_hidden_quick) : (int)GP_ARRAY_LEN(cpu_hidden_quick);
		p->tokens = gpu ? 2048 : 64;
		p->attn = gpu ? (struct exec_calib_attn){ 1, 512, 8, 4, 128, 0, 0, 0 }
			      : (struct exec_calib_attn){ 1, 64, 4, 2, 16, 0, 0, 0 };
		p->opt_params = gpu ? 1 << 20 : 1 << 16;
		p->copy_bytes = quick_copy;
		p->n_copy = (int)GP_ARRAY_LEN(quick_copy);
		p->coll_min = 4096;
		p->coll_max = 1 << 20;
		p->coll_step = 16;
		p->target_s = 0.01;
		p->sets_bytes = gpu ? 0 : EXEC_CALIB_SETS_BYTES;
		return;
	}
	p->hidden = gpu ? gpu_hidden : cpu_hidden;
	p->n_hidden = gpu ? (int)GP_ARRAY_LEN(gpu_hidden) : (int)GP_ARRAY_LEN(cpu_hidden);
	p->tokens = gpu ? 8192 : 256;
	/* a GPU's: 4 sequences of 2048, heads of 128 (GPT-3 2.7B's to Llama
	 * 3's); the CPU's: what its small models use */
	p->attn = gpu ? (struct exec_calib_attn){ 4, 2048, 16, 8, 128, 0, 0, 0 }
		      : (struct exec_calib_attn){ 1, 256, 8, 4, 32, 0, 0, 0 };
	/* a GPU's: 64 Mi parameters, 3 GB of state, far beyond its caches;
	 * the CPU's: 16 Mi, 256 MiB of weights, gradients and moments, beyond
	 * a CPU's last-level cache too (at 1 Mi AdamW ran 4.1 ns a parameter
	 * from cache, at GPT-2 124M's parameters 5.8) */
	p->opt_params = gpu ? 1 << 26 : 1 << 24;
	p->copy_bytes = gpu ? gpu_copy : cpu_copy;
	p->n_copy = 2;
	p->coll_min = 4096;
	p->coll_max = gpu ? 256.0 * (1 << 20) : 16.0 * (1 << 20);
	p->coll_step = 4;
	p->target_s = gpu ? 0.1 : 0.2;
	p->sets_bytes = gpu ? 0 : EXEC_CALIB_SETS_BYTES;
}

/* n floats of device memory holding a fixed random pattern: zeros would
 * flatter a GPU, whose clocks rise when its multipliers see zeros. */
static float *random_buffer(struct exec_device *d, size_t n)
{
	float *p = exec_dalloc(d, n * sizeof(float)), *h = xmalloc(CAL_PATTERN * sizeof(float));

	exec_rand_normal_fill(h, CAL_PATTERN, 99, 1, 0, 1.0);
	for (size_t off = 0; off < n; off += CAL_PATTERN) {
		size_t len = n - off < CAL_PATTERN ? n - off : CAL_PATTERN;

		d->be->from_host(d, p + off, h, len * sizeof(float));
	}
	free(h);
	return p;
}

/* Runs `run` reps times in a row per batch, three batches after a warm-up,
 * and returns the median batch's time per run by clock_s (the device
 * synchronised around each batch, not between runs). */
struct timed {
	struct exec_device *d;
	void (*run)(void *ctx);
	void *ctx;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The clock a measurement on d reads: where the calling thread runs
 * every kernel itself (exec_device.cpu_timed: the CPU backend, one BLAS
 * thread) its CPU time, which counts the time the kernels ran and not the
 * time the thread waited for a core that other processes held; on a GPU,
 * or with more BLAS threads, the wall clock. */
static double clock_s(const struct exec_device *d)
{
	return d->cpu_timed ? exec_thread_cpu_s() : now_s();
}

static enum rc time_runs(const struct timed *t, double target_s, double *out)
{
	double one, b[3], t0;
	int reps;

	t->run(t->ctx);
	if (exec_device_sync(t->d) != RC_OK)
		return RC_DEVICE;
	t0 = clock_s(t->d);
	t->run(t->ctx);
	if (exec_device_sync(t->d) != RC_OK)
		return RC_DEVICE;
	one = clock_s(t->d) - t0;
	reps = one > 0 ? (int)ceil(target_s / 3 / one) : 100;
	if (reps < 1)
		reps = 1;
	if (reps > 100)
		reps = 100;
	for (int i = 0; i < 3; i++) {
		t0 = clock_s(t->d);
		for (int r = 0; r < reps; r++)
			t->run(t->ctx);
		if (exec_device_sync(t->d) != RC_OK)
			return RC_DEVICE;
		b[i] = (clock_s(t->d) - t0) / reps;
	}
	qsort(b, 3, sizeof(double), cmp_double);
	*out = b[1];
	return RC_OK;
}

/* n elements of the device's activation type holding random_buffer's
 * pattern (the GEMMs of a run read and write activations). */
static void *random_act_buffer(struct exec_device *d, size_t n)
{
	float *f = random_buffer(d, n);
	void *p;

	if (d->act == EXEC_F32)
		return f;
	p = exec_dalloc(d, n * exec_dtype_size(d->act));
	d->be->narrow(d, p, f, (long)n);
	exec_dfree(d, f, n * sizeof(float));
	return p;
}

/* Points each of bufs[0..count) at n activations of random_act_buffer's
 * pattern; free_act_buffers() gives them back. */
static void act_buffers(struct exec_device *d, void **const *bufs, size_t count, size_t n)
{
	for (size_t i = 0; i < count; i++)
		*bufs[i] = random_act_buffer(d, n);
}

static void free_act_buffers(struct exec_device *d, void **const *bufs, size_t count, size_t n)
{
	for (size_t i = 0; i < count; i++)
		exec_dfree(d, *bufs[i], n * exec_dtype_size(d->act));
}

struct gemm_ctx {
	struct exec_device *d;
	void *out, *a, *w;
	void *da;               /* backward: a's gradient; NULL forward */
	float *dw;              /* backward: w's gradient */
	void *bias;             /* forward: w's bias */
	float *dbias;           /* backward: its gradient */
	int m, n, k;
};

/* Forward out = a w^T + bias; backward a's, w's and the bias's gradients
 * from out's (held in out) into da, dw and dbias, as the trainer's
 * matmul_forward and matmul_backward do (every linear layer of its
 * models has a bias). */
static void run_gemm(void *ctx)
{
	struct gemm_ctx *g = ctx;

	if (g->dw)
		g->d->be->matmul_backward(g->d, g->da, g->dw, g->dbias, g->out, g->a, g->w, g->m,
					  g->k, g->n);
	else
		g->d->be->matmul_forward(g->d, g->out, g->a, g->w, g->bias, g->m, g->k, g->n);
}

struct copy_ctx {
	struct exec_device *d;
	float *dst, *src;
	size_t bytes;
};

static void run_copy(void *ctx)
{
	struct copy_ctx *c = ctx;

	c->d->be->copy(c->d, c->dst, c->src, c->bytes);
}

/* How many copies of one measurement's operands, one_bytes each, make p's
 * sets_bytes: a GEMM or element-wise measurement cycles through them,
 * since a run's GEMMs read the weights, and its backward the activations
 * that its forward saved a pass before, from memory, not from a cache
 * that one measurement's operands fit.  On a CPU, whose caches hold the
 * calibration's shapes, OpenBLAS's GEMMs at hidden 256 ran 10 to 13%
 * slower in a run than on operands in cache and its smallest shapes (a
 * side of 64) 30% slower. */
static int calib_sets(const struct plan *p, double one_bytes)
{
	int n = (int)ceil(p->sets_bytes / one_bytes);

	return n < 1 ? 1 : n > EXEC_CALIB_MAX_SETS ? EXEC_CALIB_MAX_SETS : n;
}

struct gemm_sets {
	struct gemm_ctx *set;
	int n, next;
};

static void run_gemm_sets(void *ctx)
{
	struct gemm_sets *s = ctx;

	run_gemm(&s->set[s->next]);
	s->next = (s->next + 1) % s->n;
}

static enum rc measure_gemms(struct exec_device *d, const struct plan *p,
			     struct exec_calibration *c)
{
	for (int i = 0; i < p->n_hidden; i++) {
		int h = p->hidden[i];
		const int shapes[4][2] = { { 3 * h, h }, { h, h }, { 4 * h, h }, { h, 4 * h } };

		for (int s = 0; s < 8 && c->n_gemm < EXEC_CALIB_MAX_POINTS; s++) {
			struct gemm_ctx g = { d, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
					      p->tokens, shapes[s / 2][0], shapes[s / 2][1] };
			struct gemm_sets sets = { NULL, 0, 0 };
			struct timed t = { d, run_gemm_sets, &sets };
			struct exec_calib_gemm *r = &c->gemm[c->n_gemm];
			size_t na = (size_t)g.m * g.k, nw = (size_t)g.n * g.k, no = (size_t)g.m * g.n;
			size_t eb = exec_dtype_size(d->act);
			enum rc rc;

			phase(p, "GEMMs", c);
			sets.n = calib_sets(p, (double)eb * (na + nw + no) +
					    (s % 2 ? eb * na + sizeof(float) * nw : 0.0));
			sets.set = xcalloc((size_t)sets.n, sizeof(*sets.set));
			for (int j = 0; j < sets.n; j++) {
				struct gemm_ctx *e = &sets.set[j];

				*e = g;
				e->a = random_act_buffer(d, na);
				e->w = random_act_buffer(d, nw);
				e->out = random_act_buffer(d, no);
				if (s % 2) {
					e->da = random_act_buffer(d, na);
					e->dw = random_buffer(d, nw);
					e->dbias = random_buffer(d, (size_t)g.n);
				} else {
					e->bias = random_act_buffer(d, (size_t)g.n);
				}
			}
			rc = time_runs(&t, p->target_s, &r->time_s);
			for (int j = 0; j < sets.n; j++) {
				struct gemm_ctx *e = &sets.set[j];

				if (e->dw) {
					exec_dfree(d, e->dbias, (size_t)g.n * sizeof(float));
					exec_dfree(d, e->dw, nw * sizeof(float));
					exec_dfree(d, e->da, na * eb);
				} else {
					exec_dfree(d, e->bias, (size_t)g.n * eb);
				}
				exec_dfree(d, e->out, no * eb);
				exec_dfree(d, e->w, nw * eb);
				exec_dfree(d, e->a, na * eb);
			}
			free(sets.set);
			if (rc != RC_OK)
				return rc;
			r->m = g.m;
			r->n = g.n;
			r->k = g.k;
			r->backward = s % 2;
			r->flops_per_s = (r->backward ? 4.0 : 2.0) * r->m * r->n * r->k / r->time_s;
			c->n_gemm++;
		}
	}
	return RC_OK;
}

/* One layer's element-wise kernels (in the order of exec_train_attention.c
 * and exec_train_mlp.c), in two parts timed apart: the norms and residual
 * adds (forward norm, residual add, norm, residual add; backward the two
 * norms' gradients, each into an input gradient zeroed first, as the
 * trainer zeroes the one its GEMMs then accumulate into), which every TP
 * rank repeats over all its tokens, and the MLP activation (forward; the
 * gradients zeroed, of its output as the trainer zeroes it for W2's input
 * gradient, of its inputs; its backward), which TP splits. */
struct elt_ctx {
	struct exec_device *d;
	int swiglu, n, c;
	long nf;
	void *x, *y, *dx, *dy, *dn, *w, *b, *g, *u, *a, *da, *dg, *du;
	float *mean, *rstd, *dw, *db;
};

static void norm_fwd(struct elt_ctx *e)
{
	const struct exec_backend *be = e->d->be;

	if (e->swiglu)
		be->rmsnorm_forward(e->d, e->y, e->rstd, e->x, e->w, e->n, e->c);
	else
		be->layernorm_forward(e->d, e->y, e->mean, e->rstd, e->x, e->w, e->b, e->n, e->c);
}

static void norm_bwd(struct elt_ctx *e)
{
	const struct exec_backend *be = e->d->be;

	if (e->swiglu)
		be->rmsnorm_backward(e->d, e->dx, e->dw, e->dy, e->x, e->w, e->rstd, e->n, e->c);
	else
		be->layernorm_backward(e->d, e->dx, e->dw, e->db, e->dy, e->x, e->w, e->mean,
				       e->rstd, e->n, e->c);
}

static void run_elt_stream(struct elt_ctx *e)
{
	const struct exec_backend *be = e->d->be;
	long nc = (long)e->n * e->c;

	for (int i = 0; i < 2; i++) {
		norm_fwd(e);
		be->residual_forward(e->d, e->dx, e->x, e->y, nc);
	}
	for (int i = 0; i < 2; i++) {
		be->zero(e->d, e->dn, (size_t)nc * exec_dtype_size(e->d->act));
		norm_bwd(e);
	}
}

static void run_elt_act(struct elt_ctx *e)
{
	const struct exec_backend *be = e->d->be;
	size_t fb = exec_dtype_size(e->d->act) * (size_t)e->nf;

	if (e->swiglu)
		be->swiglu_forward(e->d, e->a, e->g, e->u, e->nf);
	else
		be->gelu_forward(e->d, e->a, e->g, e->nf);
	be->zero(e->d, e->da, fb);
	be->zero(e->d, e->dg, fb);
	if (e->swiglu) {
		be->zero(e->d, e->du, fb);
		be->swiglu_backward(e->d, e->dg, e->du, e->g, e->u, e->a, e->nf);
	} else {
		be->gelu_backward(e->d, e->dg, e->g, e->a, e->nf);
	}
}

/* Layers whose element-wise buffers measure_elementwise() cycles through
 * (calib_sets): a run's backward reads activations its forward wrote a
 * whole pass before, from memory, not from a cache that one layer's
 * buffers fit. */
struct elt_sets {
	struct elt_ctx *set;
	int n, next;
	void (*part)(struct elt_ctx *e);
};

static void run_elt_sets(void *ctx)
{
	struct elt_sets *s = ctx;

	s->part(&s->set[s->next]);
	s->next = (s->next + 1) % s->n;
}

static void elt_alloc(struct elt_ctx *e)
{
	struct exec_device *d = e->d;
	size_t nc = (size_t)e->n * e->c, nf = (size_t)e->nf;
	void **stream[] = { &e->x, &e->y, &e->dx, &e->dy, &e->dn };
	void **wide[] = { &e->g, &e->u, &e->a, &e->da, &e->dg, &e->du };

	act_buffers(d, stream, GP_ARRAY_LEN(stream), nc);
	act_buffers(d, wide, GP_ARRAY_LEN(wide), nf);
	e->w = random_act_buffer(d, (size_t)e->c);
	e->b = random_act_buffer(d, (size_t)e->c);
	e->dw = random_buffer(d, (size_t)e->c);
	e->db = random_buffer(d, (size_t)e->c);
	e->mean = random_buffer(d, (size_t)e->n);
	e->rstd = random_buffer(d, (size_t)e->n);
}

static void elt_free(struct elt_ctx *e)
{
	struct exec_device *d = e->d;
	size_t eb = exec_dtype_size(d->act), nc = (size_t)e->n * e->c, nf = (size_t)e->nf;
	void **stream[] = { &e->x, &e->y, &e->dx, &e->dy, &e->dn };
	void **wide[] = { &e->g, &e->u, &e->a, &e->da, &e->dg, &e->du };

	exec_dfree(d, e->rstd, (size_t)e->n * sizeof(float));
	exec_dfree(d, e->mean, (size_t)e->n * sizeof(float));
	exec_dfree(d, e->db, (size_t)e->c * sizeof(float));
	exec_dfree(d, e->dw, (size_t)e->c * sizeof(float));
	exec_dfree(d, e->b, (size_t)e->c * eb);
	exec_dfree(d, e->w, (size_t)e->c * eb);
	free_act_buffers(d, wide, GP_ARRAY_LEN(wide), nf);
	free_act_buffers(d, stream, GP_ARRAY_LEN(stream), nc);
}

static enum rc measure_elementwise(struct exec_device *d, const struct plan *p,
				   struct exec_calibration *c)
{
	int h = p->hidden[p->n_hidden - 1];

	for (int swiglu = 0; swiglu < 2; swiglu++) {
		struct elt_ctx e = { .d = d, .swiglu = swiglu, .n = p->tokens, .c = h,
				     .nf = (long)p->tokens * 4 * h };
		struct elt_sets sets = { NULL, 0, 0, run_elt_stream };
		struct timed t = { d, run_elt_sets, &sets };
		struct exec_calib_elt *r = &c->elt[c->n_elt];
		size_t eb = exec_dtype_size(d->act), nc = (size_t)e.n * h, nf = (size_t)e.nf;
		double ab = (double)eb, one = (double)eb * (5.0 * nc + 6.0 * nf), stream_s = 0;
		enum rc rc;

		phase(p, "element-wise", c);
		sets.n = calib_sets(p, one);
		sets.set = xcalloc((size_t)sets.n, sizeof(*sets.set));
		for (int i = 0; i < sets.n; i++) {
			sets.set[i] = e;
			elt_alloc(&sets.set[i]);
		}
		rc = time_runs(&t, p->target_s, &stream_s);
		sets.part = run_elt_act;
		if (rc == RC_OK)
			rc = time_runs(&t, p->target_s, &r->act_time_s);
		for (int i = 0; i < sets.n; i++)
			elt_free(&sets.set[i]);
		free(sets.set);
		if (rc != RC_OK)
			return rc;
		gp_strlcpy(r->mlp, swiglu ? "swiglu" : "gelu", sizeof(r->mlp));
		r->tokens = e.n;
		r->hidden = h;
		r->ffn = 4.0 * h;
		r->bytes = (1.0 + SIM_ELT_BWD) * sim_layer_elt_bytes(swiglu, (double)nc, (double)nf, ab);
		r->act_bytes = (1.0 + SIM_ELT_BWD) * sim_layer_act_bytes(swiglu, (double)nf, ab);
		r->time_s = stream_s + r->act_time_s;
		r->bytes_per_s = r->bytes / r->time_s;
		c->n_elt++;
	}
	return RC_OK;
}

struct attn_ctx {
	struct exec_device *d;
	const struct exec_calib_attn *s;
	void *q, *k, *v, *out, *dq, *dk, *dv;
	float *lse;
};

static void run_attn(void *ctx)
{
	struct attn_ctx *a = ctx;
	const struct exec_calib_attn *s = a->s;

	a->d->be->attention_forward(a->d, a->out, a->lse, NULL, a->q, a->k, a->v, s->batch,
				    s->seq, s->seq, 0, s->heads, s->kv_heads, s->head_dim);
	/* the output stands in for its gradient: same shape, any values */
	a->d->be->attention_backward(a->d, a->dq, a->dk, a->dv, a->out, a->q, a->k, a->v, a->lse,
				     NULL, s->batch, s->seq, s->seq, 0, s->heads, s->kv_heads,
				     s->head_dim);
}

static enum rc measure_attention(struct exec_device *d, const struct plan *p,
				 struct exec_calibration *c)
{
	const struct exec_calib_attn *s = &p->attn;
	size_t tok = (size_t)s->batch * s->seq, nq = tok * s->heads * s->head_dim;
	size_t nk = tok * s->kv_heads * s->head_dim, nl = tok * s->heads;
	struct attn_ctx a = { .d = d, .s = s };
	void **q_sized[] = { &a.q, &a.out, &a.dq }, **kv_sized[] = { &a.k, &a.v, &a.dk, &a.dv };
	struct timed t = { d, run_attn, &a };
	double time_s;
	enum rc rc;

	phase(p, "attention", c);
	act_buffers(d, q_sized, GP_ARRAY_LEN(q_sized), nq);
	act_buffers(d, kv_sized, GP_ARRAY_LEN(kv_sized), nk);
	a.lse = exec_dalloc(d, nl * sizeof(float));
	rc = time_runs(&t, p->target_s, &time_s);
	exec_dfree(d, a.lse, nl * sizeof(float));
	free_act_buffers(d, kv_sized, GP_ARRAY_LEN(kv_sized), nk);
	free_act_buffers(d, q_sized, GP_ARRAY_LEN(q_sized), nq);
	if (rc != RC_OK)
		return rc;
	c->attn = *s;
	c->attn.time_s = time_s;
	c->attn.flops = (1.0 + SIM_ATTN_BWD) * sim_attn_flops((double)s->batch * s->heads, s->seq,
							      s->seq, s->head_dim);
	c->attn.flops_per_s = c->attn.flops / time_s;
	return RC_OK;
}

struct opt_ctx {
	struct exec_device *d;
	float *p, *g, *m, *v;
	void *work;             /* the working copy; NULL where weights are fp32 */
	double *acc;
	long n;
};

/* One optimizer step as exec_train_optimizer.c's train_optimizer_step
 * and train_zero_grads run it over one tensor of n parameters. */
static void run_opt(void *ctx)
{
	struct opt_ctx *o = ctx;
	const struct exec_backend *be = o->d->be;

	be->sumsq(o->d, o->acc, o->g, o->n);
	be->adamw(o->d, o->p, o->g, o->m, o->v, o->n, 1e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, 1, 1.0f);
	if (o->work)
		be->narrow(o->d, o->work, o->p, o->n);
	be->zero(o->d, o->g, (size_t)o->n * sizeof(float));
}

static enum rc measure_optimizer(struct exec_device *d, const struct plan *p,
				 struct exec_calibration *c)
{
	long n = (long)p->opt_params;
	size_t fb = (size_t)n * sizeof(float), wb = (size_t)n * exec_dtype_size(d->act);
	struct opt_ctx o = { .d = d, .n = n };
	struct timed t = { d, run_opt, &o };
	struct sim_parallel sp;
	double time_s;
	enum rc rc;

	phase(p, "optimizer", c);
	o.p = random_buffer(d, (size_t)n);
	o.g = random_buffer(d, (size_t)n);
	o.m = exec_dalloc(d, fb);
	o.v = exec_dalloc(d, fb);
	d->be->zero(d, o.m, fb);
	d->be->zero(d, o.v, fb);
	if (d->act != EXEC_F32)
		o.work = exec_dalloc(d, wb);
	o.acc = exec_dalloc(d, sizeof(double));
	d->be->zero(d, o.acc, sizeof(double));
	rc = time_runs(&t, p->target_s, &time_s);
	exec_dfree(d, o.acc, sizeof(double));
	if (o.work)
		exec_dfree(d, o.work, wb);
	exec_dfree(d, o.v, fb);
	exec_dfree(d, o.m, fb);
	exec_dfree(d, o.g, fb);
	exec_dfree(d, o.p, fb);
	if (rc != RC_OK)
		return rc;
	c->opt.params = (double)n;
	/* the executor's AdamW: fp32 master, m and v beside working weights
	 * of its activation dtype */
	sim_parallel_init(&sp);
	sp.act_bytes_per_element = (double)exec_dtype_size(d->act);
	c->opt.bytes = sim_optimizer_bytes(&sp, c->opt.params, c->opt.params);
	c->opt.time_s = time_s;
	c->opt.bytes_per_s = c->opt.bytes / time_s;
	return RC_OK;
}

static enum rc measure_copies(struct exec_device *d, const struct plan *p,
			      struct exec_calibration *c)
{
	for (int i = 0; i < p->n_copy && c->n_copy < EXEC_CALIB_MAX_POINTS; i++) {
		size_t n = (size_t)(p->copy_bytes[i] / sizeof(float));
		struct copy_ctx cc = { d, NULL, NULL, n * sizeof(float) };
		struct timed t = { d, run_copy, &cc };
		struct exec_calib_copy *r = &c->copy[c->n_copy];
		enum rc rc;

		phase(p, "copies", c);
		cc.src = random_buffer(d, n);
		cc.dst = exec_dalloc(d, n * sizeof(float));
		rc = time_runs(&t, p->target_s, &r->time_s);
		exec_dfree(d, cc.dst, n * sizeof(float));
		exec_dfree(d, cc.src, n * sizeof(float));
		if (rc != RC_OK)
			return rc;
		r->bytes = (double)cc.bytes;
		r->bytes_per_s = 2.0 * r->bytes / r->time_s;
		c->n_copy++;
	}
	return RC_OK;
}

enum coll_op { OP_ALL_REDUCE, OP_ALL_GATHER, OP_REDUCE_SCATTER };
static const char *const op_names[] = { "all_reduce", "all_gather", "reduce_scatter" };

struct coll_ctx {
	struct exec_group *g;
	enum coll_op op;
	float *buf, *out;
	size_t count;       /* floats: the whole buffer, or one member's part */
	enum rc rc;
};

static void run_coll(void *ctx)
{
	struct coll_ctx *c = ctx;
	struct exec_group *g = c->g;

	if (c->rc != RC_OK)
		return;
	if (c->op == OP_ALL_REDUCE)
		c->rc = g->comm->all_reduce(g, c->buf, c->count, EXEC_F32, EXEC_SUM);
	else if (c->op == OP_ALL_GATHER)
		c->rc = g->comm->all_gather(g, c->buf, c->count, EXEC_F32);
	else
		c->rc = g->comm->reduce_scatter(g, c->buf, c->out, c->count, EXEC_F32);
}

/* The sweep over the world: every rank runs the same sizes in the same
 * order; rank 0's times are kept.  Repetitions are fixed per size (not
 * chosen from a first timing, which could differ between ranks and leave
 * one waiting in a collective the others never start). */
static enum rc measure_collectives(struct exec_job *j, const struct plan *p,
				   struct exec_calibration *c)
{
	struct exec_group *g = &j->g.world;
	struct exec_device *d = &j->dev;
	int n = g->size;

	for (int op = 0; op < 3; op++)
		for (double bytes = p->coll_min; bytes <= p->coll_max && c->n_coll < EXEC_CALIB_MAX_POINTS;
		     bytes *= p->coll_step) {
			size_t total = (size_t)(bytes / sizeof(float)) / (size_t)n * (size_t)n;
			struct coll_ctx cc = { g, (enum coll_op)op, NULL, NULL, 0, RC_OK };
			struct exec_calib_coll *r = &c->coll[c->n_coll];
			int reps = bytes <= (1 << 20) ? 20 : 5;
			double t0, t;

			phase(p, op_names[op], c);
			cc.buf = exec_dalloc(d, total * sizeof(float));
			cc.out = exec_dalloc(d, total / n * sizeof(float));
			cc.count = op == OP_ALL_REDUCE ? total : total / n;
			run_coll(&cc);
			if (cc.rc == RC_OK)
				cc.rc = g->comm->barrier(g);
			t0 = now_s();
			for (int i = 0; i < reps; i++)
				run_coll(&cc);
			if (cc.rc == RC_OK)
				cc.rc = exec_device_sync(d);
			t = (now_s() - t0) / reps;
			exec_dfree(d, cc.out, total / n * sizeof(float));
			exec_dfree(d, cc.buf, total * sizeof(float));
			if (cc.rc != RC_OK)
				return cc.rc;
			gp_strlcpy(r->op, op_names[op], sizeof(r->op));
			r->ranks = n;
			r->bytes = (double)(total * sizeof(float));
			r->time_s = t;
			r->algbw_bytes_per_s = r->bytes / t;
			/* nccl-tests' bus bandwidth factors */
			r->busbw_bytes_per_s = r->algbw_bytes_per_s *
				(op == OP_ALL_REDUCE ? 2.0 * (n - 1) / n : (double)(n - 1) / n);
			c->n_coll++;
		}
	return RC_OK;
}

enum rc exec_calibrate(const struct exec_calibrate_opts *o, struct exec_calibration *out)
{
	struct exec_calibration *c = xcalloc(1, sizeof(*c));
	struct exec_job j;
	struct plan p;
	enum rc rc;

	rc = exec_job_open(&j, "calibrate", o->backend, o->precision, NULL);
	if (rc != RC_OK) {
		free(c);
		return rc;
	}
	plan_for(o, strcmp(j.dev.be->name, "cpu") != 0, &p);
	p.o = o;
	p.report = j.rank == 0;
	/* what phase() counts: the copies, 4 GEMM shapes a hidden size
	 * forward and backward, a GELU and a SwiGLU layer, attention, the
	 * optimizer and the collectives */
	p.total = p.n_copy + 8 * p.n_hidden + 2 + 1 + 1 + (j.world > 1 ? coll_points(&p) : 0);
	if (j.rank == 0) {
		rc = measure_copies(&j.dev, &p, c);
		if (rc == RC_OK)
			rc = measure_gemms(&j.dev, &p, c);
		if (rc == RC_OK)
			rc = measure_elementwise(&j.dev, &p, c);
		if (rc == RC_OK)
			rc = measure_attention(&j.dev, &p, c);
		if (rc == RC_OK)
			rc = measure_optimizer(&j.dev, &p, c);
	}
	rc = exec_job_agree(&j, rc, "calibrate", "");
	if (rc == RC_OK && j.world > 1) {
		rc = j.g.world.comm->barrier(&j.g.world);
		if (rc == RC_OK)
			rc = measure_collectives(&j, &p, c);
		/* a failed collective may leave the others waiting in the next */
		if (rc != RC_OK)
			exec_mpi_abort(rc_exit_code(rc));
	}
	if (rc == RC_OK && j.rank == 0) {
		time_t now = time(NULL);
		struct tm tm;

		gp_strlcpy(c->device, j.dev.name, sizeof(c->device));
		c->device_memory_bytes = j.dev.memory_bytes;
		gp_strlcpy(c->backend, j.dev.be->name, sizeof(c->backend));
		c->precision = strcmp(j.dev.be->name, "cpu") != 0 ? o->precision : EXEC_PRECISION_FP32;
		c->ranks = j.world;
		gp_strlcpy(c->clock, j.dev.cpu_timed ? "cpu" : "wall", sizeof(c->clock));
		gmtime_r(&now, &tm);
		strftime(c->date, sizeof(c->date), "%Y-%m-%dT%H:%M:%SZ", &tm);
		exec_calibration_fit(c);
		*out = *c;
	}
	exec_job_close(&j);
	free(c);
	return rc;
}
