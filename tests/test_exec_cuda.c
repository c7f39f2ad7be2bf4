/*
 * test_exec_cuda.c - the CUDA backend (executor/device/cuda/) against the
 * CPU backend, kernel by kernel and through whole training steps, on a
 * machine without a GPU: the test binary links the backend's .cu files
 * built for the host against tests/cuda_emu/, which runs each kernel's
 * blocks and threads on the CPU and each cuBLAS GEMM by its column-major
 * definition (so a wrong transpose, leading dimension or stride fails
 * here), with bf16 operands and results where the backend stores bf16.
 * Device memory is host memory there, which lets the tests read and
 * write it directly.
 *
 * It cannot show speed, stream races or anything NCCL does; those need a
 * GPU (bench/gpu_check.sh).
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "cuda_emu.h"
#include "train/exec_train.h"

/* exec_cuda.h's, which a C file cannot include (it names CUDA types) */
void exec_cuda_set_watch(struct exec_device *d, enum rc (*watch)(void *ctx), void *ctx);

/* ---- kernels, one by one --------------------------------------------- */

#define PAIR_MAX_BUFS 64

/* The two devices, and every buffer given out on them (freed by
 * pair_close, which also checks that the CUDA device did not fail). */
struct pair {
	struct exec_device cpu, gpu;
	void *buf[2][PAIR_MAX_BUFS];
	size_t bytes[PAIR_MAX_BUFS];
	int n;
};

static void pair_open(struct pair *p, enum exec_precision prec)
{
	p->n = 0;
	exec_device_init(&p->cpu, &exec_cpu_backend);
	exec_device_init(&p->gpu, &exec_cuda_backend);
	p->gpu.precision = prec;
	assert_int_equal(exec_device_open(&p->cpu), RC_OK);
	assert_int_equal(exec_device_open(&p->gpu), RC_OK);
}

/* bytes on each device: [0] on the CPU, [1] on the GPU. */
static void pair_alloc(struct pair *p, size_t bytes, void **c, void **g)
{
	assert_true(p->n < PAIR_MAX_BUFS);
	*c = p->buf[0][p->n] = exec_dalloc(&p->cpu, bytes);
	*g = p->buf[1][p->n] = exec_dalloc(&p->gpu, bytes);
	p->bytes[p->n++] = bytes;
}

static void pair_close(struct pair *p)
{
	assert_int_equal(exec_device_sync(&p->gpu), RC_OK);
	for (int i = 0; i < p->n; i++) {
		exec_dfree(&p->cpu, p->buf[0][i], p->bytes[i]);
		exec_dfree(&p->gpu, p->buf[1][i], p->bytes[i]);
	}
	assert_int_equal(p->cpu.bytes_in_use, 0);
	assert_int_equal(p->gpu.bytes_in_use, 0);
	exec_device_release(&p->gpu);
	exec_device_release(&p->cpu);
}

/* n floats on each device, equal, N(0, scale) from stream s. */
static void twin(struct pair *p, size_t n, double scale, uint64_t s, float **c, float **g)
{
	pair_alloc(p, n * sizeof(float), (void **)c, (void **)g);
	for (size_t i = 0; i < n; i++)
		(*c)[i] = (float)(scale * exec_rand_normal(7, s, i));
	p->gpu.be->from_host(&p->gpu, *g, *c, n * sizeof(float));
}

/* Every element within rel of the larger of |expected| and floor, floor
 * being the size of the terms summed into it (an element that is a
 * small difference of large terms is as exact as the terms only). */
static void same(const char *what, const float *want, const float *got, size_t n, double rel,
		 double floor)
{
	for (size_t i = 0; i < n; i++) {
		double a = want[i], b = got[i], m = fabs(a) > floor ? fabs(a) : floor;

		if (!(fabs(a - b) <= rel * m)) {
			print_error("%s[%zu]: cpu %.9g, cuda %.9g\n", what, i, a, b);
			fail();
		}
	}
}

static void test_exec_cuda_matmul_matches_cpu(void **state)
{
	struct pair p;
	int n = 13, ic = 24, oc = 20;   /* no side a multiple of the CPU's tiles */
	float *x[2], *w[2], *b[2], *y[2], *dy[2], *dx[2], *dw[2], *db[2];

	(void)state;
	pair_open(&p, EXEC_PRECISION_FP32);
	twin(&p, (size_t)n * ic, 1, 1, &x[0], &x[1]);
	twin(&p, (size_t)oc * ic, 0.5, 2, &w[0], &w[1]);
	twin(&p, (size_t)oc, 1, 3, &b[0], &b[1]);
	twin(&p, (size_t)n * oc, 0, 4, &y[0], &y[1]);
	twin(&p, (size_t)n * oc, 1, 5, &dy[0], &dy[1]);
	/* the backward accumulates: start every gradient away from zero */
	twin(&p, (size_t)n * ic, 1, 6, &dx[0], &dx[1]);
	twin(&p, (size_t)oc * ic, 1, 7, &dw[0], &dw[1]);
	twin(&p, (size_t)oc, 1, 8, &db[0], &db[1]);
	p.cpu.be->matmul_forward(&p.cpu, y[0], x[0], w[0], b[0], n, ic, oc);
	p.gpu.be->matmul_forward(&p.gpu, y[1], x[1], w[1], b[1], n, ic, oc);
	same("matmul out", y[0], y[1], (size_t)n * oc, 1e-5, 1);
	p.cpu.be->matmul_backward(&p.cpu, dx[0], dw[0], db[0], dy[0], x[0], w[0], n, ic, oc);
	p.gpu.be->matmul_backward(&p.gpu, dx[1], dw[1], db[1], dy[1], x[1], w[1], n, ic, oc);
	same("matmul dinp", dx[0], dx[1], (size_t)n * ic, 1e-5, 1);
	same("matmul dw", dw[0], dw[1], (size_t)oc * ic, 1e-5, 1);
	same("matmul dbias", db[0], db[1], (size_t)oc, 1e-5, 1);
	pair_close(&p);
}

/* The buffers of a norm's forward and backward over n rows of c, equal
 * on both devices ([0] the CPU's, [1] the GPU's): x N(0, 2), w, b, dy and
 * the gradients dx, dw, db N(0, 1), the outputs y, mean m and rstd r 0. */
