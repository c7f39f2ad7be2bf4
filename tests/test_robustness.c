/*
 * test_robustness.c - arithmetic at the extremes and the inputs fuzzing
 * found.  Trillion-parameter models, million-GPU clusters and 1e15 tokens
 * go through the parameter and FLOP counts, sim_check/sim_step, the
 * planner and the formatting helpers: every figure stays finite and no
 * nan or inf reaches the output.  Each input a fuzz target crashed on is
 * kept in tests/fuzz/corpus/ and read back here, so the bug it found
 * stays fixed in the ordinary build as well as under the sanitizers.
 */
#include <ctype.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "testutil.h"
#include "plan.h"
#include "price_internal.h"
#include "sim.h"

#define CORPUS "tests/fuzz/corpus"

/* ---- helpers ----------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	assert_non_null(f);
	buf = malloc(1 << 20);
	assert_non_null(buf);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	buf[*len] = '\0';
	return buf;
}

/* 1 when every number in the tree is finite and, unless allow_null,
 * nothing is null: cJSON prints a non-finite number as null, so a null
 * where the schema has none is a suppressed nan or inf.  (The planner's
 * answer writes null on purpose for what does not apply.) */
static int tree_finite(const cJSON *it, int allow_null)
{
	for (; it; it = it->next) {
		if (cJSON_IsNull(it) && !allow_null)
			return 0;
		if (cJSON_IsNumber(it) && !isfinite(it->valuedouble))
			return 0;
		if (it->child && !tree_finite(it->child, allow_null))
			return 0;
	}
	return 1;
}

/* JSON text that parses and whose numbers are all finite.  A printed nan
 * or inf would not parse: JSON has no spelling for either. */
static void assert_json_finite(const char *json, int allow_null)
{
	cJSON *root;

	assert_non_null(json);
	root = cJSON_Parse(json);
	assert_non_null(root);
	assert_true(tree_finite(root, allow_null));
	cJSON_Delete(root);
}

