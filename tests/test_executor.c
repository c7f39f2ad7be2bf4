/*
 * test_executor.c - the executor in one process: rank layout arithmetic,
 * options checks, the data source, the serial model's gradients against
 * central finite differences (tied embeddings too), initialisation that
 * does not depend on the layout, and serial equivalences (recomputation, flash attention,
 * micro-batching); LoRA's adapters (their gradients, a frozen base, their
 * states against the simulator's).  Multi-rank layouts are tested under mpirun by
 * tests/mpi/test_layouts.sh.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train/exec_train.h"
#include "sim_internal.h"

/* ---- layout arithmetic ----------------------------------------------- */

static void test_exec_layout_init_tp_innermost(void **state)
{
	struct sim_parallel p;
	struct exec_layout l;

	(void)state;
	sim_parallel_init(&p);
	p.tp = 2;
	p.pp = 2;
	p.dp = 2;
	/* rank = (pp_rank * dp + dp_rank) * tp + tp_rank (Megatron-Core's
	 * "tp-cp-ep-dp-pp"): 5 = (1 * 2 + 0) * 2 + 1 */
	assert_int_equal(exec_layout_init(&l, &p, 5), RC_OK);
	assert_int_equal(l.world, 8);
	assert_int_equal(l.tp_rank, 1);
	assert_int_equal(l.pp_rank, 1);
	assert_int_equal(l.dp_rank, 0);
	assert_int_equal(exec_layout_init(&l, &p, 6), RC_OK);
	assert_int_equal(l.tp_rank, 0);
	assert_int_equal(l.pp_rank, 1);
	assert_int_equal(l.dp_rank, 1);
	assert_int_equal(exec_layout_init(&l, &p, 2), RC_OK);
	assert_int_equal(l.pp_rank, 0);
	assert_int_equal(l.dp_rank, 1);
	for (int r = 0; r < 8; r++) {
		assert_int_equal(exec_layout_init(&l, &p, r), RC_OK);
		assert_int_equal(exec_layout_rank(&l, l.dp_rank, l.pp_rank, l.cp_rank, l.tp_rank), r);
	}
	assert_int_equal(exec_layout_init(&l, &p, 8), RC_INPUT);
	assert_int_equal(exec_layout_init(&l, &p, -1), RC_INPUT);
	/* CP right outside TP (the simulator's placement): with cp 2,
	 * rank = ((pp_rank * dp + dp_rank) * cp + cp_rank) * tp + tp_rank, so
	 * 11 = ((1 * 2 + 0) * 2 + 1) * 2 + 1 */
	p.cp = 2;
	assert_int_equal(exec_layout_init(&l, &p, 11), RC_OK);
	assert_int_equal(l.world, 16);
	assert_int_equal(l.tp_rank, 1);
	assert_int_equal(l.cp_rank, 1);
	assert_int_equal(l.pp_rank, 1);
	assert_int_equal(l.dp_rank, 0);
	for (int r = 0; r < 16; r++) {
		assert_int_equal(exec_layout_init(&l, &p, r), RC_OK);
		assert_int_equal(exec_layout_rank(&l, l.dp_rank, l.pp_rank, l.cp_rank, l.tp_rank), r);
	}
	assert_int_equal(exec_layout_init(&l, &p, 16), RC_INPUT);
}

static void test_exec_split_balanced(void **state)
{
	long off, len;

	(void)state;
	/* 10 items over 3 parts: 4, 3, 3 */
	exec_split(10, 3, 0, &off, &len);
	assert_int_equal(off, 0);
	assert_int_equal(len, 4);
	exec_split(10, 3, 1, &off, &len);
	assert_int_equal(off, 4);
	assert_int_equal(len, 3);
	exec_split(10, 3, 2, &off, &len);
	assert_int_equal(off, 7);
	assert_int_equal(len, 3);
	exec_split(8, 2, 1, &off, &len);
	assert_int_equal(off, 4);
	assert_int_equal(len, 4);
}

static void test_exec_chunk_layers_interleaved(void **state)
{
	int first, count;

	(void)state;
	/* 8 layers, pp 2, v 2: chunk c of stage s is virtual stage 2c + s,
	 * two layers each (Narayanan et al., SC'21, fig. 4) */
	exec_chunk_layers(8, 2, 2, 0, 0, &first, &count);
	assert_int_equal(first, 0);
	assert_int_equal(count, 2);
	exec_chunk_layers(8, 2, 2, 1, 0, &first, &count);
	assert_int_equal(first, 2);
	exec_chunk_layers(8, 2, 2, 0, 1, &first, &count);
	assert_int_equal(first, 4);
	exec_chunk_layers(8, 2, 2, 1, 1, &first, &count);
	assert_int_equal(first, 6);
	exec_chunk_layers(12, 3, 1, 2, 0, &first, &count);
	assert_int_equal(first, 8);
	assert_int_equal(count, 4);
}

/* Uneven splits are the simulator's (sim_stage_layers, sim_chunk_layers):
 * 7 layers over 4 stages give the middle stages one extra layer each and
 * the first the one left, 2 + 2 + 2 + 1, so stage s starts at layer 2s.
 * With 9 layers, pp 4 and v 2: stages 2, 3, 2, 2; stage 1's chunks hold 2
 * and 1, the others 1 and 1.  In virtual-stage order (chunk c of stage s
 * is c * 4 + s) the counts are 1, 2, 1, 1 | 1, 1, 1, 1, so stage 1's
 * chunk 0 is layers 1-2, its chunk 1 (virtual stage 5) layer 1 + 2 + 1 +
 * 1 + 1 = 6. */
static void test_exec_chunk_layers_uneven_as_simulated(void **state)
{
	static const int first7[4] = { 0, 2, 4, 6 }, count7[4] = { 2, 2, 2, 1 };
	struct sim_model m;
	struct sim_parallel p;
	struct sim_shape sh;
	int first, count, next = 0;

	(void)state;
	for (int s = 0; s < 4; s++) {
		exec_chunk_layers(7, 4, 1, s, 0, &first, &count);
		assert_int_equal(first, first7[s]);
		assert_int_equal(count, count7[s]);
		assert_int_equal(exec_stage_layers(7, 4, s), count7[s]);
	}
	exec_chunk_layers(9, 4, 2, 1, 0, &first, &count);
	assert_int_equal(first, 1);
	assert_int_equal(count, 2);
	exec_chunk_layers(9, 4, 2, 1, 1, &first, &count);
	assert_int_equal(first, 6);
	assert_int_equal(count, 1);
	exec_chunk_layers(9, 4, 2, 3, 1, &first, &count);
	assert_int_equal(first, 8);
	assert_int_equal(count, 1);
	/* Llama 3 405B's 126 layers over 16 stages of 4 chunks: in virtual
	 * stage order the chunks tile layers 0..125 once, each as long as
	 * the simulator's chunk */
	memset(&m, 0, sizeof(m));
	m.layers = 126;
	m.hidden = m.heads = m.kv_heads = m.ffn = m.vocab = m.seq = 1;
	sim_parallel_init(&p);
	p.pp = 16;
	p.interleave = 4;
	sim_shape_init(&sh, &m, &p);
	for (int k = 0; k < 16 * 4; k++) {
		exec_chunk_layers(126, 16, 4, k % 16, k / 16, &first, &count);
		assert_int_equal(first, next);
		assert_int_equal(count, sim_chunk_layers(&sh, k % 16, k / 16));
		assert_true(count >= 1);
		next += count;
	}
	assert_int_equal(next, 126);
	assert_int_equal(exec_stage_layers(126, 16, 0), 7);
	assert_int_equal(exec_stage_layers(126, 16, 1), 8);
	assert_int_equal(exec_stage_layers(126, 16, 15), 7);
}

/* ---- options --------------------------------------------------------- */

static void test_exec_opts_check_rejects_unsplittable(void **state)
{
	struct exec_opts o;
	char why[256];

	(void)state;
	exec_opts_init(&o);
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_OK);
	o.model.heads = 6;
	o.model.kv_heads = 6;
	o.model.hidden = 60;
	o.model.ffn = 240;
	o.par.tp = 4;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "parallel.tp"));
	assert_non_null(strstr(why, "found 4"));

	/* 4 layers over 3 stages split as the simulator's 1 + 2 + 1; over
	 * 5 one stage would hold none */
	exec_opts_init(&o);
	o.par.pp = 3;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_OK);
	o.par.pp = 5;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "parallel.pp: expected at most the 4 layers (one a stage), "
				"found 5"));
	/* 7 layers over pp 4 are 2 + 2 + 2 + 1: the last stage has no layer
	 * for a second chunk */
	o.model.layers = 7;
	o.par.pp = 4;
	o.par.interleave = 2;
	exec_opts_derive(&o);
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "parallel.interleave: expected at most 1, a layer a chunk "
				"(stage 3 holds 1 of the 7 layers), found 2"));
	o.model.layers = 9;     /* 2 + 3 + 2 + 2 */
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_OK);

	exec_opts_init(&o);
	o.par.dp = 3; /* gbs 8, mbs 2 */
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "parallel.gbs"));

	exec_opts_init(&o);
	o.par.dp = 8;
	o.par.tp = 4;
	o.par.gbs = 16;
	o.max_ranks = 16; /* 32 ranks asked */
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "at most 16 ranks, found 32"));

	/* context parallelism: two of 2 cp chunks of the sequence (32) a rank */
	exec_opts_init(&o);
	o.par.cp = 2;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_OK);
	assert_int_equal(exec_opts_ranks(&o), 2);
	o.model.seq = 24;
	o.par.cp = 8;    /* divides 24, 2 x 8 does not */
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_string_equal(why, "parallel.cp: expected 2 x cp to divide the sequence (24), found cp 8");
	o.model.seq = 32;
	o.par.cp = 3;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_string_equal(why, "parallel.cp: expected 2 x cp to divide the sequence (32), found cp 3");
	o.par.cp = 0;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "expected tp, pp, dp and cp >= 1"));

	exec_opts_init(&o);
	o.par.interleave = 2;
	o.par.pp = 2;
	/* the schedule must follow the interleave: derive fixes it */
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	exec_opts_derive(&o);
	assert_int_equal(o.schedule, SCHED_INTERLEAVED);
	/* 4 layers over pp 2 x v 2 chunks: one layer each */
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_OK);

	/* sequence parallelism cuts the sequence (32) into tp slices */
	exec_opts_init(&o);
	o.par.seq_parallel = 1;
	o.model.seq = 30;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_OK); /* tp 1: not applied */
	o.par.tp = 4;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "parallel.seq_parallel: expected tp 4 to divide the sequence 30"));
	o.model.seq = 32;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_OK);
	/* with cp, each CP slice: 40 / cp 4 = 10 tokens do not split over tp 4 */
	o.model.seq = 40;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_OK);
	o.par.cp = 4;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "expected tp 4 to divide the sequence 40 / cp 4"));
}

/* What the executor runs of a mixture of experts, and the one line it
 * says about what it does not. */
static void test_exec_opts_check_moe_layouts(void **state)
{
	struct exec_opts o;
	char why[256];

	(void)state;
	exec_opts_init(&o);
	o.model.experts = 8;
	o.model.top_k = 2;
	o.model.expert_ffn = 64;
	o.par.dp = 4;
	o.par.ep = 4;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_OK);
	/* ep folds over the stage's 4 ranks and shares the 8 experts */
	o.par.ep = 3;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_string_equal(why, "parallel.ep: expected a divisor of the 8 experts, found 3");
	o.model.experts = 24;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_string_equal(why, "parallel.ep: expected a divisor of tp x cp x dp = 4, the ranks "
			    "of a pipeline stage the experts fold over, found 3");
	o.model.experts = 8;
	o.par.ep = 2;
	o.par.etp = 2;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "parallel.etp: expected 1"));
	o.par.etp = 1;
	/* each TP rank routes its own tokens: sequence parallelism */
	o.par.tp = 2;
	o.par.dp = 2;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "parallel.seq_parallel: expected sequence parallelism with "
				"tp 2 and experts"));
	o.par.seq_parallel = 1;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_OK);
	/* the model as the simulator checks it */
	o.model.top_k = 9;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_string_equal(why, "model.top_k: expected 1 to experts 8, found 9");
	o.model.top_k = 2;
	o.model.shared_experts = 1;
	o.model.shared_ffn = 33;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "parallel.tp: expected a divisor of the shared experts' width "
				"(33), found 2"));
	o.model.shared_ffn = 32;
	o.par.ep_flex = 1;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "parallel.ep_dispatcher: expected alltoall"));
	o.par.ep_flex = 0;
	/* the MoE layers' MLP width need not split, the dense ones' must */
	o.model.ffn = 33;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_OK);
	o.model.dense_layers = 1;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "expected a divisor of the MLP width (33)"));
	/* no expert parallelism without experts, no latent attention */
	exec_opts_init(&o);
	o.par.dp = 2;
	o.par.ep = 2;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_string_equal(why, "parallel.ep: expected 1 without experts, found 2");
	exec_opts_init(&o);
	o.model.kv_lora_rank = 512;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "model.kv_lora_rank: expected 0"));
}

/* ---- data ------------------------------------------------------------ */

static void test_exec_data_synthetic_bigram(void **state)
{
	struct exec_data dt;
	int a[33], b[33], follow = 0, total = 0;
	char why[128];

	(void)state;
	assert_int_equal(exec_data_open(&dt, NULL, 128, 32, 7, why, sizeof(why)), RC_OK);
	exec_data_sequence(&dt, 12, a);
	exec_data_sequence(&dt, 12, b);
	assert_memory_equal(a, b, sizeof(a));
	/* a token follows its fixed successor with probability 0.75 (plus
	 * 1/128 by chance): count over 200 sequences of 32 transitions */
	for (long s = 0; s < 200; s++) {
		exec_data_sequence(&dt, s, a);
		for (int i = 0; i < 33; i++)
			assert_true(a[i] >= 0 && a[i] < 128);
		for (int i = 1; i < 33; i++) {
			/* the successor map, drawn as exec_data.c does */
			double u = exec_rand_uniform(7, 0x73756363ULL, (uint64_t)a[i - 1]);

			follow += a[i] == (int)(u * 128);
			total++;
		}
	}
	assert_near((double)follow / total, 0.75 + 0.25 / 128, 0.03);
	exec_data_release(&dt);
}

static void test_exec_data_file_rejects_big_token(void **state)
{
	struct exec_data dt;
	char path[] = "/tmp/gpuplan_exec_tokXXXXXX", why[256];
	unsigned char bytes[40];
	int fd = mkstemp(path), seq[5];
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "wb");
	for (int i = 0; i < 20; i++) {
		bytes[2 * i] = (unsigned char)(i % 50);
		bytes[2 * i + 1] = 0;
	}
	bytes[2 * 17] = 200; /* token 200 >= vocab 64 */
	fwrite(bytes, 1, sizeof(bytes), f);
	fclose(f);
	assert_int_equal(exec_data_open(&dt, path, 64, 4, 1, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "token 17"));
	assert_int_equal(exec_data_open(&dt, path, 256, 4, 1, why, sizeof(why)), RC_OK);
	/* window idx starts at idx * seq mod (20 - 4): idx 1 -> tokens 4..8 */
	exec_data_sequence(&dt, 1, seq);
	assert_int_equal(seq[0], 4);
	assert_int_equal(seq[4], 8);
	exec_data_release(&dt);
	assert_null(dt.file);
	/* little-endian whatever the host: bytes 02 01 are token 258 */
	bytes[2 * 5] = 2;
	bytes[2 * 5 + 1] = 1;
	f = fopen(path, "wb");
	fwrite(bytes, 1, sizeof(bytes), f);
	fclose(f);
	assert_int_equal(exec_data_open(&dt, path, 512, 4, 1, why, sizeof(why)), RC_OK);
	exec_data_sequence(&dt, 1, seq);
	assert_int_equal(seq[1], 258);
	exec_data_release(&dt);
	/* an odd byte count, no file, a directory: the user's input */
	f = fopen(path, "wb");
	fwrite(bytes, 1, 39, f);
	fclose(f);
	assert_int_equal(exec_data_open(&dt, path, 512, 4, 1, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "found 39 bytes"));
	remove(path);
	assert_int_equal(exec_data_open(&dt, path, 512, 4, 1, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "cannot open"));
	assert_int_equal(exec_data_open(&dt, "/tmp", 512, 4, 1, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "found a directory"));
	assert_null(dt.file);
}