struct norm_bufs {
	float *x[2], *w[2], *b[2], *y[2], *m[2], *r[2], *dy[2], *dx[2], *dw[2], *db[2];
};

static void norm_buffers(struct pair *p, int n, int c, struct norm_bufs *t)
{
	twin(p, (size_t)n * c, 2, 1, &t->x[0], &t->x[1]);
	twin(p, (size_t)c, 1, 2, &t->w[0], &t->w[1]);
	twin(p, (size_t)c, 1, 3, &t->b[0], &t->b[1]);
	twin(p, (size_t)n * c, 0, 4, &t->y[0], &t->y[1]);
	twin(p, (size_t)n, 0, 5, &t->m[0], &t->m[1]);
	twin(p, (size_t)n, 0, 6, &t->r[0], &t->r[1]);
	twin(p, (size_t)n * c, 1, 7, &t->dy[0], &t->dy[1]);
	twin(p, (size_t)n * c, 1, 8, &t->dx[0], &t->dx[1]);
	twin(p, (size_t)c, 1, 9, &t->dw[0], &t->dw[1]);
	twin(p, (size_t)c, 1, 10, &t->db[0], &t->db[1]);
}

static void test_exec_cuda_norms_match_cpu(void **state)
{
	struct pair p;
	int n = 9, c = 300;   /* a row longer than a block of threads */
	struct norm_bufs t;

	(void)state;
	pair_open(&p, EXEC_PRECISION_FP32);
	norm_buffers(&p, n, c, &t);
	for (int k = 0; k < 2; k++) {
		struct exec_device *d = k ? &p.gpu : &p.cpu;

		d->be->layernorm_forward(d, t.y[k], t.m[k], t.r[k], t.x[k], t.w[k], t.b[k], n, c);
		d->be->layernorm_backward(d, t.dx[k], t.dw[k], t.db[k], t.dy[k], t.x[k], t.w[k],
					  t.m[k], t.r[k], n, c);
	}
	same("layernorm out", t.y[0], t.y[1], (size_t)n * c, 1e-5, 1);
	same("layernorm mean", t.m[0], t.m[1], (size_t)n, 1e-5, 1);
	same("layernorm rstd", t.r[0], t.r[1], (size_t)n, 1e-5, 1);
	same("layernorm dinp", t.dx[0], t.dx[1], (size_t)n * c, 1e-4, 1);
	same("layernorm dw", t.dw[0], t.dw[1], (size_t)c, 1e-5, 1);
	same("layernorm db", t.db[0], t.db[1], (size_t)c, 1e-5, 1);
	for (int k = 0; k < 2; k++) {
		struct exec_device *d = k ? &p.gpu : &p.cpu;

		d->be->rmsnorm_forward(d, t.y[k], t.r[k], t.x[k], t.w[k], n, c);
		d->be->rmsnorm_backward(d, t.dx[k], t.dw[k], t.dy[k], t.x[k], t.w[k], t.r[k], n, c);
	}
	same("rmsnorm out", t.y[0], t.y[1], (size_t)n * c, 1e-5, 1);
	same("rmsnorm dinp", t.dx[0], t.dx[1], (size_t)n * c, 1e-4, 1);
	same("rmsnorm dw", t.dw[0], t.dw[1], (size_t)c, 1e-5, 1);
	pair_close(&p);
}

/* Column sums (bias, LayerNorm and RMSNorm weight gradients) have the
 * same bits whichever order the blocks run in: on a GPU they run in any,
 * and a bias or norm weight that every TP rank computes from the same
 * gradient must stay the same on all of them.  57 rows are 12 chunks of
 * the tests' 5 (COL_CHUNK) and 70 columns 3 blocks across; sums of 12
 * random floats added in another order differ in their last bits, which
 * the atomic adds this replaced showed here. */
static void test_exec_cuda_column_sums_any_block_order(void **state)
{
	struct pair p;
	int n = 57, c = 70;
	struct norm_bufs t;
	float got[2][3][70];

	(void)state;
	pair_open(&p, EXEC_PRECISION_FP32);
	norm_buffers(&p, n, c, &t);
	p.gpu.be->layernorm_forward(&p.gpu, t.y[1], t.m[1], t.r[1], t.x[1], t.w[1], t.b[1], n, c);
	for (int rev = 0; rev < 2; rev++) {
		struct exec_device *g = &p.gpu;
		size_t cb = (size_t)c * sizeof(float);

		cuda_emu_set_reverse_blocks(rev);
		g->be->zero(g, t.dw[1], cb);
		g->be->zero(g, t.db[1], cb);
		g->be->layernorm_backward(g, t.dx[1], t.dw[1], t.db[1], t.dy[1], t.x[1], t.w[1],
					  t.m[1], t.r[1], n, c);
		g->be->to_host(g, got[rev][0], t.dw[1], cb);
		g->be->to_host(g, got[rev][1], t.db[1], cb);
		g->be->zero(g, t.dw[1], cb);
		g->be->rmsnorm_backward(g, t.dx[1], t.dw[1], t.dy[1], t.x[1], t.w[1], t.r[1], n, c);
		g->be->to_host(g, got[rev][2], t.dw[1], cb);
	}
	cuda_emu_set_reverse_blocks(0);
	assert_memory_equal(got[0], got[1], sizeof(got[0]));
	/* and they are the sums: the bias gradient is the column sum of dy */
	for (int j = 0; j < c; j++) {
		double s = 0;

		for (int i = 0; i < n; i++)
			s += t.dy[0][(size_t)i * c + j];
		assert_true(fabs(got[0][1][j] - s) <= 1e-5 * (fabs(s) + 1));
	}
	pair_close(&p);
}

/* Causal grouped-query attention of t queries at key positions q0 ..
 * q0 + t - 1 of tk keys, through both backends (probabilities kept in
 * forward, rebuilt from lse in backward): every output must agree. */
