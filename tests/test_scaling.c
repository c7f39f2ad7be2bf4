/*
 * test_scaling.c - `gpuplan scaling` (cli/cmd_scaling.c and its JSON,
 * compiled in here with the CLI helpers they call): the GPU counts of a
 * sweep, the derived figures (ideal, speedup, efficiency <= 1), a real
 * sweep through the planner's search on an inline GPU, and flag errors.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../cli/cli_calib.c"
#include "../cli/cli_util.c"
#include "../cli/cmd_scaling.c"
#include "../cli/cmd_scaling_json.c"
#include "../cli/plot.c"

static void test_gpu_counts_powers_then_nodes(void **state)
{
	int c[64];
	size_t n;

	(void)state;
	n = gpu_counts(8, 1, 1024, c, GP_ARRAY_LEN(c));
	assert_int_equal(n, 11);
	assert_int_equal(c[0], 1);
	assert_int_equal(c[3], 8);
	assert_int_equal(c[10], 1024);
	/* A node of 6: 1, 2, 4 inside it, then 6, 12, 24, 48 whole nodes. */
	n = gpu_counts(6, 1, 50, c, GP_ARRAY_LEN(c));
	assert_int_equal(n, 7);
	assert_int_equal(c[2], 4);
	assert_int_equal(c[3], 6);
	assert_int_equal(c[6], 48);
	/* Bounds are inclusive; nothing between them is nothing. */
	n = gpu_counts(8, 16, 100, c, GP_ARRAY_LEN(c));
	assert_int_equal(n, 3);
	assert_int_equal(c[0], 16);
	assert_int_equal(c[2], 64);
	assert_int_equal(gpu_counts(8, 9, 15, c, GP_ARRAY_LEN(c)), 0);
	/* The cap holds. */
	assert_int_equal(gpu_counts(1, 1, 1 << 20, c, 5), 5);
}

/* Hand figures: 2, 4 and 8 GPUs at 10, 30 and 50 tokens/s are 5, 7.5 and
 * 6.25 per GPU; the best is 7.5 (4 GPUs), so efficiency is 5/7.5 = 0.667,
 * 1 and 6.25/7.5 = 0.833, ideal 15, 30 and 60, and speedup over the
 * smallest fitting count (2 GPUs, 10 tokens/s) 1, 3 and 5. */
static void test_scaling_derive_hand_figures(void **state)
{
	struct scaling_point pts[4];
	struct scaling_sweep s;

	(void)state;
	memset(pts, 0, sizeof(pts));
	memset(&s, 0, sizeof(s));
	pts[0].gpus = 1;                       /* does not fit: ignored */
	pts[1].gpus = 2, pts[1].fits = 1, pts[1].res.tokens_per_s = 10;
	pts[2].gpus = 4, pts[2].fits = 1, pts[2].res.tokens_per_s = 30;
	pts[3].gpus = 8, pts[3].fits = 1, pts[3].res.tokens_per_s = 50;
	s.points = pts;
	s.n = 4;
	scaling_derive(&s);
	assert_int_equal(s.best, 2);
	assert_near(pts[1].efficiency, 5.0 / 7.5, 1e-12);
	assert_near(pts[2].efficiency, 1.0, 1e-12);
	assert_near(pts[3].efficiency, 6.25 / 7.5, 1e-12);
	assert_near(pts[1].ideal_tokens_per_s, 15, 1e-12);
	assert_near(pts[3].ideal_tokens_per_s, 60, 1e-12);
	assert_near(pts[2].speedup, 3, 1e-12);
	assert_near(pts[3].speedup, 5, 1e-12);
	assert_true(pts[0].efficiency == 0 && pts[0].ideal_tokens_per_s == 0);

	/* Nothing fits: no best, nothing derived. */
	pts[1].fits = pts[2].fits = pts[3].fits = 0;
	scaling_derive(&s);
	assert_int_equal(s.best, -1);
}

/* A GPU with round figures (not a real product): 80 GB, 1 PFLOP/s bf16. */
static void test_gpu(struct price_gpu *g)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "BIG-80GB");
	g->memory_bytes = 80e9;
	g->hbm_bytes_per_s = 3e12;
	g->bf16_flops_per_s = 1e15;
	g->intra_bytes_per_s = 450e9;
	g->nvlink = 1;
	g->p2p = 1;
}

