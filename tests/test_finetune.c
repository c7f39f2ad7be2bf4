/*
 * test_finetune.c - fine-tuning and offload in the simulator against hand
 * calculations: LoRA's adapter counts (the figures PEFT prints for Llama 3
 * 8B), the FLOPs a frozen base saves, QLoRA's NF4 weights and its
 * dequantisation, offloaded states in host memory and on NVMe, the CPU
 * Adam step, the optimizer's states (mixed precision, bf16, 8-bit), the
 * checks, target lists and plan files.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "sim.h"
#include "sim_internal.h"

/* Llama 3 8B (Llama 3.1 config.json): 32 layers, hidden 4096, 32 heads
 * of which 8 KV, SwiGLU 14336, vocab 128256. */
static struct sim_model llama3_8b(void)
{
	struct sim_model m;

	memset(&m, 0, sizeof(m));
	snprintf(m.name, sizeof(m.name), "llama3-8b");
	m.layers = 32;
	m.hidden = 4096;
	m.heads = 32;
	m.kv_heads = 8;
	m.ffn = 14336;
	m.vocab = 128256;
	m.seq = 2048;
	m.mlp = SIM_MLP_SWIGLU;
	sim_model_facts_init(&m);
	return m;
}

/* RTX 4090 (gpus.csv): 165.15 TFLOP/s bf16 dense, 1.008 TB/s, 24 GB,
 * PCIe Gen4 x16 (32 GB/s a direction), no NVLink, no P2P; a node of n. */
static struct sim_cluster rtx4090(int n)
{
	struct sim_cluster c;

	memset(&c, 0, sizeof(c));
	snprintf(c.gpu.name, sizeof(c.gpu.name), "RTX4090");
	c.gpu.memory_bytes = 24e9;
	c.gpu.hbm_bytes_per_s = 1.008e12;
	c.gpu.bf16_flops_per_s = 165.15e12;
	c.gpu.intra_bytes_per_s = 32e9;
	c.gpus_per_node = n;
	return c;
}

static struct sim_parallel layout(int dp, int gbs)
{
	struct sim_parallel p;

	sim_parallel_init(&p);
	p.dp = dp;
	p.gbs = gbs;
	p.mbs = 1;
	p.recompute = SIM_RECOMPUTE_FULL;
	return p;
}

/* PEFT prints "trainable params: 41,943,040" for Llama 3 8B with r = 16
 * on every linear layer of the blocks and 3,407,872 with r = 8 on q and v:
 * r (in + out) per projection, q and o 4096 x 4096, k and v 4096 x 1024,
 * gate, up and down 4096 x 14336. */
static void test_sim_lora_params_by_hand(void **state)
{
	struct sim_model m = llama3_8b();
	struct sim_finetune ft = { SIM_FT_LORA, 16, 0, SIM_OFFLOAD_NONE };

	(void)state;
	assert_near(sim_lora_params(&m, &ft), 32.0 * 16 * (2 * 8192 + 2 * 5120 + 3 * 18432), 0);
	assert_near(sim_lora_params(&m, &ft), 41943040, 0);
	ft.lora_rank = 8;
	ft.lora_targets = SIM_LORA_Q | SIM_LORA_V;
	assert_near(sim_lora_params(&m, &ft), 3407872, 0);
	assert_near(sim_trainable_params(&m, &ft), 3407872, 0);
	/* full fine-tuning and pre-training train everything */
	ft.method = SIM_FT_FULL;
	assert_near(sim_lora_params(&m, &ft), 0, 0);
	assert_near(sim_trainable_params(&m, &ft), sim_model_params(&m), 0);
	/* a GELU MLP has no gate: up and down only */
	m.mlp = SIM_MLP_GELU;
	ft.method = SIM_FT_LORA;
	ft.lora_targets = SIM_LORA_GATE | SIM_LORA_UP;
	assert_near(sim_lora_params(&m, &ft), 32.0 * 8 * 18432, 0);
}