static void attention_case(int t, int tk, int q0)
{
	struct pair p;
	int b = 2, nh = 4, nkv = 2, hd = 8;
	size_t nq = (size_t)b * t * nh * hd, nk = (size_t)b * tk * nkv * hd, nl = (size_t)b * nh * t;
	float *q[2], *k[2], *v[2], *o[2], *lse[2], *att[2], *dout[2], *dq[2], *dk[2], *dv[2];

	pair_open(&p, EXEC_PRECISION_FP32);
	twin(&p, nq, 1, 1, &q[0], &q[1]);
	twin(&p, nk, 1, 2, &k[0], &k[1]);
	twin(&p, nk, 1, 3, &v[0], &v[1]);
	twin(&p, nq, 0, 4, &o[0], &o[1]);
	twin(&p, nl, 0, 5, &lse[0], &lse[1]);
	twin(&p, nl * tk, 0, 6, &att[0], &att[1]);
	twin(&p, nq, 1, 7, &dout[0], &dout[1]);
	twin(&p, nq, 0.1, 8, &dq[0], &dq[1]);
	twin(&p, nk, 0.1, 9, &dk[0], &dk[1]);
	twin(&p, nk, 0.1, 10, &dv[0], &dv[1]);
	for (int i = 0; i < 2; i++) {
		struct exec_device *d = i ? &p.gpu : &p.cpu;

		d->be->attention_forward(d, o[i], lse[i], att[i], q[i], k[i], v[i], b, t, tk, q0,
					 nh, nkv, hd);
		d->be->attention_backward(d, dq[i], dk[i], dv[i], dout[i], q[i], k[i], v[i], lse[i],
					  NULL, b, t, tk, q0, nh, nkv, hd);
	}
	same("attention out", o[0], o[1], nq, 1e-5, 0.1);
	same("attention lse", lse[0], lse[1], nl, 1e-5, 0.1);
	same("attention probabilities", att[0], att[1], nl * tk, 1e-5, 0.1);
	same("attention dq", dq[0], dq[1], nq, 1e-4, 0.1);
	same("attention dk", dk[0], dk[1], nk, 1e-4, 0.1);
	same("attention dv", dv[0], dv[1], nk, 1e-4, 0.1);
	pair_close(&p);
}

/* n values N(0, scale) from stream s: on the GPU in its activation type
 * (*g), on the CPU as that type holds them, widened to fp32 (*c). */
static void twin_act(struct pair *p, size_t n, double scale, uint64_t s, float **c, void **g)
{
	struct exec_device *d = &p->gpu;
	float *f, *unused;

	twin(p, n, scale, s, c, &f);
	pair_alloc(p, n * sizeof(float), (void **)&unused, g);
	d->be->narrow(d, *g, f, (long)n);
	d->be->zero(d, f, n * sizeof(float));
	d->be->accumulate(d, f, *g, d->act, (long)n);
	d->be->to_host(d, *c, f, n * sizeof(float));
}

/* The n values of g (the GPU's activation type) widened to fp32 in out. */
static void act_to_host(struct pair *p, const void *g, size_t n, float *out)
{
	struct exec_device *d = &p->gpu;
	float *f, *unused;

	pair_alloc(p, n * sizeof(float), (void **)&unused, (void **)&f);
	d->be->zero(d, f, n * sizeof(float));
	d->be->accumulate(d, f, g, d->act, (long)n);
	d->be->to_host(d, out, f, n * sizeof(float));
}

/* Root-mean-square error of got against want, relative to want's. */
static double rms_rel(const float *want, const float *got, size_t n)
{
	double e = 0, w = 0;

	for (size_t i = 0; i < n; i++) {
		e += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
		w += (double)want[i] * want[i];
	}
	return sqrt(e / w);
}

/* bf16 attention backward: dK and dV sum over the 5 query blocks of 40
 * tokens (the tests' scratch bound) and the 2 heads of each KV group, 10
 * terms an element.  Summed in fp32 and rounded once, their error against
 * the fp32 CPU on the same bf16 inputs is that of one rounding and of the
 * bf16 score gradients and probabilities the GEMMs read (measured: 0.22%
 * and 0.23% rms); summed in bf16, every addition rounded, it was 0.48%
 * and 0.53%. */
static void test_exec_cuda_bf16_attention_grads(void **state)
{
	struct pair p;
	int b = 2, t = 40, nh = 4, nkv = 2, hd = 8;
	size_t nq = (size_t)b * t * nh * hd, nk = (size_t)b * t * nkv * hd, nl = (size_t)b * nh * t;
	float *q[2], *k[2], *v[2], *o[2], *lse[2], *dout[2], *dq[2], *dk[2], *dv[2];
	void *g[9];
	float *got = xmalloc(nk * sizeof(float));
	double edk, edv;

	(void)state;
	pair_open(&p, EXEC_PRECISION_BF16);
	twin_act(&p, nq, 1, 1, &q[0], &g[0]);
	twin_act(&p, nk, 1, 2, &k[0], &g[1]);
	twin_act(&p, nk, 1, 3, &v[0], &g[2]);
	twin_act(&p, nq, 0, 4, &o[0], &g[3]);
	twin(&p, nl, 0, 5, &lse[0], &lse[1]);
	twin_act(&p, nq, 1, 7, &dout[0], &g[4]);
	twin_act(&p, nq, 0, 8, &dq[0], &g[5]);
	twin_act(&p, nk, 0, 9, &dk[0], &g[6]);
	twin_act(&p, nk, 0, 10, &dv[0], &g[7]);
	p.cpu.be->attention_forward(&p.cpu, o[0], lse[0], NULL, q[0], k[0], v[0], b, t, t, 0, nh,
				    nkv, hd);
	p.cpu.be->attention_backward(&p.cpu, dq[0], dk[0], dv[0], dout[0], q[0], k[0], v[0], lse[0],
				     NULL, b, t, t, 0, nh, nkv, hd);
	p.gpu.be->attention_forward(&p.gpu, g[3], lse[1], NULL, g[0], g[1], g[2], b, t, t, 0, nh,
				    nkv, hd);
	p.gpu.be->attention_backward(&p.gpu, g[5], g[6], g[7], g[4], g[0], g[1], g[2], lse[1],
				     NULL, b, t, t, 0, nh, nkv, hd);
	act_to_host(&p, g[6], nk, got);
	edk = rms_rel(dk[0], got, nk);
	act_to_host(&p, g[7], nk, got);
	edv = rms_rel(dv[0], got, nk);
	print_message("bf16 attention: dK %.3f%%, dV %.3f%% rms against fp32\n", 100 * edk,
		      100 * edv);
	assert_true(edk < 0.0025 && edv < 0.0025);
	free(got);
	pair_close(&p);
}

/* Over 40 tokens: with the tests' scratch bound (2048 floats, blocks of 8
 * rows) 4 heads x 40 keys make 5 query blocks, so the causal cut-off and
 * the block offsets are exercised; the probabilities kept (att) must
 * equal the CPU's too. */