static void test_exec_rand_normal_moments(void **state)
{
	double s = 0, s2 = 0;
	int n = 20000;

	(void)state;
	for (int i = 0; i < n; i++) {
		double x = exec_rand_normal(3, 11, (uint64_t)i);

		s += x;
		s2 += x * x;
	}
	/* standard errors: 1/sqrt(n) = 0.007 for the mean, sqrt(2/n) = 0.01
	 * for the variance; allow 4 of them */
	assert_true(fabs(s / n) < 0.03);
	assert_true(fabs(s2 / n - 1) < 0.04);
}

/* The fill that initialisation uses is exec_rand_normal, scaled and
 * rounded to float, from any first index. */
static void test_exec_rand_normal_fill_same_values(void **state)
{
	float out[37];

	(void)state;
	exec_rand_normal_fill(out, 37, 5, 9, 1000, 0.02);
	for (int i = 0; i < 37; i++)
		assert_true(out[i] == (float)(0.02 * exec_rand_normal(5, 9, 1000 + (uint64_t)i)));
}

/* ---- attention of a context-parallel slice ---------------------------- */

/* A context-parallel rank attends its slice of the queries to all keys:
 * with b 2, 12 tokens, 4 heads over 2 KV heads of 8, the slices of cp 3
 * (queries 0..3, 4..7, 8..11 at q0 0, 4, 8) must give the full causal
 * attention's rows of out, lse and the probabilities (the same sums in
 * the same order: equal to 1e-6), and in backward its rows of dq and,
 * summed over the slices as the reduce-scatter sums them, its dk and dv
 * (other summation order: 1e-5).  Both backward paths: probabilities
 * kept, and rebuilt from lse.  Row 5's probabilities past key 5 are 0. */
static void test_exec_cpu_attention_offset_rows(void **state)
{
	enum { B = 2, T = 12, NH = 4, NKV = 2, HD = 8, CP = 3, TL = T / CP };
	const size_t qr = (size_t)NH * HD, kr = (size_t)NKV * HD;
	struct exec_device dev;
	const struct exec_backend *be = &exec_cpu_backend;
	float *q = xcalloc(B * T * qr, sizeof(float)), *k = xcalloc(B * T * kr, sizeof(float));
	float *v = xcalloc(B * T * kr, sizeof(float)), *dout = xcalloc(B * T * qr, sizeof(float));
	float *out = xcalloc(B * T * qr, sizeof(float)), *lse = xcalloc(B * NH * T, sizeof(float));
	float *att = xcalloc(B * NH * T * T, sizeof(float));
	float *dq = xcalloc(B * T * qr, sizeof(float)), *dk = xcalloc(B * T * kr, sizeof(float));
	float *dv = xcalloc(B * T * kr, sizeof(float));
	float *sq = xcalloc(B * TL * qr, sizeof(float)), *sdo = xcalloc(B * TL * qr, sizeof(float));
	float *so = xcalloc(B * TL * qr, sizeof(float)), *sl = xcalloc(B * NH * TL, sizeof(float));
	float *sa = xcalloc(B * NH * TL * T, sizeof(float));
	float *sdq = xcalloc(B * TL * qr, sizeof(float));
	float *sdk = xcalloc(B * T * kr, sizeof(float)), *sdv = xcalloc(B * T * kr, sizeof(float));
	double worst_k = 0;

	(void)state;
	exec_device_init(&dev, be);
	for (size_t i = 0; i < B * T * qr; i++) {
		q[i] = (float)exec_rand_normal(5, 1, i);
		dout[i] = (float)exec_rand_normal(5, 4, i);
	}
	for (size_t i = 0; i < B * T * kr; i++) {
		k[i] = (float)exec_rand_normal(5, 2, i);
		v[i] = (float)exec_rand_normal(5, 3, i);
	}
	be->attention_forward(&dev, out, lse, att, q, k, v, B, T, T, 0, NH, NKV, HD);
	be->attention_backward(&dev, dq, dk, dv, dout, q, k, v, lse, att, B, T, T, 0, NH, NKV, HD);
	for (int kept = 0; kept < 2; kept++) {
		memset(sdk, 0, B * T * kr * sizeof(float));
		memset(sdv, 0, B * T * kr * sizeof(float));
		for (int r = 0; r < CP; r++) {
			int q0 = r * TL;

			for (int b = 0; b < B; b++) {
				memcpy(sq + b * TL * qr, q + (b * T + q0) * qr, TL * qr * sizeof(float));
				memcpy(sdo + b * TL * qr, dout + (b * T + q0) * qr, TL * qr * sizeof(float));
			}
			be->attention_forward(&dev, so, sl, sa, sq, k, v, B, TL, T, q0, NH, NKV, HD);
			memset(sdq, 0, B * TL * qr * sizeof(float));
			be->attention_backward(&dev, sdq, sdk, sdv, sdo, sq, k, v, sl, kept ? sa : NULL,
					       B, TL, T, q0, NH, NKV, HD);
			for (int b = 0; b < B; b++) {
				for (size_t i = 0; i < TL * qr; i++) {
					size_t f = (b * T + q0) * qr + i;

					assert_float_equal(so[b * TL * qr + i], out[f], 1e-6);
					assert_float_equal(sdq[b * TL * qr + i], dq[f], 1e-6);
				}
				for (int h = 0; h < NH; h++)
					for (int i = 0; i < TL; i++) {
						size_t row = ((size_t)b * NH + h) * T + q0 + i;
						size_t srow = ((size_t)b * NH + h) * TL + i;

						assert_float_equal(sl[srow], lse[row], 1e-6);
						for (int j = 0; j < T; j++)
							assert_float_equal(sa[srow * T + j],
									   att[row * T + j], 1e-6);
					}
			}
		}
		for (size_t i = 0; i < B * T * kr; i++) {
			assert_float_equal(sdk[i], dk[i], 1e-5);
			assert_float_equal(sdv[i], dv[i], 1e-5);
			if (fabs(sdk[i] - dk[i]) > worst_k)
				worst_k = fabs(sdk[i] - dk[i]);
		}
	}
	/* the causal mask at the query's global position: row 5 (slice 1,
	 * local row 1) sees keys 0..5 only, and its kept row says so */
	assert_true(att[5 * T + 5] > 0);
	assert_float_equal(att[5 * T + 6], 0, 0);
	assert_true(worst_k < 1e-5);
	free(q); free(k); free(v); free(dout); free(out); free(lse); free(att);
	free(dq); free(dk); free(dv); free(sq); free(sdo); free(so); free(sl); free(sa);
	free(sdq); free(sdk); free(sdv);
	exec_device_release(&dev);
}

/* The router's kernels (exec_cpu_moe.c).  The top-k takes the largest
 * first and gives a tie to the lower expert; the weights are the chosen
 * probabilities over their sum, or as they are with pre_softmax.  The
 * backward against central differences of L = sum dw . w in every logit
 * (h 1e-3: measured within 2e-5 of it), 3 tokens routed top-2 of 6: the
 * unchosen logits get the softmax's share, none under renormalisation,
 * where the weights do not depend on them. */
static void test_exec_cpu_moe_route_grads(void **state)
{
	enum { N = 3, E = 6, K = 2 };
	struct exec_device dev;
	float l[N * E], probs[N * E], w[N * K], dw[N * K], dl[N * E];
	int idx[N * K];
	static const float ties[2][E] = { { 1, 3, 3, 0, 3, -1 }, { 2, 2, 2, 2, 2, 2 } };

	(void)state;
	exec_device_init(&dev, &exec_cpu_backend);
	assert_int_equal(exec_device_open(&dev), RC_OK);
	memcpy(l, ties, sizeof(ties));
	dev.be->moe_route_forward(&dev, probs, idx, w, l, 2, E, K, 0);
	assert_int_equal(idx[0], 1);
	assert_int_equal(idx[1], 2);
	assert_int_equal(idx[2], 0);
	assert_int_equal(idx[3], 1);
	assert_float_equal(w[0], 0.5, 1e-7);
	assert_float_equal(w[2] + w[3], 1, 1e-7);
	for (int pre = 0; pre < 2; pre++) {
		for (int i = 0; i < N * E; i++)
			l[i] = 0.8f * sinf(1.7f * (float)i);
		for (int i = 0; i < N * K; i++)
			dw[i] = cosf(0.9f * (float)i);
		memset(dl, 0, sizeof(dl));
		dev.be->moe_route_forward(&dev, probs, idx, w, l, N, E, K, pre);
		for (int t = 0; t < N; t++) {
			float s = 0;

			assert_true(probs[t * E + idx[t * K]] >= probs[t * E + idx[t * K + 1]]);
			for (int j = 0; j < K; j++)
				s += probs[t * E + idx[t * K + j]];
			for (int j = 0; j < K; j++)
				assert_float_equal(w[t * K + j],
						   probs[t * E + idx[t * K + j]] / (pre ? 1 : s), 1e-7);
		}
		dev.be->moe_route_backward(&dev, dl, dw, probs, idx, N, E, K, pre);
		for (int i = 0; i < N * E; i++) {
			float keep = l[i];
			double lp = 0, lm = 0, fd;
			int chosen = 0;

			l[i] = keep + 1e-3f;
			dev.be->moe_route_forward(&dev, probs, idx, w, l, N, E, K, pre);
			for (int j = 0; j < N * K; j++)
				lp += (double)dw[j] * w[j];
			l[i] = keep - 1e-3f;
			dev.be->moe_route_forward(&dev, probs, idx, w, l, N, E, K, pre);
			for (int j = 0; j < N * K; j++)
				lm += (double)dw[j] * w[j];
			l[i] = keep;
			fd = (lp - lm) / (double)((keep + 1e-3f) - (keep - 1e-3f));
			for (int j = 0; j < K; j++)
				chosen |= idx[i / E * K + j] == i % E;
			if (fabs(fd - dl[i]) > 1e-4)
				print_error("pre_softmax %d logit %d: finite difference %.6g, analytic "
					    "%.6g\n", pre, i, fd, dl[i]);
			assert_true(fabs(fd - dl[i]) <= 1e-4);
			if (!pre && !chosen)
				assert_true(fabs(dl[i]) < 1e-7);
			if (pre)
				assert_true(fabs(dl[i]) > 1e-3);
		}
	}
	exec_device_release(&dev);
}

/* The dispatch's permutation and the combine (exec_cpu_moe.c) against
 * their definitions: 3 tokens, top-2, rows of 2. */
static void test_exec_cpu_moe_permute_combine(void **state)
{
	enum { N = 3, K = 2, C = 2 };
	struct exec_device dev;
	/* slots t k + j in expert order, and each slot's row */
	static const int map[N * K] = { 3, 0, 5, 1, 4, 2 }, pos[N * K] = { 1, 3, 5, 0, 4, 2 };
	float x[N * C] = { 1, 2, 3, 4, 5, 6 }, w[N * K] = { .5f, .25f, 1, 2, 3, 4 };
	float xp[N * K * C], out[N * C] = { 0 }, dw[N * K] = { 0 }, dout[N * C] = { 1, -1, 2, 0, 0, 1 };

	(void)state;
	exec_device_init(&dev, &exec_cpu_backend);
	assert_int_equal(exec_device_open(&dev), RC_OK);
	dev.be->moe_permute(&dev, xp, x, map, NULL, N * K, C, K);
	/* row 0 is slot 3: token 1's */
	assert_float_equal(xp[0], 3, 0);
	assert_float_equal(xp[1], 4, 0);
	assert_float_equal(xp[4], 5, 0);   /* row 2, slot 5: token 2 */
	dev.be->moe_permute(&dev, xp, x, map, w, N * K, C, K);
	assert_float_equal(xp[0], 2 * 3, 0);
	/* combine: token t gets sum_j w[t k + j] xp[pos[t k + j]] */
	dev.be->moe_unpermute(&dev, out, xp, pos, w, N, C, K);
	for (int t = 0; t < N; t++)
		for (int c = 0; c < C; c++) {
			float want = 0;

			for (int j = 0; j < K; j++)
				want += w[t * K + j] * xp[pos[t * K + j] * C + c];
			assert_float_equal(out[t * C + c], want, 1e-6);
		}
	dev.be->moe_weights_backward(&dev, dw, dout, xp, pos, N, C, K);
	for (int s = 0; s < N * K; s++)
		assert_float_equal(dw[s], dout[s / K * C] * xp[pos[s] * C] +
			dout[s / K * C + 1] * xp[pos[s] * C + 1], 1e-6);
	exec_device_release(&dev);
}

/* ---- the serial model ------------------------------------------------ */

struct rig {
	struct exec_device dev;
	struct exec_groups g;
	struct exec_layout l;
	struct exec_trainer *t;
};

static void rig_open(struct rig *r, const struct exec_opts *o, int rank)
{
	char why[256] = "";

	exec_device_init(&r->dev, &exec_cpu_backend);
	exec_groups_self(&r->g, &r->dev);
	assert_int_equal(exec_layout_init(&r->l, &o->par, rank), RC_OK);
	r->t = exec_trainer_new(o, &r->l, &r->dev, &r->g, why, sizeof(why));
	if (!r->t)
		print_error("exec_trainer_new: %s\n", why);
	assert_non_null(r->t);
}

static void rig_close(struct rig *r)
{
	exec_trainer_free(r->t);
	/* everything the trainer allocated went back */
	assert_int_equal(r->dev.bytes_in_use, 0);
	exec_device_release(&r->dev);
}

static void tiny_opts(struct exec_opts *o)
{
	exec_opts_init(o);
	o->model.layers = 2;
	o->model.hidden = 16;
	o->model.heads = 4;
	o->model.kv_heads = 2;   /* grouped-query attention */
	o->model.ffn = 32;
	o->model.vocab = 32;
	o->model.seq = 8;
	o->par.mbs = 2;
	o->par.gbs = 4;          /* two micro-batches accumulate */
	o->par.flash = 0;
	o->steps = 3;
	exec_opts_derive(o);
}

/* Unit i's tensors of t checked as gradcheck() says, against the
 * gradients of the batch of step 1 computed last; returns how many (a
 * tensor with no gradient to speak of is skipped). */
static int gradcheck_unit(struct exec_trainer *t, int i)
{
	float *p, *g;
	long n, off, len;
	const char *name;
	int checked = 0;

	assert_int_equal(exec_trainer_unit(t, i, &p, &g, &n), 0);
	for (int j = 0; exec_trainer_tensor(t, i, j, &off, &len, &name) == 0; j++) {
		double norm = 0, eps, lp, lm, fd, tol;
		float *g0, *p0;

		for (long k = 0; k < len; k++)
			norm += (double)g[off + k] * g[off + k];
		norm = sqrt(norm);
		/* the key bias cannot change the softmax: its exact gradient
		 * is zero, what is left is rounding */
		if (len == 0 || norm < 1e-5)
			continue;
		eps = fmin(1e-3 / norm, 0.1);
		g0 = xmalloc((size_t)len * sizeof(float));
		p0 = xmalloc((size_t)len * sizeof(float));
		memcpy(g0, g + off, (size_t)len * sizeof(float));
		memcpy(p0, p + off, (size_t)len * sizeof(float));
		for (long k = 0; k < len; k++)
			p[off + k] = (float)(p0[k] + eps * g0[k] / norm);
		assert_int_equal(exec_trainer_eval(t, 1, 0, &lp), RC_OK);
		for (long k = 0; k < len; k++)
			p[off + k] = (float)(p0[k] - eps * g0[k] / norm);
		assert_int_equal(exec_trainer_eval(t, 1, 0, &lm), RC_OK);
		memcpy(p + off, p0, (size_t)len * sizeof(float));
		fd = (lp - lm) / (2 * eps);
		/* 2e-3 relative; 3e-3 for a gradient under 1e-4, whose step
		 * is capped at 0.1 and whose loss difference (2e-5) is near
		 * the rounding of the loss: the MoE router's with shared
		 * experts and pre-softmax routing (7.8e-5) is off by 1.7e-3
		 * with a hand-written GEMM and by 2.2e-3 with OpenBLAS's;
		 * every other tensor is within 1.6e-3. */
		tol = norm < 1e-4 ? 3e-3 : 2e-3;
		if (getenv("GRADCHECK_VERBOSE") || fabs(fd - norm) > tol * norm)
			print_error("unit %d tensor %s: finite difference %.6g, analytic %.6g\n",
				    i, name, fd, norm);
		assert_near(fd, norm, tol);
		checked++;
		free(g0);
		free(p0);
	}
	return checked;
}