/* A frozen base drops 2 s FLOPs per weight of the layers' matrices and
 * the LM head (their weight gradients); adapters add 6 s per weight (2
 * forward, 4 backward), 8 s with full recomputation. */
static void test_sim_finetune_flops_by_hand(void **state)
{
	struct sim_model m = llama3_8b();
	struct sim_finetune ft = { SIM_FT_LORA, 16, 0, SIM_OFFLOAD_NONE };
	double s = m.seq, full = sim_train_flops(&m, 4, SIM_RECOMPUTE_NONE);
	double matrix = 2.0 * 4096 * 4096 + 2.0 * 4096 * 1024 + 3.0 * 4096 * 14336;
	double frozen = 4 * 2.0 * s * (32 * matrix + 4096.0 * 128256);
	double lora = 41943040;

	(void)state;
	assert_near(sim_layer_matrix_params(&m), matrix, 0);
	assert_near(sim_finetune_train_flops(&m, &ft, 4, SIM_RECOMPUTE_NONE),
		    full - frozen + 4 * 6.0 * s * lora, 1e-12);
	assert_near(sim_finetune_train_flops(&m, &ft, 4, SIM_RECOMPUTE_FULL),
		    sim_train_flops(&m, 4, SIM_RECOMPUTE_FULL) - frozen + 4 * 8.0 * s * lora, 1e-12);
	/* about two thirds of full training: forward and input gradients */
	assert_true(sim_finetune_train_flops(&m, &ft, 4, SIM_RECOMPUTE_NONE) < 0.7 * full);
	ft.method = SIM_FT_FULL;
	assert_near(sim_finetune_train_flops(&m, &ft, 4, SIM_RECOMPUTE_NONE), full, 0);
}

/* One RTX 4090, no ZeRO: LoRA keeps the base in bf16 (2 bytes), QLoRA
 * its matrices in NF4 (4.127 bits, Dettmers et al. 2023) and the rest
 * in bf16; the adapters take 2 + 2 + 12 bytes each. */
static void test_sim_qlora_memory_by_hand(void **state)
{
	struct sim_model m = llama3_8b();
	struct sim_cluster c = rtx4090(1);
	struct sim_parallel p = layout(1, 2);
	struct sim_result r;
	double params = sim_model_params(&m), matrix = 32 * sim_layer_matrix_params(&m);
	double a = 41943040;

	(void)state;
	p.ft.method = SIM_FT_LORA;
	assert_int_equal(sim_check(&m, &p, &c, NULL, 0), RC_OK);
	sim_step(&m, &p, &c, &r);
	assert_near(r.memory.weights, 2.0 * params + 2.0 * a, 1e-12);
	assert_near(r.memory.grads, 2.0 * a, 1e-12);
	assert_near(r.memory.optimizer, 12.0 * a, 1e-12);
	p.ft.method = SIM_FT_QLORA;
	sim_step(&m, &p, &c, &r);
	assert_near(r.memory.weights, 4.127 / 8 * matrix + 2.0 * (params - matrix) + 2.0 * a, 1e-12);
	assert_near(r.memory.optimizer, 12.0 * a, 1e-12);
	assert_true(r.fits);
	/* full fine-tuning: 16 bytes a parameter, 128 GB, no fit */
	p.ft.method = SIM_FT_FULL;
	sim_step(&m, &p, &c, &r);
	assert_near(r.memory.weights + r.memory.grads + r.memory.optimizer, 16.0 * params, 1e-12);
	assert_false(r.fits);
}

/* r's other holds only the CUDA context and the slack on its tensors:
 * the loss needed nothing beyond the layers' backward. */
static void tensors_only(const struct sim_result *r)
{
	assert_near(r->memory.other, SIM_CONTEXT_BYTES
		    + SIM_ALLOC_SLACK * (r->memory.weights + r->memory.grads + r->memory.optimizer
					 + r->memory.activations), 1e-12);
}