static void test_exec_cuda_attention_matches_cpu(void **state)
{
	(void)state;
	attention_case(40, 40, 0);
}

/* A context-parallel rank's slice of the sequence against all 40 keys:
 * queries 24 .. 39 in two blocks of 8 rows, each reading keys up to its
 * last row's position (kend 32 and 40), and queries 8 .. 15 in one block
 * (kend 16; the probabilities' keys 16 .. 39 zero). */
static void test_exec_cuda_attention_offset_matches_cpu(void **state)
{
	(void)state;
	attention_case(16, 40, 24);
	attention_case(8, 40, 8);
}

static void test_exec_cuda_elementwise_and_loss_match_cpu(void **state)
{
	struct pair p;
	int n = 10, c = 12, nv = 70, v0 = 30, V = 128;
	long ne = 1000;
	float *a[2], *g[2], *u[2], *y[2], *dg[2], *du[2], *dy[2], *wte[2], *emb[2], *dwte[2];
	float *lg[2], *rmax[2], *stats[2], *m[2], *vv[2];
	int tok[10], *dtok[2];
	double loss[2], ss[2], *acc[2], want = 0;

	(void)state;
	pair_open(&p, EXEC_PRECISION_FP32);
	twin(&p, (size_t)ne, 2, 1, &a[0], &a[1]);
	twin(&p, (size_t)ne, 2, 2, &g[0], &g[1]);
	twin(&p, (size_t)ne, 1, 3, &u[0], &u[1]);
	twin(&p, (size_t)ne, 0, 4, &y[0], &y[1]);
	twin(&p, (size_t)ne, 1, 5, &dg[0], &dg[1]);
	twin(&p, (size_t)ne, 1, 6, &du[0], &du[1]);
	twin(&p, (size_t)ne, 1, 7, &dy[0], &dy[1]);
	for (int k = 0; k < 2; k++) {
		struct exec_device *d = k ? &p.gpu : &p.cpu;

		d->be->gelu_forward(d, y[k], a[k], ne);
		d->be->gelu_backward(d, dg[k], a[k], dy[k], ne);
		d->be->swiglu_forward(d, u[k], g[k], u[k], ne);
		d->be->swiglu_backward(d, dg[k], du[k], g[k], a[k], dy[k], ne);
		d->be->residual_forward(d, a[k], a[k], y[k], ne);
		d->be->accumulate(d, dy[k], a[k], EXEC_F32, ne);
		d->be->add_bias(d, dy[k], g[k], 10, 100);
	}
	same("gelu", y[0], y[1], (size_t)ne, 1e-6, 1e-3);
	same("swiglu (out aliasing u)", u[0], u[1], (size_t)ne, 1e-6, 1e-3);
	same("gelu/swiglu dg", dg[0], dg[1], (size_t)ne, 1e-5, 1e-3);
	same("swiglu du", du[0], du[1], (size_t)ne, 1e-5, 1e-3);
	same("residual", a[0], a[1], (size_t)ne, 1e-6, 1e-3);
	same("accumulate, add_bias", dy[0], dy[1], (size_t)ne, 1e-6, 1e-3);

	/* vocabulary-parallel pieces: this rank holds rows 30..99 of 128;
	 * tokens inside and outside, one row read twice */
	for (int i = 0; i < n; i++)
		tok[i] = (i * 37 + 5) % V;
	tok[3] = tok[7] = 41;
	twin(&p, (size_t)nv * c, 1, 11, &wte[0], &wte[1]);
	twin(&p, (size_t)n * c, 0, 12, &emb[0], &emb[1]);
	twin(&p, (size_t)nv * c, 1, 13, &dwte[0], &dwte[1]);
	twin(&p, (size_t)n * nv, 3, 14, &lg[0], &lg[1]);
	twin(&p, (size_t)n, 0, 15, &rmax[0], &rmax[1]);
	twin(&p, 2 * (size_t)n, 0, 16, &stats[0], &stats[1]);
	pair_alloc(&p, sizeof(tok), (void **)&dtok[0], (void **)&dtok[1]);
	pair_alloc(&p, sizeof(double), (void **)&acc[0], (void **)&acc[1]);
	for (int k = 0; k < 2; k++) {
		struct exec_device *d = k ? &p.gpu : &p.cpu;

		d->be->from_host(d, dtok[k], tok, sizeof(tok));
		d->be->embedding_forward(d, emb[k], dtok[k], wte[k], n, c, v0, nv);
		/* the rows of emb as the gradient of the rows they came from */
		d->be->embedding_backward(d, dwte[k], emb[k], dtok[k], n, c, v0, nv);
		d->be->ce_row_max(d, rmax[k], lg[k], n, nv);
		d->be->ce_row_stats(d, stats[k], lg[k], rmax[k], dtok[k], n, nv, v0);
		loss[k] = d->be->ce_loss_sum(d, rmax[k], stats[k], n);
		d->be->ce_backward(d, lg[k], rmax[k], stats[k], dtok[k], n, nv, v0, 0.25f);
		/* sumsq adds to what its accumulator (zeroed) holds */
		d->be->sumsq(d, acc[k], lg[k], (long)n * nv);
		d->be->sumsq(d, acc[k], lg[k], 10);
		d->be->to_host(d, &ss[k], acc[k], sizeof(double));
	}
	for (int i = 0; i < n * nv; i++)
		want += (double)lg[0][i] * lg[0][i] * (i < 10 ? 2 : 1);
	assert_near(ss[0], want, 1e-12);
	same("embedding", emb[0], emb[1], (size_t)n * c, 0, 0);
	same("embedding backward", dwte[0], dwte[1], (size_t)nv * c, 1e-6, 1e-3);
	same("ce row max", rmax[0], rmax[1], (size_t)n, 0, 0);
	same("ce row stats", stats[0], stats[1], 2 * (size_t)n, 1e-5, 1e-3);
	assert_near(loss[1], loss[0], 1e-6);
	same("ce backward", lg[0], lg[1], (size_t)n * nv, 1e-5, 1e-4);
	assert_near(ss[1], ss[0], 1e-6);

	/* AdamW at step 3 with clipping's scale */
	twin(&p, (size_t)ne, 0.1, 17, &m[0], &m[1]);
	twin(&p, (size_t)ne, 0.1, 18, &vv[0], &vv[1]);
	for (size_t i = 0; i < (size_t)ne; i++)
		vv[0][i] = vv[1][i] = vv[0][i] * vv[0][i];
	for (int k = 0; k < 2; k++) {
		struct exec_device *d = k ? &p.gpu : &p.cpu;

		d->be->adamw(d, a[k], dg[k], m[k], vv[k], ne, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, 3,
			     0.5f);
	}
	same("adamw params", a[0], a[1], (size_t)ne, 1e-6, 1e-3);
	same("adamw m", m[0], m[1], (size_t)ne, 1e-6, 1e-3);
	same("adamw v", vv[0], vv[1], (size_t)ne, 1e-6, 1e-6);
	pair_close(&p);
}

