/*
 * cmd_execute.c - `gpuplan execute [PLAN.json] [options]`: runs a plan's
 * training steps, one rank per device, and prints the measurement beside
 * the simulator's prediction for the same layout on the same device.
 *
 * Started by hand it checks the layout, then starts `mpirun` with the
 * layout's rank count (a single rank runs in this process); started by
 * mpirun or srun it is one of the ranks.  Rank 0 prints, shows progress
 * on a terminal and writes the files asked for (--json, --trace, which
 * holds every rank's timeline); the others only report errors.
 */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_calib.h"
#include "exec.h"
#include "run/exec_metrics.h"
#include "plan.h"
#include "progress.h"
#include "sim.h"

/* --check: the fraction of the simulator's bus bandwidth an all-reduce
 * over each group must reach. */
#define CHECK_MIN_FRACTION 0.5

static void help(void)
{
	printf("usage: gpuplan execute [PLAN.json] [options]\n\n"
	       "Runs real training steps of the plan's GPT-style decoder laid out as the\n"
	       "plan says (tensor, pipeline and data parallel, ZeRO stage, micro-batches,\n"
	       "recomputation, interleaving), one MPI rank per device, and prints measured\n"
	       "against predicted.  Starts mpirun itself unless run under mpirun or srun.\n"
	       "Without a plan file the model is a small GPT (4 layers x 64 hidden, 4 heads,\n"
	       "vocabulary 128, sequence 32, mbs 2, gbs 8); flags override the plan.\n\n"
	       "run:\n"
	       "  --backend cpu|cuda    compute backend (default: cpu; built in: %s)\n"
	       "  --precision bf16|fp32 on a GPU: bf16 activations and tensor-core GEMMs with\n"
	       "                        fp32 master weights, or fp32 for checking (default: bf16)\n"
	       "  --check               pre-flight: the plan's GPU type, its memory free, each\n"
	       "                        group's all-reduce at >= %.0f%% of the simulator's bus\n"
	       "                        bandwidth, then one step's memory against the\n"
	       "                        prediction (one step unless --steps is given)\n"
	       "  --calibration FILE    calibration for the prediction (default: the user's file\n"
	       "                        for the device, see `gpuplan calibrate`)\n"
	       "  --np N                ranks; must equal tp x pp x dp x cp (default: that product)\n"
	       "  --steps N             training steps (default: 10)\n"
	       "  --seed N              initialisation and synthetic data (default: 1234)\n"
	       "  --lr X                AdamW learning rate (default: 0.001); a NaN or infinite\n"
	       "                        loss ends the run with exit status 1\n"
	       "  --data FILE           uint16 little-endian tokens (default: synthetic bigram data)\n"
	       "  --json FILE           write the measurement (schema gpuplan.run/1)\n"
	       "  --trace FILE          write every rank's measured timeline (forward and\n"
	       "                        backward ops, sends, receives, collectives, optimizer)\n"
	       "                        as Chrome trace JSON for Perfetto, laid out like\n"
	       "                        `simulate --timeline`, and adds the step's passes and\n"
	       "                        optimizer to the table (default: off)\n"
	       "  --checkpoint-dir DIR  write each rank's shard (weights, AdamW state) and a\n"
	       "                        manifest into DIR/step-N, atomically, every\n"
	       "                        --checkpoint-every steps and after the last, keeping\n"
	       "                        the newest %d (default: none); every rank must see DIR\n"
	       "  --checkpoint-every N  steps between checkpoints (default: the plan's interval,\n"
	       "                        else an hour, over the predicted step time, at least 1)\n"
	       "  --resume              continue from DIR's newest checkpoint, of the same model,\n"
	       "                        layout and seed, to --steps in all (default: a new run,\n"
	       "                        which refuses a DIR that holds checkpoints)\n"
	       "  --max-ranks N         refuse layouts with more ranks (default: %d)\n"
	       "  --timeout DUR         a step running longer ends the job with a message from\n"
	       "                        every rank (default: %.0f predicted steps, at least %.0fs)\n"
	       "  --max-memory BYTES    cap each rank's device allocations, e.g. 2G (default: none)\n"
	       "  --metrics-port N      serve Prometheus metrics on 127.0.0.1:N while running\n"
	       "                        (default: off)\n"
	       "  --metrics-file FILE   write Prometheus metrics to FILE after every step, for\n"
	       "                        node-exporter's textfile collector (default: off)\n"
	       "model (shrink a plan's model for a trial):\n"
	       "  --layers N            decoder layers\n"
	       "  --hidden N            hidden size (the MLP width keeps its ratio)\n"
	       "  --heads N, --kv-heads N, --ffn N, --vocab N, --seq N\n"
	       "  --mlp gelu|swiglu     MLP kind (SwiGLU comes with RMSNorm)\n"
	       "  --norm layernorm|rmsnorm   override the norm\n"
	       "  --tied, --untied      LM head shares the input embedding, or has its own\n"
	       "                        (default: the plan's, else untied)\n"
	       "  --experts N, --top-k N, --expert-ffn N   a mixture of experts: routed experts\n"
	       "                        per MoE layer, how many a token goes to, each one's\n"
	       "                        width (default: the plan's, else 0: dense; --hidden\n"
	       "                        keeps the experts' width ratio too)\n"
	       "  --shared-experts N, --shared-ffn N, --dense-layers N, --router-pre-softmax 0|1\n"
	       "                        shared experts and their width, leading dense layers,\n"
	       "                        the router's weights (see `simulate --help`)\n"
	       "layout:\n"
	       "  --tp N, --pp N, --dp N          parallel degrees (default: the plan's, else 1)\n"
	       "  --cp N                          context parallel: each rank holds 1/N of every\n"
	       "                                  sequence, K and V all-gathered (default: the\n"
	       "                                  plan's, else 1)\n"
	       "  --mbs N, --gbs N                micro-batch and global batch, sequences\n"
	       "                                  (default: the plan's, else 2 and 8)\n"
	       "  --grad-accum N                  sets gbs = mbs x dp x N (a --gbs must agree)\n"
	       "  --zero 0..3                     ZeRO stage (default: the plan's, else 0)\n"
	       "  --recompute none|selective|full (default: the plan's, else none)\n"
	       "  --interleave V                  chunks per pipeline stage\n"
	       "                                  (default: the plan's, else 1)\n"
	       "  --pp-last-layers N              layers of the last virtual stage, the others\n"
	       "                                  even (default: the plan's, else 0: the\n"
	       "                                  simulator's split)\n"
	       "  --schedule gpipe|1f1b|interleaved  (default: 1f1b, interleaved when V > 1)\n"
	       "  --no-flash                      keep attention probabilities (default: flash)\n"
	       "  --seq-parallel, --no-seq-parallel  Megatron sequence parallelism with tp > 1\n"
	       "                                  (default: the plan's, else off; required\n"
	       "                                  with experts and tp > 1)\n"
	       "  --ep N                          expert parallel: ranks sharing each MoE layer's\n"
	       "                                  experts, folded over tp x cp x dp; tokens go\n"
	       "                                  to them by all-to-all (default: the plan's,\n"
	       "                                  else 1)\n"
	       "  --etp N                         expert tensor parallel; the executor runs 1\n"
	       "fine-tuning:\n"
	       "  --finetune none|full|lora       what trains (default: the plan's, else none):\n"
	       "                                  every weight, or LoRA's rank-r adapters with\n"
	       "                                  the base frozen; qlora is refused\n"
	       "  --lora-rank R                   adapter rank (default: the plan's, else %d)\n"
	       "  --lora-targets LIST             projections adapted: all, or q,k,v,o,gate,up,\n"
	       "                                  down separated by ',' (default: the plan's,\n"
	       "                                  else all)\n"
	       "  --lora-alpha A                  adapters' output scaled by A / R (default:\n"
	       "                                  2 R)\n"
	       "  -q, --quiet                     no progress and no warnings on stderr\n"
	       "  -h, --help                      this help\n\n"
	       "environment: GPUPLAN_MPIRUN names the launcher (default: mpirun in PATH);\n"
	       "%s=R:S kills rank R at step S, %s=R:S makes it hang there,\n"
	       "%s=R makes rank R's allocations fail, %s=R:S kills rank R half-way\n"
	       "through writing its shard of step S's checkpoint (fault tests).\n",
	       exec_backends_built(), 100 * CHECK_MIN_FRACTION, EXEC_CKPT_KEEP, EXEC_MAX_RANKS_DEFAULT,
	       EXEC_TIMEOUT_STEPS, EXEC_TIMEOUT_MIN_S, SIM_LORA_DEFAULT_RANK, EXEC_FAULT_ENV, EXEC_FAULT_HANG_ENV,
	       EXEC_FAULT_OOM_ENV, EXEC_FAULT_CKPT_ENV);
}