/* Central differences along each tensor's own gradient direction:
 * (L(p + e d) - L(p - e d)) / 2e must equal |g| for d = g / |g| (a wrong,
 * missing or transposed term moves the derivative off |g|).  fp32 losses
 * carry ~1e-7 relative noise, so e moves the loss by about 1e-3 (at most
 * 0.1 in parameter norm, to keep the curvature term small); measured
 * agreement is 3e-4 or better, the tolerance 2e-3.  GRADCHECK_VERBOSE=1
 * prints every tensor's pair. */
static void gradcheck(const struct exec_opts *o)
{
	struct rig r;
	double loss, checked = 0;
	int nu, moe = o->model.experts > 0 ? o->model.layers - o->model.dense_layers : 0;

	rig_open(&r, o, 0);
	assert_int_equal(exec_trainer_eval(r.t, 1, 1, &loss), RC_OK);
	/* untrained: about ln(vocab) = 3.47 */
	assert_near(loss, log(32.0), 0.05);
	nu = exec_trainer_units(r.t);
	/* embedding, 2 layers, head; tied: the word matrix a unit of its own;
	 * each MoE layer's experts one more */
	assert_int_equal(nu, (o->model.tied_embeddings ? 5 : 4) + moe);
	for (int i = 0; i < nu; i++)
		checked += gradcheck_unit(r.t, i);
	/* embedding 2 + 2 layers x 17 (bk skipped) + head 3; tied: one
	 * matrix fewer; an MoE layer without shared experts has 10 of its own
	 * (its router) and 2 or 3 of its experts' instead of the MLP's 4 */
	assert_true(checked >= 30 - 2 * moe);
	rig_close(&r);
}

/* tiny_opts with 4 experts of width 8 in every layer from `dense` on,
 * every token going to all 4.  With fewer the loss is smooth only in
 * pieces: where a step moves one expert's probability past another's, a
 * token's choice changes and the loss jumps (measured here with top-2:
 * along wte's gradient a jump of 3.6e-5 at 6.4e-5 of the step, inside
 * every central difference this check takes), so the top-k's own
 * gradient is checked on the router's kernels
 * (test_exec_cpu_moe_route_grads); here the path through the router,
 * the permutation, the experts and the combine. */
static void tiny_moe(struct exec_opts *o, int dense)
{
	tiny_opts(o);
	o->model.experts = 4;
	o->model.top_k = 4;
	o->model.expert_ffn = 8;
	o->model.dense_layers = dense;
}

/* A mixture of experts: the router's gradient flows through the experts'
 * weights into the softmax and the router matrix; the experts' through
 * their rows. */
static void test_exec_trainer_gradcheck_moe(void **state)
{
	struct exec_opts o;

	(void)state;
	tiny_moe(&o, 0);
	gradcheck(&o);
}

/* The weights as a softmax over every expert, SwiGLU experts, a shared
 * expert beside them, and a dense first layer. */
static void test_exec_trainer_gradcheck_moe_shared_pre_softmax(void **state)
{
	struct exec_opts o;

	(void)state;
	tiny_moe(&o, 1);
	o.model.mlp = SIM_MLP_SWIGLU;
	o.model.shared_experts = 1;
	o.model.shared_ffn = 16;
	o.model.router_pre_softmax = 1;
	exec_opts_derive(&o);
	gradcheck(&o);
}

static void test_exec_trainer_gradcheck_gelu_layernorm(void **state)
{
	struct exec_opts o;

	(void)state;
	tiny_opts(&o);
	gradcheck(&o);
}

static void test_exec_trainer_gradcheck_swiglu_rmsnorm_flash(void **state)
{
	struct exec_opts o;

	(void)state;
	tiny_opts(&o);
	o.model.mlp = SIM_MLP_SWIGLU;
	o.par.flash = 1;
	exec_opts_derive(&o);
	assert_int_equal(o.norm, EXEC_NORM_RMS);
	gradcheck(&o);
}

/* Tied embeddings (GPT-2): the one matrix's gradient is the sum of its
 * uses as embedding and as LM head; finite differences move both uses at
 * once, so a missing or a doubled term shows. */
static void test_exec_trainer_gradcheck_tied(void **state)
{
	struct exec_opts o;

	(void)state;
	tiny_opts(&o);
	o.model.tied_embeddings = 1;
	gradcheck(&o);
}

/* Tied over two stages: each end holds the matrix, both drawn as the
 * single rank's from the same stream, and the last stage's copy is not
 * counted.  Hand count for tiny_opts (vocab 32, hidden 16): the untied
 * model has 32 x 16 = 512 parameters more than the tied one. */
static void test_exec_trainer_tied_copies_start_equal(void **state)
{
	struct exec_opts o1, o2;
	struct rig untied, one, s0, s1;
	float *p, *g, *p0, *p1;
	long n, n0, n1, off, len;
	const char *name;

	(void)state;
	tiny_opts(&o1);
	rig_open(&untied, &o1, 0);
	o1.model.tied_embeddings = 1;
	rig_open(&one, &o1, 0);
	assert_near(exec_trainer_local_params(untied.t) - exec_trainer_local_params(one.t),
		    32.0 * 16, 1e-12);
	/* the single rank's unit 0 is the word matrix: the untied wte */
	assert_int_equal(exec_trainer_unit(one.t, 0, &p, &g, &n), 0);
	assert_int_equal(n, 32 * 16);
	assert_int_equal(exec_trainer_tensor(untied.t, 0, 0, &off, &len, &name), 0);
	assert_string_equal(name, "wte");
	assert_int_equal(exec_trainer_unit(untied.t, 0, &p0, &g, &n0), 0);
	assert_memory_equal(p, p0 + off, (size_t)n * sizeof(float));
	/* pp 2: stage 0 starts with it, stage 1 ends with its copy */
	o2 = o1;
	o2.par.pp = 2;
	rig_open(&s0, &o2, 0);
	rig_open(&s1, &o2, 1);
	assert_int_equal(exec_trainer_units(s0.t), 3);  /* word, embedding, layer 0 */
	assert_int_equal(exec_trainer_units(s1.t), 3);  /* layer 1, head, word */
	assert_int_equal(exec_trainer_unit(s0.t, 0, &p0, &g, &n0), 0);
	assert_int_equal(exec_trainer_unit(s1.t, 2, &p1, &g, &n1), 0);
	assert_int_equal(n0, n);
	assert_int_equal(n1, n);
	assert_memory_equal(p0, p, (size_t)n * sizeof(float));
	assert_memory_equal(p1, p, (size_t)n * sizeof(float));
	assert_near(exec_trainer_local_params(s0.t) + exec_trainer_local_params(s1.t),
		    exec_trainer_local_params(one.t), 1e-12);
	rig_close(&s1);
	rig_close(&s0);
	rig_close(&one);
	rig_close(&untied);
}

/* Initial weights do not depend on how many threads draw them: one, five
 * (parts that cut across tensors and rows), or the machine's; and on a
 * tensor-parallel rank, whose blocks start at a row or column offset. */
static void test_exec_trainer_init_threads_same_weights(void **state)
{
	struct exec_opts o;
	int threads[] = { 5, 0 };

	(void)state;
	tiny_opts(&o);
	for (int tp = 1; tp <= 2; tp++) {
		struct rig one;

		o.par.tp = tp;
		o.init_threads = 1;
		rig_open(&one, &o, tp - 1);
		for (size_t k = 0; k < GP_ARRAY_LEN(threads); k++) {
			struct rig many;

			o.init_threads = threads[k];
			rig_open(&many, &o, tp - 1);
			assert_int_equal(exec_trainer_units(many.t), exec_trainer_units(one.t));
			for (int u = 0; u < exec_trainer_units(one.t); u++) {
				float *p1, *pn, *g;
				long n1, nn;

				assert_int_equal(exec_trainer_unit(one.t, u, &p1, &g, &n1), 0);
				assert_int_equal(exec_trainer_unit(many.t, u, &pn, &g, &nn), 0);
				assert_int_equal(nn, n1);
				assert_memory_equal(pn, p1, (size_t)n1 * sizeof(float));
			}
			rig_close(&many);
		}
		rig_close(&one);
	}
}

/* Losses of o's steps. */
static void run_losses(const struct exec_opts *o, double *losses)
{
	struct rig r;
	double gn;

	rig_open(&r, o, 0);
	for (int s = 1; s <= o->steps; s++)
		assert_int_equal(exec_trainer_step(r.t, s, &losses[s - 1], &gn), RC_OK);
	rig_close(&r);
}

static void test_exec_trainer_recompute_equivalent(void **state)
{
	struct exec_opts o;
	double base[3], full[3], sel[3];

	(void)state;
	tiny_opts(&o);
	run_losses(&o, base);
	o.par.recompute = SIM_RECOMPUTE_FULL;
	run_losses(&o, full);
	o.par.recompute = SIM_RECOMPUTE_SELECTIVE;
	run_losses(&o, sel);
	for (int s = 0; s < 3; s++) {
		/* full recomputation reruns the same kernels on the same
		 * inputs: the same bits */
		assert_true(full[s] == base[s]);
		/* selective rebuilds the probabilities from the log-sum-exp:
		 * fp32 rounding only */
		assert_near(sel[s], base[s], 1e-6);
	}
	/* and training moved the loss */
	assert_true(base[2] < base[0]);
}

static void test_exec_trainer_microbatches_equivalent(void **state)
{
	struct exec_opts o;
	double a[3], b[3], c[3];

	(void)state;
	tiny_opts(&o);
	o.par.gbs = 8;
	o.par.mbs = 8;    /* one micro-batch */
	run_losses(&o, a);
	o.par.mbs = 2;    /* four, accumulated */
	run_losses(&o, b);
	o.par.mbs = 1;    /* eight */
	run_losses(&o, c);
	for (int s = 0; s < 3; s++) {
		assert_near(b[s], a[s], 1e-5);
		assert_near(c[s], a[s], 1e-5);
	}
}

static void test_exec_trainer_schedules_equivalent(void **state)
{
	struct exec_opts o;
	double a[3], b[3];

	(void)state;
	tiny_opts(&o);
	run_losses(&o, a);
	o.schedule = SCHED_GPIPE;
	run_losses(&o, b);
	for (int s = 0; s < 3; s++)
		assert_true(a[s] == b[s]);
}

/* Each layout's shard is the matching block of the single-rank tensor. */
static void test_exec_trainer_init_layout_independent(void **state)
{
	struct exec_opts o1, o2;
	struct rig full, shard, stage;
	float *p1, *g1, *p2, *g2;
	long n1, n2, off1, len1, off2, len2;
	const char *name;
	long C = 16, Hd = 16;

	(void)state;
	tiny_opts(&o1);
	rig_open(&full, &o1, 0);
	/* TP rank 1 of 2 */
	o2 = o1;
	o2.par.tp = 2;
	rig_open(&shard, &o2, 1);
	assert_int_equal(exec_trainer_unit(full.t, 1, &p1, &g1, &n1), 0);
	assert_int_equal(exec_trainer_unit(shard.t, 1, &p2, &g2, &n2), 0);
	/* wq [Hd, C] split by rows: rank 1 holds rows Hd/2 .. Hd - 1 */
	assert_int_equal(exec_trainer_tensor(full.t, 1, 2, &off1, &len1, &name), 0);
	assert_string_equal(name, "wq");
	assert_int_equal(exec_trainer_tensor(shard.t, 1, 2, &off2, &len2, &name), 0);
	assert_int_equal(len2, len1 / 2);
	assert_memory_equal(p2 + off2, p1 + off1 + Hd / 2 * C, (size_t)len2 * sizeof(float));
	/* wo [C, Hd] split by columns: row r of rank 1 is columns Hd/2 .. */
	assert_int_equal(exec_trainer_tensor(full.t, 1, 8, &off1, &len1, &name), 0);
	assert_string_equal(name, "wo");
	assert_int_equal(exec_trainer_tensor(shard.t, 1, 8, &off2, &len2, &name), 0);
	for (long r = 0; r < C; r++)
		assert_memory_equal(p2 + off2 + r * Hd / 2, p1 + off1 + r * Hd + Hd / 2,
				    (size_t)(Hd / 2) * sizeof(float));
	rig_close(&shard);
	/* pipeline stage 1 of 2 holds layer 1 and the head: its first unit
	 * is the single-rank model's unit 2 */
	o2 = o1;
	o2.par.pp = 2;
	rig_open(&stage, &o2, 1);
	assert_int_equal(exec_trainer_units(stage.t), 2);
	assert_int_equal(exec_trainer_unit(full.t, 2, &p1, &g1, &n1), 0);
	assert_int_equal(exec_trainer_unit(stage.t, 0, &p2, &g2, &n2), 0);
	assert_int_equal(n1, n2);
	assert_memory_equal(p1, p2, (size_t)n1 * sizeof(float));
	rig_close(&stage);
	rig_close(&full);
}

/* Uneven stages hold the single rank's layers as the simulator splits
 * them.  7 layers over pp 4 are 2 + 2 + 2 + 1 (exec_stage_layers): stage
 * 0 holds the embedding and layers 0-1, stage 3 layer 6 and the head.  The
 * single rank's units are the embedding 0, layer i at 1 + i, the head 8.
 * Interleaved, 9 layers over pp 4 x v 2: stage 1 holds layers 1-2 in
 * chunk 0 and layer 6 in chunk 1 (test_exec_chunk_layers_uneven_as_simulated). */
static void test_exec_trainer_uneven_stages_hold_the_model(void **state)
{
	static const int units7[4] = { 3, 2, 2, 2 };
	struct exec_opts o1, o2;
	struct rig full, st[4];
	float *p1, *g1, *p2, *g2;
	long n1, n2;
	double sum = 0;

	(void)state;
	tiny_opts(&o1);
	o1.model.layers = 7;
	rig_open(&full, &o1, 0);
	assert_int_equal(exec_trainer_units(full.t), 9);
	o2 = o1;
	o2.par.pp = 4;
	for (int s = 0; s < 4; s++) {
		rig_open(&st[s], &o2, s);
		assert_int_equal(exec_trainer_units(st[s].t), units7[s]);
		sum += exec_trainer_local_params(st[s].t);
	}
	assert_near(sum, exec_trainer_local_params(full.t), 1e-12);
	/* stage 3's first unit is layer 6, stage 1's layer 2 */
	assert_int_equal(exec_trainer_unit(full.t, 7, &p1, &g1, &n1), 0);
	assert_int_equal(exec_trainer_unit(st[3].t, 0, &p2, &g2, &n2), 0);
	assert_int_equal(n1, n2);
	assert_memory_equal(p1, p2, (size_t)n1 * sizeof(float));
	assert_int_equal(exec_trainer_unit(full.t, 3, &p1, &g1, &n1), 0);
	assert_int_equal(exec_trainer_unit(st[1].t, 0, &p2, &g2, &n2), 0);
	assert_memory_equal(p1, p2, (size_t)n1 * sizeof(float));
	for (int s = 0; s < 4; s++)
		rig_close(&st[s]);
	rig_close(&full);

	o1.model.layers = 9;
	o1.par.gbs = 8;         /* 4 micro-batches */
	rig_open(&full, &o1, 0);
	o2 = o1;
	o2.par.pp = 4;
	o2.par.interleave = 2;
	exec_opts_derive(&o2);
	rig_open(&st[1], &o2, 1);
	assert_int_equal(exec_trainer_units(st[1].t), 3);
	for (int i = 0; i < 3; i++) {
		/* layers 1, 2 and 6: units 2, 3 and 7 of the single rank */
		assert_int_equal(exec_trainer_unit(full.t, i < 2 ? 2 + i : 7, &p1, &g1, &n1), 0);
		assert_int_equal(exec_trainer_unit(st[1].t, i, &p2, &g2, &n2), 0);
		assert_int_equal(n1, n2);
		assert_memory_equal(p1, p2, (size_t)n1 * sizeof(float));
	}
	rig_close(&st[1]);
	rig_close(&full);
}

/* The synthetic bigram process's entropy is 1.762 nats at vocabulary 128
 * (exec_data.c); from ln 128 = 4.852 a small model must get well down
 * towards it.  Measured: 4.85 -> about 2.3 after 40 steps at lr 1e-2. */
static void test_exec_trainer_loss_falls(void **state)
{
	struct exec_opts o;
	double losses[40];

	(void)state;
	exec_opts_init(&o);
	o.model.layers = 2;
	o.model.hidden = 32;
	o.model.heads = 4;
	o.model.kv_heads = 4;
	o.model.ffn = 128;
	o.model.vocab = 128;
	o.model.seq = 16;
	o.par.mbs = 8;
	o.par.gbs = 8;
	o.lr = 1e-2;
	o.steps = 40;
	exec_opts_derive(&o);
	run_losses(&o, losses);
	assert_near(losses[0], log(128.0), 0.02);
	assert_true(losses[39] < 3.0);
}

