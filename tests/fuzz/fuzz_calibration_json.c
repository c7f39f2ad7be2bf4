/*
 * fuzz_calibration_json.c - libFuzzer target for the calibration reader
 * (exec_calibration_parse): any input is read or rejected with a message;
 * a calibration that was read writes back as JSON that reads again to the
 * same bytes; fitting its measurements gives finite figures; and applied
 * to a cluster the simulator accepts, it predicts a finite step.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_args(argc, argv, "tests/fuzz/calibration_json.dict");
	gp_log_quiet(1);
	return 0;
}

static int figures_ok(const struct exec_calibration *c)
{
	const double v[] = { c->bf16_flops_per_s, c->hbm_bytes_per_s, c->intra_bytes_per_s,
			     c->latency_s, c->device_memory_bytes };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!isfinite(v[i]) || v[i] < 0)
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct exec_calibration c, back, fitted;
	struct sim_model m;
	struct sim_parallel p;
	struct sim_cluster cl;
	struct sim_result r;
	char *a, *b;

	if (exec_calibration_parse("fuzz.json", (const char *)data, size, &c) != RC_OK) {
		fuzz_count("calibration_json", FUZZ_REFUSED);
		return 0;
	}
	a = exec_calibration_to_json(&c);
	if (!fuzz_json_finite(a))
		abort();
	if (exec_calibration_parse("again.json", a, strlen(a), &back) != RC_OK)
		abort();
	b = exec_calibration_to_json(&back);
	if (strcmp(a, b) != 0)
		abort();
	fuzz_count("calibration_json", FUZZ_ROUND_TRIPPED);
	free(a);
	free(b);
	if (!figures_ok(&c))
		abort();
	fitted = c;
	exec_calibration_fit(&fitted);
	if (!figures_ok(&fitted))
		abort();

	/* the executor's small GPT on one CPU rank, with c's figures */
	memset(&m, 0, sizeof(m));
	m.layers = 4;
	m.hidden = 64;
	m.heads = 4;
	m.kv_heads = 4;
	m.ffn = 256;
	m.vocab = 128;
	m.seq = 32;
	sim_parallel_init(&p);
	p.mbs = 2;
	p.gbs = 8;
	exec_cpu_cluster(&cl, 1);
	exec_calibration_apply(&c, &cl);
	if (sim_check(&m, &p, &cl, NULL, 0) != RC_OK)
		return 0;
	sim_step(&m, &p, &cl, &r);
	if (!(isfinite(r.step_time_s) && r.step_time_s > 0))
		abort();
	return 0;
}
