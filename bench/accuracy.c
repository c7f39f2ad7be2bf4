/*
 * accuracy.c - how close the analytic simulator comes to measured training
 * runs: every row of bench/data/published_runs.csv (Megatron-LM SC'21
 * Tables 1-2, MosaicML llm-foundry MPT, NVIDIA NeMo 24.07), the 1,440
 * single-node runs of vTrain (bench/data/vtrain_ground_truth_single.csv)
 * and the 52 mixture-of-experts runs of Megatron-Bridge's performance
 * tables (bench/data/moe_runs.csv: DeepSeek-V3 and Qwen3-30B-A3B on DGX
 * H100, B200, B300, GB200 and GB300).  The MoE headline, counted among
 * the sources, is the newest container release of each (model, system,
 * layout), per model and per system: the simulator models current
 * software.  Every release is shown beside it, per model, system and
 * container, not counted: the older releases ran the same layouts up to
 * 1.5x slower.  A row whose GPU the catalog lacks, or lacks
 * a figure of, is skipped and the reason printed under the table.
 * Prints per source the rows compared, the mean absolute percentage error
 * (MAPE) of the predicted step time and its signed mean (the bias:
 * positive means predicted slower than measured), the same over all rows
 * (row-weighted) and as the mean of the sources, and how many
 * configurations per second sim_step() evaluates on these rows (one core,
 * in-process: the planner's speed class).
 *
 *   build/bench/accuracy [-v | -vv] [DATA_DIR [BENCH_DATA_DIR]]
 *
 * -v lists every run; -vv adds the predicted breakdown and memory.
 *
 * The simulator runs with its one set of default curves for every source;
 * nothing here is tuned per source.  Where a source leaves a knob out, the
 * assumption is stated next to the code that makes it.  What is compared:
 * iteration time where the row has it, else tokens/s per GPU (the same
 * thing for a fixed batch), else TFLOP/s per GPU on the basis the source
 * uses (Megatron-LM counts recomputation: hardware FLOP/s).  Every error
 * is taken on the step time: for a rate, predicted step over measured step
 * is the measured rate over the predicted one, so a bias reads the same
 * way whatever the source states.
 *
 * Fine-tuning runs (bench/data/finetune_runs.csv: LoRA, QLoRA, full
 * fine-tuning with CPU offload) are reported in a table of their own, the
 * error of the predicted memory per GPU beside the step time's where the
 * row states a peak (no pre-training source does), kept out of the
 * totals above.  A row whose measured rate needs more than the GPU's
 * dense bf16 peak for the FLOPs of its stated setup is skipped and says
 * so: it was not measured on that setup.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "price.h"
#include "price_csv.h"
#include "sim.h"
#include "sim_internal.h"

#include "recipes.h"

#define MAX_SOURCES 64

struct source_stats {
	char id[PRICE_NAME_MAX];
	double sum_ape;
	double sum_signed;
	int n;
	int skipped;
	int sub;          /* a subset of a source, left out of the overall */
	int ft;           /* fine-tuning: its own table, out of the overall */
	double sum_mem_ape; /* fine-tuning: memory per GPU against peak */
	int n_mem;
};

static struct source_stats stats[MAX_SOURCES];
static int n_stats;
static int verbose;

/* Every configuration compared, kept to time sim_step() on them. */
struct config {
	struct sim_model m;
	struct sim_parallel p;
	struct sim_cluster c;
};
static struct config *configs;
static size_t n_configs, cap_configs;

static void keep_config(const struct sim_model *m, const struct sim_parallel *p,
			const struct sim_cluster *c)
{
	if (n_configs == cap_configs) {
		size_t cap = cap_configs ? 2 * cap_configs : 2048;
		struct config *nc = realloc(configs, cap * sizeof(*nc));

		if (!nc)
			return;     /* the timing then covers fewer rows */
		configs = nc;
		cap_configs = cap;
	}
	configs[n_configs].m = *m;
	configs[n_configs].p = *p;
	configs[n_configs].c = *c;
	n_configs++;
}

/* Predicted over measured step time, less 1: for a rate (rate != 0) the
 * measured rate over the predicted one. */
static double step_error(double predicted, double measured, int rate)
{
	return rate ? measured / predicted - 1 : predicted / measured - 1;
}

static struct source_stats *source(const char *id)
{
	for (int i = 0; i < n_stats; i++)
		if (!strcmp(stats[i].id, id))
			return &stats[i];
	if (n_stats == MAX_SOURCES)
		return &stats[MAX_SOURCES - 1];
	snprintf(stats[n_stats].id, sizeof(stats[n_stats].id), "%s", id);
	return &stats[n_stats++];
}

static void record_sub(const char *id, double predicted, double measured, int rate)
{
	struct source_stats *s = source(id);
	double err = step_error(predicted, measured, rate);

	s->sub = 1;
	s->sum_ape += fabs(err);
	s->sum_signed += err;
	s->n++;
}

static void record(const char *id, const char *what, int rate, double predicted,
		   double measured, const char *label, const struct sim_result *r)
{
	struct source_stats *s = source(id);
	double err = step_error(predicted, measured, rate);

	s->sum_ape += fabs(err);
	s->sum_signed += err;
	s->n++;
	if (verbose) {
		printf("  %-18s %-44.44s %-13s pred %10.4g meas %10.4g  step %+6.1f%%\n",
		       id, label, what, predicted, measured, 100 * err);
		if (verbose > 1) {
			const struct sim_breakdown *b = &r->breakdown;

			printf("      M %d step %.4g s: compute %.4g tp %.4g ep %.4g/%.4g bubble %.4g pp %.4g dp %.4g/%.4g opt %.4g; mem %.1f/%.0f GB\n",
			       r->grad_accum, r->step_time_s, b->compute_s, b->tp_comm_s,
			       b->ep_comm_s, b->ep_comm_total_s, b->pp_bubble_s, b->pp_comm_s,
			       b->dp_comm_exposed_s, b->dp_comm_total_s, b->optimizer_s,
			       r->memory.total / 1e9, r->memory.capacity / 1e9);
		}
	}
}

