/*
 * sim_speed.c - how many configurations the analytic simulator evaluates
 * per second on one core: sim_check() then sim_step(), the planner's inner
 * loop, over a sweep of parallel configurations of three model sizes.
 *
 *   build/bench/sim_speed [SECONDS]
 *
 * Nothing is allocated inside the timed loop (sim_step allocates nothing;
 * the sweep lives on the stack).  It does not measure the planner's
 * enumeration or pruning around the calls.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static struct sim_model shape(const char *name, int layers, int hidden, int heads,
			      int kv, int ffn, enum sim_mlp mlp)
{
	struct sim_model m;

	memset(&m, 0, sizeof(m));
	snprintf(m.name, sizeof(m.name), "%s", name);
	m.layers = layers;
	m.hidden = hidden;
	m.heads = heads;
	m.kv_heads = kv;
	m.ffn = ffn;
	m.vocab = 128256;
	m.seq = 8192;
	m.mlp = mlp;
	return m;
}

int main(int argc, char **argv)
{
	/* Llama 3 shapes (Dubey et al. 2024, Table 3) and GPT-3 175B. */
	struct sim_model models[3];
	struct sim_cluster c;
	static const int tps[] = { 1, 2, 4, 8 }, pps[] = { 1, 2, 4, 8, 16 };
	static const int mbss[] = { 1, 2, 4 };
	double budget = argc > 1 ? atof(argv[1]) : 2.0, t0, t, sink = 0;
	long evaluated = 0, valid = 0;

	if (!(budget > 0))
		budget = 2.0;
	models[0] = shape("llama3-8b", 32, 4096, 32, 8, 14336, SIM_MLP_SWIGLU);
	models[1] = shape("llama3-70b", 80, 8192, 64, 8, 28672, SIM_MLP_SWIGLU);
	models[2] = shape("gpt3-175b", 96, 12288, 96, 96, 49152, SIM_MLP_GELU);
	models[2].vocab = 51200;
	models[2].seq = 2048;
	models[2].tied_embeddings = 1;
	/* H100-SXM5-80GB figures (NVIDIA datasheet, dense). */
	memset(&c, 0, sizeof(c));
	snprintf(c.gpu.name, sizeof(c.gpu.name), "H100-SXM5-80GB");
	c.gpu.memory_bytes = 80e9;
	c.gpu.hbm_bytes_per_s = 3.35e12;
	c.gpu.bf16_flops_per_s = 989.4e12;
	c.gpu.fp8_flops_per_s = 1978.9e12;
	c.gpu.intra_bytes_per_s = 450e9;
	c.gpu.nvlink = c.gpu.p2p = 1;
	c.gpus_per_node = 8;
	c.inter_bytes_per_s = 400e9;

	t0 = now_s();
	do {
		for (int mi = 0; mi < 3; mi++)
		for (int ti = 0; ti < 4; ti++)
		for (int pi = 0; pi < 5; pi++)
		for (int bi = 0; bi < 3; bi++)
		for (int z = 0; z < 4; z++)
		for (int r = 0; r < 3; r++) {
			struct sim_parallel p;
			struct sim_result res;

			sim_parallel_init(&p);
			p.tp = tps[ti];
			p.pp = pps[pi];
			p.dp = 1024 / (p.tp * p.pp);
			p.mbs = mbss[bi];
			p.gbs = 4096;
			p.zero = z;
			p.recompute = (enum sim_recompute)r;
			p.seq_parallel = p.tp > 1;
			evaluated++;
			if (sim_check(&models[mi], &p, &c, NULL, 0) != RC_OK)
				continue;
			sim_step(&models[mi], &p, &c, &res);
			sink += res.step_time_s;
			valid++;
		}
		t = now_s() - t0;
	} while (t < budget);

	printf("sim_speed: %ld configurations (%ld simulated, %ld refused by sim_check) in %.2f s\n",
	       evaluated, valid, evaluated - valid, t);
	printf("sim_speed: %.3g configurations per second on one core (target >= 1e6)\n",
	       evaluated / t);
	printf("sim_speed: %.3g sim_step calls per second\n", valid / t);
	return sink > 0 ? 0 : 1;
}