/* What the loss holds, by the trainer's kind, for Llama 3 8B, one 2048-
 * token sequence (L = 2048 x 128256 = 262,668,288 logits), by hand.
 * Under full recomputation forward stores each layer's input (2 x 2048 x
 * 4096 = 16,777,216 bytes, 32 of them), the final norm's input (the
 * same) and the embedding's dropout mask (8,388,608).  Backward then
 * works on one layer at a time: recomputed whole, 285,474,816 bytes (the
 * norms' and the layer's inputs 8 x 2048 x 4096 = 67,108,864; Q, K, V
 * and the attention output 2 x (4096 + 2048 + 4096) a token; SwiGLU's
 * gate and up and its output (2 x 2 + 2) x 14336; flash attention's
 * log-sum-exp 4 x 32 x 2048), and its gradients, 2 x 2048 x (4096 +
 * 4096 + 10240 + 3 x 14336) = 251,658,240: 537,133,056.  The loss runs
 * before that and is done with its buffers when it starts, so the peak
 * holds the larger of the two: Megatron-LM's fp32 softmax and its bf16
 * input (6 L = 1,576,009,728), the eager fp32 loss's output, its
 * gradient and nll_loss's (12 L), torchtune's chunked bf16 logits and a
 * chunk's gradient (2.25 L = 591,003,648).  What the loss needs beyond
 * the layer's is memory.other's, with the allocator's slack on it. */
static void test_sim_loss_memory_by_hand(void **state)
{
	static const double peak[3] = { 6, 12, 2.25 };
	struct sim_model m = llama3_8b();
	struct sim_cluster c = rtx4090(1);
	struct sim_parallel p = layout(1, 2);
	struct sim_result r;
	double L = 2048.0 * 128256, layer = 285474816.0 + 251658240.0;
	double stored = 33 * 16777216.0 + 8388608.0;

	(void)state;
	c.gpu.memory_bytes = 80e9;
	for (int l = SIM_LOSS_VOCAB_PARALLEL; l <= SIM_LOSS_CHUNKED_BF16; l++) {
		double tensors, beyond;

		p.loss = (enum sim_loss)l;
		sim_step(&m, &p, &c, &r);
		assert_near(r.memory.activations, stored + layer, 1e-12);
		tensors = r.memory.weights + r.memory.grads + r.memory.optimizer
			  + r.memory.activations;
		beyond = (r.memory.other - SIM_CONTEXT_BYTES - SIM_ALLOC_SLACK * tensors)
			 / (1 + SIM_ALLOC_SLACK);
		assert_near(beyond, peak[l] * L - layer, 1e-9);
	}
	assert_near(2.25 * L - layer, 53870592.0, 1e-12);
	/* with a 32,000-token vocabulary the chunked loss's 2.25 x 2048 x
	 * 32000 = 147,456,000 bytes fit in the layer's backward: nothing more */
	m.vocab = 32000;
	sim_step(&m, &p, &c, &r);
	tensors_only(&r);
	/* without recomputation every stored activation is live when the
	 * loss runs, and the layer's backward holds only its gradients:
	 * 6 L - 251,658,240 bytes more than they */
	m.vocab = 128256;
	p.loss = SIM_LOSS_VOCAB_PARALLEL;
	p.recompute = SIM_RECOMPUTE_NONE;
	sim_step(&m, &p, &c, &r);
	assert_near(r.memory.other - SIM_CONTEXT_BYTES
		    - SIM_ALLOC_SLACK * (r.memory.weights + r.memory.grads + r.memory.optimizer
					 + r.memory.activations),
		    (1 + SIM_ALLOC_SLACK) * (6 * L - 251658240.0), 1e-9);
}