enum {
	OPT_BACKEND = 256, OPT_NP, OPT_STEPS, OPT_SEED, OPT_LR, OPT_DATA, OPT_JSON,
	OPT_MAX_RANKS, OPT_LAYERS, OPT_HIDDEN, OPT_HEADS, OPT_KV_HEADS, OPT_FFN,
	OPT_VOCAB, OPT_SEQ, OPT_MLP, OPT_NORM, OPT_TP, OPT_PP, OPT_DP, OPT_MBS,
	OPT_GBS, OPT_ACCUM, OPT_ZERO, OPT_RECOMPUTE, OPT_INTERLEAVE, OPT_PP_LAST, OPT_SCHEDULE,
	OPT_NO_FLASH, OPT_PRECISION, OPT_CHECK, OPT_CALIBRATION, OPT_METRICS_PORT,
	OPT_METRICS_FILE, OPT_TIMEOUT, OPT_MAX_MEMORY, OPT_TIED, OPT_UNTIED, OPT_SP,
	OPT_NO_SP, OPT_TRACE, OPT_CP, OPT_CKPT_DIR, OPT_CKPT_EVERY, OPT_RESUME, OPT_EP, OPT_ETP,
	OPT_FIELD, OPT_FINETUNE, OPT_LORA_RANK, OPT_LORA_TARGETS, OPT_LORA_ALPHA,
};

struct flags {
	int np, accum, gbs_set, norm_set, schedule_set, hidden_set, ffn_set, help, steps_set;
	int expert_ffn_set, shared_ffn_set;
	const char *lora_flag;     /* the last LoRA flag given, for its check */
	const char *json, *calibration, *trace;
	int quiet;
	int metrics_port;          /* 0: no server */
	const char *metrics_file;
	int timeout_set;
	int ckpt_every_set;
	int have_plan;
	struct sim_plan plan;      /* the plan file's, when have_plan */
};

static enum rc parse_fault_env(struct exec_opts *o)
{
	const char *v = getenv(EXEC_FAULT_ENV);
	int r, s, n = 0;

	if (!v || !*v)
		return RC_OK;
	if (sscanf(v, "%d:%d%n", &r, &s, &n) != 2 || v[n] || r < 0 || s < 1) {
		gp_error("%s: expected RANK:STEP like 1:3, found '%s'", EXEC_FAULT_ENV, v);
		return RC_USAGE;
	}
	o->fault_rank = r;
	o->fault_step = s;
	return RC_OK;
}

/* EXEC_FAULT_HANG_ENV=R:S, EXEC_FAULT_CKPT_ENV=R:S and EXEC_FAULT_OOM_ENV=R,
 * as parse_fault_env. */
static enum rc parse_hang_oom_env(struct exec_opts *o)
{
	const char *h = getenv(EXEC_FAULT_HANG_ENV), *m = getenv(EXEC_FAULT_OOM_ENV);
	const char *c = getenv(EXEC_FAULT_CKPT_ENV);
	int r, s, n = 0;

	if (c && *c) {
		if (sscanf(c, "%d:%d%n", &r, &s, &n) != 2 || c[n] || r < 0 || s < 1) {
			gp_error("%s: expected RANK:STEP like 1:3, found '%s'", EXEC_FAULT_CKPT_ENV, c);
			return RC_USAGE;
		}
		o->ckpt_fault_rank = r;
		o->ckpt_fault_step = s;
	}
	n = 0;

	if (h && *h) {
		if (sscanf(h, "%d:%d%n", &r, &s, &n) != 2 || h[n] || r < 0 || s < 1) {
			gp_error("%s: expected RANK:STEP like 1:3, found '%s'", EXEC_FAULT_HANG_ENV, h);
			return RC_USAGE;
		}
		o->hang_rank = r;
		o->hang_step = s;
	}
	n = 0;
	if (m && *m) {
		if (sscanf(m, "%d%n", &r, &n) != 1 || m[n] || r < 0) {
			gp_error("%s: expected a RANK like 1, found '%s'", EXEC_FAULT_OOM_ENV, m);
			return RC_USAGE;
		}
		o->oom_rank = r;
	}
	return RC_OK;
}