/* ---- LoRA ------------------------------------------------------------ */

static void tiny_lora(struct exec_opts *o, int rank, unsigned targets)
{
	tiny_opts(o);
	o->par.ft.method = SIM_FT_LORA;
	o->par.ft.lora_rank = rank;
	o->par.ft.lora_targets = targets;
}

/* What the executor runs of fine-tuning, and the one line it says about
 * what it does not. */
static void test_exec_opts_check_lora(void **state)
{
	struct exec_opts o;
	char why[256];

	(void)state;
	tiny_lora(&o, 4, 0);
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_OK);
	/* alpha 0 reads as twice the rank */
	assert_near(exec_lora_alpha(&o), 8, 1e-12);
	o.lora_alpha = 3;
	assert_near(exec_lora_alpha(&o), 3, 1e-12);
	o.lora_alpha = -1;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "lora_alpha: expected a finite number >= 0"));
	o.lora_alpha = 0;
	o.par.ft.lora_rank = SIM_LORA_MAX_RANK + 1;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "lora_rank: expected 0 (16) or 1 to 65536, found 65537"));
	/* a GELU MLP has no gate */
	tiny_lora(&o, 4, SIM_LORA_GATE);
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_string_equal(why, "lora_targets: expected a projection the model has, found only "
				 "gate in a GELU MLP");
	o.model.mlp = SIM_MLP_SWIGLU;
	exec_opts_derive(&o);
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_OK);
	tiny_lora(&o, 4, 0);
	o.par.ft.method = SIM_FT_QLORA;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_string_equal(why, "finetune: expected none, full or lora, which the executor runs "
				 "(it keeps no 4-bit NormalFloat base weights), found qlora");
	o.par.ft.method = SIM_FT_FULL;
	o.par.ft.offload = SIM_OFFLOAD_CPU;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_string_equal(why, "offload: expected none, every state on the executor's device, "
				 "found cpu");
	tiny_moe(&o, 0);
	o.par.ft.method = SIM_FT_LORA;
	assert_int_equal(exec_opts_check(&o, why, sizeof(why)), RC_INPUT);
	assert_string_equal(why, "finetune: expected a dense model for lora (the executor adapts "
				 "no expert projections), found 4 experts");
}

/* The adapters' gradients against finite differences, once training has
 * moved B off its zero start (with B = 0 every A has a zero gradient);
 * the base units have none at all.  want_units units in all, and
 * want_tensors adapter tensors checked (A and B of each adapted
 * projection of every layer). */
static void gradcheck_lora(const struct exec_opts *o, int want_units, int want_tensors)
{
	struct rig r;
	double loss, gn;
	int checked = 0, adapters = 0;

	rig_open(&r, o, 0);
	for (int s = 1; s <= 3; s++)
		assert_int_equal(exec_trainer_step(r.t, s, &loss, &gn), RC_OK);
	assert_int_equal(exec_trainer_eval(r.t, 1, 1, &loss), RC_OK);
	assert_int_equal(exec_trainer_units(r.t), want_units);
	for (int i = 0; i < exec_trainer_units(r.t); i++) {
		float *p, *g;
		long n, off, len;
		const char *name;

		assert_int_equal(exec_trainer_unit(r.t, i, &p, &g, &n), 0);
		assert_int_equal(exec_trainer_tensor(r.t, i, 0, &off, &len, &name), 0);
		if (strncmp(name, "lora.", 5) != 0) {
			assert_null(g);
			continue;
		}
		adapters++;
		checked += gradcheck_unit(r.t, i);
	}
	/* a unit of adapters a layer */
	assert_int_equal(adapters, o->model.layers);
	rig_close(&r);
	assert_int_equal(checked, want_tensors);
}

static void test_exec_trainer_gradcheck_lora_gelu_all(void **state)
{
	struct exec_opts o;

	(void)state;
	tiny_lora(&o, 4, 0);
	o.lr = 1e-2;
	/* embedding, 2 layers, head, 2 adapter units; q, k, v, o, up, down */
	gradcheck_lora(&o, 6, 2 * 2 * 6);
}

/* SwiGLU's gate and up are W1 and Wu, down W2; q and o the attention's
 * column- and row-parallel ends.  Full recomputation reruns the adapters
 * before the backward. */
static void test_exec_trainer_gradcheck_lora_swiglu_some(void **state)
{
	struct exec_opts o;

	(void)state;
	tiny_lora(&o, 3, SIM_LORA_Q | SIM_LORA_O | SIM_LORA_GATE | SIM_LORA_DOWN);
	o.model.mlp = SIM_MLP_SWIGLU;
	o.par.recompute = SIM_RECOMPUTE_FULL;
	o.par.flash = 1;
	o.model.tied_embeddings = 1;
	o.lr = 1e-2;
	exec_opts_derive(&o);
	/* the tied word matrix, embedding, 2 layers, head, 2 adapter units */
	gradcheck_lora(&o, 7, 2 * 2 * 4);
}

/* Training moves the adapters alone: after 5 steps every base unit is
 * bit for bit as drawn (a fresh trainer's, and its hash), every adapter
 * tensor has moved (B from zero, A once B was not), and the loss has
 * fallen.  The first step's loss is the base model's, bit for bit: B
 * starts at zero and adds exact zeros. */
static void test_exec_trainer_lora_trains_adapters_only(void **state)
{
	struct exec_opts o, full;
	struct rig a, b;
	double loss[5], base[5], gn;
	int moved = 0;

	(void)state;
	tiny_lora(&o, 4, 0);
	o.lr = 1e-2;
	full = o;
	full.par.ft.method = SIM_FT_NONE;
	run_losses(&full, base);
	rig_open(&a, &o, 0);
	rig_open(&b, &o, 0);
	assert_true(exec_trainer_frozen_hash(a.t) != GP_FNV1A64_INIT);
	for (int s = 1; s <= 5; s++)
		assert_int_equal(exec_trainer_step(a.t, s, &loss[s - 1], &gn), RC_OK);
	assert_true(loss[0] == base[0]);
	assert_true(loss[1] != base[1]);
	assert_true(loss[4] < loss[0]);
	assert_true(exec_trainer_frozen_hash(a.t) == exec_trainer_frozen_hash(b.t));
	for (int i = 0; i < exec_trainer_units(a.t); i++) {
		float *pa, *pb, *g;
		long na, nb, off, len;
		const char *name;

		assert_int_equal(exec_trainer_unit(a.t, i, &pa, &g, &na), 0);
		assert_int_equal(exec_trainer_unit(b.t, i, &pb, &g, &nb), 0);
		assert_int_equal(na, nb);
		assert_int_equal(exec_trainer_tensor(a.t, i, 0, &off, &len, &name), 0);
		if (strncmp(name, "lora.", 5) != 0) {
			assert_memory_equal(pa, pb, (size_t)na * sizeof(float));
			continue;
		}
		for (int j = 0; exec_trainer_tensor(a.t, i, j, &off, &len, &name) == 0; j++) {
			if (len == 0)
				continue;
			assert_true(memcmp(pa + off, pb + off, (size_t)len * sizeof(float)) != 0);
			moved++;
		}
	}
	/* q, k, v, o, up and down in 2 layers, A and B of each */
	assert_int_equal(moved, 24);
	rig_close(&b);
	rig_close(&a);
}

/* What LoRA keeps, counted by the executor and by the simulator's memory
 * model for the same run.  tiny_opts' model: hidden 16, 4 heads and 2 KV
 * heads of 4 (K, V 8 wide), MLP 32 (GELU: up and down, no gate), 2
 * layers.  Rank 4 adapters hold r (in + out) each (Hu et al. 2021, sec.
 * 4.1): q 4 (16 + 16) = 128, k and v 4 (16 + 8) = 96, o 128, up 4 (16 +
 * 32) = 192, down 192: 832 a layer, 1,664 in all, the trainable
 * parameters.  fp32 states: 4 bytes of gradient and 8 of AdamW moments
 * each, 6,656 and 13,312 bytes, and the base weights only as weights.
 * The simulator's weights are 4 bytes a parameter of the model
 * (sim_model_params: Q 256, K and V 128, O 256, MLP 1,024, two norms 32 =
 * 1,824 a layer, 3,648, and the embedding, LM head and final norm 512 +
 * 512 + 16) and of the adapters: 4 x (4,688 + 1,664) = 25,408 bytes.  The
 * executor holds what the simulator leaves out besides: the biases
 * (LayerNorm's 2 x 16, Q, K, V 16 + 8 + 8, O 16, the MLP's 32 + 16: 128
 * a layer), the final norm's bias 16 and the positions 8 x 16 = 128, 400
 * parameters, 1,600 bytes.  With tp 2, a TP rank holds the whole A of a
 * column-parallel projection and B of a row-parallel one beside half the
 * other: q 64 + 32, k and v 64 + 16, o 32 + 64, up 64 + 64, down 64 + 64,
 * 608 a layer, 1,216 where an even split would be 832, and the
 * simulator prices the same cut (sim_ft_states). */
static void test_exec_trainer_lora_states_match_simulator(void **state)
{
	struct exec_opts o;
	struct exec_state_bytes st;
	struct sim_cluster c;
	struct sim_result pred;
	struct rig r;

	(void)state;
	tiny_lora(&o, 4, 0);
	assert_near(sim_lora_params(&o.model, &o.par.ft), 1664, 1e-12);
	assert_near(sim_model_params(&o.model), 4688, 1e-12);
	rig_open(&r, &o, 0);
	assert_near(exec_trainer_local_trainable(r.t), 1664, 1e-12);
	assert_near(exec_trainer_local_params(r.t), 4688 + 400 + 1664, 1e-12);
	exec_trainer_states(r.t, &st);
	assert_near(st.grads_bytes, 6656, 1e-12);
	assert_near(st.optimizer_bytes, 13312, 1e-12);
	assert_near(st.weights_bytes, 25408 + 1600, 1e-12);
	rig_close(&r);
	exec_cpu_cluster(&c, 1);
	assert_int_equal(exec_predict_on(&o, &c, &pred, NULL, 0), RC_OK);
	assert_near(pred.memory.grads, 6656, 1e-12);
	assert_near(pred.memory.optimizer, 13312, 1e-12);
	assert_near(pred.memory.weights, 25408, 1e-12);

	/* TP rank 1 of 2 (its shapes; the groups are this process's) */
	o.par.tp = 2;
	rig_open(&r, &o, 1);
	/* it counts its split halves alone, the whole parts (6 x 64 a layer)
	 * being TP rank 0's: 1,216 - 768 = 448, and 448 + 1,216 = 1,664 */
	assert_near(exec_trainer_local_trainable(r.t), 448, 1e-12);
	exec_trainer_states(r.t, &st);
	assert_near(st.grads_bytes, 4 * 1216, 1e-12);
	assert_near(st.optimizer_bytes, 8 * 1216, 1e-12);
	rig_close(&r);
	exec_cpu_cluster(&c, 2);
	assert_int_equal(exec_predict_on(&o, &c, &pred, NULL, 0), RC_OK);
	assert_near(pred.memory.grads, 4 * 1216, 1e-12);
	assert_near(pred.memory.optimizer, 8 * 1216, 1e-12);
}

/* ---- groups, links and devices -------------------------------------- */

/* Every communicator builds its groups from exec_group_color (MPI's
 * split and NCCL's ids alike): the ranks sharing a color, ordered by key,
 * must be exactly exec_group_members' list, in which a rank's index is its
 * tp, pp or dp coordinate.  Hand case, tp 2 x pp 3 x dp 2: rank 7 is
 * (pp 1, dp 1, tp 1); its TP group {6, 7}, PP group {3, 7, 11}, DP group
 * {5, 7}. */
static void test_exec_group_color_matches_members(void **state)
{
	/* tp, pp, dp, cp, ep */
	static const int layouts[][5] = { { 2, 3, 2, 1, 2 }, { 1, 4, 1, 1, 1 }, { 4, 1, 3, 1, 4 },
					  { 2, 2, 2, 1, 4 }, { 1, 1, 5, 1, 5 }, { 2, 2, 2, 2, 8 },
					  { 1, 2, 1, 3, 3 }, { 2, 1, 3, 2, 6 }, { 2, 2, 2, 1, 1 } };
	struct sim_parallel p;
	struct exec_layout l;
	int m[64];

	(void)state;
	sim_parallel_init(&p);
	p.tp = 2;
	p.pp = 3;
	p.dp = 2;
	assert_int_equal(exec_layout_init(&l, &p, 7), RC_OK);
	assert_int_equal(exec_group_members(&l, EXEC_GROUP_TP, m), 2);
	assert_int_equal(m[0], 6);
	assert_int_equal(m[1], 7);
	assert_int_equal(exec_group_members(&l, EXEC_GROUP_PP, m), 3);
	assert_int_equal(m[0], 3);
	assert_int_equal(m[1], 7);
	assert_int_equal(m[2], 11);
	assert_int_equal(exec_group_members(&l, EXEC_GROUP_DP, m), 2);
	assert_int_equal(m[0], 5);
	assert_int_equal(m[1], 7);
	/* tp 2 x cp 2 x pp 2 x dp 2: rank 13 is (pp 1, dp 1, cp 0, tp 1);
	 * its CP group {13, 15}, its DP group (dp x cp, key dp * cp + cp)
	 * {9, 11, 13, 15}, its PP group {5, 13} */
	p.pp = 2;
	p.cp = 2;
	assert_int_equal(exec_layout_init(&l, &p, 13), RC_OK);
	assert_int_equal(exec_group_members(&l, EXEC_GROUP_CP, m), 2);
	assert_int_equal(m[0], 13);
	assert_int_equal(m[1], 15);
	assert_int_equal(exec_group_members(&l, EXEC_GROUP_DP, m), 4);
	assert_int_equal(m[0], 9);
	assert_int_equal(m[1], 11);
	assert_int_equal(m[2], 13);
	assert_int_equal(m[3], 15);
	assert_int_equal(exec_group_members(&l, EXEC_GROUP_PP, m), 2);
	assert_int_equal(m[0], 5);
	assert_int_equal(m[1], 13);
	/* experts folded over a stage's tp x cp x dp, EP innermost: tp 2 x
	 * pp 2 x dp 2, ep 2: rank 7 is (pp 1, dp 1, tp 1), the stage's rank
	 * (1 x 1 + 0) x 2 + 1 = 3 (a stage is 4 consecutive ranks, world
	 * 4 + s), so EP rank 1 of replica 1; its EP group the stage's ranks
	 * 2 and 3 (world 6, 7), its expert-DP group the stage's 1 and 3
	 * (world 5, 7) */
	p.cp = 1;
	p.ep = 2;
	assert_int_equal(exec_layout_init(&l, &p, 7), RC_OK);
	assert_int_equal(l.ep_rank, 1);
	assert_int_equal(l.edp_rank, 1);
	assert_int_equal(l.edp, 2);
	assert_int_equal(exec_group_members(&l, EXEC_GROUP_EP, m), 2);
	assert_int_equal(m[0], 6);
	assert_int_equal(m[1], 7);
	assert_int_equal(exec_group_members(&l, EXEC_GROUP_EDP, m), 2);
	assert_int_equal(m[0], 5);
	assert_int_equal(m[1], 7);
	/* ep 4: the whole stage {4, 5, 6, 7}, each expert on one rank */
	p.ep = 4;
	assert_int_equal(exec_layout_init(&l, &p, 5), RC_OK);
	assert_int_equal(exec_group_members(&l, EXEC_GROUP_EP, m), 4);
	assert_int_equal(m[0], 4);
	assert_int_equal(m[1], 5);
	assert_int_equal(m[2], 6);
	assert_int_equal(m[3], 7);
	assert_int_equal(exec_group_members(&l, EXEC_GROUP_EDP, m), 1);
	/* ep must divide the stage's 4 ranks */
	p.ep = 3;
	assert_int_equal(exec_layout_init(&l, &p, 5), RC_INPUT);
	for (size_t k = 0; k < GP_ARRAY_LEN(layouts); k++) {
		int world;

		p.tp = layouts[k][0];
		p.pp = layouts[k][1];
		p.dp = layouts[k][2];
		p.cp = layouts[k][3];
		p.ep = layouts[k][4];
		world = p.tp * p.pp * p.dp * p.cp;
		for (int r = 0; r < world; r++)
			for (int kind = EXEC_GROUP_WORLD; kind <= EXEC_GROUP_EDP; kind++) {
				int n, color, key, count = 0;

				assert_int_equal(exec_layout_init(&l, &p, r), RC_OK);
				exec_group_color(&l, (enum exec_group_kind)kind, &color, &key);
				n = exec_group_members(&l, (enum exec_group_kind)kind, m);
				/* r sits at index key of its member list */
				assert_true(key >= 0 && key < n);
				assert_int_equal(m[key], r);
				/* and the ranks of r's color are exactly the members, by key */
				for (int q = 0; q < world; q++) {
					struct exec_layout lq;
					int cq, kq;

					exec_layout_init(&lq, &p, q);
					exec_group_color(&lq, (enum exec_group_kind)kind, &cq, &kq);
					if (cq != color)
						continue;
					count++;
					assert_int_equal(m[kq], q);
				}
				assert_int_equal(count, n);
				assert_int_equal(n, kind == EXEC_GROUP_TP ? p.tp : kind == EXEC_GROUP_PP ? p.pp
						 : kind == EXEC_GROUP_DP ? p.dp * p.cp
						 : kind == EXEC_GROUP_CP ? p.cp
						 : kind == EXEC_GROUP_EP ? p.ep
						 : kind == EXEC_GROUP_EDP ? world / p.pp / p.ep : world);
			}
	}
}