static void test_scaling_sweep_efficiency_at_most_one(void **state)
{
	struct sim_model_table t;
	const struct sim_model *m;
	struct scaling_sweep s;
	struct plan_opts o;
	struct plan_job job;
	int counts[16];
	size_t nc;
	int fits = 0;

	(void)state;
	assert_int_equal(sim_model_table_load(&t, TEST_DATA_DIR "/models.csv"), RC_OK);
	m = sim_model_find(&t, "megatron-1.7b");
	assert_non_null(m);
	memset(&s, 0, sizeof(s));
	s.model = *m;
	test_gpu(&s.cluster.gpu);
	s.cluster.gpus_per_node = 8;
	s.cluster.intra_bytes_per_s = s.cluster.gpu.intra_bytes_per_s;
	s.cluster.inter_bytes_per_s = 50e9;
	plan_opts_init(&o);
	plan_job_init(&job, m, SCALING_JOB_TOKENS);
	nc = gpu_counts(8, 1, 64, counts, GP_ARRAY_LEN(counts));
	assert_int_equal(nc, 7);
	s.points = calloc(nc, sizeof(*s.points));
	assert_non_null(s.points);
	s.n = nc;
	for (size_t i = 0; i < nc; i++) {
		assert_int_equal(search_count(&job, &s.cluster, &o, counts[i], &s.points[i]), RC_OK);
		fits += s.points[i].fits;
	}
	/* 1.7B parameters x 16 bytes (Adam, mixed precision) = 27 GB fits
	 * one 80 GB GPU, so every count has a configuration. */
	assert_int_equal(fits, 7);
	scaling_derive(&s);
	assert_true(s.best >= 0);
	for (size_t i = 0; i < nc; i++) {
		const struct scaling_point *p = &s.points[i];

		assert_int_equal(p->gpus, counts[i]);
		if (i > 0)
			assert_true(p->gpus > s.points[i - 1].gpus);
		assert_int_equal(p->par.tp * p->par.pp * p->par.dp * p->par.cp, p->gpus);
		assert_int_equal(p->par.gbs, m->gbs);
		assert_true(p->res.fits);
		assert_true(p->efficiency > 0 && p->efficiency <= 1 + 1e-12);
		assert_true(p->ideal_tokens_per_s >= p->res.tokens_per_s * (1 - 1e-12));
		assert_true(p->nodes == (p->gpus + 7) / 8);
	}
	assert_near(s.points[s.best].efficiency, 1, 1e-12);
	assert_near(s.points[0].speedup, 1, 1e-12);

	/* The JSON says the same and parses. */
	{
		char *js = scaling_to_json(&s);
		cJSON *root = cJSON_Parse(js), *pts, *p;

		assert_non_null(root);
		assert_string_equal(cJSON_GetObjectItem(root, "schema")->valuestring,
				    "gpuplan.scaling/1");
		pts = cJSON_GetObjectItem(root, "points");
		assert_int_equal(cJSON_GetArraySize(pts), (int)nc);
		cJSON_ArrayForEach(p, pts)
			assert_true(cJSON_GetObjectItem(p, "efficiency")->valuedouble <= 1 + 1e-12);
		cJSON_Delete(root);
		free(js);
	}
	free(s.points);
	sim_model_table_release(&t);
}

static enum rc parse_args(int argc, const char **args)
{
	struct flags f;
	int helped = 0;

	return parse(argc, (char **)args, &f, &helped);
}

static void test_scaling_flags_errors(void **state)
{
	const char *no_gpu[] = { "scaling", "--model", "llama3-8b", NULL };
	const char *bad_plot[] = { "scaling", "--model", "m", "--gpu", "g", "--plot", "x.jpg", NULL };
	const char *min_max[] = { "scaling", "--model", "m", "--gpu", "g", "--min-gpus", "64",
				  "--max-gpus", "8", NULL };
	const char *both_gbs[] = { "scaling", "--model", "m", "--gpu", "g", "--gbs", "8",
				   "--gbs-tokens", "4M", NULL };
	const char *ok[] = { "scaling", "--model", "m", "--gpu", "g", "--plot", "x.SVG", NULL };

	(void)state;
	gp_log_quiet(1);
	assert_int_equal(parse_args(3, no_gpu), RC_USAGE);
	assert_int_equal(parse_args(7, bad_plot), RC_USAGE);
	assert_int_equal(parse_args(9, min_max), RC_USAGE);
	assert_int_equal(parse_args(9, both_gbs), RC_USAGE);
	assert_int_equal(parse_args(7, ok), RC_OK);
	gp_log_quiet(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_counts_powers_then_nodes),
		cmocka_unit_test(test_scaling_derive_hand_figures),
		cmocka_unit_test(test_scaling_sweep_efficiency_at_most_one),
		cmocka_unit_test(test_scaling_flags_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