/* The mixture of experts' kernels (exec_cuda_moe.cu against
 * exec_cpu_moe.c): 10 tokens routed top-2 of 6 experts in both router
 * modes, the same choice (the CPU's order of sums, one thread a token),
 * the permutation into expert order, the combine and their gradients. */
static void test_exec_cuda_moe_matches_cpu(void **state)
{
	enum { N = 10, E = 6, K = 2, C = 12 };
	struct pair p;
	float *lg[2], *probs[2], *w[2], *dw[2], *dl[2], *x[2], *xp[2], *out[2], *dwt[2];
	int *idx[2], *map[2], *pos[2], hmap[N * K], hpos[N * K], start[E + 1] = { 0 };

	(void)state;
	pair_open(&p, EXEC_PRECISION_FP32);
	twin(&p, N * E, 1, 31, &lg[0], &lg[1]);
	twin(&p, N * E, 0, 32, &probs[0], &probs[1]);
	twin(&p, N * K, 0, 33, &w[0], &w[1]);
	twin(&p, N * K, 1, 34, &dw[0], &dw[1]);
	twin(&p, N * E, 0.1, 35, &dl[0], &dl[1]);
	twin(&p, N * C, 1, 36, &x[0], &x[1]);
	twin(&p, N * K * C, 0, 37, &xp[0], &xp[1]);
	twin(&p, N * C, 0.5, 38, &out[0], &out[1]);
	twin(&p, N * K, 0.1, 39, &dwt[0], &dwt[1]);
	pair_alloc(&p, sizeof(hmap), (void **)&idx[0], (void **)&idx[1]);
	pair_alloc(&p, sizeof(hmap), (void **)&map[0], (void **)&map[1]);
	pair_alloc(&p, sizeof(hmap), (void **)&pos[0], (void **)&pos[1]);
	for (int pre = 0; pre < 2; pre++) {
		for (int k = 0; k < 2; k++) {
			struct exec_device *d = k ? &p.gpu : &p.cpu;

			d->be->moe_route_forward(d, probs[k], idx[k], w[k], lg[k], N, E, K, pre);
			d->be->moe_route_backward(d, dl[k], dw[k], probs[k], idx[k], N, E, K, pre);
		}
		assert_int_equal(exec_device_sync(&p.gpu), RC_OK);
		same("router probabilities", probs[0], probs[1], N * E, 1e-6, 1e-3);
		for (int i = 0; i < N * K; i++)
			assert_int_equal(idx[0][i], idx[1][i]);
		same("router weights", w[0], w[1], N * K, 1e-6, 1e-3);
		same("router backward", dl[0], dl[1], N * E, 1e-5, 1e-3);
	}
	/* the slots in expert order, as the trainer plans them */
	for (int s = 0; s < N * K; s++)
		start[idx[0][s] + 1]++;
	for (int e = 0; e < E; e++)
		start[e + 1] += start[e];
	for (int s = 0; s < N * K; s++) {
		hmap[start[idx[0][s]]] = s;
		hpos[s] = start[idx[0][s]]++;
	}
	for (int k = 0; k < 2; k++) {
		struct exec_device *d = k ? &p.gpu : &p.cpu;

		d->be->from_host(d, map[k], hmap, sizeof(hmap));
		d->be->from_host(d, pos[k], hpos, sizeof(hpos));
		d->be->moe_permute(d, xp[k], x[k], map[k], NULL, N * K, C, K);
	}
	assert_int_equal(exec_device_sync(&p.gpu), RC_OK);
	same("dispatch permutation", xp[0], xp[1], N * K * C, 0, 0);
	for (int k = 0; k < 2; k++) {
		struct exec_device *d = k ? &p.gpu : &p.cpu;

		d->be->moe_unpermute(d, out[k], xp[k], pos[k], w[k], N, C, K);
		d->be->moe_weights_backward(d, dwt[k], x[k], xp[k], pos[k], N, C, K);
		d->be->moe_permute(d, xp[k], x[k], map[k], w[k], N * K, C, K);
	}
	assert_int_equal(exec_device_sync(&p.gpu), RC_OK);
	same("combine", out[0], out[1], N * C, 1e-6, 1e-3);
	same("combine weight gradient", dwt[0], dwt[1], N * K, 1e-5, 1e-3);
	same("weighted permutation", xp[0], xp[1], N * K * C, 1e-6, 1e-3);
	pair_close(&p);
}

/* ---- whole steps ----------------------------------------------------- */

static void tiny_opts(struct exec_opts *o)
{
	exec_opts_init(o);
	o->model.layers = 2;
	o->model.hidden = 16;
	o->model.heads = 4;
	o->model.kv_heads = 2;
	o->model.ffn = 32;
	o->model.vocab = 32;
	o->model.seq = 12;
	o->par.mbs = 2;
	o->par.gbs = 4;
	o->par.flash = 0;
	o->steps = 3;
	exec_opts_derive(o);
}

/* Losses of o's steps on backend be at precision prec; the device's
 * memory all returned afterwards, its peak in *peak_bytes (may be NULL). */