/* Frozen weights make backward shorter than full training's, QLoRA's
 * dequantisation makes it longer than LoRA's, by one pass of the matrices
 * (read 4.127 bits, write 2 bytes) before every GEMM pass: forward,
 * input gradient and the recomputed forward. */
static void test_sim_lora_step_by_hand(void **state)
{
	struct sim_model m = llama3_8b();
	struct sim_cluster c = rtx4090(1);
	struct sim_parallel p = layout(1, 2);
	struct sim_result full, lora, qlora;
	double ad, dq, dq_layer;

	(void)state;
	c.host_layer_s = -1;
	p.ft.method = SIM_FT_FULL;
	sim_step(&m, &p, &c, &full);
	p.ft.method = SIM_FT_LORA;
	sim_step(&m, &p, &c, &lora);
	p.ft.method = SIM_FT_QLORA;
	sim_step(&m, &p, &c, &qlora);
	sim_finetune_parts(&m, &p, &c, &ad, &dq);
	/* of full recomputation's four GEMM passes (forward, recomputed
	 * forward, input and weight gradients) three remain, and the
	 * adapters come on top */
	assert_true(lora.breakdown.compute_s < full.breakdown.compute_s);
	assert_true(lora.breakdown.compute_s - ad < 0.8 * full.breakdown.compute_s);
	dq_layer = (4.127 / 8 + 2.0) * sim_layer_matrix_params(&m) / (1.008e12 * SIM_HBM_EFF)
		   + 7 * SIM_KERNEL_S;
	assert_near(dq, 2 * 32 * 3 * dq_layer, 1e-9);
	assert_near(qlora.breakdown.compute_s - lora.breakdown.compute_s, dq, 1e-6);
	assert_true(ad > 0);
	/* the optimizer steps over the adapters only */
	assert_true(lora.breakdown.optimizer_s < 0.01 * full.breakdown.optimizer_s);
	/* a plan without a method is pre-training, byte for byte */
	p.ft.method = SIM_FT_NONE;
	sim_step(&m, &p, &c, &lora);
	assert_memory_equal(&lora, &full, sizeof(lora));
}

/* The adapters of Llama 3 8B, r = 8 on q and v, one 2048-token sequence
 * on an RTX 4090 (1.008 TB/s at 80%), by hand.  Each adapter GEMM is
 * bound by its bytes (intensity about r = 8 FLOPs a byte, under the
 * card's 164): x A reads x (2048 x 4096) and A (4096 x 8) and writes
 * 2048 x 8, 16,875,520 bytes for q and v alike; (x A) B reads the rank-8
 * activation and B and writes q's 2048 x 4096 (16,875,520 bytes) or v's
 * 2048 x 1024 (4,243,456).  Compiled, the scale and the add ride in the
 * kernel that next reads the base output: one more read of the
 * adapters' outputs forward (2 x 2048 x 5120 bytes), and backward one
 * more write of the scaled gradient and one more read of the input
 * gradient (2 x 2048 x (5120 + 8192)).  Backward's GEMMs are twice the
 * forward's; full recomputation runs the forward twice. */
static void test_sim_lora_adapters_by_hand(void **state)
{
	struct sim_model m = llama3_8b();
	struct sim_cluster c = rtx4090(1);
	struct sim_parallel p = layout(1, 1);
	double bw = 1.008e12 * SIM_HBM_EFF, ad, dq, gemms, fwd, bwd, compute;

	(void)state;
	p.ft.method = SIM_FT_LORA;
	p.ft.lora_rank = 8;
	p.ft.lora_targets = SIM_LORA_Q | SIM_LORA_V;
	sim_finetune_parts(&m, &p, &c, &ad, &dq);
	gemms = (3 * 16875520.0 + 4243456.0) / bw + 4 * SIM_KERNEL_S;
	fwd = gemms + 2.0 * 2048 * 5120 / bw;
	bwd = 2 * gemms + 2.0 * 2048 * (5120 + 8192) / bw;
	assert_near(ad, 32 * (2 * fwd + bwd), 1e-12);
	assert_true(dq == 0);
	/* the largest GEMM's FLOPs at the curve's efficiency for a
	 * dimension of 8 (8 / (8 + 128)) take less than its bytes */
	compute = 2.0 * 2048 * 8 * 4096 / (165.15e12 * 8 / 136);
	assert_true(compute < 16875520.0 / bw);
}