static enum rc parse_args(int argc, char **argv, struct exec_opts *o, struct flags *f,
			  const char **plan)
{
	static const struct option base[] = {
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "np", required_argument, NULL, OPT_NP },
		{ "steps", required_argument, NULL, OPT_STEPS },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "lr", required_argument, NULL, OPT_LR },
		{ "data", required_argument, NULL, OPT_DATA },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "max-ranks", required_argument, NULL, OPT_MAX_RANKS },
		{ "layers", required_argument, NULL, OPT_LAYERS },
		{ "hidden", required_argument, NULL, OPT_HIDDEN },
		{ "heads", required_argument, NULL, OPT_HEADS },
		{ "kv-heads", required_argument, NULL, OPT_KV_HEADS },
		{ "ffn", required_argument, NULL, OPT_FFN },
		{ "vocab", required_argument, NULL, OPT_VOCAB },
		{ "seq", required_argument, NULL, OPT_SEQ },
		{ "mlp", required_argument, NULL, OPT_MLP },
		{ "norm", required_argument, NULL, OPT_NORM },
		{ "tp", required_argument, NULL, OPT_TP },
		{ "pp", required_argument, NULL, OPT_PP },
		{ "dp", required_argument, NULL, OPT_DP },
		{ "cp", required_argument, NULL, OPT_CP },
		{ "mbs", required_argument, NULL, OPT_MBS },
		{ "gbs", required_argument, NULL, OPT_GBS },
		{ "grad-accum", required_argument, NULL, OPT_ACCUM },
		{ "zero", required_argument, NULL, OPT_ZERO },
		{ "recompute", required_argument, NULL, OPT_RECOMPUTE },
		{ "interleave", required_argument, NULL, OPT_INTERLEAVE },
		{ "pp-last-layers", required_argument, NULL, OPT_PP_LAST },
		{ "schedule", required_argument, NULL, OPT_SCHEDULE },
		{ "no-flash", no_argument, NULL, OPT_NO_FLASH },
		{ "tied", no_argument, NULL, OPT_TIED },
		{ "untied", no_argument, NULL, OPT_UNTIED },
		{ "seq-parallel", no_argument, NULL, OPT_SP },
		{ "no-seq-parallel", no_argument, NULL, OPT_NO_SP },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
		{ "precision", required_argument, NULL, OPT_PRECISION },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "calibration", required_argument, NULL, OPT_CALIBRATION },
		{ "metrics-port", required_argument, NULL, OPT_METRICS_PORT },
		{ "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "checkpoint-dir", required_argument, NULL, OPT_CKPT_DIR },
		{ "checkpoint-every", required_argument, NULL, OPT_CKPT_EVERY },
		{ "resume", no_argument, NULL, OPT_RESUME },
		{ "ep", required_argument, NULL, OPT_EP },
		{ "etp", required_argument, NULL, OPT_ETP },
		{ "finetune", required_argument, NULL, OPT_FINETUNE },
		{ "lora-rank", required_argument, NULL, OPT_LORA_RANK },
		{ "lora-targets", required_argument, NULL, OPT_LORA_TARGETS },
		{ "lora-alpha", required_argument, NULL, OPT_LORA_ALPHA },
		/* the model fields the executor runs, a mixture of experts':
		 * simulate's flags, parsed by the model's table */
		{ "experts", required_argument, NULL, OPT_FIELD },
		{ "top-k", required_argument, NULL, OPT_FIELD },
		{ "expert-ffn", required_argument, NULL, OPT_FIELD },
		{ "shared-experts", required_argument, NULL, OPT_FIELD },
		{ "shared-ffn", required_argument, NULL, OPT_FIELD },
		{ "dense-layers", required_argument, NULL, OPT_FIELD },
		{ "router-pre-softmax", required_argument, NULL, OPT_FIELD },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sim_model *m = &o->model;
	struct sim_parallel *p = &o->par;
	int c, seed, v = 0, li = 0;
	enum rc rc = RC_OK;

	optind = 1;
	opterr = 0;
	while (rc == RC_OK && (c = getopt_long(argc, argv, "hq", base, &li)) != -1) {
		if (c == OPT_FIELD) {
			int *field = NULL;

			rc = cli_parse_model_field(base[li].name, optarg, m, &field);
			f->expert_ffn_set |= field == &m->expert_ffn;
			f->shared_ffn_set |= field == &m->shared_ffn;
			continue;
		}
		switch (c) {
		case OPT_BACKEND: o->backend = optarg; break;
		case OPT_NP: rc = cli_parse_int("--np", optarg, 1, 1 << 20, &f->np); break;
		case OPT_STEPS:
			rc = cli_parse_int("--steps", optarg, 1, 1000000, &o->steps);
			f->steps_set = 1;
			break;
		case OPT_SEED:
			rc = cli_parse_int("--seed", optarg, 0, 2147483647, &seed);
			o->seed = (uint64_t)seed;
			break;
		case OPT_LR: rc = cli_parse_double("--lr", optarg, 1e-12, 1e3, &o->lr); break;
		case OPT_DATA: o->data_path = optarg; break;
		case OPT_JSON: f->json = optarg; break;
		case OPT_MAX_RANKS:
			rc = cli_parse_int("--max-ranks", optarg, 1, 1 << 20, &o->max_ranks);
			break;
		case OPT_LAYERS: rc = cli_parse_int("--layers", optarg, 1, 1 << 16, &m->layers); break;
		case OPT_HIDDEN:
			rc = cli_parse_int("--hidden", optarg, 1, 1 << 20, &m->hidden);
			f->hidden_set = 1;
			break;
		case OPT_HEADS: rc = cli_parse_int("--heads", optarg, 1, 1 << 16, &m->heads); break;
		case OPT_KV_HEADS:
			rc = cli_parse_int("--kv-heads", optarg, 1, 1 << 16, &m->kv_heads);
			break;
		case OPT_FFN:
			rc = cli_parse_int("--ffn", optarg, 1, 1 << 22, &m->ffn);
			f->ffn_set = 1;
			break;
		case OPT_VOCAB: rc = cli_parse_int("--vocab", optarg, 2, 65536, &m->vocab); break;
		case OPT_SEQ: rc = cli_parse_int("--seq", optarg, 1, 1 << 20, &m->seq); break;
		case OPT_MLP:
			rc = cli_parse_choice("--mlp", optarg, sim_mlp_names, 2, &v);
			m->mlp = (enum sim_mlp)v;
			break;
		case OPT_NORM:
			if (strcmp(optarg, "layernorm") == 0)
				o->norm = EXEC_NORM_LAYER;
			else if (strcmp(optarg, "rmsnorm") == 0)
				o->norm = EXEC_NORM_RMS;
			else {
				gp_error("--norm: expected layernorm or rmsnorm, found '%s'", optarg);
				rc = RC_USAGE;
			}
			f->norm_set = 1;
			break;
		case OPT_TP: rc = cli_parse_int("--tp", optarg, 1, 1 << 16, &p->tp); break;
		case OPT_PP: rc = cli_parse_int("--pp", optarg, 1, 1 << 16, &p->pp); break;
		case OPT_DP: rc = cli_parse_int("--dp", optarg, 1, 1 << 20, &p->dp); break;
		case OPT_CP: rc = cli_parse_int("--cp", optarg, 1, 1 << 16, &p->cp); break;
		case OPT_EP: rc = cli_parse_int("--ep", optarg, 1, 1 << 16, &p->ep); break;
		case OPT_ETP: rc = cli_parse_int("--etp", optarg, 1, 1 << 16, &p->etp); break;
		case OPT_MBS: rc = cli_parse_int("--mbs", optarg, 1, 1 << 20, &p->mbs); break;
		case OPT_GBS:
			rc = cli_parse_int("--gbs", optarg, 1, 1 << 24, &p->gbs);
			f->gbs_set = 1;
			break;
		case OPT_ACCUM:
			rc = cli_parse_int("--grad-accum", optarg, 1, 1 << 20, &f->accum);
			break;
		case OPT_ZERO: rc = cli_parse_int("--zero", optarg, 0, 3, &p->zero); break;
		case OPT_RECOMPUTE:
			rc = cli_parse_choice("--recompute", optarg, sim_recompute_names, 3, &v);
			p->recompute = (enum sim_recompute)v;
			break;
		case OPT_INTERLEAVE:
			rc = cli_parse_int("--interleave", optarg, 1, 1 << 10, &p->interleave);
			break;
		case OPT_PP_LAST:
			rc = cli_parse_int("--pp-last-layers", optarg, 0, SIM_MAX_LAYERS,
					   &p->pp_last_layers);
			break;
		case OPT_SCHEDULE:
			if (sched_kind_parse(optarg, &o->schedule) != RC_OK) {
				gp_error("--schedule: expected gpipe, 1f1b or interleaved, found '%s'",
					 optarg);
				rc = RC_USAGE;
			}
			f->schedule_set = 1;
			break;
		case OPT_NO_FLASH: p->flash = 0; break;
		case OPT_TIED: m->tied_embeddings = 1; break;
		case OPT_UNTIED: m->tied_embeddings = 0; break;
		case OPT_SP: p->seq_parallel = 1; break;
		case OPT_NO_SP: p->seq_parallel = 0; break;
		case OPT_TIMEOUT:
			rc = cli_parse_duration("--timeout", optarg, &o->timeout_s);
			f->timeout_set = 1;
			break;
		case OPT_MAX_MEMORY:
			rc = cli_parse_count("--max-memory", optarg, &o->max_memory_bytes);
			break;
		case OPT_PRECISION:
			if (exec_precision_parse(optarg, &o->precision) != RC_OK) {
				gp_error("--precision: expected bf16 or fp32, found '%s'", optarg);
				rc = RC_USAGE;
			}
			break;
		case OPT_CHECK: o->check = 1; break;
		case OPT_CALIBRATION: f->calibration = optarg; break;
		case OPT_METRICS_PORT:
			if (cli_parse_int("--metrics-port", optarg, 1, 65535, &f->metrics_port))
				return RC_USAGE;
			break;
		case OPT_METRICS_FILE: f->metrics_file = optarg; break;
		case OPT_TRACE:
			if (!*optarg) {
				gp_error("--trace: expected a file name, found ''");
				rc = RC_USAGE;
			}
			f->trace = optarg;
			o->trace = 1;
			break;
		case OPT_CKPT_DIR:
			if (!*optarg) {
				gp_error("--checkpoint-dir: expected a directory, found ''");
				rc = RC_USAGE;
			}
			o->ckpt_dir = optarg;
			break;
		case OPT_CKPT_EVERY:
			rc = cli_parse_int("--checkpoint-every", optarg, 1, 1000000, &o->ckpt_every);
			f->ckpt_every_set = 1;
			break;
		case OPT_RESUME: o->resume = 1; break;
		case OPT_FINETUNE:
			rc = cli_parse_choice("--finetune", optarg, sim_ft_method_names, 4, &v);
			p->ft.method = (enum sim_ft_method)v;
			break;
		case OPT_LORA_RANK:
			rc = cli_parse_int("--lora-rank", optarg, 1, SIM_LORA_MAX_RANK,
					   &p->ft.lora_rank);
			f->lora_flag = "--lora-rank";
			break;
		case OPT_LORA_TARGETS:
			f->lora_flag = "--lora-targets";
			if (sim_lora_targets_parse(optarg, &p->ft.lora_targets) != RC_OK) {
				gp_error("--lora-targets: expected all or names among q, k, v, o, "
					 "gate, up, down separated by ',', found '%s'", optarg);
				rc = RC_USAGE;
			}
			break;
		case OPT_LORA_ALPHA:
			rc = cli_parse_double("--lora-alpha", optarg, 1e-6, 1e6, &o->lora_alpha);
			f->lora_flag = "--lora-alpha";
			break;
		case 'q': f->quiet = 1; break;
		case 'h': f->help = 1; return RC_OK;
		default: return cli_bad_option("execute", optopt, argv[optind - 1]);
		}
	}
	if (rc != RC_OK)
		return rc;
	if (optind < argc - 1) {
		gp_error("execute: expected at most one plan file, found %d arguments",
			 argc - optind);
		return RC_USAGE;
	}
	*plan = optind == argc - 1 ? argv[optind] : NULL;
	if (!o->ckpt_dir && (o->resume || f->ckpt_every_set)) {
		gp_error("%s: expected --checkpoint-dir DIR beside it, found none",
			 o->resume ? "--resume" : "--checkpoint-every");
		return RC_USAGE;
	}
	return RC_OK;
}