static void run_losses_peak(const struct exec_backend *be, enum exec_precision prec,
			    const struct exec_opts *o, double *losses, size_t *peak_bytes)
{
	struct exec_device dev;
	struct exec_groups g;
	struct exec_layout l;
	struct exec_trainer *t;
	char why[256] = "";
	size_t before = cuda_emu_bytes_in_use();
	double gn;

	exec_device_init(&dev, be);
	dev.precision = prec;
	assert_int_equal(exec_device_open(&dev), RC_OK);
	exec_groups_self(&g, &dev);
	assert_int_equal(exec_layout_init(&l, &o->par, 0), RC_OK);
	t = exec_trainer_new(o, &l, &dev, &g, why, sizeof(why));
	if (!t)
		print_error("exec_trainer_new: %s\n", why);
	assert_non_null(t);
	for (int s = 1; s <= o->steps; s++) {
		assert_int_equal(exec_trainer_step(t, s, &losses[s - 1], &gn), RC_OK);
		assert_int_equal(exec_device_sync(&dev), RC_OK);
	}
	exec_trainer_free(t);
	assert_int_equal(dev.bytes_in_use, 0);
	if (peak_bytes)
		*peak_bytes = dev.peak_bytes;
	exec_device_release(&dev);
	assert_int_equal(cuda_emu_bytes_in_use(), before);
}

static void run_losses(const struct exec_backend *be, enum exec_precision prec,
		       const struct exec_opts *o, double *losses)
{
	run_losses_peak(be, prec, o, losses, NULL);
}

/* fp32 GEMMs: the CUDA backend computes the CPU's losses up to the order
 * of fp32 sums (tree reductions against sequential ones): 1e-5. */
static void same_steps(const struct exec_opts *o)
{
	double c[3], g[3];

	run_losses(&exec_cpu_backend, EXEC_PRECISION_FP32, o, c);
	run_losses(&exec_cuda_backend, EXEC_PRECISION_FP32, o, g);
	for (int s = 0; s < o->steps; s++) {
		if (fabs(c[s] - g[s]) > 1e-5 * fabs(c[s]))
			print_error("step %d: cpu %.9g, cuda %.9g\n", s + 1, c[s], g[s]);
		assert_near(g[s], c[s], 1e-5);
	}
	assert_true(c[2] < c[0]);
}

static void test_exec_cuda_steps_match_cpu_gelu_layernorm(void **state)
{
	struct exec_opts o;

	(void)state;
	tiny_opts(&o);
	same_steps(&o);
}

static void test_exec_cuda_steps_match_cpu_swiglu_flash_recompute(void **state)
{
	struct exec_opts o;

	(void)state;
	tiny_opts(&o);
	o.model.mlp = SIM_MLP_SWIGLU;
	o.par.flash = 1;
	o.par.recompute = SIM_RECOMPUTE_FULL;
	exec_opts_derive(&o);
	same_steps(&o);
}

/* ZeRO-3 under one rank still gathers and drops every unit, and the
 * selective recomputation rebuilds probabilities from the log-sum-exp. */
static void test_exec_cuda_steps_match_cpu_zero3_selective(void **state)
{
	struct exec_opts o;

	(void)state;
	tiny_opts(&o);
	o.par.zero = 3;
	o.par.recompute = SIM_RECOMPUTE_SELECTIVE;
	same_steps(&o);
}

/* A mixture of experts (4 experts of width 8, top-2): the router, the
 * dispatch and the experts' GEMMs one expert at a time (cuBLAS on each
 * expert's rows), the combine.  With SwiGLU, a shared expert beside them
 * and a dense first layer, under full recomputation and ZeRO-3. */
static void moe_opts(struct exec_opts *o)
{
	tiny_opts(o);
	o->model.experts = 4;
	o->model.top_k = 2;
	o->model.expert_ffn = 8;
}

static void test_exec_cuda_steps_match_cpu_moe(void **state)
{
	struct exec_opts o;

	(void)state;
	moe_opts(&o);
	same_steps(&o);
}

static void test_exec_cuda_steps_match_cpu_moe_shared_zero3(void **state)
{
	struct exec_opts o;

	(void)state;
	moe_opts(&o);
	o.model.mlp = SIM_MLP_SWIGLU;
	o.model.shared_experts = 1;
	o.model.shared_ffn = 16;
	o.model.dense_layers = 1;
	o.par.recompute = SIM_RECOMPUTE_FULL;
	o.par.zero = 3;
	exec_opts_derive(&o);
	same_steps(&o);
}

/* LoRA: the base frozen (no weight-gradient GEMMs, norms without weight
 * gradients), the adapters' scaled adds forward and backward; under
 * ZeRO-3 the adapters gathered beside their layer.  In bf16 too. */
static void lora_opts(struct exec_opts *o)
{
	tiny_opts(o);
	o->par.ft.method = SIM_FT_LORA;
	o->par.ft.lora_rank = 4;
	/* adapters learn slowly: this moves the loss down in 3 steps */
	o->lr = 5e-2;
}

static void test_exec_cuda_steps_match_cpu_lora(void **state)
{
	struct exec_opts o;

	(void)state;
	lora_opts(&o);
	same_steps(&o);
	o.model.mlp = SIM_MLP_SWIGLU;
	o.par.zero = 3;
	exec_opts_derive(&o);
	same_steps(&o);
}

/* bf16 mixed precision (activations, their gradients and the weights
 * forward and backward read stored in bf16, GEMMs with fp32 sums; fp32
 * master weights, gradients and AdamW state): losses within BF16_LOSS_TOL
 * relative of the fp32 CPU over 10 steps.  bf16's unit roundoff is 2^-9 =
 * 0.2% per stored element; the loss averages that over every token and
 * vocabulary row, and measured here the worst step differs by about
 * 6e-5 (CUDA_EMU_VERBOSE=1 prints it).  1% is the tolerance
 * bench/gpu_check.sh states for a real GPU, where cuBLAS and the
 * training's drift over 10 steps of a larger model add to it. */
#define BF16_LOSS_TOL 1e-2

static void bf16_within_tolerance(const struct exec_opts *o)
{
	double c[10], g[10], worst = 0;

	assert_true(o->steps <= 10);
	run_losses(&exec_cpu_backend, EXEC_PRECISION_FP32, o, c);
	run_losses(&exec_cuda_backend, EXEC_PRECISION_BF16, o, g);
	for (int s = 0; s < o->steps; s++) {
		double e = fabs(g[s] - c[s]) / c[s];

		if (e > worst)
			worst = e;
	}
	if (getenv("CUDA_EMU_VERBOSE"))
		print_message("bf16 against fp32: worst relative loss difference %.2e\n", worst);
	assert_true(worst < BF16_LOSS_TOL);
	/* and bf16 is not fp32: the rounding is really applied */
	assert_true(worst > 0);
	/* the loss falls in bf16 too */
	assert_true(g[o->steps - 1] < g[0]);
}

