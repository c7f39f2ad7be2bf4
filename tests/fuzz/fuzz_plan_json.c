/*
 * fuzz_plan_json.c - libFuzzer target for the plan-file reader
 * (sim_plan_parse): any input is read or rejected with a message; a plan
 * that was read writes back as JSON that reads again to the same bytes;
 * and when the simulator accepts its shapes (sim_check), the prediction
 * (sim_step) is finite and its JSON holds no nan, inf or null.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sim.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_args(argc, argv, "tests/fuzz/plan_json.dict");
	gp_log_quiet(1);
	return 0;
}

static int result_finite(const struct sim_result *r)
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

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!isfinite(v[i]) || v[i] < 0)
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct sim_plan p, q;
	char *a, *b;

	if (sim_plan_parse("fuzz.json", (const char *)data, size, &p) != RC_OK) {
		fuzz_count("plan_json", FUZZ_REFUSED);
		return 0;
	}
	a = sim_plan_to_json(&p);
	if (!fuzz_json_finite(a))
		abort();
	if (sim_plan_parse("again.json", a, strlen(a), &q) != RC_OK)
		abort();
	b = sim_plan_to_json(&q);
	if (strcmp(a, b) != 0)
		abort();
	fuzz_count("plan_json", FUZZ_ROUND_TRIPPED);
	free(a);
	free(b);

	if (sim_check(&p.model, &p.par, &p.cluster, NULL, 0) != RC_OK)
		return 0;
	sim_step(&p.model, &p.par, &p.cluster, &p.result);
	if (!result_finite(&p.result))
		abort();
	p.time_to_train_s = sim_time_to_train_s(&p.result, p.tokens);
	if (!isfinite(p.time_to_train_s))
		abort();
	a = sim_prediction_to_json(&p);
	if (!fuzz_json_finite(a))
		abort();
	free(a);
	return 0;
}