/* Default options (or the plan's model and layout), then the flags over
 * them.  A width given without --ffn keeps the base model's MLP ratio. */
static enum rc build_opts(int argc, char **argv, struct exec_opts *o, struct flags *f)
{
	const char *plan = NULL;
	struct sim_model base;
	enum exec_norm norm;
	enum sched_kind sk;
	enum rc rc;

	memset(f, 0, sizeof(*f));
	exec_opts_init(o);
	base = o->model;
	rc = parse_args(argc, argv, o, f, &plan);
	if (rc != RC_OK || f->help)
		return rc;
	if (plan) {
		struct sim_plan sp;

		rc = sim_plan_read(plan, &sp);
		if (rc != RC_OK)
			return rc;
		/* The executor trains every weight, or LoRA's adapters, with
		 * its states on the device: measuring that against a QLoRA or
		 * offload prediction would compare two different jobs. */
		if (sp.par.ft.method == SIM_FT_QLORA || sp.par.ft.offload != SIM_OFFLOAD_NONE) {
			gp_error("%s: .finetune: expected full training or lora without offload, "
				 "which the executor runs, found %s with offload %s", plan,
				 sim_ft_method_names[sp.par.ft.method],
				 sim_offload_names[sp.par.ft.offload]);
			gp_hint("export it (--format trl or deepspeed) to run it with its framework");
			return RC_INPUT;
		}
		exec_opts_init(o);
		o->model = sp.model;
		o->par = sp.par;
		base = sp.model;
		memset(f, 0, sizeof(*f));
		rc = parse_args(argc, argv, o, f, &plan);
		if (rc != RC_OK)
			return rc;
		f->plan = sp;
		f->have_plan = 1;
	}
	/* (the plan's method counts: its rank may be changed; QLoRA is
	 * refused with its own reason, exec_opts_check) */
	if (f->lora_flag && o->par.ft.method != SIM_FT_LORA && o->par.ft.method != SIM_FT_QLORA) {
		gp_error("%s: expected --finetune lora (or a LoRA plan) with it, found %s",
			 f->lora_flag, sim_ft_method_names[o->par.ft.method]);
		return RC_USAGE;
	}
	if (o->check && !f->steps_set)
		o->steps = 1;
	if (f->hidden_set && !f->ffn_set && base.hidden > 0)
		o->model.ffn = (int)((double)base.ffn * o->model.hidden / base.hidden + 0.5);
	/* and the experts' widths theirs */
	if (f->hidden_set && !f->expert_ffn_set && base.hidden > 0)
		o->model.expert_ffn = (int)((double)base.expert_ffn * o->model.hidden / base.hidden +
					    0.5);
	if (f->hidden_set && !f->shared_ffn_set && base.hidden > 0)
		o->model.shared_ffn = (int)((double)base.shared_ffn * o->model.hidden / base.hidden +
					    0.5);
	norm = o->norm;
	sk = o->schedule;
	exec_opts_derive(o);
	if (f->norm_set)
		o->norm = norm;
	if (f->schedule_set)
		o->schedule = sk;
	if (f->accum && f->gbs_set && o->par.gbs != o->par.mbs * o->par.dp * f->accum) {
		gp_error("--grad-accum: expected mbs %d x dp %d x %d = --gbs, found --gbs %d",
			 o->par.mbs, o->par.dp, f->accum, o->par.gbs);
		return RC_USAGE;
	}
	if (f->accum)
		o->par.gbs = o->par.mbs * o->par.dp * f->accum;
	rc = parse_fault_env(o);
	return rc == RC_OK ? parse_hang_oom_env(o) : rc;
}