static void assert_no_nonfinite_text(const char *s)
{
	char low[64];
	size_t i;

	for (i = 0; s[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	low[i] = '\0';
	assert_null(strstr(low, "nan"));
	assert_null(strstr(low, "inf"));
}

/* A GPT shape (Narayanan et al., SC'21, Table 1 conventions): MLP 4h,
 * no GQA, tied embeddings. */
static struct sim_model gpt(int layers, int hidden, int heads, int vocab, int seq)
{
	struct sim_model m;

	memset(&m, 0, sizeof(m));
	snprintf(m.name, sizeof(m.name), "gpt-%dx%d", layers, hidden);
	m.layers = layers;
	m.hidden = hidden;
	m.heads = heads;
	m.kv_heads = heads;
	m.ffn = 4 * hidden;
	m.vocab = vocab;
	m.seq = seq;
	m.mlp = SIM_MLP_GELU;
	m.tied_embeddings = 1;
	return m;
}

/* H100-SXM5-80GB (NVIDIA datasheet: 989.4 TFLOP/s dense bf16, 3.35 TB/s,
 * NVLink 900 GB/s both directions) in nodes of 8 with 8 x 400 Gb/s. */
static struct sim_cluster h100(void)
{
	struct sim_cluster c;

	memset(&c, 0, sizeof(c));
	snprintf(c.gpu.name, sizeof(c.gpu.name), "H100-SXM5-80GB");
	c.gpu.memory_bytes = 80e9;
	c.gpu.hbm_bytes_per_s = 3.35e12;
	c.gpu.bf16_flops_per_s = 989.4e12;
	c.gpu.intra_bytes_per_s = 450e9;
	c.gpu.nvlink = 1;
	c.gpu.p2p = 1;
	c.gpus_per_node = 8;
	c.intra_bytes_per_s = 450e9;
	c.inter_bytes_per_s = 400e9;
	return c;
}

static void assert_result_finite(const struct sim_result *r)
{
	const double v[] = {
		r->step_time_s, r->tokens_per_s, r->model_flops_per_gpu_s,
		r->hardware_flops_per_gpu_s, r->mfu, r->hfu,
		r->breakdown.compute_s, r->breakdown.tp_comm_s, r->breakdown.cp_comm_s,
		r->breakdown.pp_bubble_s, r->breakdown.pp_comm_s,
		r->breakdown.dp_comm_exposed_s, r->breakdown.dp_comm_total_s,
		r->breakdown.optimizer_s, r->memory.weights, r->memory.grads,
		r->memory.optimizer, r->memory.activations, r->memory.other,
		r->memory.total, r->memory.capacity,
	};

	for (size_t i = 0; i < GP_ARRAY_LEN(v); i++) {
		assert_true(isfinite(v[i]));
		assert_true(v[i] >= 0);
	}
	assert_true(r->step_time_s > 0);
	assert_true(r->tokens_per_s > 0);
}

/* ---- trillion-parameter models ------------------------------------------ */

/* Megatron-LM's 1T model (Narayanan et al., SC'21, Table 1: 128 layers,
 * hidden 25600, 160 heads, vocabulary 51200, sequence 2048) has 1008 B
 * parameters as published; the exact count from the shapes is within
 * 0.1 % of it (the paper's 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)) also
 * counts position embeddings and biases slightly differently). */
static void test_sim_model_params_one_trillion(void **state)
{
	struct sim_model m = gpt(128, 25600, 160, 51200, 2048);

	(void)state;
	assert_near(sim_model_params(&m), 1008e9, 1e-3);
}

/* A 10T shape: 200 layers, hidden 65536, 512 heads, vocabulary 256000,
 * sequence 8192.  12 l h^2 = 12 x 200 x 65536^2 = 1.0308e13; the full
 * formula's factor 1 + 13/(12h) + V/(12 l h) = 1.0000165 + 0.0016276 gives
 * 1.0325e13 (Narayanan et al., SC'21, sec. 5.1, without position
 * embeddings). */
static void test_sim_model_params_ten_trillion(void **state)
{
	struct sim_model m = gpt(200, 65536, 512, 256000, 8192);
	double l = 200, h = 65536, V = 256000;
	double want = 12 * l * h * h * (1 + 13 / (12 * h) + V / (12 * l * h));

	(void)state;
	assert_near(sim_model_params(&m), want, 1e-3);
	assert_true(want > 1e13);
}

/* Training FLOPs for 1e15 tokens of the 10T shape by eq. 3 of Narayanan
 * et al. (SC'21): 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) with B s = 1e15
 * tokens: 72 x 1e15 x 200 x 65536^2 x (1 + 0.0208333 + 0.0016276)
 * = 6.3237e28 FLOPs, far from double's range but far beyond any integer
 * type. */
static void test_sim_train_flops_quadrillion_tokens(void **state)
{
	struct sim_model m = gpt(200, 65536, 512, 256000, 8192);
	double s = 8192, l = 200, h = 65536, V = 256000, tokens = 1e15;
	double want = 72 * tokens * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
	double got = sim_train_flops(&m, tokens / s, SIM_RECOMPUTE_NONE);

	(void)state;
	assert_near(got, want, 1e-9);
	assert_near(got, 6.3237e28, 1e-4);
	/* full recomputation adds one forward of every layer: x 4/3 on the
	 * layer terms, so between 1.3 and 4/3 of the total */
	got = sim_train_flops(&m, tokens / s, SIM_RECOMPUTE_FULL) / want;
	assert_true(got > 1.3 && got <= 4.0 / 3.0 + 1e-12);
}

/* ---- million-GPU clusters -------------------------------------------- */

/* The 1T model on 2^20 = 1,048,576 GPUs: TP 8 inside a node, PP 128 (one
 * layer per stage), DP 1024, 128 micro-batches per step.  Every figure is
 * finite; the breakdown adds up to the step; tokens/s is the global batch
 * over the step time. */
static void test_sim_step_million_gpus(void **state)
{
	struct sim_model m = gpt(128, 25600, 160, 51200, 2048);
	struct sim_cluster c = h100();
	struct sim_parallel p;
	struct sim_result r;
	const struct sim_breakdown *b = &r.breakdown;
	char why[256];

	(void)state;
	sim_parallel_init(&p);
	p.tp = 8;
	p.pp = 128;
	p.dp = 1024;
	p.mbs = 1;
	p.gbs = 1024 * 128;
	p.zero = 1;
	p.recompute = SIM_RECOMPUTE_FULL;
	p.seq_parallel = 1;
	assert_int_equal(p.tp * p.pp * p.dp, 1 << 20);
	assert_int_equal(sim_check(&m, &p, &c, why, sizeof(why)), RC_OK);
	sim_step(&m, &p, &c, &r);
	assert_result_finite(&r);
	assert_near(b->compute_s + b->tp_comm_s + b->cp_comm_s + b->pp_bubble_s +
		    b->pp_comm_s + b->dp_comm_exposed_s + b->optimizer_s, r.step_time_s, 1e-9);
	assert_near(r.tokens_per_s, (double)p.gbs * m.seq / r.step_time_s, 1e-9);
	assert_true(r.mfu > 0 && r.mfu <= 1);
}

/* The 10T shape on 1,048,000 GPUs (TP 8, PP 200, DP 655) trained on 1e15
 * tokens at USD 2.50 per GPU-hour: time to train is tokens over tokens/s,
 * the cost time x GPUs x rate, and the plan and prediction JSON hold only
 * finite numbers and read back. */
static void test_sim_plan_json_ten_trillion_million_gpus(void **state)
{
	struct sim_plan sp, back;
	char *json, *pred;
	double gpus;

	(void)state;
	memset(&sp, 0, sizeof(sp));
	sp.model = gpt(200, 65536, 512, 256000, 8192);
	sp.cluster = h100();
	sim_parallel_init(&sp.par);
	sp.par.tp = 8;
	sp.par.pp = 200;
	sp.par.dp = 655;
	sp.par.mbs = 1;
	sp.par.gbs = 655 * 400;
	sp.par.zero = 3;
	sp.par.recompute = SIM_RECOMPUTE_FULL;
	gpus = (double)sp.par.tp * sp.par.pp * sp.par.dp;
	assert_near(gpus, 1048000, 0);
	assert_int_equal(sim_check(&sp.model, &sp.par, &sp.cluster, NULL, 0), RC_OK);
	sim_step(&sp.model, &sp.par, &sp.cluster, &sp.result);
	assert_result_finite(&sp.result);
	sp.nodes = 1048000 / 8;
	sp.tokens = 1e15;
	sp.usd_per_gpu_hour = 2.5;
	sp.time_to_train_s = sim_time_to_train_s(&sp.result, sp.tokens);
	assert_near(sp.time_to_train_s, 1e15 / sp.result.tokens_per_s, 1e-12);
	sp.cost_usd = sp.time_to_train_s / 3600 * gpus * sp.usd_per_gpu_hour;
	assert_true(isfinite(sp.cost_usd) && sp.cost_usd > 0);

	json = sim_plan_to_json(&sp);
	assert_json_finite(json, 0);
	assert_int_equal(sim_plan_parse("big.json", json, strlen(json), &back), RC_OK);
	assert_int_equal(back.par.dp, 655);
	assert_near(back.tokens, 1e15, 0);
	pred = sim_prediction_to_json(&sp);
	assert_json_finite(pred, 0);
	free(json);
	free(pred);
}

/* ---- 1e15 tokens through the planner ------------------------------------ */

/* Llama-3 8B on 1e15 tokens over AWS H100 in us-east-1 (up to 4096 GPUs):
 * the answer's time and cost are finite and positive, its time is tokens
 * over its predicted tokens/s (checkpoint writes add a little), and the
 * JSON answer holds only finite numbers. */
static void test_plan_run_quadrillion_tokens(void **state)
{
	struct price_catalog cat;
	struct price_opts po;
	struct sim_model_table t;
	struct plan_opts o;
	struct plan_job job;
	struct plan_result r;
	const struct sim_model *m;
	const struct plan_row *row;
	char *json;

	(void)state;
	price_opts_init(&po);
	po.data_dir = TEST_DATA_DIR;
	po.user_dir = "/nonexistent/gpuplan-test";
	assert_int_equal(price_catalog_load(&cat, &po), RC_OK);
	assert_int_equal(sim_model_table_load(&t, TEST_DATA_DIR "/models.csv"), RC_OK);
	m = sim_model_find(&t, "llama3-8b");
	assert_non_null(m);
	plan_opts_init(&o);
	snprintf(o.filter.gpu, sizeof(o.filter.gpu), "H100-SXM5-80GB");
	snprintf(o.filter.provider, sizeof(o.filter.provider), "aws");
	snprintf(o.filter.region, sizeof(o.filter.region), "us-east-1");
	o.filter.spot = 0;
	o.top = 2;
	/* a run of years: no --max-duration here, the figures are the test */
	o.max_duration_s = 0;
	plan_job_init(&job, m, 1e15);
	assert_int_equal(plan_run(&job, 1, &cat, &o, &r), RC_OK);
	assert_true(r.feasible);
	assert_true(r.n_rows >= 1);
	row = &r.rows[0];
	assert_true(isfinite(r.total_cost_usd) && r.total_cost_usd > 0);
	assert_true(isfinite(r.makespan_s) && r.makespan_s > 0);
	assert_true(row->c.res.tokens_per_s > 0);
	assert_near(row->c.time_s, 1e15 / row->c.res.tokens_per_s, 0.2);
	json = plan_result_to_json(&r, &job, 1);
	assert_json_finite(json, 1);
	free(json);
	plan_result_release(&r);
	sim_model_table_release(&t);
	price_catalog_release(&cat);
}

/* ---- the MILP at its time limit -------------------------------------------- */

/* xorshift64 (Marsaglia 2003): the same instance on every machine. */
static double xorshift_unit(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return (double)(*x % 1000003) / 1000003.0;
}

/* 300 jobs of 10 columns each, every column on its job's time/cost
 * trade-off (slower is cheaper in both cost and rate, so none is
 * dominated), under a budget and an hourly budget at 80 % of the mean: a
 * two-dimensional multiple-choice knapsack.  On a 2-core machine GLPK has
 * a feasible choice within 30 ms and no proof of optimality after 5 s;
 * under a 0.5 s limit it stops with a plan in hand.  The answer must be that plan,
 * marked as not proven optimal, with a warning saying so, and it must keep
 * every constraint. */
static void test_plan_milp_solve_time_limit_keeps_incumbent(void **state)
{
	enum { JOBS = 300, K = 10 };
	struct plan_column *c = calloc(JOBS * K, sizeof(*c));
	struct plan_milp m;
	struct plan_milp_solution sol;
	uint64_t x = 88172645463325252ULL + 1;
	double mean_cost = 0, mean_rate = 0, cost = 0, rate = 0;
	char log[4096] = "";
	FILE *tmp = tmpfile();
	int saved = dup(2), used;
	size_t n;

	(void)state;
	assert_non_null(c);
	assert_non_null(tmp);
	for (int j = 0; j < JOBS; j++)
		for (int i = 0; i < K; i++) {
			struct plan_column *col = &c[j * K + i];

			col->job = j;
			col->group = -1;
			col->nodes = 1;
			col->time_s = 3600 * (10 * i + 1 + floor(xorshift_unit(&x) * 9));
			col->cost_usd = 10 * (K - i) + floor(xorshift_unit(&x) * 9);
			col->usd_per_hour = 10 * (K - i) + floor(xorshift_unit(&x) * 9);
			mean_cost += col->cost_usd / K;
			mean_rate += col->usd_per_hour / K;
		}
	plan_milp_init(&m);
	m.n_jobs = JOBS;
	m.cols = c;
	m.n_cols = JOBS * K;
	m.budget_usd = floor(0.8 * mean_cost) + 0.5;
	m.hourly_budget_usd = floor(0.8 * mean_rate) + 0.5;
	m.time_limit_s = 0.5;

	fflush(stderr);
	dup2(fileno(tmp), 2);
	assert_int_equal(plan_milp_solve(&m, &sol), RC_OK);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(log, 1, sizeof(log) - 1, tmp);
	log[n] = '\0';
	fclose(tmp);

	assert_false(sol.optimal);
	assert_non_null(strstr(log, "GLPK stopped at its time limit (0.5 s); the answer is feasible but not proven optimal"));
	/* two lexicographic stages, each at most the limit, and some slack */
	assert_true(sol.solve_s < 5.0);
	for (int j = 0; j < JOBS; j++) {
		used = 0;
		for (int i = 0; i < K; i++)
			if (sol.used[j * K + i]) {
				used++;
				cost += c[j * K + i].cost_usd;
				rate += c[j * K + i].usd_per_hour;
			}
		assert_int_equal(used, 1);
	}
	assert_true(cost <= m.budget_usd);
	assert_true(rate <= m.hourly_budget_usd);
	assert_near(sol.cost_usd, cost, 1e-9);
	plan_milp_solution_release(&sol);
	free(c);
}

/* ---- formatting and parsing at the extremes ------------------------------ */

/* Every formatter, for every extreme, writes a NUL-terminated string that
 * fits its buffer, never "nan" or "inf", and "-" for a non-finite value. */
static void test_unit_fmt_extremes(void **state)
{
	static const double v[] = { 0, 1e-300, 4.9e-324, 1, 1e15, 1e18, 1e300, DBL_MAX,
				    -1e15, -DBL_MAX, INFINITY, -INFINITY, NAN };
	char buf[32];

	(void)state;
	for (size_t i = 0; i < GP_ARRAY_LEN(v); i++) {
		char *(*const fmt[])(char *, size_t, double) = {
			unit_fmt_count, unit_fmt_bytes, unit_fmt_duration, unit_fmt_usd,
		};

		for (size_t k = 0; k < GP_ARRAY_LEN(fmt); k++) {
			memset(buf, 'x', sizeof(buf));
			fmt[k](buf, sizeof(buf), v[i]);
			assert_non_null(memchr(buf, '\0', sizeof(buf)));
			assert_no_nonfinite_text(buf);
			if (!isfinite(v[i]))
				assert_string_equal(buf, "-");
		}
	}
	/* 1e15 tokens is "1P"; 1e15 USD is written out in full */
	assert_string_equal(unit_fmt_count(buf, sizeof(buf), 1e15), "1P");
	assert_string_equal(unit_fmt_usd(buf, sizeof(buf), 1e15), "$1,000,000,000,000,000");
}

/* A figure too large for the fixed-point form is written in exponent form,
 * not cut off at the buffer's end (a cut-off number reads as another
 * number): 1e300 s is 1e300 / (86400 x 365) = 3.17e292 years, 1e300 bytes
 * 1e300 / 2^30 = 9.31e290 GiB. */
static void test_unit_fmt_huge_not_truncated(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(unit_fmt_duration(buf, sizeof(buf), 1e300), "3.17e+292 y");
	assert_string_equal(unit_fmt_bytes(buf, sizeof(buf), 1e300), "9.31e+290 GiB");
	assert_string_equal(unit_fmt_duration(buf, sizeof(buf), -DBL_MAX), "-5.7e+300 y");
	/* the ordinary forms are unchanged */
	assert_string_equal(unit_fmt_duration(buf, sizeof(buf), 86400 * 365.0 * 2), "2.00 y");
	assert_string_equal(unit_fmt_bytes(buf, sizeof(buf), 80e9), "74.5 GiB");
}

/* Counts, prices and durations that overflow a double are rejected, not
 * read as infinity; 1e15 and 1P are the same count. */
static void test_unit_parse_extremes(void **state)
{
	double v;
	int i;

	(void)state;
	assert_int_equal(unit_parse_count("1e15", &v), RC_OK);
	assert_near(v, 1e15, 0);
	assert_int_equal(unit_parse_count("1P", &v), RC_OK);
	assert_near(v, 1e15, 0);
	assert_int_equal(unit_parse_count("1e309", &v), RC_USAGE);
	assert_int_equal(unit_parse_count("1e308P", &v), RC_USAGE);
	assert_int_equal(unit_parse_usd("$1e400", &v), RC_USAGE);
	assert_int_equal(unit_parse_duration("1e308w", &v), RC_USAGE);
	assert_int_equal(unit_parse_int("2147483648", &i), RC_USAGE);
	assert_int_equal(unit_parse_int("2147483647", &i), RC_OK);
	assert_int_equal(i, 2147483647);
}

/* ---- inputs the fuzz targets crashed on ---------------------------------- */

/* fuzz_plan_json: tp 65536 x pp 65536 overflowed int while the reader
 * counted the plan's GPUs (2^32 wrapped to 0 GPUs on 0 nodes).  A plan
 * with more than SIM_MAX_GPUS GPUs is rejected. */
static void test_sim_plan_parse_gpu_count_overflow(void **state)
{
	struct sim_plan p;
	size_t len;
	char *buf = slurp(CORPUS "/plan_json/crash_gpu_count_overflow.json", &len);

	(void)state;
	assert_int_equal(sim_plan_parse("crash.json", buf, len, &p), RC_INPUT);
	free(buf);
}

/* The same overflow in sim_check: mbs x dp = 65536 x 65536 wrapped to 0
 * and gbs % 0 raised SIGFPE; pp x interleave = 65536 x 65536 likewise. */
static void test_sim_check_product_overflow(void **state)
{
	struct sim_model m = gpt(65536, 1024, 8, 1024, 2048);
	struct sim_cluster c = h100();
	struct sim_parallel p;

	(void)state;
	sim_parallel_init(&p);
	p.mbs = 65536;
	p.dp = 65536;
	p.gbs = 65536;
	assert_int_equal(sim_check(&m, &p, &c, NULL, 0), RC_INPUT);
	sim_parallel_init(&p);
	p.pp = 65536;
	p.interleave = 65536;
	p.gbs = 65536;
	assert_int_equal(sim_check(&m, &p, &c, NULL, 0), RC_INPUT);
	/* within range the same knobs are accepted */
	sim_parallel_init(&p);
	p.mbs = 64;
	p.dp = 1024;
	p.gbs = 65536;
	assert_int_equal(sim_check(&m, &p, &c, NULL, 0), RC_OK);
}

/* fuzz_plan_json: an inter-node bandwidth of 4.9e-324 bytes/s (the
 * smallest double) made the DP and PP times infinite, and the step time
 * was then reported as 0 s.  A rate that is not 0 (the default) must be at
 * least 1 per second; any accepted plan predicts a finite, positive step. */
static void test_sim_check_subnormal_bandwidth(void **state)
{
	struct sim_plan p;
	struct sim_result r;
	size_t len;
	char *buf = slurp(CORPUS "/plan_json/crash_subnormal_bandwidth.json", &len);

	(void)state;
	/* the mutation closed the plan's object early (after "optimizer")
	 * and left bytes after it, which plan files may no longer have:
	 * read the object */
	assert_non_null(strstr(buf, "54491283\n\t\t}"));
	len = (size_t)(strstr(buf, "54491283\n\t\t}") + 12 - buf);
	assert_int_equal(sim_plan_parse("crash.json", buf, len, &p), RC_OK);
	assert_int_equal(sim_check(&p.model, &p.par, &p.cluster, NULL, 0), RC_INPUT);
	p.cluster.inter_bytes_per_s = 1;
	assert_int_equal(sim_check(&p.model, &p.par, &p.cluster, NULL, 0), RC_OK);
	sim_step(&p.model, &p.par, &p.cluster, &r);
	assert_result_finite(&r);
	p.cluster.gpu.hbm_bytes_per_s = 1e-310;
	assert_int_equal(sim_check(&p.model, &p.par, &p.cluster, NULL, 0), RC_INPUT);
	free(buf);
}

/* fuzz_price_table: a SkyPilot catalog none of whose rows has a usable GPU
 * passed a NULL array to qsort.  It reads as an empty set of rows. */
static void test_price_rows_read_skypilot_without_gpu_rows(void **state)
{
	struct price_catalog cat;
	struct price_opts po;
	struct price_csv csv;
	struct price_rows rows;
	size_t len;
	char *buf = slurp(CORPUS "/price_table/crash_skypilot_no_gpu_rows.csv", &len);

	(void)state;
	price_opts_init(&po);
	po.data_dir = TEST_DATA_DIR;
	po.user_dir = "/nonexistent/gpuplan-test";
	assert_int_equal(price_catalog_load(&cat, &po), RC_OK);
	gp_log_quiet(1);
	/* its rows are short of the header's cells: refused, not a crash */
	assert_int_equal(price_csv_parse("crash.csv", buf, len, 0, &csv), RC_OK);
	assert_int_equal(price_rows_read(&csv, cat.gpus, cat.n_gpus, "fuzz", PRICE_READ_UPDATE,
					 &rows, NULL), RC_INPUT);
	price_csv_release(&csv);
	/* whole rows, none with a GPU: an empty set of rows */
	{
		static const char cpu_only[] =
			"InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region\n"
			"m5.large,,,0.096,0.04,us-east-1\n"
			"c5.xlarge,,,0.17,,us-west-2\n";

		assert_int_equal(price_csv_parse("cpu.csv", cpu_only, sizeof(cpu_only) - 1, 0, &csv),
				 RC_OK);
		assert_int_equal(price_rows_read(&csv, cat.gpus, cat.n_gpus, "fuzz",
						 PRICE_READ_UPDATE, &rows, NULL), RC_OK);
	}
	gp_log_quiet(0);
	assert_int_equal(rows.n, 0);
	price_rows_release(&rows);
	price_csv_release(&csv);
	price_catalog_release(&cat);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sim_model_params_one_trillion),
		cmocka_unit_test(test_sim_model_params_ten_trillion),
		cmocka_unit_test(test_sim_train_flops_quadrillion_tokens),
		cmocka_unit_test(test_sim_step_million_gpus),
		cmocka_unit_test(test_sim_plan_json_ten_trillion_million_gpus),
		cmocka_unit_test(test_plan_run_quadrillion_tokens),
		cmocka_unit_test(test_plan_milp_solve_time_limit_keeps_incumbent),
		cmocka_unit_test(test_unit_fmt_extremes),
		cmocka_unit_test(test_unit_fmt_huge_not_truncated),
		cmocka_unit_test(test_unit_parse_extremes),
		cmocka_unit_test(test_sim_plan_parse_gpu_count_overflow),
		cmocka_unit_test(test_sim_check_product_overflow),
		cmocka_unit_test(test_sim_check_subnormal_bandwidth),
		cmocka_unit_test(test_price_rows_read_skypilot_without_gpu_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