/* NCCL has no tags: its pipeline links carry one channel (activations or
 * gradients) one way, and rely on every schedule sending a link's
 * messages in the order its receiver takes them.  Checked for every
 * schedule the executor runs (1F1B, GPipe, interleaved v 2..4, with and
 * without the split backward), p 2..8, m 1..17.  Counter-example it must
 * hold against: interleaved p 2, m 5 sends stage 1 -> 0 activations and
 * gradients interleaved out of the receiver's order, which is why the
 * two are separate channels. */
static void test_exec_sched_channels_in_order(void **state)
{
	long checked = 0;

	(void)state;
	for (int kind = SCHED_GPIPE; kind <= SCHED_INTERLEAVED; kind++)
		for (int split = 0; split <= 1; split++)
			for (int p = 2; p <= 8; p++)
				for (int m = 1; m <= 17; m++)
					for (int v = 1; v <= 4; v++) {
						struct sched s;
						char why[256];

						if ((kind == SCHED_INTERLEAVED) != (v > 1) ||
						    sched_build(&s, (enum sched_kind)kind, p, m, v, split, why,
								sizeof(why)) != RC_OK)
							continue;
						for (int ch = SCHED_DATA_ACT; ch <= SCHED_DATA_GRAD; ch++)
							for (int a = 0; a < p; a++)
								for (int b = 0; b < p; b++) {
									int last = -1;

									for (int i = 0; i < s.stages[a].n; i++) {
										const struct sched_op *op = &s.stages[a].ops[i];

										if (op->kind != SCHED_OP_SEND || op->peer != b ||
										    (int)op->data != ch)
											continue;
										/* the receiver's ops in list order */
										assert_true(op->peer_op > last);
										last = op->peer_op;
										/* activations go forward, gradients back */
										assert_int_equal(b, ch == SCHED_DATA_ACT ? (a + 1) % p
												 : (a + p - 1) % p);
									}
								}
						checked++;
						sched_release(&s);
					}
	assert_true(checked > 500);
}

/* The launchers' environments: Open MPI's mpirun, srun --mpi=pmi2 (PMI),
 * srun --mpi=pmix (PMIX_RANK and Slurm's step size), and none. */
static void test_exec_launcher_environments(void **state)
{
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
		"PMI_RANK", "PMI_SIZE", "PMIX_RANK", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS",
		"SLURM_LOCALID", "MPI_LOCALRANKID", "LOCAL_RANK",
	};
	char *saved[GP_ARRAY_LEN(vars)];

	(void)state;
	for (size_t i = 0; i < GP_ARRAY_LEN(vars); i++) {
		const char *v = getenv(vars[i]);

		saved[i] = v ? xstrdup(v) : NULL;
		unsetenv(vars[i]);
	}
	assert_false(exec_under_launcher());
	assert_int_equal(exec_launcher_rank(), 0);
	assert_int_equal(exec_launcher_size(), 1);
	assert_int_equal(exec_launcher_local_rank(), 0);
	/* srun --mpi=pmix: a PMIx rank, Slurm's step size and local id */
	setenv("PMIX_RANK", "5", 1);
	setenv("SLURM_STEP_NUM_TASKS", "16", 1);
	setenv("SLURM_NTASKS", "32", 1);
	setenv("SLURM_LOCALID", "1", 1);
	assert_true(exec_under_launcher());
	assert_int_equal(exec_launcher_rank(), 5);
	assert_int_equal(exec_launcher_size(), 16);
	assert_int_equal(exec_launcher_local_rank(), 1);
	unsetenv("SLURM_STEP_NUM_TASKS");
	assert_int_equal(exec_launcher_size(), 32);
	/* srun --mpi=pmi2 */
	unsetenv("PMIX_RANK");
	setenv("PMI_RANK", "3", 1);
	setenv("PMI_SIZE", "8", 1);
	assert_true(exec_under_launcher());
	assert_int_equal(exec_launcher_rank(), 3);
	assert_int_equal(exec_launcher_size(), 8);
	/* Open MPI's mpirun comes first */
	setenv("OMPI_COMM_WORLD_RANK", "2", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
	setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2", 1);
	assert_int_equal(exec_launcher_rank(), 2);
	assert_int_equal(exec_launcher_size(), 4);
	assert_int_equal(exec_launcher_local_rank(), 2);
	/* Slurm's variables alone (a batch script, no launcher) are not one */
	for (size_t i = 0; i < 6; i++)
		unsetenv(vars[i]);
	assert_false(exec_under_launcher());
	assert_int_equal(exec_launcher_size(), 1);
	for (size_t i = 0; i < GP_ARRAY_LEN(vars); i++) {
		if (saved[i])
			setenv(vars[i], saved[i], 1);
		else
			unsetenv(vars[i]);
		free(saved[i]);
	}
}

static void test_exec_gpu_matches_names_and_memory(void **state)
{
	(void)state;
	/* an H100 SXM reports 79.6 GiB = 85.5e9 bytes against the catalog's 80 GB */
	assert_true(exec_gpu_matches("NVIDIA H100 80GB HBM3", 85.5e9, "H100-SXM5-80GB", 80e9));
	assert_true(exec_gpu_matches("NVIDIA A100-SXM4-40GB", 42.4e9, "A100-SXM4-40GB", 40e9));
	/* the 40 GB part is not the 80 GB one */
	assert_false(exec_gpu_matches("NVIDIA A100-SXM4-40GB", 42.4e9, "A100-SXM4-80GB", 80e9));
	/* a word, not a substring: an H100 is not an H10 */
	assert_false(exec_gpu_matches("NVIDIA H100 80GB HBM3", 85.5e9, "H10-24GB", 0));
	assert_false(exec_gpu_matches("NVIDIA H200", 150e9, "H100-SXM5-80GB", 80e9));
	/* an H200 reports 143,771 MiB (150.8e9 bytes) against the catalog's
	 * 141 GB; a GH200 is not one */
	assert_true(exec_gpu_matches("NVIDIA H200", 143771.0 * (1 << 20), "H200-SXM-141GB", 141e9));
	assert_false(exec_gpu_matches("NVIDIA GH200 480GB", 101e9, "H200-SXM-141GB", 141e9));
	assert_true(exec_gpu_matches("cpu", 0, "cpu", 0));
	assert_false(exec_gpu_matches("cpu", 0, "H100-SXM5-80GB", 80e9));
}

/* ---- calibration ----------------------------------------------------- */

static void sample_calibration(struct exec_calibration *c)
{
	memset(c, 0, sizeof(*c));
	gp_strlcpy(c->gpu, "H100-SXM5-80GB", sizeof(c->gpu));
	gp_strlcpy(c->device, "NVIDIA H100 80GB HBM3", sizeof(c->device));
	gp_strlcpy(c->backend, "cuda", sizeof(c->backend));
	gp_strlcpy(c->date, "2026-01-02T03:04:05Z", sizeof(c->date));
	c->device_memory_bytes = 85520809984.0;
	c->precision = EXEC_PRECISION_BF16;
	c->ranks = 8;
	c->bf16_flops_per_s = 494.7e12;
	c->hbm_bytes_per_s = 3.1e12;
	c->intra_bytes_per_s = 400e9;
	c->latency_s = 7.5e-6;
	c->gemm_dim_half = 37.5;
	c->n_gemm = 1;
	c->gemm[0].m = 8192;
	c->gemm[0].n = 12288;
	c->gemm[0].k = 4096;
	c->gemm[0].time_s = 1.234e-3;
	c->gemm[0].flops_per_s = 2.0 * 8192 * 12288 * 4096 / 1.234e-3;
	c->n_copy = 1;
	c->copy[0].bytes = 1 << 30;
	c->copy[0].time_s = 0.7e-3;
	c->copy[0].bytes_per_s = 2.0 * (1 << 30) / 0.7e-3;
	c->n_coll = 1;
	gp_strlcpy(c->coll[0].op, "all_reduce", sizeof(c->coll[0].op));
	c->coll[0].ranks = 8;
	c->coll[0].bytes = 1 << 28;
	c->coll[0].time_s = 1.2e-3;
	c->attn = (struct exec_calib_attn){ 4, 2048, 16, 8, 128, 3.17e11, 1.5e-3, 3.17e11 / 1.5e-3 };
	c->attn_flops_per_s = c->attn.flops_per_s;
	c->opt = (struct exec_calib_opt){ 67108864, 46.0 * 67108864, 0.8e-3, 46.0 * 67108864 / 0.8e-3 };
	c->opt_bytes_per_s = 4.1e12;
	c->n_elt = 1;
	c->elt[0] = (struct exec_calib_elt){ "swiglu", 2048, 4096, 16384, 1.5e9, 1.1e-3,
					     1.5e9 / 1.1e-3, 0.6e9, 0.3e-3 };
	c->elt_bytes_per_s[1] = 2.5e12;
	c->act_bytes_per_s[1] = 2.2e12;
}

static void test_exec_calibration_json_round_trip(void **state)
{
	struct exec_calibration a, b;
	char *text;

	(void)state;
	sample_calibration(&a);
	text = exec_calibration_to_json(&a);
	assert_int_equal(exec_calibration_parse("cal.json", text, strlen(text), &b), RC_OK);
	free(text);
	/* every number is printed so that it reads back exactly */
	assert_string_equal(b.gpu, a.gpu);
	assert_string_equal(b.device, a.device);
	assert_string_equal(b.backend, "cuda");
	assert_int_equal(b.precision, EXEC_PRECISION_BF16);
	assert_int_equal(b.ranks, 8);
	assert_true(b.bf16_flops_per_s == a.bf16_flops_per_s);
	assert_true(b.latency_s == a.latency_s);
	assert_true(b.gemm_dim_half == 37.5);
	assert_true(b.device_memory_bytes == a.device_memory_bytes);
	assert_int_equal(b.n_gemm, 1);
	assert_true(b.gemm[0].flops_per_s == a.gemm[0].flops_per_s);
	assert_int_equal(b.n_coll, 1);
	assert_string_equal(b.coll[0].op, "all_reduce");
	assert_true(b.attn_flops_per_s == a.attn_flops_per_s);
	assert_true(memcmp(&b.attn, &a.attn, sizeof(a.attn)) == 0);
	assert_int_equal(b.n_elt, 1);
	assert_true(memcmp(&b.elt[0], &a.elt[0], sizeof(a.elt[0])) == 0);
	assert_true(b.elt_bytes_per_s[1] == a.elt_bytes_per_s[1]);
	assert_true(b.act_bytes_per_s[1] == a.act_bytes_per_s[1]);
	assert_true(b.opt_bytes_per_s == a.opt_bytes_per_s);
	assert_true(memcmp(&b.opt, &a.opt, sizeof(a.opt)) == 0);
}

/* A calibration's element-wise rates replace the device's: the norms'
 * and the activation's where it timed them apart, and where it timed the
 * layer whole (an older file), the layer's rate for both, the device's
 * own activation rate dropped with the rest of its figure. */
static void test_exec_calibration_apply_elt(void **state)
{
	struct exec_calibration c;
	struct price_gpu g;

	(void)state;
	memset(&c, 0, sizeof(c));
	exec_cpu_gpu(&g);
	assert_true(g.act_bytes_per_s[0] > 0 && g.act_bytes_per_s[1] > 0);
	c.elt_bytes_per_s[0] = 1.1e9;
	exec_calibration_apply_gpu(&c, &g);
	assert_true(g.elt_bytes_per_s[0] == 1.1e9 && g.act_bytes_per_s[0] == 0);
	assert_true(g.act_bytes_per_s[1] > 0);
	c.elt_bytes_per_s[1] = 20e9;
	c.act_bytes_per_s[1] = 4e9;
	exec_calibration_apply_gpu(&c, &g);
	assert_true(g.elt_bytes_per_s[1] == 20e9 && g.act_bytes_per_s[1] == 4e9);
}

/* The fit of a layer timed in two parts: a SwiGLU layer of 1 GB in the
 * simulator's count, 0.4 GB of it the activation, in 1.1 s of which the
 * activation 0.3 s: the norms' 0.6 GB in 0.8 s less 7 kernels' fixed cost
 * (2.5 x 7 x SIM_KERNEL_S), the activation's 0.4 GB in 0.3 s less one's,
 * each over SIM_HBM_EFF.  A part shorter than its kernels' cost leaves
 * the layer's one rate, as a file without the parts does. */
static void test_exec_calibration_fit_elt_apart(void **state)
{
	struct exec_calibration c;
	double k = 2.5 * SIM_KERNEL_S;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.n_elt = 1;
	c.elt[0] = (struct exec_calib_elt){ "swiglu", 256, 256, 1024, 1e9, 1.1, 1e9 / 1.1,
					    0.4e9, 0.3 };
	exec_calibration_fit(&c);
	assert_near(c.elt_bytes_per_s[1], 0.6e9 / (0.8 - 7 * k) / SIM_HBM_EFF, 1e-3);
	assert_near(c.act_bytes_per_s[1], 0.4e9 / (0.3 - k) / SIM_HBM_EFF, 1e-3);
	assert_true(c.elt_bytes_per_s[0] == 0 && c.act_bytes_per_s[0] == 0);
	c.elt[0].time_s = 0.3 + 6 * k;
	exec_calibration_fit(&c);
	assert_near(c.elt_bytes_per_s[1], 1e9 / (0.3 - 2 * k) / SIM_HBM_EFF, 1e-3);
	assert_true(c.act_bytes_per_s[1] == 0);
	c.elt[0].act_time_s = 0;
	c.elt[0].time_s = 1.1;
	exec_calibration_fit(&c);
	assert_near(c.elt_bytes_per_s[1], 1e9 / (1.1 - 8 * k) / SIM_HBM_EFF, 1e-3);
	assert_true(c.act_bytes_per_s[1] == 0);
}

/* A file written before the knee, the element-wise, attention and
 * optimizer rates were fitted (no .sim.gemm_dim_half,
 * elt_gelu_bytes_per_s, elt_swiglu_bytes_per_s, attn_flops_per_s,
 * opt_bytes_per_s, no .attention or .optimizer) still loads, with the
 * simulator's defaults (0). */