static void print_step(const struct exec_step_info *s)
{
	char t[32];

	printf("step %*d/%d  loss %.4f  grad norm %.4f  %s\n",
	       s->steps >= 100 ? 3 : s->steps >= 10 ? 2 : 1, s->step, s->steps,
	       s->loss, s->grad_norm, unit_fmt_duration(t, sizeof(t), s->time_s));
	fflush(stdout);
}

/* What rank 0 publishes after each step when metrics are asked for. */
struct metrics_ctx {
	struct exec_metrics *m;
	const struct exec_opts *o;
	double model_flops_per_step;  /* sim_finetune_train_flops, no recomputation */
	double peak_flops_per_s;      /* all ranks; 0 unknown */
	double predicted_step_s;      /* 0 unknown */
};

static void metrics_sample(const struct metrics_ctx *mc, struct exec_metrics_sample *x)
{
	memset(x, 0, sizeof(*x));
	x->model = mc->o->model.name;
	x->backend = mc->o->backend;
	x->steps = mc->o->steps;
	x->loss = x->step_time_s = x->tokens_per_s = x->mfu = -1;
	x->predicted_step_time_s = mc->predicted_step_s > 0 ? mc->predicted_step_s : -1;
}

static void metrics_step(const struct metrics_ctx *mc, const struct exec_step_info *s)
{
	struct exec_metrics_sample x;

	metrics_sample(mc, &x);
	x.step = s->step;
	x.loss = s->loss;
	x.step_time_s = s->time_s;
	if (s->time_s > 0) {
		x.tokens_per_s = (double)mc->o->par.gbs * mc->o->model.seq / s->time_s;
		if (mc->peak_flops_per_s > 0)
			x.mfu = mc->model_flops_per_step / s->time_s / mc->peak_flops_per_s;
	}
	exec_metrics_update(mc->m, &x);
}

/* What rank 0 does after each step: the step's line on stdout, the
 * metrics when asked for, and a progress line for the next step, which
 * shows how long it has been running when it takes more than a second.
 * The line is erased before the step's line prints, so the two never
 * share a terminal line. */
struct step_ctx {
	const struct metrics_ctx *mc;  /* NULL: no metrics */
	struct gp_progress *prog;      /* the running step's; NULL between */
};

static void progress_step(struct step_ctx *sc, int step, int steps)
{
	char what[48];

	snprintf(what, sizeof(what), "execute: step %d/%d", step, steps);
	sc->prog = cli_progress_start(what, 0);
}

static void on_step(void *ctx, const struct exec_step_info *s)
{
	struct step_ctx *sc = ctx;

	gp_progress_done(sc->prog);
	sc->prog = NULL;
	print_step(s);
	if (sc->mc)
		metrics_step(sc->mc, s);
	if (s->step < s->steps)
		progress_step(sc, s->step + 1, s->steps);
}

static void print_header(const struct exec_opts *o)
{
	const struct sim_parallel *p = &o->par;
	int ranks = p->tp * p->pp * p->dp * p->cp;

	const struct sim_model *m = &o->model;

	printf("execute: %s, %d layers x %d hidden, %d heads (%d kv), seq %d, vocab %d, %s%s\n",
	       m->name, m->layers, m->hidden, m->heads, m->kv_heads, m->seq, m->vocab,
	       m->mlp == SIM_MLP_SWIGLU ? "swiglu/rmsnorm" : "gelu/layernorm",
	       m->tied_embeddings ? ", tied embeddings" : "");
	if (m->experts > 0) {
		printf("experts: %d of width %d, top-%d (%s)", m->experts, m->expert_ffn, m->top_k,
		       m->router_pre_softmax ? "softmax over all" : "renormalised");
		if (m->shared_experts > 0)
			printf(", %d shared of width %d", m->shared_experts,
			       m->shared_ffn > 0 ? m->shared_ffn : m->expert_ffn);
		if (m->dense_layers > 0)
			printf(", the first %d layer%s dense", m->dense_layers,
			       m->dense_layers > 1 ? "s" : "");
		printf(", ep %d x expert dp %d\n", p->ep > 0 ? p->ep : 1,
		       ranks / p->pp / (p->ep > 0 ? p->ep : 1));
	}
	if (p->ft.method == SIM_FT_LORA) {
		char targets[64];

		sim_lora_targets_str(p->ft.lora_targets, targets, sizeof(targets));
		printf("finetune: lora, rank %d on %s (alpha %g): adapters trained, the base frozen\n",
		       p->ft.lora_rank > 0 ? p->ft.lora_rank : SIM_LORA_DEFAULT_RANK, targets,
		       exec_lora_alpha(o));
	} else if (p->ft.method == SIM_FT_FULL) {
		printf("finetune: full, every weight trained\n");
	}
	printf("layout:  %d rank%s = tp %d x pp %d x dp %d", ranks, ranks > 1 ? "s" : "", p->tp,
	       p->pp, p->dp);
	if (p->cp > 1)
		printf(" x cp %d", p->cp);
	printf(", zero %d, recompute %s, %s", p->zero, sim_recompute_str(p->recompute),
	       sched_kind_name(o->schedule));
	if (p->interleave > 1)
		printf(" (v %d)", p->interleave);
	if (p->pp_last_layers > 0)
		printf(", %d layers in the last virtual stage", p->pp_last_layers);
	if (p->seq_parallel && p->tp > 1)
		printf(", sequence parallel");
	printf(", mbs %d x %d micro-batches x dp %d = gbs %d, %s backend\n",
	       p->mbs, p->gbs / (p->mbs * p->dp), p->dp, p->gbs, o->backend);
	fflush(stdout);
}