static void test_exec_cuda_bf16_within_tolerance(void **state)
{
	struct exec_opts o;

	(void)state;
	tiny_opts(&o);
	o.steps = 10;
	bf16_within_tolerance(&o);
}

/* The bf16 paths of RMSNorm, SwiGLU, flash attention (no probabilities
 * kept), full recomputation and ZeRO-3's gathers (the working copy is
 * narrowed at each gather). */
static void test_exec_cuda_bf16_lora(void **state)
{
	struct exec_opts o;

	(void)state;
	lora_opts(&o);
	o.steps = 10;
	bf16_within_tolerance(&o);
}

static void test_exec_cuda_bf16_swiglu_flash_zero3(void **state)
{
	struct exec_opts o;

	(void)state;
	tiny_opts(&o);
	o.steps = 10;
	o.model.mlp = SIM_MLP_SWIGLU;
	o.par.flash = 1;
	o.par.recompute = SIM_RECOMPUTE_FULL;
	o.par.zero = 3;
	exec_opts_derive(&o);
	bf16_within_tolerance(&o);
}

/* bf16 routing: the logits, the experts' rows and their outputs stored
 * in bf16, the router's probabilities and weights in fp32. */
static void test_exec_cuda_bf16_moe(void **state)
{
	struct exec_opts o;

	(void)state;
	moe_opts(&o);
	o.steps = 10;
	bf16_within_tolerance(&o);
}

/* bf16 storage halves what the activations take and adds a 2-byte working
 * copy of every parameter.  tiny_opts: b 2, t 12 (N = 24 tokens), C 16, 4
 * heads of 4 (Q 16 wide, K and V 8), ffn 32, vocabulary 32, 2 layers, no
 * flash attention (probabilities kept), one rank: every buffer is
 * allocated once, so the peak is their sum.  Each activation buffer of a
 * micro-batch's record is a multiple of 32 elements, so its 64-byte
 * alignment pads nothing in either type.  Activation elements:
 *   record: layer inputs x[0..2] 3 x 24 x 16 = 1152; per layer ln1 384,
 *     Q 384, K 192, V 192, probabilities 2 x 4 x 12 x 12 = 1152, attention
 *     output 384, res2 384, ln2 384, MLP in and out 2 x 24 x 32 = 1536:
 *     4992, two layers 9984; final norm 384 and logits 24 x 32 = 768;
 *     12,288 in all (the 1F1B record is reused by the second micro-batch);
 *   backward scratch: dx, dln, tmp, dq, dattn 5 x 384, dk, dv 2 x 192,
 *     dh, da 2 x 768: 3840.
 * Parameters: embedding 32 x 16 + 12 x 16 = 704; per layer norms 4 x 16,
 * Q 16 x 16 + 16, K and V 2 x (8 x 16 + 8), output 16 x 16 + 16, MLP 32 x
 * 16 + 32 and 16 x 32 + 16: 1952; head norm 2 x 16 and LM head 32 x 16:
 * 544; 704 + 2 x 1952 + 544 = 5152.
 * fp32 - bf16 peak = (12288 + 3840) x (4 - 2) - 5152 x 2 = 21,952 bytes. */
static void test_exec_cuda_bf16_peak_memory_drops(void **state)
{
	struct exec_opts o;
	double c[3], g[3];
	size_t fp32_peak, bf16_peak;
	const double act = 12288 + 3840, params = 5152;

	(void)state;
	tiny_opts(&o);
	run_losses_peak(&exec_cuda_backend, EXEC_PRECISION_FP32, &o, c, &fp32_peak);
	run_losses_peak(&exec_cuda_backend, EXEC_PRECISION_BF16, &o, g, &bf16_peak);
	assert_near(act * (4 - 2) - params * 2, 21952, 1e-12);
	if (fp32_peak - bf16_peak != 21952)
		print_error("peak: fp32 %zu, bf16 %zu bytes\n", fp32_peak, bf16_peak);
	assert_int_equal(fp32_peak - bf16_peak, 21952);
	/* the fp32 CUDA run keeps what the fp32 CPU run does */
	{
		double cpu[3];
		size_t cpu_peak;

		run_losses_peak(&exec_cpu_backend, EXEC_PRECISION_FP32, &o, cpu, &cpu_peak);
		assert_int_equal(cpu_peak, fp32_peak);
	}
}

/* --trace on the CUDA backend: every event is a pair of CUDA events read
 * back with cudaEventElapsedTime (the emulator stamps them with the
 * host's clock), one forward and one backward per micro-batch and step,
 * the compute ops in order without overlap, the device's memory all
 * returned. */
static void test_exec_cuda_trace_uses_cuda_events(void **state)
{
	struct exec_opts o;
	struct exec_device dev;
	struct exec_groups g;
	struct exec_layout l;
	struct exec_trainer *t;
	struct exec_trace tr;
	char why[256] = "";
	long calls = cuda_emu_elapsed_calls();
	int fwd = 0, bwd = 0, opt = 0;
	double loss, gn, last_end = 0;

	(void)state;
	tiny_opts(&o);
	o.trace = 1;
	exec_device_init(&dev, &exec_cuda_backend);
	assert_int_equal(exec_device_open(&dev), RC_OK);
	exec_groups_self(&g, &dev);
	assert_int_equal(exec_layout_init(&l, &o.par, 0), RC_OK);
	t = exec_trainer_new(&o, &l, &dev, &g, why, sizeof(why));
	assert_non_null(t);
	for (int s = 1; s <= o.steps; s++) {
		assert_int_equal(exec_trainer_step(t, s, &loss, &gn), RC_OK);
		assert_int_equal(exec_device_sync(&dev), RC_OK);
	}
	assert_int_equal(exec_trainer_trace(t, 0, &tr), RC_OK);
	assert_int_equal(tr.device_clock, 1);
	assert_int_equal(tr.steps, o.steps);
	assert_int_equal(tr.dropped, 0);
	/* two marks per event, and each step's origin after the first */
	assert_true(cuda_emu_elapsed_calls() - calls >= 2 * tr.n + o.steps - 1);
	for (long i = 0; i < tr.n; i++) {
		const struct exec_trace_event *e = &tr.ev[i];

		assert_true(e->start_s >= 0);
		assert_true(e->end_s >= e->start_s);
		if (e->kind != EXEC_TRACE_FWD && e->kind != EXEC_TRACE_BWD &&
		    e->kind != EXEC_TRACE_OPTIMIZER)
			continue;
		/* recorded in order on the compute stream: none starts before
		 * the previous one ended */
		assert_true(e->start_s >= last_end);
		last_end = e->end_s;
		fwd += e->kind == EXEC_TRACE_FWD;
		bwd += e->kind == EXEC_TRACE_BWD;
		opt += e->kind == EXEC_TRACE_OPTIMIZER;
	}
	/* gbs 4 / mbs 2 = 2 micro-batches a step, 3 steps */
	assert_int_equal(fwd, 2 * o.steps);
	assert_int_equal(bwd, 2 * o.steps);
	assert_int_equal(opt, o.steps);
	exec_trace_release(&tr);
	exec_trainer_free(t);
	assert_int_equal(dev.bytes_in_use, 0);
	exec_device_release(&dev);
}