/* ZeRO-1 over two GPUs of one node, offloaded: each keeps half the fp32
 * states and gradients (16 bytes a parameter) in host memory, none on
 * the GPU; the node's host holds both halves (and 5% slack).  On NVMe
 * the 12 bytes of states move there.  The CPU step runs the node's
 * parameters at 11.6e9 / 8.2 / 48 a core a second. */
static void test_sim_offload_by_hand(void **state)
{
	struct sim_model m = llama3_8b();
	struct sim_cluster c = rtx4090(2);
	struct sim_parallel p = layout(2, 8);
	struct sim_result r;
	double params = sim_model_params(&m), rate = 11.6e9 / 8.2 / 48;

	(void)state;
	p.zero = 1;
	p.ft.method = SIM_FT_FULL;
	p.ft.offload = SIM_OFFLOAD_CPU;
	c.host.memory_bytes = 512e9;
	c.host.cpu_cores = 32;
	assert_int_equal(sim_check(&m, &p, &c, NULL, 0), RC_OK);
	sim_step(&m, &p, &c, &r);
	assert_near(r.memory.optimizer, 0, 0);
	assert_near(r.memory.host, 2 * (params / 2) * 16 * 1.05, 1e-9);
	assert_near(r.memory.host_capacity, 512e9, 0);
	assert_near(r.breakdown.optimizer_s, params / (32 * rate), 1e-9);
	assert_true(r.breakdown.offload_s > 0);
	assert_near(r.step_time_s, r.breakdown.compute_s + r.breakdown.tp_comm_s +
		    r.breakdown.cp_comm_s + r.breakdown.pp_bubble_s + r.breakdown.pp_comm_s +
		    r.breakdown.dp_comm_exposed_s + r.breakdown.optimizer_s +
		    r.breakdown.offload_s, 1e-12);
	assert_true(r.fits);
	/* a host too small for the states: no fit */
	c.host.memory_bytes = 100e9;
	sim_step(&m, &p, &c, &r);
	assert_false(r.fits);
	/* NVMe: 12 bytes a parameter there, the 4 of the gradients stay */
	c.host.nvme_bytes_per_s = 7e9;
	p.ft.offload = SIM_OFFLOAD_NVME;
	sim_step(&m, &p, &c, &r);
	assert_near(r.memory.nvme, 12.0 * params, 1e-9);
	assert_near(r.memory.host, 4.0 * params * 1.05, 1e-9);
	/* the slower of the CPU step and reading and writing the states */
	assert_near(r.breakdown.optimizer_s, 2 * 12.0 * params / 7e9, 1e-9);
	/* ZeRO-3 offloads the weights too: two layers' stay on the GPU */
	p.zero = 3;
	p.ft.offload = SIM_OFFLOAD_CPU;
	c.host.memory_bytes = 512e9;
	sim_step(&m, &p, &c, &r);
	assert_near(r.memory.host, (16.0 + 2.0) * params * 1.05, 1e-9);
	assert_true(r.memory.weights < 2.1 * 2 * 4096.0 * 128256);
}