/* The steps between checkpoints when --checkpoint-every is not given:
 * the plan's interval (its spot Young/Daly interval, else the planner's
 * hourly default) over the predicted step time, at least 1; without a
 * prediction, the last step only. */
static int ckpt_every_default(const struct flags *f, double step_s, int steps)
{
	double interval_s = f->have_plan && f->plan.ckpt_interval_s > 0
		? f->plan.ckpt_interval_s : PLAN_DEFAULT_CKPT_INTERVAL_S;
	double n = step_s > 0 ? floor(interval_s / step_s) : steps;

	return n < 1 ? 1 : n > steps ? steps : (int)n;
}

static void print_ckpt(const struct exec_opts *o, int resume_at)
{
	printf("checkpoint: every %d step%s and after the last, into %s", o->ckpt_every,
	       o->ckpt_every == 1 ? "" : "s", o->ckpt_dir);
	if (resume_at > 0)
		printf("; resuming after step %d", resume_at);
	printf("\n");
	fflush(stdout);
}

/* Whether path (NULL: not asked for) can be written where it names: its
 * directory exists and this user can write there, and it is not a
 * directory itself.  RC_OK, or RC_USAGE after one line naming flag. */
static enum rc check_output(const char *flag, const char *path)
{
	char dir[PATH_MAX];
	const char *slash;
	struct stat st;

	if (!path)
		return RC_OK;
	if (!*path) {
		gp_error("%s: expected a file name, found ''", flag);
		return RC_USAGE;
	}
	slash = strrchr(path, '/');
	if (!slash)
		gp_strlcpy(dir, ".", sizeof(dir));
	else if (slash == path)
		gp_strlcpy(dir, "/", sizeof(dir));
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		gp_error("%s: %s: expected a file in an existing directory, found no directory %s",
			 flag, path, dir);
		return RC_USAGE;
	}
	if (access(dir, W_OK | X_OK) != 0) {
		gp_error("%s: %s: expected a file in a directory this user can write, found %s "
			 "read-only", flag, path, dir);
		return RC_USAGE;
	}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		gp_error("%s: %s: expected a file, found a directory", flag, path);
		return RC_USAGE;
	}
	return RC_OK;
}

/* " x cp N" when p has context parallelism, else "": the tail of a
 * layout's "tp x pp x dp" in messages. */
static const char *cp_str(char *buf, size_t size, const struct sim_parallel *p)
{
	buf[0] = '\0';
	if (p->cp > 1)
		snprintf(buf, size, " x cp %d", p->cp);
	return buf;
}

static void print_pct(double measured, double predicted)
{
	if (predicted > 0)
		printf("  %+7.1f%%\n", 100.0 * (measured - predicted) / predicted);
	else
		printf("\n");
}

/* What the run is predicted on: the executor's CPU ranks; or, for a GPU,
 * the plan's cluster when its GPU is this device, else the catalog GPU
 * whose name and memory match the device, on one node.  Either with its
 * calibration applied.  *catalog_peak is the GPU's datasheet bf16 peak
 * (sim_mfu_peak: MFU is counted against it, not against a calibrated
 * one; the CPU ranks' share of theirs).  Returns RC_OK
 * with *found 0 when no catalog GPU matches (a warning says so). */
static enum rc run_cluster(const struct exec_opts *o, const struct flags *f, const char *dev,
			   double dev_mem, struct sim_plan *p, double *catalog_peak, int *found)
{
	int ranks = exec_opts_ranks(o);
	enum rc rc;

	*found = 0;
	memset(p, 0, sizeof(*p));
	p->par = o->par;
	if (strcmp(o->backend, "cpu") == 0) {
		p->cluster.gpu = *cli_cpu_gpu();
	} else if (f->have_plan && exec_gpu_matches(dev, dev_mem, f->plan.cluster.gpu.name,
						    f->plan.cluster.gpu.memory_bytes)) {
		p->cluster = f->plan.cluster;
	} else {
		struct price_catalog cat;
		struct price_opts po;
		const struct price_gpu *g = NULL;

		price_opts_init(&po);
		po.data_dir = cli_data_dir();
		rc = price_catalog_load(&cat, &po);
		if (rc != RC_OK)
			return rc;
		for (size_t i = 0; i < cat.n_gpus && !g; i++)
			if (exec_gpu_matches(dev, dev_mem, cat.gpus[i].name, cat.gpus[i].memory_bytes))
				p->cluster.gpu = *(g = &cat.gpus[i]);
		price_catalog_release(&cat);
		if (!g) {
			gp_warn("no GPU of gpus.csv matches '%s': no prediction", dev);
			return RC_OK;
		}
		p->cluster.gpus_per_node = ranks < 8 ? ranks : 8;
	}
	rc = cli_calibration_plan(p, f->calibration);
	/* the datasheet's peak, as the calibration keeps it (for the CPU
	 * ranks, their share of the cores): simulate's MFU */
	*catalog_peak = sim_mfu_peak(&p->cluster.gpu);
	if (rc == RC_OK)
		*found = 1;
	return rc;
}

static void print_check(const struct exec_check *k, const struct exec_expect *e,
			const struct exec_opts *o, const char *dev)
{
	char a[32], b[32];

	printf("\npre-flight check\n");
	if (e->gpu[0])
		printf("  %-22s %s is %s: ok\n", "device", dev, e->gpu);
	printf("  %-22s %s free (least over ranks)", "memory",
	       unit_fmt_bytes(a, sizeof(a), k->free_bytes_min));
	if (e->memory_bytes > 0)
		printf(", the plan needs %s: ok", unit_fmt_bytes(b, sizeof(b), e->memory_bytes));
	printf("\n");
	for (int i = 0; i < EXEC_CHECK_GROUPS; i++) {
		int n = exec_check_group_size(o, i);
		char what[32];

		if (n < 2)
			continue;
		/* the dp group is every DP and CP rank of a weight shard */
		snprintf(what, sizeof(what), "%s all-reduce", exec_check_group_names[i]);
		printf("  %-22s %d ranks, %s: %.1f GB/s bus bandwidth", what, n,
		       unit_fmt_bytes(a, sizeof(a), k->msg_bytes), k->bus_bytes_per_s[i] / 1e9);
		if (e->bus_bytes_per_s[i] > 0)
			printf("\n  %-22s %.0f%% of the %.1f GB/s the simulator assumed: ok (>= %.0f%%)",
			       "", 100 * k->bus_bytes_per_s[i] / e->bus_bytes_per_s[i],
			       e->bus_bytes_per_s[i] / 1e9, 100 * e->min_fraction);
		printf("\n");
	}
	printf("  %-22s %s in use after step 1 (the executor's own: %s)", "memory after a step",
	       unit_fmt_bytes(a, sizeof(a), k->used_after_step_bytes),
	       unit_fmt_bytes(b, sizeof(b), k->counted_after_step_bytes));
	if (e->memory_bytes > 0)
		printf(", predicted %s %+.1f%%", unit_fmt_bytes(b, sizeof(b), e->memory_bytes),
		       100 * (k->used_after_step_bytes - e->memory_bytes) / e->memory_bytes);
	printf("\n");
}