/* Why rows were skipped, each reason once with its count, printed under
 * the table whatever the verbosity: a row left out is said, not hidden. */
#define MAX_REASONS 16
static struct {
	char id[PRICE_NAME_MAX];
	char why[160];
	int n;
} reasons[MAX_REASONS];
static int n_reasons;

static void skip(const char *id, const char *label, const char *why)
{
	int i;

	source(id)->skipped++;
	if (verbose)
		printf("  %-18s %-44.44s skipped: %s\n", id, label, why);
	for (i = 0; i < n_reasons; i++)
		if (!strcmp(reasons[i].id, id) && !strcmp(reasons[i].why, why))
			break;
	if (i == n_reasons && n_reasons < MAX_REASONS) {
		snprintf(reasons[i].id, sizeof(reasons[i].id), "%s", id);
		snprintf(reasons[i].why, sizeof(reasons[i].why), "%s", why);
		n_reasons++;
	}
	if (i < n_reasons)
		reasons[i].n++;
}

/* An integer cell, or dflt when empty or not a plain number. */
static int cell_int(const struct price_csv_row *row, int col, int dflt)
{
	const char *s = price_csv_get(row, col);
	char *end;
	long v;

	if (!*s)
		return dflt;
	v = strtol(s, &end, 10);
	if (end == s || *end)
		return dflt;
	return (int)v;
}

static double cell_double(const struct price_csv_row *row, int col)
{
	const char *s = price_csv_get(row, col);
	char *end;
	double v;

	if (!*s)
		return 0;
	v = strtod(s, &end);
	return end == s ? 0 : v;
}

/* Architectures the NeMo table names without giving shapes and that
 * data/models.csv does not carry: NeMo-Framework-Launcher's
 * conf/training/gpt3/5b.yaml and 20b.yaml, and the Nemotron-4 340B report
 * (NVIDIA 2024, arXiv:2406.11704, Table 1; squared ReLU, a 2-matrix MLP
 * like GELU).  Nemotron-8B and -22B are left out: their shapes are not
 * published beside the table. */
static const struct sim_model extra_models[] = {
	{ .name = "gpt3-5b", .layers = 24, .hidden = 4096, .heads = 32, .kv_heads = 32, .ffn = 16384, .vocab = 51200, .seq = 2048, .mlp = SIM_MLP_GELU, .tied_embeddings = 1, .gbs = 0, .published_params = 0, .pos = SIM_POS_LEARNED },
	{ .name = "gpt3-20b", .layers = 44, .hidden = 6144, .heads = 48, .kv_heads = 48, .ffn = 24576, .vocab = 51200, .seq = 2048, .mlp = SIM_MLP_GELU, .tied_embeddings = 1, .gbs = 0, .published_params = 0, .pos = SIM_POS_LEARNED },
	{ .name = "nemotron-340b", .layers = 96, .hidden = 18432, .heads = 96, .kv_heads = 8, .ffn = 73728, .vocab = 256000, .seq = 4096, .mlp = SIM_MLP_GELU, .tied_embeddings = 0, .gbs = 0, .published_params = 0 },
};

/* Finds the model a row names ("LLAMA2-7B", "GPT3-175B", "MPT-30B") in
 * the preset table or the list above. */