static void test_exec_calibration_json_without_knee(void **state)
{
	struct exec_calibration a, b;
	char *text, *key, *comma, *eol;

	(void)state;
	sample_calibration(&a);
	text = exec_calibration_to_json(&a);
	key = strstr(text, "\"gemm_dim_half\"");
	assert_non_null(key);
	/* the three end .sim: cut from the comma ending the line before the
	 * first to the end of the last's line */
	for (comma = key; *comma != ','; comma--)
		;
	eol = strchr(strstr(text, "\"opt_bytes_per_s\""), '\n');
	memmove(comma, eol, strlen(eol) + 1);
	/* and .attention and .optimizer, objects of their own lines: from
	 * the comma before each to its closing brace */
	for (int i = 0; i < 2; i++) {
		key = strstr(text, i ? "\"optimizer\"" : "\"attention\"");
		assert_non_null(key);
		for (comma = key; *comma != ','; comma--)
			;
		eol = strchr(key, '}') + 1;
		memmove(comma, eol, strlen(eol) + 1);
	}
	assert_null(strstr(text, "gemm_dim_half"));
	assert_null(strstr(text, "elt_"));
	assert_null(strstr(text, "attn"));
	assert_null(strstr(text, "attention"));
	assert_null(strstr(text, "opt"));
	memset(&b, 0x5a, sizeof(b));
	assert_int_equal(exec_calibration_parse("old.json", text, strlen(text), &b), RC_OK);
	free(text);
	assert_true(b.gemm_dim_half == 0);
	assert_true(b.elt_bytes_per_s[0] == 0 && b.elt_bytes_per_s[1] == 0);
	assert_true(b.act_bytes_per_s[0] == 0 && b.act_bytes_per_s[1] == 0);
	assert_true(b.attn_flops_per_s == 0 && b.attn.batch == 0);
	assert_true(b.opt_bytes_per_s == 0 && b.opt.params == 0);
	assert_true(b.bf16_flops_per_s == a.bf16_flops_per_s);
	assert_int_equal(b.n_coll, 1);
}

/* One bad field each: RC_INPUT, and the output left as it was. */
static void test_exec_calibration_parse_rejects_bad_fields(void **state)
{
	static const char *const bad[] = {
		"{\"schema\": \"gpuplan.calibration/2\"}",
		"[1, 2]",
		"{\"schema\": \"gpuplan.calibration/1\", \"gpu\": \"\"}",
		"{\"schema\": \"gpuplan.calibration/1\", \"gpu\": \"H100\", \"device\": \"x\", "
		"\"device_memory_bytes\": 1, \"backend\": \"tpu\"}",
		"{\"schema\": \"gpuplan.calibration/1\", \"gpu\": \"H100\", \"device\": \"x\", "
		"\"device_memory_bytes\": 1, \"backend\": \"cuda\", \"precision\": \"bf16\", "
		"\"ranks\": 0}",
		"{\"schema\": \"gpuplan.calibration/1\", \"gpu\": \"H100\", \"device\": \"x\", "
		"\"device_memory_bytes\": 1, \"backend\": \"cuda\", \"precision\": \"bf16\", "
		"\"ranks\": 1, \"date\": \"d\", \"sim\": {\"bf16_flops_per_s\": -1}}",
		"{\"schema\": \"gpuplan.calibration/1\", \"gpu\": \"H100\", \"device\": \"x\", "
		"\"device_memory_bytes\": 1, \"backend\": \"cuda\", \"precision\": \"bf16\", "
		"\"ranks\": 1, \"date\": \"d\", \"sim\": {\"bf16_flops_per_s\": 1, "
		"\"hbm_bytes_per_s\": 1, \"intra_bytes_per_s\": 0, \"latency_s\": 0}, "
		"\"gemm\": [{\"m\": \"big\"}], \"copy\": [], \"collectives\": []}",
		"{\"schema\": \"gpuplan.calibration/1\", \"gpu\": \"H100\", \"device\": \"x\", "
		"\"device_memory_bytes\": 1, \"backend\": \"cuda\", \"precision\": \"bf16\", "
		"\"ranks\": 1, \"date\": \"d\", \"sim\": {\"bf16_flops_per_s\": 1, "
		"\"hbm_bytes_per_s\": 1, \"intra_bytes_per_s\": 0, \"latency_s\": 0}, "
		"\"gemm\": [], \"copy\": [], \"attention\": 5, \"collectives\": []}",
		"{\"schema\": \"gpuplan.calibration/1\", \"gpu\": \"H100\", \"device\": \"x\", "
		"\"device_memory_bytes\": 1, \"backend\": \"cuda\", \"precision\": \"bf16\", "
		"\"ranks\": 1, \"date\": \"d\", \"sim\": {\"bf16_flops_per_s\": 1, "
		"\"hbm_bytes_per_s\": 1, \"intra_bytes_per_s\": 0, \"latency_s\": 0}, "
		"\"gemm\": [], \"copy\": [], \"attention\": {\"batch\": 0}, \"collectives\": []}",
		"{\"schema\": \"gpuplan.calibration/1\",",
	};
	struct exec_calibration c;

	(void)state;
	for (size_t i = 0; i < GP_ARRAY_LEN(bad); i++) {
		memset(&c, 0x5a, sizeof(c));
		assert_int_equal(exec_calibration_parse("bad.json", bad[i], strlen(bad[i]), &c),
				 RC_INPUT);
		assert_int_equal((unsigned char)c.gpu[0], 0x5a);
	}
}

/* Half the GEMM rate roughly doubles compute.  GEMM times measured at
 * twice what the simulator gives an H100 at its catalog figures (the
 * layer's four shapes at hidden 4096, 4096 tokens), fitted: the fitted
 * figures reproduce the doubled times, and the compute of a
 * Llama-3-8B-shaped step on one GPU (sequence 2048, two sequences a
 * micro-batch) grows by a factor a little under 2, element-wise work and
 * flash attention running at HBM speed in the simulator.  The fitted
 * peak falls by more than half: a GEMM's time there is compute plus HBM
 * traffic (sim_const.h), and only the compute part may grow. */
static void test_exec_calibration_half_gemm_rate_doubles_compute(void **state)
{
	const double h = 4096, tok = 4096;
	const double shapes[4][2] = { { 3 * h, h }, { h, h }, { 4 * h, h }, { h, 4 * h } };
	struct sim_model m;
	struct sim_parallel p;
	struct sim_cluster c, slow;
	struct sim_result a, b;
	struct exec_calibration *cal = xcalloc(1, sizeof(*cal));
	double ratio, want = 0, got = 0;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.layers = 32;
	m.hidden = 4096;
	m.heads = 32;
	m.kv_heads = 8;
	m.ffn = 14336;
	m.vocab = 128256;
	m.seq = 2048;
	m.mlp = SIM_MLP_SWIGLU;
	sim_parallel_init(&p);
	p.mbs = 2;
	p.gbs = 8;
	memset(&c, 0, sizeof(c));
	gp_strlcpy(c.gpu.name, "H100-SXM5-80GB", sizeof(c.gpu.name));
	c.gpu.memory_bytes = 80e9;
	c.gpu.hbm_bytes_per_s = 3.35e12;
	c.gpu.bf16_flops_per_s = 989.4e12;
	c.gpu.fp8_flops_per_s = 1978.9e12;
	c.gpu.nvlink = 1;
	c.gpu.intra_bytes_per_s = 450e9;
	c.gpus_per_node = 1;
	/* a bf16 GPU's (2-byte GEMM operands); a copy at SIM_HBM_EFF of the
	 * catalog bandwidth keeps HBM as it is */
	gp_strlcpy(cal->backend, "cuda", sizeof(cal->backend));
	cal->precision = EXEC_PRECISION_BF16;
	cal->n_copy = 1;
	cal->copy[0].bytes = 1 << 30;
	cal->copy[0].bytes_per_s = 3.35e12 * 0.8;
	for (int i = 0; i < 4; i++) {
		struct exec_calib_gemm *g = &cal->gemm[cal->n_gemm++];

		g->m = tok;
		g->n = shapes[i][0];
		g->k = shapes[i][1];
		g->time_s = 2 * sim_gemm_time_s(1, g->m, g->n, g->k, 2.0, 0, 989.4e12, 3.35e12);
		want += g->time_s;
	}
	exec_calibration_fit(cal);
	assert_near(cal->hbm_bytes_per_s, 3.35e12, 1e-9);
	for (int i = 0; i < 4; i++)
		got += cal->gemm[i].predicted_s;
	assert_near(got, want, 1e-6);
	assert_true(cal->bf16_flops_per_s < 989.4e12 / 2);
	slow = c;
	exec_calibration_apply(cal, &slow);
	/* the fp8 peak keeps its ratio to bf16 */
	assert_near(slow.gpu.fp8_flops_per_s / slow.gpu.bf16_flops_per_s, 1978.9 / 989.4, 1e-9);
	assert_int_equal(sim_check(&m, &p, &c, NULL, 0), RC_OK);
	sim_step(&m, &p, &c, &a);
	sim_step(&m, &p, &slow, &b);
	ratio = b.breakdown.compute_s / a.breakdown.compute_s;
	if (ratio < 1.6 || ratio > 2.0)
		print_error("compute %.4g s -> %.4g s: ratio %.3f\n", a.breakdown.compute_s,
			    b.breakdown.compute_s, ratio);
	assert_true(ratio > 1.6 && ratio <= 2.0);
	/* MFU stays counted against the datasheet's 989.4 TFLOP/s, not the
	 * fitted peak (which would read it more than twice as high), and a
	 * second application (a calibrated plan file calibrated again)
	 * keeps it */
	assert_near(slow.gpu.mfu_flops_per_s, 989.4e12, 1e-12);
	assert_near(b.mfu, b.model_flops_per_gpu_s / 989.4e12, 1e-12);
	assert_near(a.mfu / b.mfu, b.step_time_s / a.step_time_s, 1e-9);
	exec_calibration_apply(cal, &slow);
	assert_near(slow.gpu.mfu_flops_per_s, 989.4e12, 1e-12);
	free(cal);
}

/* The fit recovers the knee of the efficiency curve and the peak from
 * GEMM times the simulator's own model gives at known values: a GPU-like
 * curve (knee 48, peak 500 TFLOP/s, bf16 operands) and a CPU-like flat
 * one (knee 4, peak 8 GFLOP/s, fp32 operands), over the layer shapes of
 * hidden 64 to 1024 at 256 tokens, whose smallest sides differ.  Shapes with one smallest side say
 * nothing about the knee: it stays 0 (the default). */
static void test_exec_calibration_fit_finds_knee(void **state)
{
	const double truth[2][4] = { { 48, 500e12, 3e12, 2 }, { 4, 8e9, 20e9, 4 } };
	struct exec_calibration *cal = xcalloc(1, sizeof(*cal));

	(void)state;
	for (int t = 0; t < 2; t++) {
		memset(cal, 0, sizeof(*cal));
		gp_strlcpy(cal->backend, t ? "cpu" : "cuda", sizeof(cal->backend));
		cal->precision = t ? EXEC_PRECISION_FP32 : EXEC_PRECISION_BF16;
		assert_int_equal(exec_act_bytes(cal->backend, cal->precision), (int)truth[t][3]);
		cal->n_copy = 1;
		cal->copy[0].bytes = 1 << 26;
		cal->copy[0].bytes_per_s = truth[t][2] * 0.8;   /* SIM_HBM_EFF */
		for (int h = 64; h <= 1024; h *= 2) {
			const double shapes[4][2] = { { 3 * h, h }, { h, h }, { 4 * h, h },
						      { h, 4 * h } };

			for (int i = 0; i < 4; i++) {
				struct exec_calib_gemm *g = &cal->gemm[cal->n_gemm++];

				g->m = 256;
				g->n = shapes[i][0];
				g->k = shapes[i][1];
				/* a GPU's time as the simulator prices it; a CPU's,
				 * whose OpenBLAS packs its operands in cache as it
				 * computes, its compute alone */
				g->time_s = t ? 2.0 * g->m * g->n * g->k
						/ (truth[t][1] * SIM_GEMM_EFF_MAX
						   * fmin(g->m, fmin(g->n, g->k))
						   / (fmin(g->m, fmin(g->n, g->k)) + truth[t][0]))
					      : sim_gemm_time_s(1, g->m, g->n, g->k, truth[t][3],
								truth[t][0], truth[t][1], truth[t][2]);
				g->flops_per_s = 2.0 * g->m * g->n * g->k / g->time_s;
			}
		}
		exec_calibration_fit(cal);
		assert_near(cal->hbm_bytes_per_s, truth[t][2], 1e-9);
		if (t) {
			/* the CPU's prediction adds the operands' bytes and a
			 * launch to the compute the times hold, most to the
			 * smallest GEMMs, which pulls the knee down: within a
			 * factor of 3, the peak and each time within 3% */
			assert_true(cal->gemm_dim_half > truth[t][0] / 3
				    && cal->gemm_dim_half < truth[t][0] * 3);
			assert_near(cal->bf16_flops_per_s, truth[t][1], 0.03);
			for (int i = 0; i < cal->n_gemm; i++)
				assert_near(cal->gemm[i].predicted_s, cal->gemm[i].time_s, 0.03);
			continue;
		}
		assert_near(cal->gemm_dim_half, truth[t][0], 0.01);
		assert_near(cal->bf16_flops_per_s, truth[t][1], 0.01);
		for (int i = 0; i < cal->n_gemm; i++)
			assert_near(cal->gemm[i].predicted_s, cal->gemm[i].time_s, 0.01);
	}
	/* one smallest side (256 tokens, every width at least 256) */
	cal->n_gemm = 0;
	for (int i = 0; i < 4; i++) {
		struct exec_calib_gemm *g = &cal->gemm[cal->n_gemm++];

		g->m = 256;
		g->n = 256 << i;
		g->k = 1024;
		g->time_s = sim_gemm_time_s(1, g->m, g->n, g->k, 2.0, 48, 500e12, 3e12);
	}
	exec_calibration_fit(cal);
	assert_true(cal->gemm_dim_half == 0);
	free(cal);
}

/* A quick CPU calibration in this process: the fitted peak is the
 * largest GEMM's compute rate, a backward pass is priced at twice its forward shape, the
 * element-wise rates give back the measured element-wise times, and every
 * figure is positive. */