static void print_summary(const struct exec_result *r, const struct sim_result *pred,
			  double catalog_peak)
{
	char a[32], b[32];
	double peak = exec_peak_memory(r), want = pred ? exec_predicted_memory(pred) : 0, fb, opt;

	if (r->first_step > 1)
		printf("\nloss %.4f -> %.4f over steps %d-%d (resumed after step %d); %s parameters\n",
		       r->losses[0], r->losses[r->steps - 1], r->first_step,
		       r->first_step + r->steps - 1, r->first_step - 1,
		       unit_fmt_count(a, sizeof(a), r->params));
	else
		printf("\nloss %.4f -> %.4f over %d steps; %s parameters\n", r->losses[0],
		       r->losses[r->steps - 1], r->steps, unit_fmt_count(a, sizeof(a), r->params));
	if (r->frozen_unchanged >= 0)
		printf("lora: %s trainable parameters (the adapters); the base weights %s after "
		       "the last step\n", unit_fmt_count(a, sizeof(a), r->trainable_params),
		       r->frozen_unchanged ? "bit for bit as drawn" : "CHANGED");
	printf("\n%-22s %12s %12s %9s\n", "", "measured", "predicted", "error");
	printf("%-22s %12s %12s", "step time (median)",
	       unit_fmt_duration(a, sizeof(a), r->step_time_median_s),
	       pred ? unit_fmt_duration(b, sizeof(b), pred->step_time_s) : "-");
	print_pct(r->step_time_median_s, pred ? pred->step_time_s : 0);
	snprintf(a, sizeof(a), "%.0f", r->tokens_per_s);
	snprintf(b, sizeof(b), "%.0f", pred ? pred->tokens_per_s : 0);
	printf("%-22s %12s %12s", "tokens/s", a, pred ? b : "-");
	print_pct(r->tokens_per_s, pred ? pred->tokens_per_s : 0);
	snprintf(a, sizeof(a), "%.3g", r->model_flops_per_rank_s / 1e9);
	snprintf(b, sizeof(b), "%.3g", pred ? pred->model_flops_per_gpu_s / 1e9 : 0);
	printf("%-22s %12s %12s", "model GFLOP/s per rank", a, pred ? b : "-");
	print_pct(r->model_flops_per_rank_s, pred ? pred->model_flops_per_gpu_s : 0);
	if (catalog_peak > 0) {
		/* model FLOPs (no recomputation) over the catalog's bf16 peak */
		snprintf(a, sizeof(a), "%.1f%%", 100 * r->model_flops_per_rank_s / catalog_peak);
		snprintf(b, sizeof(b), "%.1f%%",
			 pred ? 100 * pred->model_flops_per_gpu_s / catalog_peak : 0);
		printf("%-22s %12s %12s", "MFU", a, pred ? b : "-");
		print_pct(r->model_flops_per_rank_s, pred ? pred->model_flops_per_gpu_s : 0);
	}
	if (exec_trace_phases(&r->trace, &fb, &opt) == 0) {
		/* from the trace: where a step's time went, against the breakdown */
		double pfb = pred ? exec_predicted_fwd_bwd(pred) : 0;

		printf("%-22s %12s %12s", "forward + backward",
		       unit_fmt_duration(a, sizeof(a), fb),
		       pred ? unit_fmt_duration(b, sizeof(b), pfb) : "-");
		print_pct(fb, pfb);
		printf("%-22s %12s %12s", "optimizer", unit_fmt_duration(a, sizeof(a), opt),
		       pred ? unit_fmt_duration(b, sizeof(b), pred->breakdown.optimizer_s) : "-");
		print_pct(opt, pred ? pred->breakdown.optimizer_s : 0);
	}
	/* model states by kind, the fullest rank's: what LoRA changes */
	if (r->frozen_unchanged >= 0) {
		const double m[3] = { r->state_weights_bytes, r->state_grads_bytes,
				      r->state_optimizer_bytes };
		const double p[3] = { pred ? pred->memory.weights : 0, pred ? pred->memory.grads : 0,
				      pred ? pred->memory.optimizer : 0 };
		const char *what[3] = { "weights per rank", "gradients per rank",
					"optimizer per rank" };

		for (int i = 0; i < 3; i++) {
			printf("%-22s %12s %12s", what[i], unit_fmt_bytes(a, sizeof(a), m[i]),
			       pred ? unit_fmt_bytes(b, sizeof(b), p[i]) : "-");
			print_pct(m[i], p[i]);
		}
	}
	printf("%-22s %12s %12s", "peak memory per rank",
	       unit_fmt_bytes(a, sizeof(a), peak), pred ? unit_fmt_bytes(b, sizeof(b), want) : "-");
	print_pct(peak, want);
	if (r->world > 1) {
		printf("peak memory by rank:  ");
		for (int i = 0; i < r->world; i++)
			printf("%s%s", i ? ", " : "", unit_fmt_bytes(a, sizeof(a), r->peak_memory_bytes[i]));
		printf("\n");
	}
}

enum rc cmd_execute(int argc, char **argv)
{
	struct exec_opts o;
	struct flags f;
	struct exec_result r;
	struct sim_plan cl;
	struct sim_result pred;
	struct metrics_ctx mc;
	struct step_ctx sc;
	double catalog_peak = 0, dev_mem = 0;
	int have_pred = 0, have_cluster = 0, rank0, need, launching, resume_at = 0;
	char why[PATH_MAX + 512], dev[128], cps[32];
	enum rc rc;