static const struct sim_model *find_model(const struct sim_model_table *t,
					  const char *name)
{
	char key[PRICE_NAME_MAX];
	const struct sim_model *m;
	size_t i;

	for (i = 0; name[i] && name[i] != ' ' && i + 1 < sizeof(key); i++)
		key[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
	key[i] = '\0';
	m = t ? sim_model_find(t, key) : NULL;
	if (m)
		return m;
	if (!strcmp(key, "gpt3-175b"))
		return t ? sim_model_find(t, "gpt3-175b") : NULL;
	for (i = 0; i < sizeof(extra_models) / sizeof(extra_models[0]); i++)
		if (!strcmp(extra_models[i].name, key))
			return &extra_models[i];
	return NULL;
}

/* The canonical GPU a row names, e.g. "A100-SXM4-80GB (DGX A100 Selene)". */
static const struct price_gpu *find_gpu(const struct price_catalog *cat,
					const char *cell)
{
	char name[PRICE_NAME_MAX];
	size_t i;

	for (i = 0; cell[i] && cell[i] != ' ' && i + 1 < sizeof(name); i++)
		name[i] = cell[i];
	name[i] = '\0';
	return price_gpu_find(cat, name);
}

static int contains(const char *hay, const char *needle)
{
	return strstr(hay, needle) != NULL;
}

static void published_row(const struct price_csv *csv, const struct price_csv_row *row,
			  const struct price_catalog *cat,
			  const struct sim_model_table *models)
{
	int c_src = price_csv_col(csv, "source_id");
	const char *src = price_csv_get(row, c_src);
	const char *label = price_csv_get(row, price_csv_col(csv, "model"));
	const char *rc_cell = price_csv_get(row, price_csv_col(csv, "recompute"));
	const char *zero_cell = price_csv_get(row, price_csv_col(csv, "zero_stage"));
	const char *il_cell = price_csv_get(row, price_csv_col(csv, "interleave"));
	const char *sp_cell = price_csv_get(row, price_csv_col(csv, "seq_parallel"));
	const char *notes = price_csv_get(row, price_csv_col(csv, "notes"));
	int megatron = !strncmp(src, "megatron", 8);
	int nemo = !strncmp(src, "nemo", 4);
	int mpt = !strncmp(src, "mpt", 3);
	const struct sim_model *preset = find_model(models, label);
	const struct price_gpu *gpu;
	struct sim_model m;
	struct sim_parallel p;
	struct sim_cluster c;
	struct sim_result r;
	char why[256];
	int gpus, per_stage;
	double iter_s, tok_s, tflops;

	m = (struct sim_model){ .pos = SIM_POS_LEARNED };  /* no preset: SC'21's GPT */
	if (preset)
		m = *preset;
	m.layers = cell_int(row, price_csv_col(csv, "layers"), m.layers);
	m.hidden = cell_int(row, price_csv_col(csv, "hidden"), m.hidden);
	m.heads = cell_int(row, price_csv_col(csv, "heads"), m.heads);
	if (m.kv_heads < 1 || (!preset && m.heads))
		m.kv_heads = m.heads;
	/* FFN width: the row's, else the preset's, else 4h (Megatron SC'21
	 * eq. 2 implies it). */
	m.ffn = cell_int(row, price_csv_col(csv, "ffn_hidden"), m.ffn ? m.ffn : 4 * m.hidden);
	m.seq = cell_int(row, price_csv_col(csv, "seq_len"), m.seq);
	m.vocab = cell_int(row, price_csv_col(csv, "vocab"), m.vocab ? m.vocab : 51200);
	if (m.layers < 1 || m.hidden < 1 || m.heads < 1) {
		skip(src, label, "no architecture");
		return;
	}

	gpu = find_gpu(cat, price_csv_get(row, price_csv_col(csv, "gpu")));
	if (!gpu) {
		skip(src, label, "unknown gpu");
		return;
	}
	memset(&c, 0, sizeof(c));
	c.gpu = *gpu;
	c.gpus_per_node = 8;
	/* Inter-node bandwidth per node, one direction: Selene and DGX A100
	 * have 8 x 200 Gb/s HDR (Narayanan et al. sec. 5); llm-foundry's A100
	 * sections state 1600 Gb/s RoCE; DGX H100 (NeMo, and assumed for
	 * llm-foundry's H100 sections, which state none) 8 x 400 Gb/s. */
	c.inter_bytes_per_s = contains(gpu->name, "H100") ? 400e9 : 200e9;

	sim_parallel_init(&p);
	gpus = cell_int(row, price_csv_col(csv, "num_gpus"), 0);
	p.tp = cell_int(row, price_csv_col(csv, "tp"), 1);
	p.pp = cell_int(row, price_csv_col(csv, "pp"), 1);
	p.cp = cell_int(row, price_csv_col(csv, "cp"), 1);
	p.gbs = cell_int(row, price_csv_col(csv, "global_batch_seqs"), 0);
	p.mbs = cell_int(row, price_csv_col(csv, "micro_batch"), 1);
	/* Megatron SC'21 Table 2 leaves the PTD-P split out; sec. 5.2 uses
	 * TP 8 within a node, so PP = model-parallel size / 8 (12 for 175B,
	 * 35 for 530B). */
	if (megatron && !*price_csv_get(row, price_csv_col(csv, "tp"))
	    && !*zero_cell) {
		p.tp = 8;
		p.pp = contains(notes, "size=96") ? 12 : 35;
	}
	p.interleave = cell_int(row, price_csv_col(csv, "interleave"), 1);
	/* Megatron SC'21 Table 1 runs PP > 1 interleaved without stating the
	 * chunk count: assumed 2 chunks where the stage's layers split
	 * evenly, else 3 (530B: 3 layers a stage), the smallest the schedule
	 * allows.  Micro-batch 1 (not stated; sec. 5.1 and Fig. 15 use 1 for
	 * large models). */
	if (megatron && p.pp > 1 && (contains(il_cell, "interleaved") || !*il_cell)) {
		per_stage = m.layers / p.pp;
		p.interleave = per_stage % 2 == 0 ? 2 : (per_stage % 3 == 0 ? 3 : 1);
	}
	if (p.tp * p.pp * p.cp < 1 || gpus % (p.tp * p.pp * p.cp)) {
		skip(src, label, "gpus not divisible by tp x pp x cp");
		return;
	}
	p.dp = gpus / (p.tp * p.pp * p.cp);
	if (contains(zero_cell, "3") || contains(zero_cell, "FULL_SHARD"))
		p.zero = 3;
	else if (contains(zero_cell, "2"))
		p.zero = 2;
	/* Megatron SC'21 Table 2 ran DeepSpeed's ZeRO-3 of early 2021, which
	 * gathered parameter by parameter and synchronously (DeepSpeed PR
	 * #1188); llm-foundry's FSDP wraps and prefetches whole blocks. */
	if (megatron && p.zero == 3)
		p.zero3_gather = SIM_ZERO3_TENSOR_SYNC;
	else if (nemo)
		p.zero = 1;     /* NeMo's distributed optimizer */
	/* Recomputation: the row's; Megatron SC'21 Table 2 recomputes fully
	 * (sec. 3.5: all its runs do); NeMo's performance configurations none. */
	if (contains(rc_cell, "full") || (megatron && !*rc_cell))
		p.recompute = SIM_RECOMPUTE_FULL;
	else if (contains(rc_cell, "selective"))
		p.recompute = SIM_RECOMPUTE_SELECTIVE;
	/* Megatron SC'21 predates flash attention and sequence parallelism;
	 * llm-foundry uses flash attention; NeMo 24.07 uses both, and fp8.
	 * Which flash kernel, from what the source states of its stack (the
	 * rows name none): llm-foundry's tables were taken before its move to
	 * torch 2.0 (the README's "TODO: Update tables with torch 2.0 after
	 * next Composer release") and before FlashAttention-2's release (July
	 * 2023): FlashAttention (v1).  NeMo 24.07 runs Transformer Engine,
	 * which picks cuDNN attention on Hopper (auto).  Llama 3 (2024, on
	 * PyTorch) states no kernel: FlashAttention-2, the one PyTorch's own
	 * attention ran in 2024. */
	p.flash = !megatron;
	p.attn_kernel = mpt ? SIM_ATTN_FA1 : nemo ? SIM_ATTN_AUTO : SIM_ATTN_FA2;
	p.seq_parallel = (nemo || contains(sp_cell, "yes")) && p.tp > 1;
	/* NeMo's recipes overlap TP communication with the GEMMs
	 * (ub_tp_comm_overlap: True, NeMo-Framework-Launcher
	 * conf/training/gpt3/20b.yaml and 175b.yaml). */
	p.tp_overlap = nemo && p.tp > 1;
	p.precision = nemo ? SIM_PRECISION_FP8 : SIM_PRECISION_BF16;
	if (p.gbs < 1 || p.gbs % (p.mbs * p.dp)) {
		/* llm-foundry's throughput rows give the global batch per
		 * step; round to whole micro-batches per rank. */
		int per = p.mbs * p.dp;

		p.gbs = per * (p.gbs / per > 0 ? p.gbs / per : 1);
	}
	if (sim_check(&m, &p, &c, why, sizeof(why)) != RC_OK) {
		skip(src, label, why);
		return;
	}
	sim_step(&m, &p, &c, &r);
	keep_config(&m, &p, &c);

	iter_s = cell_double(row, price_csv_col(csv, "iteration_time_s"));
	tok_s = cell_double(row, price_csv_col(csv, "measured_tokens_per_s_per_gpu"));
	tflops = cell_double(row, price_csv_col(csv, "measured_tflops_per_gpu"));
	if (iter_s > 0)
		record(src, "iteration s", 0, r.step_time_s, iter_s, label, &r);
	else if (tok_s > 0)
		record(src, "tokens/s/GPU", 1, r.tokens_per_s / gpus, tok_s, label, &r);
	else if (tflops > 0) {
		double pred = (megatron ? r.hardware_flops_per_gpu_s : r.model_flops_per_gpu_s) / 1e12;

		record(src, megatron ? "HW TFLOP/s" : "TFLOP/s", 1, pred, tflops, label, &r);
		/* Table 2 compares two schemes; report each half too. */
		if (!strcmp(src, "megatron_sc21_t2"))
			record_sub(p.zero == 3 ? "  of which ZeRO-3" : "  of which PTD-P",
				   pred, tflops, 1);
	}
	else
		skip(src, label, "no measurement");
}

/* vTrain single-node runs: Megatron-DeepSpeed GPT on one 8-GPU A100 node.
 * vTrain's configurations of these runs (config/validation/single/
 * config_val_single_NNNN.json, one per row, e.g. 0000 is the first row)
 * state 1F1B and "use_checkpoint": true, i.e. full recomputation.  Assumed
 * where they are silent: A100-SXM4-80GB with NVLink 3, fp16 at the bf16
 * rate, no flash attention (Megatron-DeepSpeed's default path), ZeRO off,
 * GPT-2 BPE vocabulary (50257), FFN 4h, pipelines on DeepSpeed's engine
 * (pretrain_gpt.py's GPTModelPipe, a PipelineModule: pp_send_whole). */
static void vtrain_row(const struct price_csv_row *row, const struct price_gpu *a100)
{
	struct sim_model m;
	struct sim_parallel p;
	struct sim_cluster c;
	struct sim_result r;
	char why[256], label[96];
	double ms;

	m = (struct sim_model){ .pos = SIM_POS_LEARNED };  /* GPT-2's positions */
	m.hidden = cell_int(row, 3, 0);
	m.heads = cell_int(row, 4, 0);
	m.kv_heads = m.heads;
	m.layers = cell_int(row, 5, 0);
	m.seq = cell_int(row, 6, 0);
	m.ffn = 4 * m.hidden;
	m.vocab = 50257;
	m.mlp = SIM_MLP_GELU;
	m.tied_embeddings = 1;
	sim_parallel_init(&p);
	p.gbs = cell_int(row, 1, 0);
	p.mbs = cell_int(row, 2, 0);
	p.tp = cell_int(row, 7, 0);
	p.dp = cell_int(row, 8, 0);
	p.pp = cell_int(row, 9, 0);
	p.pp_send_whole = 1;
	p.flash = 0;
	p.recompute = SIM_RECOMPUTE_FULL;
	memset(&c, 0, sizeof(c));
	c.gpu = *a100;
	c.gpus_per_node = 8;
	ms = cell_double(row, 10);
	snprintf(label, sizeof(label), "h%d l%d b%d/%d t%d d%d p%d", m.hidden, m.layers,
		 p.mbs, p.gbs, p.tp, p.dp, p.pp);
	if (sim_check(&m, &p, &c, why, sizeof(why)) != RC_OK) {
		skip("vtrain_single", label, why);
		return;
	}
	sim_step(&m, &p, &c, &r);
	keep_config(&m, &p, &c);
	record("vtrain_single", "iteration s", 0, r.step_time_s, ms / 1e3, label, &r);
}

/* Letters and digits of a name, lower-cased: "Qwen3_30B_a3B" and
 * "qwen3-30b-a3b" both read "qwen330ba3b". */
static void fold(char *out, size_t size, const char *in)
{
	size_t o = 0;

	for (; *in && o + 1 < size; in++)
		if ((*in >= 'a' && *in <= 'z') || (*in >= '0' && *in <= '9'))
			out[o++] = *in;
		else if (*in >= 'A' && *in <= 'Z')
			out[o++] = (char)(*in + 32);
	out[o] = '\0';
}

/* "  model DeepSeekV3", "  system DGX-GB200" (of the newest releases),
 * "  model DeepSeekV3, all", "  container 26.08" (of every release). */
static void moe_group(char *buf, size_t size, const char *kind, const char *name, int all)
{
	snprintf(buf, size, "  %s %s%s", kind, name, all && strcmp(kind, "container") ? ", all" : "");
}

static const struct sim_model *find_moe_model(const struct sim_model_table *t, const char *name)
{
	char a[PRICE_NAME_MAX], b[PRICE_NAME_MAX];

	fold(a, sizeof(a), name);
	for (size_t i = 0; t && i < t->n; i++) {
		fold(b, sizeof(b), t->models[i].name);
		if (!strcmp(a, b))
			return &t->models[i];
	}
	return NULL;
}

/* Megatron-Bridge's MoE runs (bench/data/moe_runs.csv, a copy of the
 * performance summary's rows, NVIDIA-NeMo/Megatron-Bridge
 * docs/performance-summary.md and performance-summary-archive.md at
 * 067f987): DeepSeek-V3 and Qwen3-30B-A3B pre-training, tokens/s per GPU
 * at the row's layout.  What the rows leave out is read from the
 * repository's performance recipes, as data beside the runs
 * (bench/data/moe_recipes.csv, each fact with its source; the systems'
 * GPUs and networks in moe_systems.csv; recipes.c reads them): the
 * distributed optimizer (ZeRO-1); the flex token dispatcher (HybridEP or
 * DeepEP) everywhere; the EP all-to-all overlap where the row's release's
 * recipe sets it; the DeepSeek-V3 pipeline layout, module recomputation
 * and the experts' GEMM generation; forced-balanced routing (the table's footnote:
 * moe_imbalance 1); bf16 gradient reduction (the DeepSeek-V3 recipe's
 * grad_reduce_in_fp32 false, kept for Qwen3 too: with expert data
 * parallelism of 1 or 2 little rides on it); sequence parallelism and TP
 * overlap with TP > 1.  The recipes' CUDA graphs are not modelled
 * (the host's dispatch time stays sim_cluster.host_layer_s's).  Every row is
 * simulated with the model's one set of defaults; a row whose GPU the
 * catalog lacks, or whose figures it lacks, is skipped and the reason
 * printed. */
/* Each MoE row's place in the report: whether it is the newest container
 * release of its (model, system, layout); set by moe_groups. */
static unsigned char *moe_is_newest;

/* The headline and its companion: the newest release of every (model,
 * system, layout), on which the simulator's model of current software is
 * judged, and every release, the older ones having run the same layouts
 * slower (the model is tuned to neither). */
#define MOE_NEWEST "mbridge_moe newest"
#define MOE_ALL "mbridge_moe all"

/* 1 when MoE rows a and b run one model on one system at one layout: the
 * same GPUs, precision, batch, sequence and parallel degrees (an empty
 * fsdp cell reads as 0, as the newer tables leave it). */
static int moe_same_layout(const struct price_csv *csv, const struct price_csv_row *a,
			   const struct price_csv_row *b)
{
	static const char *const cols[] = { "model", "system", "num_gpus", "precision", "gbs",
					    "mbs", "seq_len", "tp", "pp", "cp", "vp", "ep", "etp",
					    "fsdp" };

	for (size_t k = 0; k < GP_ARRAY_LEN(cols); k++) {
		int c = price_csv_col(csv, cols[k]);
		const char *x = price_csv_get(a, c), *y = price_csv_get(b, c);

		if (!strcmp(cols[k], "fsdp")) {
			x = *x ? x : "0";
			y = *y ? y : "0";
		}
		if (strcmp(x, y))
			return 0;
	}
	return 1;
}

/* Records MoE row i's error (or, when why is not NULL, its skip) against
 * the headline and its model and system when it is its layout's newest
 * release, and against every release, per model, system and container. */
static void moe_record(const struct price_csv *csv, size_t i, const char *label,
		       const char *why, double predicted, double measured,
		       const struct sim_result *r)
{
	static const char *const kinds[] = { "model", "system", "container" };
	const struct price_csv_row *row = &csv->rows[i];
	char group[PRICE_NAME_MAX + 32];

	for (int all = 0; all < 2; all++) {
		if (!all && !moe_is_newest[i])
			continue;
		if (why)
			skip(all ? MOE_ALL : MOE_NEWEST, label, why);
		else if (all)
			record_sub(MOE_ALL, predicted, measured, 1);
		else
			record(MOE_NEWEST, "tokens/s/GPU", 1, predicted, measured, label, r);
		for (size_t k = 0; k < GP_ARRAY_LEN(kinds) - !all; k++) {
			moe_group(group, sizeof(group), kinds[k],
				  price_csv_get(row, price_csv_col(csv, kinds[k])), all);
			if (why)
				source(group)->skipped++;
			else
				record_sub(group, predicted, measured, 1);
		}
	}
}

static void moe_row(const struct price_csv *csv, size_t i, const struct price_catalog *cat,
		    const struct sim_model_table *models, const struct moe_recipes *rec)
{
	const struct price_csv_row *row = &csv->rows[i];
	const char *model = price_csv_get(row, price_csv_col(csv, "model"));
	const char *system = price_csv_get(row, price_csv_col(csv, "system"));
	const char *prec = price_csv_get(row, price_csv_col(csv, "precision"));
	long release = moe_release_num(price_csv_get(row, price_csv_col(csv, "container")));
	const struct sim_model *m = find_moe_model(models, model);
	const struct moe_system *sys = moe_system_find(rec, system);
	const struct price_gpu *gpu;
	struct sim_parallel p;
	struct sim_cluster c;
	struct sim_result r;
	char why[256], label[128];
	int gpus;
	double tok_s;

	snprintf(label, sizeof(label), "%s %s %s gbs %s mbs %s pp %s ep %s (%s)", model, system,
		 prec, price_csv_get(row, price_csv_col(csv, "gbs")),
		 price_csv_get(row, price_csv_col(csv, "mbs")),
		 price_csv_get(row, price_csv_col(csv, "pp")),
		 price_csv_get(row, price_csv_col(csv, "ep")),
		 price_csv_get(row, price_csv_col(csv, "container")));
	if (!m) {
		moe_record(csv, i, label, "model not in models.csv", 0, 0, NULL);
		return;
	}
	if (!sys) {
		moe_record(csv, i, label, "system not described", 0, 0, NULL);
		return;
	}
	gpu = price_gpu_find(cat, sys->gpu);
	if (!gpu) {
		snprintf(why, sizeof(why), "gpus.csv has no %s", sys->gpu);
		moe_record(csv, i, label, why, 0, 0, NULL);
		return;
	}
	memset(&c, 0, sizeof(c));
	c.gpu = *gpu;
	c.gpus_per_node = sys->gpus_per_node;
	c.nvlink_domain = sys->nvlink_domain;
	c.inter_bytes_per_s = sys->inter_gbps * 1e9 / 8;

	sim_parallel_init(&p);
	gpus = cell_int(row, price_csv_col(csv, "num_gpus"), 0);
	p.tp = cell_int(row, price_csv_col(csv, "tp"), 1);
	p.pp = cell_int(row, price_csv_col(csv, "pp"), 1);
	p.cp = cell_int(row, price_csv_col(csv, "cp"), 1);
	p.interleave = cell_int(row, price_csv_col(csv, "vp"), 1);
	p.ep = cell_int(row, price_csv_col(csv, "ep"), 1);
	p.etp = cell_int(row, price_csv_col(csv, "etp"), 1);
	p.gbs = cell_int(row, price_csv_col(csv, "gbs"), 0);
	p.mbs = cell_int(row, price_csv_col(csv, "mbs"), 1);
	if (p.tp * p.pp * p.cp < 1 || gpus % (p.tp * p.pp * p.cp)) {
		moe_record(csv, i, label, "gpus not divisible by tp x pp x cp", 0, 0, NULL);
		return;
	}
	p.dp = gpus / (p.tp * p.pp * p.cp);
	p.seq_parallel = p.tp_overlap = p.tp > 1;
	p.precision = !strcmp(prec, "MXFP8") ? SIM_PRECISION_MXFP8
		      : !strcmp(prec, "FP8") ? SIM_PRECISION_FP8
		      : !strcmp(prec, "NVFP4") ? SIM_PRECISION_NVFP4 : SIM_PRECISION_BF16;
	/* the optimizer, dispatcher, overlap, expert GEMMs, recomputation
	 * and pipeline layout of the row's recipe (bench/data/moe_recipes.csv) */
	moe_recipes_apply(rec, model, system, release, m, &p);
	if (sim_check(m, &p, &c, why, sizeof(why)) != RC_OK) {
		moe_record(csv, i, label, why, 0, 0, NULL);
		return;
	}
	sim_step(m, &p, &c, &r);
	keep_config(m, &p, &c);
	tok_s = cell_double(row, price_csv_col(csv, "tokens_per_s_per_gpu"));
	if (!(tok_s > 0)) {
		moe_record(csv, i, label, "no measurement", 0, 0, NULL);
		return;
	}
	moe_record(csv, i, label, NULL, r.tokens_per_s / gpus, tok_s, &r);
}

/* Marks each MoE row newest or not, and lays out the report's MoE lines
 * in print order: the newest releases per model and per system, then
 * every release per model, per system and per container (each in the
 * file's order). */
static void moe_groups(const struct price_csv *csv)
{
	static const char *const kinds[] = { "model", "system", "container" };
	char group[PRICE_NAME_MAX + 32];
	int cc = price_csv_col(csv, "container");

	moe_is_newest = calloc(csv->n_rows ? csv->n_rows : 1, 1);
	if (!moe_is_newest) {
		fprintf(stderr, "error: accuracy: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < csv->n_rows; i++) {
		long rel = moe_release_num(price_csv_get(&csv->rows[i], cc));

		moe_is_newest[i] = 1;
		for (size_t j = 0; j < csv->n_rows && moe_is_newest[i]; j++)
			if (j != i && moe_same_layout(csv, &csv->rows[i], &csv->rows[j]) &&
			    moe_release_num(price_csv_get(&csv->rows[j], cc)) > rel)
				moe_is_newest[i] = 0;
	}
	source(MOE_NEWEST);
	for (int all = 0; all < 2; all++) {
		if (all)
			source(MOE_ALL)->sub = 1;
		for (size_t k = 0; k < GP_ARRAY_LEN(kinds) - !all; k++)
			for (size_t i = 0; i < csv->n_rows; i++) {
				if (!all && !moe_is_newest[i])
					continue;
				moe_group(group, sizeof(group), kinds[k],
					  price_csv_get(&csv->rows[i], price_csv_col(csv, kinds[k])), all);
				source(group)->sub = 1;
			}
	}
}

/* One fine-tuning run: the model from models.csv, the method, the
 * adapters and the offload as the row states them, mbs and gbs from its
 * micro-batch (no accumulation), the GPUs of one node.  Tokens/s are the
 * run's over all its GPUs; peak memory is torch's per GPU (GiB). */
static void finetune_row(const struct price_csv *csv, const struct price_csv_row *row,
			 const struct price_catalog *cat, const struct sim_model_table *models)
{
	const char *id = price_csv_get(row, price_csv_col(csv, "source_id"));
	const char *method = price_csv_get(row, price_csv_col(csv, "method"));
	const char *targets = price_csv_get(row, price_csv_col(csv, "lora_targets"));
	const char *offload = price_csv_get(row, price_csv_col(csv, "offload"));
	const char *states = price_csv_get(row, price_csv_col(csv, "optimizer_states"));
	const struct sim_model *mp = sim_model_find(models, price_csv_get(row, price_csv_col(csv,
												"model")));
	const struct price_gpu *gpu = price_gpu_find(cat, price_csv_get(row, price_csv_col(csv, "gpu")));
	struct sim_model m;
	struct sim_parallel p;
	struct sim_cluster c;
	struct sim_result r;
	struct source_stats *s = source(id);
	char why[256], label[128];
	double tok_s, mem_gib;
	int gpus, v = 0;

	s->ft = 1;
	snprintf(label, sizeof(label), "%s %s %s x%s", price_csv_get(row, price_csv_col(csv, "model")),
		 method, price_csv_get(row, price_csv_col(csv, "gpu")),
		 price_csv_get(row, price_csv_col(csv, "num_gpus")));
	if (!mp || !gpu) {
		skip(id, label, "model or GPU not in the shipped tables");
		return;
	}
	m = *mp;
	m.seq = cell_int(row, price_csv_col(csv, "seq_len"), m.seq);
	gpus = cell_int(row, price_csv_col(csv, "num_gpus"), 1);
	sim_parallel_init(&p);
	p.dp = gpus;
	p.mbs = cell_int(row, price_csv_col(csv, "micro_batch"), 1);
	p.gbs = p.mbs * gpus;
	p.zero = cell_int(row, price_csv_col(csv, "zero_stage"), 0);
	p.recompute = strcmp(price_csv_get(row, price_csv_col(csv, "recompute")), "full") == 0
		      ? SIM_RECOMPUTE_FULL : SIM_RECOMPUTE_NONE;
	for (int i = 0; i < 4; i++)
		if (!strcmp(method, sim_ft_method_names[i]))
			v = i;
	p.ft.method = (enum sim_ft_method)v;
	p.ft.lora_rank = cell_int(row, price_csv_col(csv, "lora_rank"), 0);
	if (targets[0])
		sim_lora_targets_parse(targets, &p.ft.lora_targets);
	p.ft.offload = strcmp(offload, "cpu") == 0 ? SIM_OFFLOAD_CPU : SIM_OFFLOAD_NONE;
	/* the optimizer's states and the loss as the row's trainer keeps and runs
	 * them (empty: mixed precision's fp32 master and moments; Megatron-LM's) */
	for (size_t i = 0; i < GP_ARRAY_LEN(sim_opt_state_names); i++)
		if (!strcmp(states, sim_opt_state_names[i]))
			p.opt_states = (enum sim_opt_states)i;
	for (size_t i = 0; i < GP_ARRAY_LEN(sim_loss_names); i++)
		if (!strcmp(price_csv_get(row, price_csv_col(csv, "loss")), sim_loss_names[i]))
			p.loss = (enum sim_loss)i;
	memset(&c, 0, sizeof(c));
	c.gpu = *gpu;
	c.gpus_per_node = gpus;
	c.host.memory_bytes = cell_double(row, price_csv_col(csv, "host_memory_gb")) * 1e9;
	c.host.cpu_cores = cell_double(row, price_csv_col(csv, "host_cpu_cores"));
	c.host.pcie_bytes_per_s = cell_double(row, price_csv_col(csv, "host_pcie_gb_per_s")) * 1e9;
	if (sim_check(&m, &p, &c, why, sizeof(why)) != RC_OK) {
		skip(id, label, why);
		return;
	}
	sim_step(&m, &p, &c, &r);
	keep_config(&m, &p, &c);
	tok_s = cell_double(row, price_csv_col(csv, "measured_tokens_per_s"));
	mem_gib = cell_double(row, price_csv_col(csv, "peak_memory_gib"));
	/* A measured rate at which the FLOPs the job must do (the hardware
	 * FLOPs the simulator counts: no flash-attention recomputation, no
	 * element-wise work) would run above the GPU's dense bf16 peak was
	 * not measured on the setup the row states. */
	if (r.hfu * tok_s / r.tokens_per_s > 1) {
		snprintf(why, sizeof(why), "the measured rate needs more than the GPU's dense bf16 "
			 "peak for the FLOPs of the stated setup");
		skip(id, label, why);
		if (verbose)
			printf("  %-18s %-44.44s needs %.0f%% of the peak\n", id, label,
			       100 * r.hfu * tok_s / r.tokens_per_s);
		return;
	}
	record(id, "tokens/s", 1, r.tokens_per_s, tok_s, label, &r);
	if (mem_gib > 0) {
		/* torch's peak: no CUDA context; active: no allocator slack (RUNS.md) */
		int active = !strcmp(price_csv_get(row, price_csv_col(csv, "peak_memory_stat")), "active");
		double pred = (r.memory.total - SIM_CONTEXT_BYTES) / 1073741824.0
			      / (active ? 1.0 + SIM_ALLOC_SLACK : 1.0);

		s->sum_mem_ape += fabs(pred - mem_gib) / mem_gib;
		s->n_mem++;
		if (verbose)
			printf("  %-18s %-44.44s %-13s pred %10.4g meas %10.4g  %+6.1f%%\n", id,
			       label, "memory GiB", pred, mem_gib, 100 * (pred / mem_gib - 1));
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Configurations per second that sim_check() and sim_step() get through on
 * the rows compared above, on one core, for about half a second: the
 * simulator's speed class on real shapes (bench/sim_speed sweeps a grid). */
static void speed(void)
{
	double t0, t, sink = 0;
	long n = 0;

	if (!n_configs)
		return;
	t0 = now_s();
	do {
		for (size_t i = 0; i < n_configs; i++) {
			struct sim_result r;

			if (sim_check(&configs[i].m, &configs[i].p, &configs[i].c, NULL, 0) != RC_OK)
				continue;
			sim_step(&configs[i].m, &configs[i].p, &configs[i].c, &r);
			sink += r.step_time_s;
		}
		n += (long)n_configs;
		t = now_s() - t0;
	} while (t < 0.5);
	printf("speed: %.3g configurations per second on one core (%ld in %.2f s%s)\n",
	       n / t, n, t, sink > 0 ? "" : "; no step time");
}

int main(int argc, char **argv)
{
	const char *data_dir = "data", *bench_dir = "bench/data";
	char path[1024];
	struct price_opts po;
	struct price_catalog cat;
	struct sim_model_table models;
	struct price_csv pub, vt, moe, ft;
	struct moe_recipes rec;
	const struct price_gpu *a100;
	double all_ape = 0, all_signed = 0, mean_of_sources = 0, bias_of_sources = 0;
	int all_n = 0, argi = 1, status = 0, n_sources = 0, missed = 0;
	size_t i;

	if (argi < argc && (!strcmp(argv[argi], "-h") || !strcmp(argv[argi], "--help"))) {
		printf("usage: %s [-v | -vv] [DATA_DIR [BENCH_DATA_DIR]]\n"
		       "the simulator against published training runs: per source the rows,\n"
		       "the MAPE and the bias (signed mean) of the predicted step time, the\n"
		       "row-weighted and source-mean totals, and sim_step's configurations per\n"
		       "second on one core; -v lists every run, -vv adds the predicted\n"
		       "breakdown and memory\n"
		       "(defaults: data and bench/data)\n", argv[0]);
		return 0;
	}
	if (argi < argc && argv[argi][0] == '-' && strcmp(argv[argi], "-v") &&
	    strcmp(argv[argi], "-vv")) {
		fprintf(stderr, "error: accuracy: unknown option '%s' (try --help)\n", argv[argi]);
		return 2;
	}
	if (argi < argc && !strcmp(argv[argi], "-v")) {
		verbose = 1;
		argi++;
	} else if (argi < argc && !strcmp(argv[argi], "-vv")) {
		verbose = 2;
		argi++;
	}
	if (argi < argc)
		data_dir = argv[argi++];
	if (argi < argc)
		bench_dir = argv[argi++];

	price_opts_init(&po);
	po.data_dir = data_dir;
	if (price_catalog_load(&cat, &po) != RC_OK)
		return 2;
	snprintf(path, sizeof(path), "%s/models.csv", data_dir);
	if (sim_model_table_load(&models, path) != RC_OK) {
		price_catalog_release(&cat);
		return 2;
	}
	a100 = price_gpu_find(&cat, "A100-SXM4-80GB");
	snprintf(path, sizeof(path), "%s/published_runs.csv", bench_dir);
	if (!a100 || price_csv_load(path, &pub) != RC_OK) {
		fprintf(stderr, "error: %s: expected the A100-SXM4-80GB in the catalog and a readable file\n",
			path);
		status = 2;
		goto out_models;
	}
	snprintf(path, sizeof(path), "%s/vtrain_ground_truth_single.csv", bench_dir);
	if (price_csv_load(path, &vt) != RC_OK) {
		status = 2;
		goto out_pub;
	}
	snprintf(path, sizeof(path), "%s/moe_runs.csv", bench_dir);
	if (price_csv_load(path, &moe) != RC_OK) {
		status = 2;
		goto out_vt;
	}
	if (moe_recipes_load(bench_dir, &rec) != RC_OK) {
		status = 2;
		goto out_moe;
	}
	snprintf(path, sizeof(path), "%s/finetune_runs.csv", bench_dir);
	if (price_csv_load(path, &ft) != RC_OK) {
		status = 2;
		goto out_rec;
	}

	for (i = 0; i < pub.n_rows; i++)
		published_row(&pub, &pub.rows[i], &cat, &models);
	for (i = 0; i < vt.n_rows; i++)
		vtrain_row(&vt.rows[i], a100);
	moe_groups(&moe);
	for (i = 0; i < moe.n_rows; i++)
		moe_row(&moe, i, &cat, &models, &rec);
	for (i = 0; i < ft.n_rows; i++)
		finetune_row(&ft, &ft.rows[i], &cat, &models);

	printf("simulator accuracy: error of the predicted step time per source\n"
	       "(bias: signed mean, + = predicted slower than measured)\n");
	printf("%-28s %6s %8s %9s %8s\n", "source", "rows", "MAPE", "bias", "skipped");
	for (int s = 0; s < n_stats; s++) {
		double mape = stats[s].n ? 100 * stats[s].sum_ape / stats[s].n : 0;
		double bias = stats[s].n ? 100 * stats[s].sum_signed / stats[s].n : 0;

		if (stats[s].ft)
			continue;
		if (stats[s].n)
			printf("%-28s %6d %7.1f%% %+8.1f%% %8d\n", stats[s].id, stats[s].n, mape,
			       bias, stats[s].skipped);
		else
			printf("%-28s %6d %8s %9s %8d\n", stats[s].id, 0, "-", "-", stats[s].skipped);
		if (stats[s].sub || !stats[s].n)
			continue;
		n_sources++;
		all_ape += stats[s].sum_ape;
		all_signed += stats[s].sum_signed;
		all_n += stats[s].n;
		mean_of_sources += mape;
		bias_of_sources += bias;
		if (mape > 10 || fabs(bias) > 7)
			missed++;
	}
	if (n_sources) {
		mean_of_sources /= n_sources;
		bias_of_sources /= n_sources;
	}
	printf("%-28s %6d %7.1f%% %+8.1f%%\n", "all rows", all_n,
	       all_n ? 100 * all_ape / all_n : 0, all_n ? 100 * all_signed / all_n : 0);
	printf("%-28s %6d %7.1f%% %+8.1f%%\n", "mean of sources", n_sources,
	       mean_of_sources, bias_of_sources);
	printf("target (every source MAPE <= 10%%, |bias| <= 7%%): %s",
	       missed ? "missed by " : "met\n");
	if (missed)
		printf("%d of %d sources\n", missed, n_sources);
	for (int k = 0; k < n_reasons; k++)
		printf("%s: %d row%s skipped: %s\n", reasons[k].id, reasons[k].n,
		       reasons[k].n == 1 ? "" : "s", reasons[k].why);
	printf("\nfine-tuning (LoRA, QLoRA, offload), apart from the totals above:\n");
	printf("%-24s %6s %8s %9s %10s %8s\n", "source", "rows", "MAPE", "bias", "memory MAPE",
	       "skipped");
	for (int s = 0; s < n_stats; s++)
		if (stats[s].ft)
			printf("%-24s %6d %7.1f%% %+8.1f%% %10.1f%% %8d\n", stats[s].id, stats[s].n,
			       stats[s].n ? 100 * stats[s].sum_ape / stats[s].n : 0,
			       stats[s].n ? 100 * stats[s].sum_signed / stats[s].n : 0,
			       stats[s].n_mem ? 100 * stats[s].sum_mem_ape / stats[s].n_mem : 0,
			       stats[s].skipped);

	price_csv_release(&ft);
	speed();
out_rec:
	moe_recipes_release(&rec);
out_moe:
	price_csv_release(&moe);
out_vt:
	price_csv_release(&vt);
out_pub:
	price_csv_release(&pub);
out_models:
	sim_model_table_release(&models);
	price_catalog_release(&cat);
	free(configs);
	free(moe_is_newest);
	return status;
}