/* The optimizer's states by hand.  Llama 3 8B fully fine-tuned on one
 * GPU: mixed precision keeps 12 bytes a parameter, a bf16 trainer
 * (torchtune's dtype bf16) 4, 8-bit Adam (bitsandbytes) 2.  One step over
 * a parameter moves 34 bytes with an fp32 master (read master, m, v and
 * the fp32 gradient, 16; write them, 12; the bf16 copy, read 4 write 2),
 * 14 in bf16 without one (read weight, gradient, m, v, 8; write weight,
 * m, v, 6), 10 with 8-bit moments (6 read, 4 written), 28 for an fp32
 * trainer.  Offloaded with ZeRO-3 over two GPUs, a bf16 trainer's host
 * keeps per parameter its 4 bytes of states, its 2-byte gradient and its
 * 2-byte weight, and its CPU step runs 34 / 14 times as fast as
 * DeepSpeed's. */
static void test_sim_optimizer_states_by_hand(void **state)
{
	struct sim_model m = llama3_8b();
	struct sim_cluster c = rtx4090(2);
	struct sim_parallel p = layout(1, 1);
	struct sim_result mixed, r;
	double params = sim_model_params(&m), rate = 11.6e9 / 8.2 / 48;

	(void)state;
	p.ft.method = SIM_FT_FULL;
	sim_step(&m, &p, &c, &mixed);
	assert_near(mixed.memory.optimizer, 12.0 * params, 1e-12);
	assert_near(sim_optimizer_bytes(&p, 1, 0), 34, 0);
	p.opt_states = SIM_OPT_BF16_NO_MASTER;
	assert_int_equal(sim_check(&m, &p, &c, NULL, 0), RC_OK);
	sim_step(&m, &p, &c, &r);
	assert_near(r.memory.optimizer, 4.0 * params, 1e-12);
	assert_near(r.memory.weights, mixed.memory.weights, 0);
	assert_near(sim_optimizer_bytes(&p, 1, 0), 14, 0);
	/* the GPU's step moves 14 + 12 bytes a parameter against 34 + 12 */
	assert_true(r.breakdown.optimizer_s < mixed.breakdown.optimizer_s * 27.0 / 46.0);
	p.opt_states = SIM_OPT_INT8_NO_MASTER;
	sim_step(&m, &p, &c, &r);
	assert_near(r.memory.optimizer, 2.0 * params, 1e-12);
	assert_near(sim_optimizer_bytes(&p, 1, 0), 10, 0);
	p.opt_states = SIM_OPT_BF16;
	assert_near(sim_opt_state_bytes(&p), 8, 0);
	p.opt_states = SIM_OPT_FP32;
	p.act_bytes_per_element = 4;
	assert_near(sim_opt_state_bytes(&p), 8, 0);
	assert_near(sim_optimizer_bytes(&p, 1, 0), 28, 0);
	/* offloaded, ZeRO-3 over the node's two GPUs */
	p = layout(2, 2);
	p.zero = 3;
	p.ft.method = SIM_FT_FULL;
	p.ft.offload = SIM_OFFLOAD_CPU;
	p.opt_states = SIM_OPT_BF16_NO_MASTER;
	c.host.memory_bytes = 512e9;
	c.host.cpu_cores = 32;
	sim_step(&m, &p, &c, &r);
	assert_near(r.memory.host, (4.0 + 2.0 + 2.0) * params * 1.05, 1e-9);
	assert_near(r.breakdown.optimizer_s, params * 14.0 / 34.0 / (32 * rate), 1e-9);
	/* a bad value is refused */
	p.opt_states = (enum sim_opt_states)4;
	assert_int_equal(sim_check(&m, &p, &c, NULL, 0), RC_INPUT);
}