static void test_exec_calibrate_cpu_fit_reproduces_gemms(void **state)
{
	struct exec_calibrate_opts o;
	struct exec_calibration *c = xcalloc(1, sizeof(*c));
	double measured = 0, predicted = 0, lo_peak = INFINITY, hi_peak = 0,
	       largest_flops = 0, largest_peak = 0;
	int largest = 0;

	(void)state;
	exec_calibrate_opts_init(&o);
	o.quick = 1;
	assert_int_equal(exec_calibrate(&o, c), RC_OK);
	assert_string_equal(c->backend, "cpu");
	assert_int_equal(c->ranks, 1);
	assert_int_equal(c->n_gemm, 16);    /* 2 hidden sizes x 4 layer shapes x 2 passes */
	assert_int_equal(c->n_copy, 2);
	assert_int_equal(c->n_elt, 2);      /* a GELU and a SwiGLU layer */
	assert_int_equal(c->n_coll, 0);     /* one rank: no collectives */
	for (int i = 0; i < c->n_gemm; i++) {
		measured += c->gemm[i].time_s;
		predicted += c->gemm[i].predicted_s;
		assert_true(c->gemm[i].flops_per_s > 0);
		assert_int_equal(c->gemm[i].backward, i % 2);
		if (c->gemm[i].backward)
			assert_near(c->gemm[i].predicted_s, 2 * c->gemm[i - 1].predicted_s, 1e-12);
	}
	/* on the CPU the peak is the one at which the largest GEMM's compute
	 * alone takes its measured time (its rate over its efficiency at the
	 * fitted knee), never the bisection's (OpenBLAS's quick GEMMs can beat
	 * the simulator's floor, and then no peak adds up), so it lies
	 * between the lowest such rate and the highest */
	for (int i = 0; i < c->n_gemm; i++) {
		const struct exec_calib_gemm *g = &c->gemm[i];
		double dmin = fmin(g->m, fmin(g->n, g->k));
		double eff = SIM_GEMM_EFF_MAX * dmin / (dmin + sim_gemm_dim_half(c->gemm_dim_half));

		lo_peak = fmin(lo_peak, g->flops_per_s / eff);
		hi_peak = fmax(hi_peak, g->flops_per_s / eff);
		if (g->flops_per_s * g->time_s > largest_flops) {
			largest_flops = g->flops_per_s * g->time_s;
			largest_peak = g->flops_per_s / eff;
			largest = i;
		}
	}
	assert_near(c->bf16_flops_per_s, largest_peak, 1e-9);
	/* its predicted time: its measured one as compute, plus its bytes
	 * and a launch (two, backward) */
	assert_true(c->gemm[largest].predicted_s > c->gemm[largest].time_s);
	assert_true(c->gemm[largest].predicted_s < c->gemm[largest].time_s
		    + 2 * SIM_KERNEL_S + 1e-3);
	assert_true(c->bf16_flops_per_s >= lo_peak && c->bf16_flops_per_s <= hi_peak);
	assert_true(predicted > 0 && measured > 0);
	/* quick: 64 tokens of hidden 64, MLP 256, fp32; a GELU layer moves
	 * 2.5 x (22 x 64 x 64 + 4 x 64 x 256) x 4 / 2 = 778,240 bytes in the
	 * simulator's count, a SwiGLU one 2.5 x (22 x 64 x 64 + 6 x 64 x 256)
	 * x 2 = 942,080 */
	assert_string_equal(c->elt[0].mlp, "gelu");
	assert_string_equal(c->elt[1].mlp, "swiglu");
	assert_near(c->elt[0].bytes, 778240, 1e-12);
	assert_near(c->elt[1].bytes, 942080, 1e-12);
	/* of which the activation, timed apart: 2.5 x 4 x 64 x 256 x 2 =
	 * 327,680 (GELU) and 2.5 x 6 x 64 x 256 x 2 = 491,520 (SwiGLU); the
	 * norms and adds at one rate with the layer's other kernels, the
	 * activation at its own with one kernel, give back the layer's time */
	assert_near(c->elt[0].act_bytes, 327680, 1e-12);
	assert_near(c->elt[1].act_bytes, 491520, 1e-12);
	for (int i = 0; i < 2; i++) {
		assert_true(c->elt[i].act_time_s > 0 && c->elt[i].act_time_s < c->elt[i].time_s);
		if (c->act_bytes_per_s[i] > 0) {
			assert_near((c->elt[i].bytes - c->elt[i].act_bytes) /
					    (c->elt_bytes_per_s[i] * SIM_HBM_EFF) +
				    2.5 * (SIM_ELT_KERNELS - 1) * SIM_KERNEL_S,
				    c->elt[i].time_s - c->elt[i].act_time_s, 1e-9);
			assert_near(c->elt[i].act_bytes / (c->act_bytes_per_s[i] * SIM_HBM_EFF)
				    + 2.5 * SIM_KERNEL_S, c->elt[i].act_time_s, 1e-9);
		} else {
			/* the norms of 64 tokens of 64 take less than their 7
			 * kernels' fixed cost: the layer at one rate */
			assert_near(c->elt[i].bytes / (c->elt_bytes_per_s[i] * SIM_HBM_EFF)
				    + 2.5 * SIM_ELT_KERNELS * SIM_KERNEL_S, c->elt[i].time_s, 1e-9);
		}
	}
	/* quick: one sequence of 64 tokens, 4 heads of 16 sharing 2 KV heads;
	 * at s = 64 the 128-wide blocks leave all of the s x s products:
	 * 4 x 4 x 64 x 64 x 16 = 1,048,576 FLOP forward, 3.5 times that with
	 * backward; the simulator's rate gives back the measured time */
	assert_int_equal(c->attn.batch, 1);
	assert_int_equal(c->attn.seq, 64);
	assert_int_equal(c->attn.heads, 4);
	assert_int_equal(c->attn.kv_heads, 2);
	assert_int_equal(c->attn.head_dim, 16);
	assert_near(c->attn.flops, 3.5 * 1048576, 1e-12);
	assert_true(c->attn.time_s > 0);
	assert_near(c->attn.flops / c->attn_flops_per_s, c->attn.time_s, 1e-12);
	/* quick: 65,536 parameters of fp32 weights (their own master): AdamW
	 * 28 bytes each, the gradient's norm and zeroing 12 in the
	 * simulator's count, 40 x 65,536 = 2,621,440 bytes; its rate gives
	 * back the measured time */
	assert_near(c->opt.params, 65536, 1e-12);
	assert_near(c->opt.bytes, 2621440, 1e-12);
	assert_true(c->opt.time_s > 0);
	assert_near(c->opt.bytes / (c->opt_bytes_per_s * SIM_HBM_EFF)
		    + SIM_OPT_KERNELS * SIM_KERNEL_S, c->opt.time_s, 1e-9);
	assert_true(c->bf16_flops_per_s > 0 && c->hbm_bytes_per_s > 0);
	assert_true(c->intra_bytes_per_s == 0 && c->latency_s == 0);
	free(c);
}

/* The prediction of an executor run prices activations at the element
 * size the backend stores (exec_act_bytes): 4 bytes on the fp32 CPU
 * backend (and the CUDA one at --precision fp32), 2 on the bf16 CUDA one.
 * exec_opts_init's model on one rank: b 2, s 32 (64 tokens), h 64, 4
 * heads of 64 / 4 = 16 (K and V 64 wide), ffn 256, GELU, flash, 4 layers,
 * no recomputation.  Per layer and token it keeps (Korthikanti et al.
 * 2022, sec. 4.1) two norm inputs (x, res2) 2 x 64, the QKV and MLP
 * inputs 2 x 64, Q, K, V 3 x 64, the output projection's input 64, the
 * GELU's input and output 2 x 256: 1024 elements; the last stage adds the
 * final norm's input, 64 a token.  One layer's backward works on the
 * gradients of the residual stream, the norm output, Q, K, V, the
 * attention output and the GELU's input and output: 64 + 64 + 2 x 64 +
 * 2 x 64 + 2 x 256 = 896 elements a token.  Dropout masks (1 byte), the
 * flash log-sum-exp and the logits (fp32) do not change.  At 4 bytes
 * instead of 2: (4 - 2) x 64 tokens x (4 x 1024 + 64 + 896) = 647,168
 * bytes more. */
static void test_exec_predict_activations_at_stored_size(void **state)
{
	struct exec_opts o;
	struct sim_cluster c;
	struct sim_result bf16, run;
	const double tokens = 2 * 32, per_token = 4 * 1024 + 64 + 896;
	const double more = (4 - 2) * tokens * per_token;

	(void)state;
	exec_opts_init(&o);
	assert_near(more, 647168, 1e-12);
	exec_cpu_cluster(&c, 1);
	/* the simulator's own default: a bf16 trainer */
	assert_near(o.par.act_bytes_per_element, 2, 1e-12);
	assert_int_equal(sim_check(&o.model, &o.par, &c, NULL, 0), RC_OK);
	sim_step(&o.model, &o.par, &c, &bf16);
	/* the fp32 CPU backend */
	assert_int_equal(exec_act_bytes("cpu", EXEC_PRECISION_FP32), 4);
	assert_int_equal(exec_predict_on(&o, &c, &run, NULL, 0), RC_OK);
	assert_near(run.memory.activations - bf16.memory.activations, more, 1e-9);
	/* model states and the logits are as before */
	assert_near(run.memory.weights + run.memory.grads + run.memory.optimizer,
		    bf16.memory.weights + bf16.memory.grads + bf16.memory.optimizer, 1e-12);
	assert_near((run.memory.total - run.memory.other) - (bf16.memory.total - bf16.memory.other),
		    more, 1e-9);
	/* the CUDA backend: bf16 activations, as the simulator's default;
	 * fp32 with --precision fp32 */
	o.backend = "cuda";
	assert_int_equal(exec_act_bytes("cuda", EXEC_PRECISION_BF16), 2);
	assert_int_equal(exec_predict_on(&o, &c, &run, NULL, 0), RC_OK);
	assert_near(run.memory.activations, bf16.memory.activations, 1e-12);
	/* its model states: a 2-byte working copy of the weights besides the
	 * fp32 master, fp32 gradients and AdamW, 2 + 4 + 12 = 18 bytes a
	 * parameter where the fp32 backends keep 4 + 4 + 8 = 16 */
	assert_near(run.memory.grads, 2 * bf16.memory.grads, 1e-12);
	assert_near(run.memory.weights + run.memory.grads + run.memory.optimizer,
		    18.0 / 16.0 * (bf16.memory.weights + bf16.memory.grads + bf16.memory.optimizer),
		    1e-12);
	o.precision = EXEC_PRECISION_FP32;
	assert_int_equal(exec_predict_on(&o, &c, &run, NULL, 0), RC_OK);
	assert_near(run.memory.activations - bf16.memory.activations, more, 1e-9);
	/* fp32 weights are their own master: 4 + 4 + 8, twice the default's
	 * 2-byte weights and gradients, two thirds of its 12 optimizer bytes */
	assert_near(run.memory.weights, 2 * bf16.memory.weights, 1e-12);
	assert_near(run.memory.grads, 2 * bf16.memory.grads, 1e-12);
	assert_near(run.memory.optimizer, 8.0 / 12.0 * bf16.memory.optimizer, 1e-12);
}

/* An uneven plan is priced by its fullest stage.  exec_opts_init's model
 * (hidden 64, 4 heads and 4 KV heads of 16, ffn 256, GELU, vocabulary
 * 128) has 64^2 (Q) + 2 x 64 x 64 (K, V) + 64^2 (output) + 2 x 64 x 256
 * (MLP) + 2 x 64 (norms) = 49,280 parameters a layer (sim_layer_params;
 * biases not counted).  6 layers over pp 4 are 1 + 2 + 2 + 1: stage 0
 * holds 49,280 + 128 x 64 = 57,472 parameters and 4 micro-batches in
 * flight, stage 1 98,560 and 3 in flight, so stage 1 is the fullest:
 * 16 bytes a parameter (4 + 4 + 8 in fp32) make 1,576,960 bytes of model
 * states.  The executor's stages agree on which holds the most. */
static void test_exec_predict_uneven_fullest_stage(void **state)
{
	struct exec_opts o;
	struct sim_cluster c;
	struct sim_result r;
	struct rig st[4];
	double params[4];

	(void)state;
	exec_opts_init(&o);
	o.model.layers = 6;
	o.par.pp = 4;
	exec_opts_derive(&o);
	assert_int_equal(exec_opts_check(&o, NULL, 0), RC_OK);
	exec_cpu_cluster(&c, 4);
	assert_int_equal(exec_predict_on(&o, &c, &r, NULL, 0), RC_OK);
	assert_near(r.memory.weights + r.memory.grads + r.memory.optimizer, 16.0 * 98560, 1e-12);
	for (int s = 0; s < 4; s++) {
		rig_open(&st[s], &o, s);
		params[s] = exec_trainer_local_params(st[s].t);
	}
	/* the executor also holds biases: Q, K, V, output and second MLP
	 * 5 x 64, the two norms' 2 x 64, the first MLP's 256, 704 a layer */
	assert_near(params[1], 2 * (49280 + 704), 1e-12);
	assert_near(params[2], params[1], 1e-12);
	assert_true(params[1] > params[0] && params[1] > params[3]);
	for (int s = 0; s < 4; s++)
		rig_close(&st[s]);
}

/* 8 layers of 50M parameters (several gradient buckets) over dp 2, micro-
 * batches of mbs, on two CPU ranks. */
static void dp2_opts(struct exec_opts *o, struct sim_cluster *c, int mbs)
{
	exec_opts_init(o);
	o->model.layers = 8;
	o->model.hidden = 2048;
	o->model.heads = 16;
	o->model.kv_heads = 16;
	o->model.ffn = 8192;
	o->par.dp = 2;
	o->par.mbs = mbs;
	o->par.gbs = 2 * mbs;
	exec_opts_derive(o);
	exec_cpu_cluster(c, 2);
}

/* On the CPU the executor's trainer hides none of its data-parallel
 * communication (its sums take the cores the compute runs on; ZeRO-3's
 * gathers and reduce-scatters wait where they are issued), so its
 * prediction exposes all of it, where the simulator's default hides all
 * but the last bucket (ZeRO 0) or block (ZeRO 3) under the backward. */
static void test_exec_predict_dp_not_hidden(void **state)
{
	struct exec_opts o;
	struct sim_cluster c;
	struct sim_result r, sim;

	(void)state;
	dp2_opts(&o, &c, 8);
	for (o.par.zero = 0; o.par.zero <= 3; o.par.zero += 3) {
		struct sim_parallel p = o.par;

		assert_int_equal(exec_opts_check(&o, NULL, 0), RC_OK);
		assert_int_equal(exec_predict_on(&o, &c, &r, NULL, 0), RC_OK);
		assert_true(r.breakdown.dp_comm_total_s > 0);
		assert_true(r.breakdown.dp_comm_exposed_s == r.breakdown.dp_comm_total_s);
		/* the same layout as Megatron-LM or DeepSpeed runs it */
		p.act_bytes_per_element = 4;
		p.grad_bytes_per_param = 4;
		sim_step(&o.model, &p, &c, &sim);
		assert_near(sim.breakdown.dp_comm_total_s, r.breakdown.dp_comm_total_s, 1e-12);
		assert_true(sim.breakdown.dp_comm_exposed_s < 0.5 * sim.breakdown.dp_comm_total_s);
		assert_true(r.step_time_s > sim.step_time_s);
	}
	/* on a GPU, ZeRO 0 and 1's sums run under the backward (NCCL on
	 * the reduction stream), as the simulator assumes, but ZeRO 1's
	 * gather of the updated weights, half its traffic, waits in the
	 * optimizer step; ZeRO 2 and 3's collectives wait where they are
	 * issued */
	o.backend = "cuda";
	for (o.par.zero = 0; o.par.zero <= 3; o.par.zero++) {
		struct sim_parallel p = o.par;

		assert_int_equal(exec_predict_on(&o, &c, &r, NULL, 0), RC_OK);
		assert_true(r.breakdown.dp_comm_total_s > 0);
		if (o.par.zero == 0)
			assert_true(r.breakdown.dp_comm_exposed_s <
				    0.5 * r.breakdown.dp_comm_total_s);
		else if (o.par.zero == 1)
			assert_true(r.breakdown.dp_comm_exposed_s > 0.5 * r.breakdown.dp_comm_total_s &&
				    r.breakdown.dp_comm_exposed_s < r.breakdown.dp_comm_total_s);
		else
			assert_true(r.breakdown.dp_comm_exposed_s == r.breakdown.dp_comm_total_s);
		p.act_bytes_per_element = 2;
		p.grad_bytes_per_param = 4;
		p.zero2_every_micro_batch = 1;
		p.dp_overlap = o.par.zero == 1 ? SIM_DP_OVERLAP_SUMS
			     : o.par.zero == 0 ? SIM_DP_OVERLAP_ALL : SIM_DP_OVERLAP_NONE;
		sim_step(&o.model, &p, &c, &sim);
		assert_near(r.step_time_s, sim.step_time_s, 1e-12);
	}
}

/* The executor's ZeRO-2 keeps only its shard of the gradients, so it
 * reduce-scatters each micro-batch's (grads_end): with 4 micro-batches
 * the step's DP traffic is the all-reduce-sized reduce-scatter plus
 * all-gather of the last and 3 reduce-scatters more, each half a ring
 * all-reduce (sim_comm.c: (n-1)/n of the bytes and n-1 latencies against
 * twice that), 1 + 3 / 2 = 2.5 times what the simulator's default
 * (the step's sum once, Llama 3's FSDP) prices.  With one micro-batch
 * they agree; ZeRO-1 sums the step's once either way. */
static void test_exec_predict_zero2_every_micro_batch(void **state)
{
	struct exec_opts o;
	struct sim_cluster c;
	struct sim_result r, sim;

	(void)state;
	dp2_opts(&o, &c, 2);
	for (int m = 1; m <= 4; m *= 4)
		for (o.par.zero = 1; o.par.zero <= 2; o.par.zero++) {
			struct sim_parallel p;

			o.par.gbs = o.par.mbs * o.par.dp * m;
			p = o.par;
			assert_int_equal(exec_predict_on(&o, &c, &r, NULL, 0), RC_OK);
			p.act_bytes_per_element = 4;
			p.grad_bytes_per_param = 4;
			p.dp_overlap = SIM_DP_OVERLAP_NONE;
			sim_step(&o.model, &p, &c, &sim);
			assert_true(sim.breakdown.dp_comm_total_s > 0);
			assert_near(r.breakdown.dp_comm_total_s / sim.breakdown.dp_comm_total_s,
				    o.par.zero == 2 && m == 4 ? 2.5 : 1.0, 1e-9);
		}
}

static void test_exec_calibration_path_is_safe(void **state)
{
	char buf[256];

	(void)state;
	exec_calibration_path(buf, sizeof(buf), "/u", "H100-SXM5-80GB");
	assert_string_equal(buf, "/u/calibration/H100-SXM5-80GB.json");
	exec_calibration_path(buf, sizeof(buf), "/u", "NVIDIA H100/80GB");
	assert_string_equal(buf, "/u/calibration/NVIDIA_H100_80GB.json");
}

/* The text exec_run_write_json() writes for r (and pred), read back from
 * a temporary file; the caller frees it. */
static char *written_run_json(const struct exec_opts *o, const struct exec_result *r,
			      const struct sim_result *pred)
{
	char path[] = "/tmp/gpuplan-run-json-XXXXXX", *text = NULL;
	size_t len;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(exec_run_write_json(path, o, r, pred), RC_OK);
	assert_int_equal(gp_read_file(path, &text, &len), RC_OK);
	remove(path);
	return text;
}

