/*
 * cmd_execute_args.c - `gpuplan execute`'s flags: its help text, the
 * flags read over the defaults or a plan file's model and layout, and the
 * fault-test environment variables.  Calls the executor's option
 * functions (exec_opts_*) and the simulator's plan reader; called by
 * cmd_execute.c.
 */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_execute.h"

void execute_help(void)
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
	       "                        layout, seed, --backend, --precision, --data and --lr,\n"
	       "                        to --steps in all (default: a new run, which refuses a\n"
	       "                        DIR that holds checkpoints)\n"
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

static enum rc parse_args(int argc, char **argv, struct exec_opts *o,
			  struct execute_flags *f, const char **plan)
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
enum rc execute_build_opts(int argc, char **argv, struct exec_opts *o,
			   struct execute_flags *f)
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