static void test_sim_finetune_check(void **state)
{
	struct sim_model m = llama3_8b();
	struct sim_cluster c = rtx4090(2);
	struct sim_parallel p = layout(2, 8);
	char why[256];

	(void)state;
	p.ft.offload = SIM_OFFLOAD_CPU;
	p.zero = 0;
	assert_int_equal(sim_check(&m, &p, &c, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "ZeRO stage 1, 2 or 3"));
	p.zero = 2;
	assert_int_equal(sim_check(&m, &p, &c, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "host's memory and CPU cores"));
	c.host.memory_bytes = 256e9;
	c.host.cpu_cores = 16;
	assert_int_equal(sim_check(&m, &p, &c, why, sizeof(why)), RC_OK);
	/* an NVLink GPU's intra-node figure is not its host link */
	c.gpu.nvlink = 1;
	assert_int_equal(sim_check(&m, &p, &c, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "PCIe"));
	c.gpu.nvlink = 0;
	p.ft.offload = SIM_OFFLOAD_NVME;
	assert_int_equal(sim_check(&m, &p, &c, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "NVMe"));
	p.ft.offload = SIM_OFFLOAD_NONE;
	p.ft.method = SIM_FT_LORA;
	p.ft.lora_rank = -1;
	assert_int_equal(sim_check(&m, &p, &c, why, sizeof(why)), RC_INPUT);
	p.ft.lora_rank = 8;
	m.mlp = SIM_MLP_GELU;
	p.ft.lora_targets = SIM_LORA_GATE;
	assert_int_equal(sim_check(&m, &p, &c, why, sizeof(why)), RC_INPUT);
	assert_non_null(strstr(why, "GELU"));
	p.ft.lora_targets = 1u << 9;
	assert_int_equal(sim_check(&m, &p, &c, why, sizeof(why)), RC_INPUT);
	p.ft.lora_targets = 0;
	p.ft.method = (enum sim_ft_method)7;
	assert_int_equal(sim_check(&m, &p, &c, why, sizeof(why)), RC_INPUT);
}

static void test_sim_lora_targets_parse(void **state)
{
	unsigned t = 0;
	char buf[64];

	(void)state;
	assert_int_equal(sim_lora_targets_parse("q,v", &t), RC_OK);
	assert_int_equal(t, SIM_LORA_Q | SIM_LORA_V);
	sim_lora_targets_str(t, buf, sizeof(buf));
	assert_string_equal(buf, "q,v");
	assert_int_equal(sim_lora_targets_parse("all", &t), RC_OK);
	assert_int_equal(t, SIM_LORA_ALL);
	sim_lora_targets_str(0, buf, sizeof(buf));
	assert_string_equal(buf, "all");
	t = 5;
	assert_int_equal(sim_lora_targets_parse("q,x", &t), RC_INPUT);
	assert_int_equal(sim_lora_targets_parse("q,", &t), RC_INPUT);
	assert_int_equal(sim_lora_targets_parse("", &t), RC_INPUT);
	assert_int_equal(t, 5);
}

/* A fine-tuning plan writes its method, adapters, offload, host and
 * epochs and reads them back; a bad method names the field. */