/* r as exec_run fills it for 3 steps of these losses, gradient norms and
 * wall times, nothing else measured. */
static void three_steps(struct exec_result *r, double *losses, double *norms, double *times)
{
	memset(r, 0, sizeof(*r));
	r->first_step = 1;
	r->steps = 3;
	r->losses = losses;
	r->grad_norms = norms;
	r->step_time_s = times;
}

/* A run's JSON spells a non-finite figure null, never a number it is
 * not (a diverged run's NaN losses were written as 0). */
static void test_exec_run_write_json_nonfinite_null(void **state)
{
	struct exec_opts o;
	struct exec_result r;
	double losses[3] = { 4.5, NAN, INFINITY }, norms[3] = { 1, 2, NAN }, times[3] = { 1, 1, 1 };
	char *text;

	(void)state;
	exec_opts_init(&o);
	three_steps(&r, losses, norms, times);
	r.step_time_median_s = NAN;
	text = written_run_json(&o, &r, NULL);
	assert_non_null(strstr(text, "\"losses\":\t[4.5, null, null]"));
	assert_non_null(strstr(text, "\"grad_norms\":\t[1, 2, null]"));
	assert_non_null(strstr(text, "\"step_time_s\":\tnull"));
	assert_non_null(strstr(text, "\"first_step\":\t1"));
	free(text);
}

/* A CPU-timed run's JSON holds the steps' CPU times beside the wall
 * clock's, and sets the CPU time against the prediction; a run timed by
 * the wall clock alone sets the wall clock against it. */
static void test_exec_run_write_json_cpu_time(void **state)
{
	struct exec_opts o;
	struct exec_result r;
	struct sim_result pred;
	double losses[3] = { 4, 3, 2 }, norms[3] = { 1, 1, 1 }, wall[3] = { 2, 2, 2 };
	double cpu[3] = { 1, 1, 1 };

	(void)state;
	exec_opts_init(&o);
	three_steps(&r, losses, norms, wall);
	memset(&pred, 0, sizeof(pred));
	r.step_time_median_s = 2;
	r.step_cpu_s = cpu;
	r.step_cpu_median_s = 1;
	pred.step_time_s = 1.25;
	for (int timed = 1; timed >= 0; timed--) {
		char *text;

		r.cpu_timed = timed;
		text = written_run_json(&o, &r, &pred);
		assert_non_null(strstr(text, "\"step_times_s\":\t[2, 2, 2]"));
		assert_non_null(strstr(text, "\"step_cpu_times_s\":\t[1, 1, 1]"));
		assert_non_null(strstr(text, "\"step_cpu_time_s\":\t1,"));
		assert_non_null(strstr(text, timed ? "\"cpu_timed\":\ttrue" : "\"cpu_timed\":\tfalse"));
		/* (1 - 1.25) / 1.25 timed by CPU time, (2 - 1.25) / 1.25 by the wall */
		assert_non_null(strstr(text, timed ? "\"step_time_error\":\t-0.2"
						   : "\"step_time_error\":\t0.6"));
		free(text);
	}
}

/* Whether a model fits the host is the simulator's memory per rank
 * against the host's available memory, times the ranks on it. */
static void test_exec_host_fits_refuses_too_big(void **state)
{
	struct exec_opts o;
	struct sim_result pred;
	char why[512] = "";
	double avail = exec_host_available_bytes();

	(void)state;
	exec_opts_init(&o);
	memset(&pred, 0, sizeof(pred));
	assert_true(avail > 0);
	pred.memory.total = avail / 4;
	assert_int_equal(exec_host_fits(&o, &pred, 2, why, sizeof(why)), RC_OK);
	assert_int_equal(exec_host_fits(&o, &pred, 8, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "memory: expected the run to fit the "));
	assert_non_null(strstr(why, "found 8 CPU ranks x "));
	pred.memory.total = INFINITY;
	assert_int_equal(exec_host_fits(&o, &pred, 1, why, sizeof(why)), RC_INPUT);
	/* a GPU's memory is --check's question */
	o.backend = "cuda";
	assert_int_equal(exec_host_fits(&o, &pred, 1, why, sizeof(why)), RC_OK);
}

/* A checkpoint's manifest records the data and AdamW settings it was
 * trained with and reads them back exactly (a time stamp in nanoseconds
 * past a double's 53 bits included); synthetic data is null; a manifest of
 * schema /1, which records neither, and a data path with a control byte
 * are refused. */
static void test_exec_ckpt_manifest_records_data(void **state)
{
	struct exec_ckpt_shard sh[2] = { { 1234, 0x0123456789abcdefULL }, { 99, 42 } };
	struct exec_ckpt_manifest m, q;
	struct exec_opts o;
	char why[256], *json, *t;

	(void)state;
	exec_opts_init(&o);
	exec_opts_derive(&o);
	memset(&m, 0, sizeof(m));
	m.step = 7;
	m.model = o.model;
	m.norm = o.norm;
	m.par = o.par;
	m.par.dp = 2;
	m.seed = 99;
	gp_strlcpy(m.data.path, "data/tokens.bin", sizeof(m.data.path));
	m.data.bytes = 8192;
	m.data.mtime_ns = 1765000000123456789LL;
	m.data.fnv1a64 = 0xfedcba9876543210ULL;
	exec_ckpt_optim_of(&o, &m.optim);
	m.optim.lr = 3e-4;
	m.steps = 100;
	m.world = 2;
	m.shards = sh;
	json = exec_ckpt_manifest_to_json(&m);
	assert_int_equal(exec_ckpt_manifest_parse(json, strlen(json), &q, why, sizeof(why)), RC_OK);
	assert_int_equal(q.data.synthetic, 0);
	assert_string_equal(q.data.path, "data/tokens.bin");
	assert_true(q.data.bytes == 8192);
	assert_true(q.data.mtime_ns == 1765000000123456789LL);
	assert_true(q.data.fnv1a64 == 0xfedcba9876543210ULL);
	assert_true(q.optim.lr == 3e-4 && q.optim.beta2 == o.beta2 &&
		    q.optim.weight_decay == o.weight_decay && q.optim.grad_clip == o.grad_clip &&
		    q.optim.adam_eps == o.adam_eps && q.optim.beta1 == o.beta1);
	assert_int_equal(q.steps, 100);
	assert_true(q.shards[0].fnv1a64 == sh[0].fnv1a64 && q.shards[1].bytes == 99);
	/* the run's --lr differs: one line naming it and both values */
	assert_int_equal(exec_ckpt_optim_mismatch(&q.optim, &o, "ck", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "ck: --lr: expected the checkpoint's 0.0003, found 0.001"));
	o.lr = 3e-4;
	assert_int_equal(exec_ckpt_optim_mismatch(&q.optim, &o, "ck", why, sizeof(why)), 0);
	exec_ckpt_manifest_release(&q);
	/* a schema /1 manifest records no data: refused, not resumed blind */
	t = strstr(json, "checkpoint/2");
	assert_non_null(t);
	t[11] = '1';
	assert_int_equal(exec_ckpt_manifest_parse(json, strlen(json), &q, why, sizeof(why)),
			 RC_INPUT);
	assert_non_null(strstr(why, ".schema"));
	free(json);
	gp_strlcpy(m.data.path, "a\x1b[2Jb", sizeof(m.data.path));
	json = exec_ckpt_manifest_to_json(&m);
	assert_int_equal(exec_ckpt_manifest_parse(json, strlen(json), &q, why, sizeof(why)),
			 RC_INPUT);
	assert_non_null(strstr(why, ".data.path"));
	free(json);
	memset(&m.data, 0, sizeof(m.data));
	m.data.synthetic = 1;
	json = exec_ckpt_manifest_to_json(&m);
	assert_non_null(strstr(json, "\"data\":\tnull"));
	assert_int_equal(exec_ckpt_manifest_parse(json, strlen(json), &q, why, sizeof(why)), RC_OK);
	assert_int_equal(q.data.synthetic, 1);
	exec_ckpt_manifest_release(&q);
	free(json);
}

/* A checkpoint's manifest records the backend and precision its run
 * computed with and reads them back; one written before they were
 * recorded reads as backend "" (resumed on the run's own, which
 * exec_ckpt_prepare says); one field without the other, or a precision
 * gpuplan does not run, is refused. */
static void test_exec_ckpt_manifest_records_backend(void **state)
{
	struct exec_ckpt_shard sh[1] = { { 1234, 0x0123456789abcdefULL } };
	struct exec_ckpt_manifest m = { .step = 3, .steps = 10, .world = 1, .shards = sh };
	struct exec_ckpt_manifest q;
	struct exec_opts o;
	char why[256], *json, *t;

	(void)state;
	exec_opts_init(&o);
	exec_opts_derive(&o);
	/* the default run's model and layout, on synthetic data */
	m.model = o.model;
	m.norm = o.norm;
	m.par = o.par;
	m.data.synthetic = 1;
	exec_ckpt_optim_of(&o, &m.optim);
	gp_strlcpy(m.backend, "cuda", sizeof(m.backend));
	m.precision = EXEC_PRECISION_BF16;
	json = exec_ckpt_manifest_to_json(&m);
	assert_non_null(strstr(json, "\"backend\":\t\"cuda\""));
	assert_int_equal(exec_ckpt_manifest_parse(json, strlen(json), &q, why, sizeof(why)), RC_OK);
	assert_string_equal(q.backend, "cuda");
	assert_int_equal(q.precision, EXEC_PRECISION_BF16);
	exec_ckpt_manifest_release(&q);
	free(json);
	m.precision = EXEC_PRECISION_FP32;
	json = exec_ckpt_manifest_to_json(&m);
	assert_int_equal(exec_ckpt_manifest_parse(json, strlen(json), &q, why, sizeof(why)), RC_OK);
	assert_int_equal(q.precision, EXEC_PRECISION_FP32);
	exec_ckpt_manifest_release(&q);
	/* a precision gpuplan does not run */
	t = strstr(json, "\"fp32\"");
	assert_non_null(t);
	memcpy(t + 1, "fp16", 4);
	assert_int_equal(exec_ckpt_manifest_parse(json, strlen(json), &q, why, sizeof(why)),
			 RC_INPUT);
	assert_string_equal(why, ".precision: expected bf16 or fp32, found 'fp16'");
	/* the backend without its precision */
	t = strstr(json, "\"precision\"");
	memcpy(t + 1, "precisioX", 9);
	assert_int_equal(exec_ckpt_manifest_parse(json, strlen(json), &q, why, sizeof(why)),
			 RC_INPUT);
	assert_string_equal(why, ".precision: expected a string, found nothing");
	free(json);
	/* written before they were recorded: neither field, read as "" */
	m.backend[0] = '\0';
	json = exec_ckpt_manifest_to_json(&m);
	assert_null(strstr(json, "backend"));
	assert_null(strstr(json, "precision"));
	assert_int_equal(exec_ckpt_manifest_parse(json, strlen(json), &q, why, sizeof(why)), RC_OK);
	assert_string_equal(q.backend, "");
	exec_ckpt_manifest_release(&q);
	free(json);
}

/* A FIFO or a directory where a file is expected is refused from stat
 * alone, without blocking; a regular file opens and hashes. */
static void test_exec_ckpt_open_regular_refuses_fifo(void **state)
{
	char dir[] = "/tmp/gpuplan-ckpt-XXXXXX", fifo[64], file[64], why[256];
	struct exec_ckpt_data d;
	struct stat st;
	long long bytes;
	uint64_t hash;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(exec_ckpt_open_regular(fifo, "a shard", &st, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "expected a regular file (a shard), found a FIFO"));
	assert_int_equal(exec_ckpt_data_id(fifo, &d, why, sizeof(why)), RC_INPUT);
	assert_int_equal(exec_ckpt_open_regular(dir, "a shard", &st, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "found a directory"));
	f = fopen(file, "wb");
	assert_non_null(f);
	fputs("abc", f);
	fclose(f);
	assert_int_equal(exec_ckpt_file_hash(file, "a shard", &bytes, &hash, why, sizeof(why)),
			 RC_OK);
	assert_true(bytes == 3 && hash == gp_fnv1a64("abc", 3, GP_FNV1A64_INIT));
	assert_int_equal(exec_ckpt_data_id(file, &d, why, sizeof(why)), RC_OK);
	assert_true(d.bytes == 3 && d.fnv1a64 == hash && !d.synthetic);
	unlink(fifo);
	unlink(file);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_layout_init_tp_innermost),
		cmocka_unit_test(test_exec_ckpt_manifest_records_data),
		cmocka_unit_test(test_exec_ckpt_manifest_records_backend),
		cmocka_unit_test(test_exec_ckpt_open_regular_refuses_fifo),
		cmocka_unit_test(test_exec_run_write_json_nonfinite_null),
		cmocka_unit_test(test_exec_run_write_json_cpu_time),
		cmocka_unit_test(test_exec_host_fits_refuses_too_big),
		cmocka_unit_test(test_exec_split_balanced),
		cmocka_unit_test(test_exec_chunk_layers_interleaved),
		cmocka_unit_test(test_exec_chunk_layers_uneven_as_simulated),
		cmocka_unit_test(test_exec_opts_check_rejects_unsplittable),
		cmocka_unit_test(test_exec_opts_check_moe_layouts),
		cmocka_unit_test(test_exec_data_synthetic_bigram),
		cmocka_unit_test(test_exec_data_file_rejects_big_token),
		cmocka_unit_test(test_exec_rand_normal_moments),
		cmocka_unit_test(test_exec_rand_normal_fill_same_values),
		cmocka_unit_test(test_exec_trainer_init_threads_same_weights),
		cmocka_unit_test(test_exec_trainer_gradcheck_gelu_layernorm),
		cmocka_unit_test(test_exec_trainer_gradcheck_swiglu_rmsnorm_flash),
		cmocka_unit_test(test_exec_trainer_gradcheck_tied),
		cmocka_unit_test(test_exec_trainer_gradcheck_moe),
		cmocka_unit_test(test_exec_trainer_gradcheck_moe_shared_pre_softmax),
		cmocka_unit_test(test_exec_trainer_tied_copies_start_equal),
		cmocka_unit_test(test_exec_trainer_recompute_equivalent),
		cmocka_unit_test(test_exec_trainer_microbatches_equivalent),
		cmocka_unit_test(test_exec_trainer_schedules_equivalent),
		cmocka_unit_test(test_exec_trainer_init_layout_independent),
		cmocka_unit_test(test_exec_trainer_uneven_stages_hold_the_model),
		cmocka_unit_test(test_exec_trainer_loss_falls),
		cmocka_unit_test(test_exec_opts_check_lora),
		cmocka_unit_test(test_exec_trainer_gradcheck_lora_gelu_all),
		cmocka_unit_test(test_exec_trainer_gradcheck_lora_swiglu_some),
		cmocka_unit_test(test_exec_trainer_lora_trains_adapters_only),
		cmocka_unit_test(test_exec_trainer_lora_states_match_simulator),
		cmocka_unit_test(test_exec_group_color_matches_members),
		cmocka_unit_test(test_exec_cpu_attention_offset_rows),
		cmocka_unit_test(test_exec_cpu_moe_route_grads),
		cmocka_unit_test(test_exec_cpu_moe_permute_combine),
		cmocka_unit_test(test_exec_sched_channels_in_order),
		cmocka_unit_test(test_exec_launcher_environments),
		cmocka_unit_test(test_exec_gpu_matches_names_and_memory),
		cmocka_unit_test(test_exec_calibration_json_round_trip),
		cmocka_unit_test(test_exec_calibration_parse_rejects_bad_fields),
		cmocka_unit_test(test_exec_calibration_half_gemm_rate_doubles_compute),
		cmocka_unit_test(test_exec_calibration_fit_finds_knee),
		cmocka_unit_test(test_exec_calibration_apply_elt),
		cmocka_unit_test(test_exec_calibration_fit_elt_apart),
		cmocka_unit_test(test_exec_calibration_json_without_knee),
		cmocka_unit_test(test_exec_calibrate_cpu_fit_reproduces_gemms),
		cmocka_unit_test(test_exec_calibration_path_is_safe),
		cmocka_unit_test(test_exec_predict_activations_at_stored_size),
		cmocka_unit_test(test_exec_predict_uneven_fullest_stage),
		cmocka_unit_test(test_exec_predict_dp_not_hidden),
		cmocka_unit_test(test_exec_predict_zero2_every_micro_batch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