/* ---- the device ------------------------------------------------------ */

static void test_exec_cuda_open_without_device_fails(void **state)
{
	struct exec_device d;

	(void)state;
	cuda_emu_set_devices(0);
	exec_device_init(&d, &exec_cuda_backend);
	assert_int_equal(exec_device_open(&d), RC_DEVICE);
	assert_null(d.priv);
	cuda_emu_set_devices(1);
	exec_device_init(&d, &exec_cuda_backend);
	assert_int_equal(exec_device_open(&d), RC_OK);
	assert_string_equal(d.name, "emulated GPU");
	assert_true(d.memory_bytes > 1e9);
	assert_int_equal(exec_device_sync(&d), RC_OK);
	exec_device_release(&d);
	assert_null(d.priv);
}

/* A cuBLAS failure (here an impossible leading dimension, as a wrong
 * shape would give) is reported once and fails every later sync. */
static void test_exec_cuda_failure_is_sticky(void **state)
{
	struct exec_device d;
	float *a, *b;

	(void)state;
	exec_device_init(&d, &exec_cuda_backend);
	assert_int_equal(exec_device_open(&d), RC_OK);
	a = exec_dalloc(&d, 64 * sizeof(float));
	b = exec_dalloc(&d, 64 * sizeof(float));
	d.be->matmul_forward(&d, b, a, a, NULL, 4, -1, 4);
	assert_int_equal(exec_device_sync(&d), RC_DEVICE);
	d.be->zero(&d, a, 64 * sizeof(float));
	assert_int_equal(exec_device_sync(&d), RC_DEVICE);
	exec_dfree(&d, a, 64 * sizeof(float));
	exec_dfree(&d, b, 64 * sizeof(float));
	exec_device_release(&d);
}

/* A watch that fails on its call number *ctx (0: never), counting calls. */
static int watch_calls;

static enum rc watch(void *ctx)
{
	watch_calls++;
	return watch_calls == *(int *)ctx ? RC_DEVICE : RC_OK;
}

/* Under a watch a wait polls: while the work runs the watch is asked, at
 * once and then every millisecond, and a watch that fails (a peer's NCCL
 * error) ends a wait that would never end, the device failed for good; a
 * value read back (the loss, per micro-batch) waits the same way.
 * Without a watch a wait blocks and asks nothing. */
static void test_exec_cuda_watched_waits(void **state)
{
	struct exec_device d;
	int never = 0, third = 3;
	float *x, host = 1;

	(void)state;
	exec_device_init(&d, &exec_cuda_backend);
	assert_int_equal(exec_device_open(&d), RC_OK);
	watch_calls = 0;
	cuda_emu_set_not_ready(5);
	assert_int_equal(exec_device_sync(&d), RC_OK);
	assert_int_equal(watch_calls, 0);

	exec_cuda_set_watch(&d, watch, &never);
	cuda_emu_set_not_ready(5);
	assert_int_equal(exec_device_sync(&d), RC_OK);
	assert_true(watch_calls >= 1);

	x = exec_dalloc(&d, sizeof(float));
	watch_calls = 0;
	cuda_emu_set_not_ready(1L << 62);
	exec_cuda_set_watch(&d, watch, &third);
	d.be->to_host(&d, &host, x, sizeof(float));
	assert_int_equal(watch_calls, 3);
	cuda_emu_set_not_ready(0);
	assert_int_equal(exec_device_sync(&d), RC_DEVICE);
	assert_int_equal(watch_calls, 3);
	exec_dfree(&d, x, sizeof(float));
	exec_device_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_cuda_matmul_matches_cpu),
		cmocka_unit_test(test_exec_cuda_norms_match_cpu),
		cmocka_unit_test(test_exec_cuda_column_sums_any_block_order),
		cmocka_unit_test(test_exec_cuda_bf16_attention_grads),
		cmocka_unit_test(test_exec_cuda_attention_matches_cpu),
		cmocka_unit_test(test_exec_cuda_attention_offset_matches_cpu),
		cmocka_unit_test(test_exec_cuda_elementwise_and_loss_match_cpu),
		cmocka_unit_test(test_exec_cuda_moe_matches_cpu),
		cmocka_unit_test(test_exec_cuda_steps_match_cpu_gelu_layernorm),
		cmocka_unit_test(test_exec_cuda_steps_match_cpu_swiglu_flash_recompute),
		cmocka_unit_test(test_exec_cuda_steps_match_cpu_zero3_selective),
		cmocka_unit_test(test_exec_cuda_steps_match_cpu_moe),
		cmocka_unit_test(test_exec_cuda_steps_match_cpu_lora),
		cmocka_unit_test(test_exec_cuda_bf16_lora),
		cmocka_unit_test(test_exec_cuda_steps_match_cpu_moe_shared_zero3),
		cmocka_unit_test(test_exec_cuda_bf16_moe),
		cmocka_unit_test(test_exec_cuda_bf16_within_tolerance),
		cmocka_unit_test(test_exec_cuda_bf16_swiglu_flash_zero3),
		cmocka_unit_test(test_exec_cuda_bf16_peak_memory_drops),
		cmocka_unit_test(test_exec_cuda_trace_uses_cuda_events),
		cmocka_unit_test(test_exec_cuda_open_without_device_fails),
		cmocka_unit_test(test_exec_cuda_failure_is_sticky),
		cmocka_unit_test(test_exec_cuda_watched_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