	rc = build_opts(argc, argv, &o, &f);
	if (rc != RC_OK)
		return rc;
	if (f.help) {
		help();
		return RC_OK;
	}
	if (f.quiet)
		gp_log_quiet(1);
	rank0 = exec_launcher_rank() == 0;
	/* under a launcher rank 0 speaks for the job; the others only fail */
	if (!rank0)
		gp_log_quiet(1);
	need = exec_opts_ranks(&o);
	/* Every rank fails the checks below alike; exec_world_leave keeps
	 * them until rank 0 has said why. */
	if (exec_opts_check(&o, why, sizeof(why)) != RC_OK) {
		if (rank0)
			gp_error("execute: %s", why);
		exec_world_leave();
		return RC_INPUT;
	}
	/* the ranks would each find a bad --data file, after the header */
	if (!exec_under_launcher() && o.data_path &&
	    exec_data_check(o.data_path, &o, why, sizeof(why)) != RC_OK) {
		gp_error("--data: %s", why);
		return RC_INPUT;
	}
	/* a run the machine cannot hold is refused before any allocation:
	 * every rank of a launched job on this machine, each rank under a
	 * launcher for the ranks of its node (--check asks each rank's
	 * device itself, before the model is allocated, and says more) */
	if (!o.check && exec_predict(&o, &pred, why, sizeof(why)) == RC_OK &&
	    exec_host_fits(&o, &pred, exec_under_launcher() ? exec_launcher_local_size() : need,
			   why, sizeof(why)) != RC_OK) {
		if (rank0)
			gp_error("execute: %s", why);
		exec_world_leave();
		return RC_INPUT;
	}
	/* the files rank 0 writes at the end: a directory that is not there
	 * fails now, not after the run */
	if (!exec_under_launcher() &&
	    (check_output("--json", f.json) != RC_OK || check_output("--trace", f.trace) != RC_OK ||
	     check_output("--metrics-file", f.metrics_file) != RC_OK))
		return RC_USAGE;
	/* a checkpoint directory that cannot be used, or a checkpoint of
	 * another run, fails here before any rank starts; under a launcher
	 * the ranks ask in exec_run and agree */
	if (!exec_under_launcher() && exec_ckpt_prepare(&o, &resume_at, why, sizeof(why)) != RC_OK) {
		gp_error("%s", why);
		return RC_INPUT;
	}
	if (f.np && f.np != need) {
		if (rank0)
			gp_error("--np: expected %d (tp %d x pp %d x dp %d%s), found %d", need,
				 o.par.tp, o.par.pp, o.par.dp, cp_str(cps, sizeof(cps), &o.par),
				 f.np);
		exec_world_leave();
		return RC_USAGE;
	}
	/* A backend this machine cannot run fails here, before mpirun; under
	 * a launcher every rank asks in exec_run and they agree. */
	if (!exec_under_launcher() && (rc = exec_backend_probe(o.backend, why, sizeof(why))) != RC_OK) {
		gp_error("execute: %s", why);
		return rc;
	}
	/* The prediction (and --check's expectations) for this rank's device;
	 * a bad calibration file fails here, before mpirun.  The process that
	 * starts mpirun says nothing more: its rank 0 will. */
	launching = !exec_under_launcher() && need > 1;
	if (launching)
		gp_log_quiet(1);
	if (exec_backend_device(o.backend, dev, sizeof(dev), &dev_mem, why, sizeof(why)) == RC_OK) {
		rc = run_cluster(&o, &f, dev, dev_mem, &cl, &catalog_peak, &have_cluster);
		if (rc != RC_OK)
			return rc;
	}
	if (launching) {
		gp_log_quiet(f.quiet);
		cli_progress_pass();
		return exec_launch(need, argc, argv);
	}
	if (exec_launcher_size() != need) {
		if (rank0)
			gp_error("execute: layout: expected %d ranks (tp %d x pp %d x dp %d%s), "
				 "found %d", need, o.par.tp, o.par.pp, o.par.dp,
				 cp_str(cps, sizeof(cps), &o.par), exec_launcher_size());
		exec_world_leave();
		return RC_INPUT;
	}
	if (have_cluster) {
		if (exec_predict_on(&o, &cl.cluster, &cl.result, why, sizeof(why)) == RC_OK)
			have_pred = 1;
		else if (rank0)
			gp_warn("no prediction for this layout: %s", why);
	}
	if (o.check && have_pred)
		exec_expect_init(&o.expect, &o, &cl.cluster, &cl.result, CHECK_MIN_FRACTION);

	memset(&sc, 0, sizeof(sc));
	if (rank0) {
		print_header(&o);
		o.on_step = on_step;
		o.on_step_ctx = &sc;
	}
	memset(&mc, 0, sizeof(mc));
	if (rank0 && (f.metrics_port || f.metrics_file)) {
		rc = exec_metrics_new(f.metrics_port ? f.metrics_port : -1, f.metrics_file, &mc.m);
		if (rc != RC_OK)
			return rc;
		mc.o = &o;
		mc.model_flops_per_step = sim_finetune_train_flops(&o.model, &o.par.ft, o.par.gbs,
								   SIM_RECOMPUTE_NONE);
		mc.peak_flops_per_s = catalog_peak * need;
		mc.predicted_step_s = have_pred ? cl.result.step_time_s : 0;
		sc.mc = &mc;
	}
	if (o.ckpt_dir && !f.ckpt_every_set)
		o.ckpt_every = ckpt_every_default(&f, have_pred ? cl.result.step_time_s : 0, o.steps);
	/* the header says where the run starts (exec_run finds it again on
	 * every rank) */
	if (rank0 && o.ckpt_dir) {
		if (exec_ckpt_prepare(&o, &resume_at, why, sizeof(why)) != RC_OK)
			resume_at = 0;
		print_ckpt(&o, resume_at);
	}
	if (!f.timeout_set) {
		double steps_s = EXEC_TIMEOUT_STEPS * (have_pred ? cl.result.step_time_s : 0);

		o.timeout_s = steps_s > EXEC_TIMEOUT_MIN_S ? steps_s : EXEC_TIMEOUT_MIN_S;
	}
	if (rank0)
		progress_step(&sc, resume_at + 1, o.steps);
	rc = exec_run(&o, &r);
	gp_progress_done(sc.prog);
	if (rc != RC_OK) {
		exec_metrics_free(mc.m);
		return rc;
	}
	if (mc.m) {
		struct exec_metrics_sample x;

		metrics_sample(&mc, &x);
		x.step = r.first_step + r.steps - 1;
		x.loss = r.steps > 0 ? r.losses[r.steps - 1] : -1;
		x.step_time_s = r.step_time_median_s;
		x.tokens_per_s = r.tokens_per_s;
		x.mfu = catalog_peak > 0 ? r.model_flops_per_rank_s / catalog_peak : -1;
		x.peak_memory_bytes = r.peak_memory_bytes;
		x.ranks = need;
		rc = exec_metrics_update(mc.m, &x);
		exec_metrics_free(mc.m);
		if (rc != RC_OK) {
			exec_result_release(&r);
			return rc;
		}
	}
	if (rank0) {
		if (o.check)
			print_check(&r.check, &o.expect, &o, r.device);
		print_summary(&r, have_pred ? &cl.result : NULL, catalog_peak);
		if (f.json)
			rc = exec_run_write_json(f.json, &o, &r, have_pred ? &cl.result : NULL);
		if (rc == RC_OK && f.trace)
			rc = exec_trace_write(f.trace, &o, &r.trace);
		if (rc == RC_OK && f.trace)
			gp_info("trace of %d rank%s, %ld events over %d step%s written to %s",
				r.trace.world, r.trace.world > 1 ? "s" : "", r.trace.n,
				r.trace.steps, r.trace.steps == 1 ? "" : "s", f.trace);
		if (rc == RC_OK && f.trace && r.trace.dropped > 0)
			gp_warn("--trace: %ld events were not recorded (the buffer was full)",
				r.trace.dropped);
	}
	exec_result_release(&r);
	return rc;
}