static void test_sim_plan_finetune_round_trip(void **state)
{
	struct sim_plan p, q;
	char path[] = "/tmp/gpuplan-ftXXXXXX";
	char *json;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	memset(&p, 0, sizeof(p));
	p.model = llama3_8b();
	p.cluster = rtx4090(2);
	p.cluster.host.memory_bytes = 512e9;
	p.cluster.host.cpu_cores = 32;
	p.par = layout(2, 8);
	p.par.zero = 2;
	p.par.ft.method = SIM_FT_QLORA;
	p.par.ft.lora_rank = 8;
	p.par.ft.lora_targets = SIM_LORA_Q | SIM_LORA_V;
	p.par.ft.offload = SIM_OFFLOAD_CPU;
	p.par.loss = SIM_LOSS_EAGER_FP32;
	p.nodes = 1;
	p.epochs = 3;
	p.dataset_tokens = 20e6;
	p.tokens = 60e6;
	sim_step(&p.model, &p.par, &p.cluster, &p.result);
	assert_int_equal(sim_plan_write(path, &p), RC_OK);
	assert_int_equal(sim_plan_read(path, &q), RC_OK);
	assert_int_equal(q.par.ft.method, SIM_FT_QLORA);
	assert_int_equal(q.par.ft.lora_rank, 8);
	assert_int_equal(q.par.ft.lora_targets, SIM_LORA_Q | SIM_LORA_V);
	assert_int_equal(q.par.ft.offload, SIM_OFFLOAD_CPU);
	assert_int_equal(q.par.loss, SIM_LOSS_EAGER_FP32);
	assert_near(q.cluster.host.memory_bytes, 512e9, 0);
	assert_near(q.cluster.host.cpu_cores, 32, 0);
	assert_near(q.epochs, 3, 0);
	assert_near(q.dataset_tokens, 20e6, 0);
	assert_near(q.result.memory.host, p.result.memory.host, 1e-15);
	json = sim_plan_to_json(&p);
	assert_non_null(strstr(json, "\"trainable_params\""));
	free(json);
	unlink(path);
	/* pre-training writes no finetune object */
	p.par.ft.method = SIM_FT_NONE;
	p.par.ft.offload = SIM_OFFLOAD_NONE;
	json = sim_plan_to_json(&p);
	assert_null(strstr(json, "\"finetune\""));
	free(json);
	{
		const char *bad = "{\"schema\":\"gpuplan.plan/1\",\"model\":{\"layers\":2,\"hidden\":64,"
				  "\"heads\":4,\"ffn\":256,\"vocab\":100,\"seq\":32,\"mlp\":\"gelu\"},"
				  "\"cluster\":{\"gpu\":{\"name\":\"x\",\"memory_bytes\":1e9,"
				  "\"bf16_flops_per_s\":1e12},\"gpus_per_node\":1},\"parallel\":{\"tp\":1,"
				  "\"pp\":1,\"dp\":1,\"mbs\":1,\"gbs\":1,\"recompute\":\"none\","
				  "\"precision\":\"bf16\"},\"finetune\":{\"method\":\"dora\"}}";

		assert_int_equal(sim_plan_parse("bad.json", bad, strlen(bad), &q), RC_INPUT);
		/* the loss by name, and one the simulator does not know */
#define LOSS_JSON(l) "{\"schema\":\"gpuplan.plan/1\",\"model\":{\"layers\":2,\"hidden\":64," \
		     "\"heads\":4,\"ffn\":256,\"vocab\":100,\"seq\":32,\"mlp\":\"gelu\"}," \
		     "\"cluster\":{\"gpu\":{\"name\":\"x\",\"memory_bytes\":1e9," \
		     "\"bf16_flops_per_s\":1e12},\"gpus_per_node\":1},\"parallel\":{\"tp\":1," \
		     "\"pp\":1,\"dp\":1,\"mbs\":1,\"gbs\":1,\"recompute\":\"none\"," \
		     "\"precision\":\"bf16\",\"loss\":\"" l "\"}}"
		const char *ok = LOSS_JSON("chunked_bf16"), *unknown = LOSS_JSON("fused_linear");

		assert_int_equal(sim_plan_parse("ok.json", ok, strlen(ok), &q), RC_OK);
		assert_int_equal(q.par.loss, SIM_LOSS_CHUNKED_BF16);
		assert_int_equal(sim_plan_parse("bad.json", unknown, strlen(unknown), &q),
				 RC_INPUT);
#undef LOSS_JSON
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sim_lora_params_by_hand),
		cmocka_unit_test(test_sim_finetune_flops_by_hand),
		cmocka_unit_test(test_sim_qlora_memory_by_hand),
		cmocka_unit_test(test_sim_lora_step_by_hand),
		cmocka_unit_test(test_sim_loss_memory_by_hand),
		cmocka_unit_test(test_sim_lora_adapters_by_hand),
		cmocka_unit_test(test_sim_offload_by_hand),
		cmocka_unit_test(test_sim_optimizer_states_by_hand),
		cmocka_unit_test(test_sim_finetune_check),
		cmocka_unit_test(test_sim_lora_targets_parse),
		cmocka_unit_test(test_sim_plan_finetune_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
