/*
 * cmd_simulate.c - `gpuplan simulate [PLAN.json] [flags]`: predicts step
 * time, throughput, MFU and memory of one training plan and explains where
 * the time and the memory go.
 *
 * The plan comes from a plan file, from flags, or from both (flags given
 * with a plan file override its fields).  Parsing and printing only: the
 * model lives in simulator/, the answer's table in cmd_simulate_report.c.
 */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_calib.h"
#include "cli_finetune.h"
#include "cmd_simulate.h"
#include "plan.h"
#include "plot.h"
#include "price.h"
#include "sim.h"
#include "sim_event.h"

#define DEFAULT_GPUS_PER_NODE 8
#define DEFAULT_VOCAB 51200
#define DEFAULT_SEQ 2048

static void help(void)
{
	printf("usage: gpuplan simulate [PLAN.json] [options]\n\n"
	       "Predicts one plan's step time, throughput, MFU and memory per GPU, with\n"
	       "the breakdown of each.  Give a plan file (from `plan -o` or `simulate -o`),\n"
	       "or the model, cluster and parallel configuration as flags; flags given\n"
	       "with a plan file override it.\n\n"
	       "model (a preset, or a custom shape):\n"
	       "  --model NAME            preset from models.csv (see `gpuplan models`)\n"
	       "  --layers N              custom: transformer layers\n"
	       "  --hidden N              custom: hidden size\n"
	       "  --heads N               custom: attention heads\n"
	       "  --kv-heads N            KV heads for GQA (default: heads)\n"
	       "  --ffn N                 MLP width (default: 4 x hidden)\n"
	       "  --vocab N               vocabulary (default: %d)\n"
	       "  --seq N                 training sequence length (default: the preset's, else %d)\n"
	       "  --mlp gelu|swiglu       MLP kind (default: gelu)\n"
	       "  --tied                  LM head shares the input embedding (default: untied)\n"
	       "  --head-dim N            head width where it is not hidden / heads (default: hidden / heads)\n"
	       "  --sliding-window N      keys each query attends to at most (default: the preset's, else none)\n"
	       "  --window-full-every N   with a window, every N-th layer attends to all (default: none)\n"
	       "  --attention-sinks 0|1   a learned sink logit per head, as GPT-OSS (default: 0)\n"
	       "  --parallel-residual 0|1 attention and MLP side by side, as GPT-NeoX (default: the\n"
	       "                          preset's, else 0)\n"
	       "  --embedding-norm 0|1    a norm after the embedding, as BLOOM (default: the preset's,\n"
	       "                          else 0)\n"
	       "  --experts N             mixture of experts: routed experts per MoE layer (default: the\n"
	       "                          preset's, else 0: dense)\n"
	       "  --top-k N               routed experts per token\n"
	       "  --expert-ffn N          each routed expert's MLP width\n"
	       "  --shared-experts N      experts every token passes through (default: 0)\n"
	       "  --shared-ffn N          each shared expert's width (default: --expert-ffn)\n"
	       "  --dense-layers N        the first N layers keep a dense MLP of --ffn (default: 0)\n"
	       "  --router-pre-softmax 0|1  1: the chosen experts weigh their softmax over every\n"
	       "                          expert as is; 0: renormalised over the chosen (default)\n"
	       "  --mtp-layers N          multi-token prediction modules (default: 0)\n"
	       "  --kv-lora-rank N        multi-head latent attention: the key/value latent (default: 0, none)\n"
	       "  --q-lora-rank N         MLA's query latent (default: 0, full rank)\n"
	       "  --qk-nope-dim N, --qk-rope-dim N, --v-head-dim N   MLA's head widths\n"
	       "cluster:\n"
	       "  --gpu NAME              GPU from gpus.csv (see `gpuplan gpus`)\n"
	       "  --gpus N                GPUs in all (required)\n"
	       "  --gpus-per-node N       (default: %d, or --gpus when fewer)\n"
	       "  --intra-node-gbps X     per GPU, one direction, Gb/s (default: the GPU's link)\n"
	       "  --inter-node-gbps X     per node, one direction, Gb/s (default: 200)\n"
	       "  --nvlink-domain N       GPUs per NVLink domain, e.g. 72 for an NVL72 rack (default:\n"
	       "                          the GPU's, else the node)\n"
	       "parallel configuration:\n"
	       "  --tp N                  tensor parallel (default: 1)\n"
	       "  --pp N                  pipeline parallel (default: 1)\n"
	       "  --dp N                  data parallel (default: gpus / (tp x pp x cp))\n"
	       "  --cp N                  context parallel (default: 1)\n"
	       "  --mbs N                 micro-batch, sequences (default: 1)\n"
	       "  --gbs N                 global batch, sequences (default: the preset's, else\n"
	       "                          about 4 Mi tokens, as plan assumes; 64 fine-tuning)\n"
	       "  --zero 0..3             ZeRO stage; FSDP is 3 (default: 0)\n"
	       "  --recompute none|selective|full   activation recomputation (default: none)\n"
	       "  --recompute-modules M[,M...]   with selective, these recomputed too: layernorm,\n"
	       "                          mla_up_proj, moe_act, mlp (default: the attention core\n"
	       "                          alone)\n"
	       "  --interleave V          virtual pipeline stages per GPU (default: 1)\n"
	       "  --pp-last-layers N      layers of the last virtual stage, beside the loss and\n"
	       "                          MTP modules; the other stages split the rest evenly\n"
	       "                          (default: 0, the simulator's split)\n"
	       "  --seq-parallel          Megatron sequence parallelism (default: off)\n"
	       "  --no-flash              attention without flash attention (default: flash)\n"
	       "  --attn-kernel auto|fa1|fa2|fa3|cudnn   the flash-attention kernel: auto is\n"
	       "                          what Transformer Engine picks (cuDNN on Hopper and\n"
	       "                          newer, FlashAttention-2 elsewhere) (default: auto)\n"
	       "  --tp-overlap            TP collectives overlap the GEMMs, as NeMo/Transformer\n"
	       "                          Engine's userbuffers do (default: off)\n"
	       "  --zero3-gather block|tensor_sync   ZeRO-3 gathers: one prefetched collective\n"
	       "                          per block (FSDP) or one synchronous collective per\n"
	       "                          tensor (DeepSpeed 2021) (default: block)\n"
	       "  --zero2-reduce step|micro_batch   ZeRO-2 reduce-scatters the step's summed\n"
	       "                          gradients once (FSDP) or every micro-batch's\n"
	       "                          (DeepSpeed, gpuplan execute) (default: step)\n"
	       "  --dp-overlap all|sums|none   DP collectives under compute: the gradient\n"
	       "                          sums and ZeRO-1/2's weight gather (Megatron-LM as\n"
	       "                          export writes it, FSDP), the sums only (DeepSpeed\n"
	       "                          stage 1/2), or nothing (DeepSpeed stage 0) (default: all)\n"
	       "  --fp8-param-gather      with fp8 or mxfp8, ZeRO's weight gathers move the\n"
	       "                          weights' FP8 copy, as Megatron-LM's --fp8-param-gather\n"
	       "                          (default: off, bf16)\n"
	       "  --pp-send split|whole   pipeline stages pass activations split over the TP\n"
	       "                          ranks, send and receive as one exchange (Megatron-LM),\n"
	       "                          or whole from every TP rank, send then receive\n"
	       "                          (DeepSpeed's pipeline engine) (default: split)\n"
	       "  --ep N                  expert parallel: ranks sharing the routed experts, folded over\n"
	       "                          tp x cp x dp (default: 1)\n"
	       "  --etp N                 expert tensor parallel: ranks splitting each expert (default: 1)\n"
	       "  --moe-imbalance X       routed tokens the busiest EP rank gets over the mean, >= 1\n"
	       "                          (default: 1, balanced)\n"
	       "  --ep-dispatcher alltoall|flex   NCCL's all-to-all, every routed copy on its own, or\n"
	       "                          DeepEP/HybridEP's, a token once per NVLink domain of its\n"
	       "                          experts (Megatron-Core's --moe-token-dispatcher-type)\n"
	       "                          (default: alltoall)\n"
	       "  --ep-overlap            EP all-to-alls run under another micro-batch's compute, as\n"
	       "                          Megatron-Core's --overlap-moe-expert-parallel-comm (default: off)\n"
	       "  --moe-gemm auto|loop|device   the routed experts' GEMMs: one per local expert,\n"
	       "                          launched from the host (Transformer Engine 2.14 and\n"
	       "                          older), or one grouped kernel on the device; auto is\n"
	       "                          device for bf16, mxfp8 and nvfp4 on Blackwell (default: auto)\n"
	       "  --stack te2.14|te2.16   the release of Megatron-Core and Transformer Engine the\n"
	       "                          plan assumes, setting the defaults of --moe-gemm,\n"
	       "                          --ep-dispatcher and --ep-overlap together: te2.14 is TE\n"
	       "                          2.14.1 or older (Megatron-Bridge 26.02 to 26.04.01: loop,\n"
	       "                          flex, no overlap), te2.16 newer (26.06 on: auto, flex,\n"
	       "                          overlap where Megatron-Core allows it); flex on Hopper\n"
	       "                          and Blackwell only (default: none, the flags as given)\n"
	       "  --precision bf16|fp8|mxfp8|nvfp4   the linear layers' GEMM precision; attention,\n"
	       "                          router and LM head stay bf16 (default: bf16)\n"
	       "  --calibration FILE      this machine's measured figures, from `gpuplan calibrate`\n"
	       "                          (default: the user's file for the GPU, if any; --gpu cpu\n"
	       "                          is the executor's CPU ranks)\n"
	       "pipeline schedule (event-driven replay):\n"
	       "  --timeline FILE         write the replayed step as Chrome trace-event JSON\n"
	       "                          (open in Perfetto or chrome://tracing; default none)\n"
	       "  --gantt                 print the replayed step as a text timeline (default off)\n"
	       "  --split-backward        replay with the backward split into input- and\n"
	       "                          weight-gradient parts (zero-bubble ZB-H1; default: off)\n"
	       , DEFAULT_VOCAB, DEFAULT_SEQ, DEFAULT_GPUS_PER_NODE);
	ft_cli_help(stdout, 0);
	printf("job and output:\n"
	       "  --tokens N              tokens to train, e.g. 1T (time to train; default none)\n"
	       "  --usd-per-gpu-hour X    price (cost to train; needs --tokens; replaces a plan's offering)\n"
	       "  --json                  print one JSON object instead of the table (default off)\n"
	       "  -o, --output FILE       write the plan file (schema gpuplan.plan/1; default none)\n"
	       "  --plot FILE             draw where the step time and the memory go to\n"
	       "                          FILE.png or FILE.svg with gnuplot (default none;\n"
	       "                          without gnuplot the data and a script are written\n"
	       "                          as FILE.csv and FILE.gp)\n"
	       "  -q, --quiet             no notes or warnings on stderr (default off)\n"
	       "  -h, --help              this help\n");
}

enum opt_id {
	O_MODEL = 256, O_LAYERS, O_HIDDEN, O_HEADS, O_KV_HEADS, O_FFN, O_VOCAB, O_SEQ,
	O_MLP, O_TIED, O_GPU, O_GPUS, O_GPN, O_INTRA, O_INTER, O_TP, O_PP, O_DP, O_CP,
	O_MBS, O_GBS, O_ZERO, O_RECOMPUTE, O_INTERLEAVE, O_SP, O_NO_FLASH, O_PRECISION,
	O_TOKENS, O_USD, O_JSON, O_TIMELINE, O_GANTT, O_SPLIT_BWD, O_PLOT, O_CALIBRATION,
	O_TP_OVERLAP, O_ZERO3_GATHER, O_ZERO2_REDUCE, O_DP_OVERLAP, O_PP_SEND, O_FP8_GATHER,
	O_ATTN_KERNEL,
	O_EP, O_ETP, O_IMBALANCE, O_EP_OVERLAP, O_NVLINK, O_EP_DISPATCHER, O_MOE_GEMM, O_STACK,
	O_WINDOW, O_PP_LAST, O_RC_MODULES,
	/* sim_model_fields' flags: the model's integer fields beyond the
	 * basic shape, O_SHAPE + index */
	O_FT, O_FT_LAST = O_FT + FT_CLI_N - 1,
	O_SHAPE, O_END = O_SHAPE + SIM_MODEL_FIELDS
};

/* What the flags said; set[] marks the ones given. */
struct flags {
	unsigned char set[O_END - O_MODEL];
	const char *model, *gpu, *output;
	const char *timeline;  /* --timeline FILE */
	const char *plot;      /* --plot FILE */
	const char *calibration; /* --calibration FILE */
	int layers, hidden, heads, kv_heads, ffn, vocab, seq;
	enum sim_mlp mlp;
	int gpus, gpn;
	double intra_gbps, inter_gbps;
	int tp, pp, dp, cp, mbs, gbs, zero, interleave, pp_last;
	unsigned rc_modules;
	enum sim_recompute recompute;
	enum sim_precision precision;
	enum sim_zero3_gather zero3_gather;
	int zero2_every_micro_batch;
	enum sim_dp_overlap dp_overlap;
	int pp_send_whole;
	enum sim_attn_kernel attn_kernel;
	enum sim_moe_gemm moe_gemm;
	enum sim_stack stack;
	int shape[O_END - O_SHAPE];   /* sim_model_fields' values */
	int window;
	int ep, etp, nvlink_domain, ep_flex;
	double imbalance;
	double tokens, usd;
	int json;
	struct ft_cli ft;
};

#define SET(f, id) ((f)->set[(id) - O_MODEL])

static enum rc parse_flags(int argc, char **argv, struct flags *f, const char **plan_path,
			   int *helped)
{
	static const struct option base[] = {
		{ "model", required_argument, NULL, O_MODEL },
		{ "layers", required_argument, NULL, O_LAYERS },
		{ "hidden", required_argument, NULL, O_HIDDEN },
		{ "heads", required_argument, NULL, O_HEADS },
		{ "kv-heads", required_argument, NULL, O_KV_HEADS },
		{ "ffn", required_argument, NULL, O_FFN },
		{ "vocab", required_argument, NULL, O_VOCAB },
		{ "seq", required_argument, NULL, O_SEQ },
		{ "mlp", required_argument, NULL, O_MLP },
		{ "tied", no_argument, NULL, O_TIED },
		{ "gpu", required_argument, NULL, O_GPU },
		{ "gpus", required_argument, NULL, O_GPUS },
		{ "gpus-per-node", required_argument, NULL, O_GPN },
		{ "intra-node-gbps", required_argument, NULL, O_INTRA },
		{ "inter-node-gbps", required_argument, NULL, O_INTER },
		{ "tp", required_argument, NULL, O_TP },
		{ "pp", required_argument, NULL, O_PP },
		{ "dp", required_argument, NULL, O_DP },
		{ "cp", required_argument, NULL, O_CP },
		{ "mbs", required_argument, NULL, O_MBS },
		{ "gbs", required_argument, NULL, O_GBS },
		{ "zero", required_argument, NULL, O_ZERO },
		{ "recompute", required_argument, NULL, O_RECOMPUTE },
		{ "interleave", required_argument, NULL, O_INTERLEAVE },
		{ "pp-last-layers", required_argument, NULL, O_PP_LAST },
		{ "recompute-modules", required_argument, NULL, O_RC_MODULES },
		{ "seq-parallel", no_argument, NULL, O_SP },
		{ "tp-overlap", no_argument, NULL, O_TP_OVERLAP },
		{ "fp8-param-gather", no_argument, NULL, O_FP8_GATHER },
		{ "zero3-gather", required_argument, NULL, O_ZERO3_GATHER },
		{ "zero2-reduce", required_argument, NULL, O_ZERO2_REDUCE },
		{ "dp-overlap", required_argument, NULL, O_DP_OVERLAP },
		{ "pp-send", required_argument, NULL, O_PP_SEND },
		{ "no-flash", no_argument, NULL, O_NO_FLASH },
		{ "attn-kernel", required_argument, NULL, O_ATTN_KERNEL },
		{ "precision", required_argument, NULL, O_PRECISION },
		{ "ep", required_argument, NULL, O_EP },
		{ "etp", required_argument, NULL, O_ETP },
		{ "moe-imbalance", required_argument, NULL, O_IMBALANCE },
		{ "ep-overlap", no_argument, NULL, O_EP_OVERLAP },
		{ "moe-gemm", required_argument, NULL, O_MOE_GEMM },
		{ "stack", required_argument, NULL, O_STACK },
		{ "ep-dispatcher", required_argument, NULL, O_EP_DISPATCHER },
		{ "nvlink-domain", required_argument, NULL, O_NVLINK },
		{ "tokens", required_argument, NULL, O_TOKENS },
		{ "usd-per-gpu-hour", required_argument, NULL, O_USD },
		{ "json", no_argument, NULL, O_JSON },
		{ "timeline", required_argument, NULL, O_TIMELINE },
		{ "gantt", no_argument, NULL, O_GANTT },
		{ "split-backward", no_argument, NULL, O_SPLIT_BWD },
		{ "calibration", required_argument, NULL, O_CALIBRATION },
		{ "plot", required_argument, NULL, O_PLOT },
		{ "sliding-window", required_argument, NULL, O_WINDOW },
		FT_CLI_OPTIONS(O_FT),
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
	};
	struct option opts[GP_ARRAY_LEN(base) + SIM_MODEL_FIELDS + 1];
	enum rc rc = RC_OK;
	int c, v = 0;

	memcpy(opts, base, sizeof(base));
	cli_model_field_options(opts + GP_ARRAY_LEN(base), O_SHAPE);
	optind = 1;
	opterr = 0;
	while (rc == RC_OK && (c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
		if (c >= O_MODEL && c < O_END)
			SET(f, c) = 1;
		if (c >= O_SHAPE && c < O_END) {
			const struct sim_model_field *mf = &sim_model_fields[c - O_SHAPE];

			rc = cli_parse_int(mf->flag, optarg, 0, mf->max, &f->shape[c - O_SHAPE]);
			continue;
		}
		switch (c) {
		case O_MODEL: f->model = optarg; break;
		case O_LAYERS: rc = cli_parse_int("--layers", optarg, 1, SIM_MAX_LAYERS, &f->layers); break;
		case O_HIDDEN: rc = cli_parse_int("--hidden", optarg, 1, SIM_MAX_HIDDEN, &f->hidden); break;
		case O_HEADS: rc = cli_parse_int("--heads", optarg, 1, SIM_MAX_HEADS, &f->heads); break;
		case O_KV_HEADS: rc = cli_parse_int("--kv-heads", optarg, 1, SIM_MAX_HEADS, &f->kv_heads); break;
		case O_FFN: rc = cli_parse_int("--ffn", optarg, 1, SIM_MAX_FFN, &f->ffn); break;
		case O_VOCAB: rc = cli_parse_int("--vocab", optarg, 1, SIM_MAX_VOCAB, &f->vocab); break;
		case O_SEQ: rc = cli_parse_int("--seq", optarg, 1, SIM_MAX_SEQ, &f->seq); break;
		case O_MLP:
			rc = cli_parse_choice("--mlp", optarg, sim_mlp_names, 2, &v);
			f->mlp = (enum sim_mlp)v;
			break;
		case O_TIED: break;
		case O_GPU: f->gpu = optarg; break;
		case O_GPUS: rc = cli_parse_int("--gpus", optarg, 1, SIM_MAX_GPUS, &f->gpus); break;
		case O_GPN: rc = cli_parse_int("--gpus-per-node", optarg, 1, SIM_MAX_DEGREE, &f->gpn); break;
		case O_INTRA: rc = cli_parse_double("--intra-node-gbps", optarg, 1e-3, 1e6, &f->intra_gbps); break;
		case O_INTER: rc = cli_parse_double("--inter-node-gbps", optarg, 1e-3, PRICE_GBPS_MAX, &f->inter_gbps); break;
		case O_TP: rc = cli_parse_int("--tp", optarg, 1, SIM_MAX_DEGREE, &f->tp); break;
		case O_PP: rc = cli_parse_int("--pp", optarg, 1, SIM_MAX_DEGREE, &f->pp); break;
		case O_DP: rc = cli_parse_int("--dp", optarg, 1, SIM_MAX_DP, &f->dp); break;
		case O_CP: rc = cli_parse_int("--cp", optarg, 1, SIM_MAX_DEGREE, &f->cp); break;
		case O_MBS: rc = cli_parse_int("--mbs", optarg, 1, SIM_MAX_MBS, &f->mbs); break;
		case O_GBS: rc = cli_parse_int("--gbs", optarg, 1, SIM_MAX_GBS, &f->gbs); break;
		case O_ZERO: rc = cli_parse_int("--zero", optarg, 0, 3, &f->zero); break;
		case O_RECOMPUTE:
			rc = cli_parse_choice("--recompute", optarg, sim_recompute_names, 3, &v);
			f->recompute = (enum sim_recompute)v;
			break;
		case O_INTERLEAVE: rc = cli_parse_int("--interleave", optarg, 1, SIM_MAX_DEGREE, &f->interleave); break;
		case O_PP_LAST: rc = cli_parse_int("--pp-last-layers", optarg, 0, SIM_MAX_LAYERS, &f->pp_last); break;
		case O_RC_MODULES: rc = cli_parse_recompute_modules(optarg, &f->rc_modules); break;
		case O_SP: case O_NO_FLASH: case O_JSON: case O_TP_OVERLAP: case O_FP8_GATHER: break;
		case O_ZERO3_GATHER:
			rc = cli_parse_choice("--zero3-gather", optarg, sim_zero3_gather_names, 2, &v);
			f->zero3_gather = (enum sim_zero3_gather)v;
			break;
		case O_ZERO2_REDUCE:
			rc = cli_parse_choice("--zero2-reduce", optarg, sim_zero2_reduce_names, 2,
					      &f->zero2_every_micro_batch);
			break;
		case O_DP_OVERLAP:
			rc = cli_parse_choice("--dp-overlap", optarg, sim_dp_overlap_names, 3, &v);
			f->dp_overlap = (enum sim_dp_overlap)v;
			break;
		case O_PP_SEND:
			rc = cli_parse_choice("--pp-send", optarg, sim_pp_send_names, 2,
					      &f->pp_send_whole);
			break;
		case O_ATTN_KERNEL:
			rc = cli_parse_choice("--attn-kernel", optarg, sim_attn_kernel_names, 5, &v);
			f->attn_kernel = (enum sim_attn_kernel)v;
			break;
		case O_MOE_GEMM:
			rc = cli_parse_choice("--moe-gemm", optarg, sim_moe_gemm_names, 3, &v);
			f->moe_gemm = (enum sim_moe_gemm)v;
			break;
		case O_STACK:
			rc = cli_parse_choice("--stack", optarg, sim_stack_names + 1, 2, &v);
			f->stack = (enum sim_stack)(v + 1);
			break;
		case O_EP: rc = cli_parse_int("--ep", optarg, 1, SIM_MAX_DEGREE, &f->ep); break;
		case O_ETP: rc = cli_parse_int("--etp", optarg, 1, SIM_MAX_DEGREE, &f->etp); break;
		case O_IMBALANCE: rc = cli_parse_double("--moe-imbalance", optarg, 1, 1000, &f->imbalance); break;
		case O_EP_OVERLAP: break;
		case O_EP_DISPATCHER:
			rc = cli_parse_choice("--ep-dispatcher", optarg, sim_ep_dispatcher_names, 2,
					      &f->ep_flex);
			break;
		case O_NVLINK:
			rc = cli_parse_int("--nvlink-domain", optarg, 1, PRICE_MAX_NVLINK_DOMAIN,
					   &f->nvlink_domain);
			break;
		case O_WINDOW: rc = cli_parse_int("--sliding-window", optarg, 0, SIM_MAX_SEQ, &f->window); break;
		case O_PRECISION:
			rc = cli_parse_choice("--precision", optarg, sim_precision_names, 4, &v);
			f->precision = (enum sim_precision)v;
			break;
		case O_TOKENS: rc = cli_parse_count("--tokens", optarg, &f->tokens); break;
		case O_USD: rc = cli_parse_usd("--usd-per-gpu-hour", optarg, &f->usd); break;
		case O_TIMELINE: f->timeline = optarg; break;
		case O_CALIBRATION: f->calibration = optarg; break;
		case O_GANTT: case O_SPLIT_BWD: break;
		case O_PLOT: {
			enum plot_format pf;

			f->plot = optarg;
			rc = plot_check_path("--plot", optarg, &pf);
			break;
		}
		case 'o': f->output = optarg; break;
		case 'q': gp_log_quiet(1); break;
		default:
			if (c >= O_FT && c <= O_FT_LAST) {
				rc = ft_cli_parse(&f->ft, c - O_FT, optarg);
				break;
			}
			return cli_bad_option("simulate", optopt, argv[optind - 1]);
		case 'h': help(); *helped = 1; return RC_OK;
		}
	}
	if (rc != RC_OK)
		return rc;
	f->json = SET(f, O_JSON);
	if (optind < argc - 1) {
		gp_error("simulate: expected at most one plan file, found %d arguments",
			 argc - optind);
		return RC_USAGE;
	}
	*plan_path = optind < argc ? argv[optind] : NULL;
	return RC_OK;
}

/* Fills p->model from --model or the custom-shape flags (over what a plan
 * file gave, if any). */
static enum rc build_model(const struct flags *f, int from_plan, struct sim_plan *p)
{
	struct sim_model *m = &p->model;
	int custom = SET(f, O_LAYERS) || SET(f, O_HIDDEN) || SET(f, O_HEADS);

	if (f->model && custom) {
		gp_error("--model: expected either a preset or --layers/--hidden/--heads, found both");
		return RC_USAGE;
	}
	if (f->model) {
		struct sim_model_table t;
		const struct sim_model *found;
		char path[4096];
		enum rc rc;

		snprintf(path, sizeof(path), "%s/models.csv", cli_data_dir());
		rc = sim_model_table_load(&t, path);
		if (rc != RC_OK)
			return rc;
		found = cli_model_find(&t, "--model", path, f->model,
				       "run 'gpuplan models' for the list, or give "
				       "--layers/--hidden/--heads");
		if (!found) {
			sim_model_table_release(&t);
			return RC_USAGE;
		}
		*m = *found;
		sim_model_table_release(&t);
	} else if (custom) {
		if (!SET(f, O_LAYERS) || !SET(f, O_HIDDEN) || !SET(f, O_HEADS)) {
			gp_error("simulate: a custom model needs --layers, --hidden and --heads, found %s%s%s missing",
				 SET(f, O_LAYERS) ? "" : "--layers ", SET(f, O_HIDDEN) ? "" : "--hidden ",
				 SET(f, O_HEADS) ? "" : "--heads");
			return RC_USAGE;
		}
		memset(m, 0, sizeof(*m));
		snprintf(m->name, sizeof(m->name), "custom");
		m->layers = f->layers;
		m->hidden = f->hidden;
		m->heads = f->heads;
		m->kv_heads = f->heads;
		if (f->hidden > INT_MAX / 4 && !SET(f, O_FFN)) {
			gp_error("--hidden: expected at most %d without --ffn (the MLP is 4 x hidden), found %d",
				 INT_MAX / 4, f->hidden);
			return RC_USAGE;
		}
		m->ffn = f->hidden <= INT_MAX / 4 ? 4 * f->hidden : 0;
		m->vocab = DEFAULT_VOCAB;
		m->seq = DEFAULT_SEQ;
		m->mlp = SIM_MLP_GELU;
	} else if (!from_plan) {
		gp_error("simulate: expected --model NAME or --layers/--hidden/--heads, found neither");
		gp_hint("gpuplan simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 128");
		return RC_USAGE;
	}
	if (SET(f, O_KV_HEADS))
		m->kv_heads = f->kv_heads;
	if (SET(f, O_FFN))
		m->ffn = f->ffn;
	if (SET(f, O_VOCAB))
		m->vocab = f->vocab;
	if (SET(f, O_SEQ))
		m->seq = f->seq;
	if (SET(f, O_MLP))
		m->mlp = f->mlp;
	if (SET(f, O_TIED))
		m->tied_embeddings = 1;
	if (SET(f, O_WINDOW))
		m->window = f->window;
	for (int i = 0; i < SIM_MODEL_FIELDS; i++)
		if (SET(f, O_SHAPE + i))
			*sim_model_field(m, &sim_model_fields[i]) = f->shape[i];
	return RC_OK;
}

static enum rc build_cluster(const struct flags *f, int from_plan, struct sim_plan *p)
{
	struct sim_cluster *c = &p->cluster;

	if (f->gpu) {
		struct price_catalog cat;
		struct price_opts o;
		const struct price_gpu *g;
		enum rc rc;

		price_opts_init(&o);
		o.data_dir = cli_data_dir();
		rc = price_catalog_load(&cat, &o);
		if (rc != RC_OK)
			return rc;
		g = gp_streq_nocase(f->gpu, "cpu") ? cli_cpu_gpu() : price_gpu_resolve(&cat, "--gpu", f->gpu);
		if (!g) {
			price_catalog_release(&cat);
			return RC_USAGE;
		}
		c->gpu = *g;
		/* the GPU's NVLink domain (an NVL72 rack's 72), else the node */
		c->nvlink_domain = g->nvlink_domain;
		gp_strlcpy(p->catalog_digest, cat.digest, sizeof(p->catalog_digest));
		price_catalog_release(&cat);
	} else if (!from_plan) {
		gp_error("simulate: expected --gpu NAME, found none");
		return RC_USAGE;
	}
	if (!from_plan && !SET(f, O_GPUS)) {
		gp_error("simulate: expected --gpus N, found none");
		return RC_USAGE;
	}
	if (SET(f, O_GPN))
		c->gpus_per_node = f->gpn;
	else if (!from_plan)
		c->gpus_per_node = f->gpus < DEFAULT_GPUS_PER_NODE ? f->gpus : DEFAULT_GPUS_PER_NODE;
	if (SET(f, O_INTRA))
		c->intra_bytes_per_s = f->intra_gbps * 1e9 / 8;
	if (SET(f, O_INTER))
		c->inter_bytes_per_s = f->inter_gbps * 1e9 / 8;
	if (SET(f, O_NVLINK)) {
		if (f->nvlink_domain < c->gpus_per_node) {
			gp_error("--nvlink-domain: expected at least the %d GPUs of a node, found %d",
				 c->gpus_per_node, f->nvlink_domain);
			return RC_USAGE;
		}
		c->nvlink_domain = f->nvlink_domain;
	}
	return RC_OK;
}

static enum rc build_parallel(const struct flags *f, int from_plan, struct sim_plan *p)
{
	struct sim_parallel *q = &p->par;
	int gpus, per;

	if (!from_plan) {
		sim_parallel_init(q);
		q->gbs = p->model.gbs;
	}
	if (SET(f, O_TP)) q->tp = f->tp;
	if (SET(f, O_PP)) q->pp = f->pp;
	if (SET(f, O_CP)) q->cp = f->cp;
	if (SET(f, O_MBS)) q->mbs = f->mbs;
	if (SET(f, O_GBS)) q->gbs = f->gbs;
	if (SET(f, O_ZERO)) q->zero = f->zero;
	if (SET(f, O_RECOMPUTE)) q->recompute = f->recompute;
	if (SET(f, O_INTERLEAVE)) q->interleave = f->interleave;
	if (SET(f, O_PP_LAST)) q->pp_last_layers = f->pp_last;
	if (SET(f, O_RC_MODULES)) q->recompute_modules = f->rc_modules;
	if (SET(f, O_SP)) q->seq_parallel = 1;
	if (SET(f, O_NO_FLASH)) q->flash = 0;
	if (SET(f, O_ATTN_KERNEL)) q->attn_kernel = f->attn_kernel;
	if (SET(f, O_MOE_GEMM)) q->moe_gemm = f->moe_gemm;
	if (SET(f, O_TP_OVERLAP)) q->tp_overlap = 1;
	if (SET(f, O_FP8_GATHER)) q->fp8_param_gather = 1;
	if (SET(f, O_ZERO3_GATHER)) q->zero3_gather = f->zero3_gather;
	if (SET(f, O_ZERO2_REDUCE)) q->zero2_every_micro_batch = f->zero2_every_micro_batch;
	if (SET(f, O_DP_OVERLAP)) q->dp_overlap = f->dp_overlap;
	if (SET(f, O_PP_SEND)) q->pp_send_whole = f->pp_send_whole;
	if (SET(f, O_PRECISION)) q->precision = f->precision;
	if (SET(f, O_EP)) q->ep = f->ep;
	if (SET(f, O_ETP)) q->etp = f->etp;
	if (SET(f, O_IMBALANCE)) q->moe_imbalance = f->imbalance;
	/* a release sets the dispatcher and overlap it runs; the flags
	 * given beside it override them */
	if (SET(f, O_STACK)) {
		q->stack = f->stack;
		sim_stack_apply(&p->model, sim_gpu_arch(&p->cluster.gpu), q);
	}
	if (SET(f, O_EP_OVERLAP)) q->ep_overlap = 1;
	if (SET(f, O_EP_DISPATCHER)) q->ep_flex = f->ep_flex;

	/* each degree fits an int, their product need not */
	if ((double)q->tp * q->pp * q->cp *
	    (SET(f, O_DP) ? f->dp : SET(f, O_GPUS) || !from_plan ? 1 : q->dp) > SIM_MAX_GPUS) {
		gp_error("simulate: gpus: expected tp x pp x dp x cp of at most %d, found %.0f",
			 SIM_MAX_GPUS, (double)q->tp * q->pp * q->cp *
			 (SET(f, O_DP) ? f->dp : SET(f, O_GPUS) || !from_plan ? 1 : q->dp));
		return RC_USAGE;
	}
	per = q->tp * q->pp * q->cp;
	gpus = SET(f, O_GPUS) ? f->gpus : per * q->dp;
	if (SET(f, O_DP)) {
		q->dp = f->dp;
		if (SET(f, O_GPUS) && per * q->dp != gpus) {
			gp_error("--gpus: expected tp x pp x dp x cp = %d, found %d", per * q->dp, gpus);
			return RC_USAGE;
		}
	} else if (SET(f, O_GPUS) || !from_plan) {
		if (gpus % per) {
			gp_error("--gpus: expected a multiple of tp x pp x cp = %d, found %d", per, gpus);
			return RC_USAGE;
		}
		q->dp = gpus / per;
	}
	/* a fine-tuning job's batch is plan's (SIM_FT_DEFAULT_GBS) */
	if (q->gbs < 1)
		q->gbs = (f->ft.method_set ? f->ft.ft.method : q->ft.method) != SIM_FT_NONE
			 ? SIM_FT_DEFAULT_GBS : sim_model_gbs(&p->model);
	p->nodes = (q->tp * q->pp * q->dp * q->cp + p->cluster.gpus_per_node - 1)
		   / p->cluster.gpus_per_node;
	return RC_OK;
}

/* ---- event-driven replay of the pipeline schedule (sim_event.h) ---- */

#define GANTT_COLUMNS 100

/* Replays the plan's schedule; prints the replayed figures beside the
 * analytic ones (when there is a pipeline or they differ) unless json,
 * writes --timeline and prints --gantt.  A replay that cannot run is a
 * warning, unless --timeline or --gantt asked for it. */
static enum rc replay(const struct sim_plan *p, const struct flags *f, int json)
{
	struct sim_event_result e;
	struct sched s;
	struct sim_event_timeline tl;
	int want = f->timeline || SET(f, O_GANTT);
	double a = p->result.step_time_s, diff;
	char why[256], b1[32], b2[32];
	enum rc rc;

	rc = sim_event_simulate(&p->model, &p->par, &p->cluster, SET(f, O_SPLIT_BWD), &e, &s,
				want ? &tl : NULL, why, sizeof(why));
	if (rc != RC_OK) {
		if (!want) {
			gp_warn("simulate: no event-driven replay: %s", why);
			return RC_OK;
		}
		gp_error("%s: %s", f->timeline ? "--timeline" : "--gantt", why);
		return rc;
	}
	diff = a > 0 ? (e.step_time_s - a) / a : 0;
	if (!json && (p->par.pp > 1 || fabs(diff) > 1e-3 || want)) {
		printf("\npipeline  %s%s, %d stage%s x %d chunk%s, %d micro-batch%s "
		       "(event-driven replay)\n",
		       sched_kind_name(s.kind), s.split_backward ? " with B/W split" : "",
		       s.p, s.p == 1 ? "" : "s", s.v, s.v == 1 ? "" : "s", s.m, s.m == 1 ? "" : "es");
		printf("  %-18s %12s", "step time", unit_fmt_duration(b1, sizeof(b1), e.step_time_s));
		if (fabs(diff) > 1e-3)
			printf("  (analytic %s, %+.1f%%)\n", unit_fmt_duration(b2, sizeof(b2), a),
			       100 * diff);
		else
			printf("  (analytic agrees)\n");
		simulate_print_part("pp bubble", e.pipeline_s - e.busy_max_s, e.step_time_s);
		simulate_print_part("pp comm exposed", e.p2p_exposed_s, e.step_time_s);
		simulate_print_part("dp comm exposed", e.dp_exposed_s, e.step_time_s);
		printf("  %-18s", "peak in flight");
		for (int i = 0; i < e.p && i < 32; i++)
			printf(" %d", e.stage[i].peak_inflight);
		printf("%s (%s per stage)\n", e.p > 32 ? " ..." : "",
		       s.v > 1 ? "micro-batch chunks" : "micro-batches");
	}
	if (SET(f, O_GANTT)) {
		char *g = sim_event_gantt(&s, &tl, GANTT_COLUMNS);

		if (s.m * s.v > GANTT_COLUMNS / 4)
			gp_warn("--gantt: %d micro-batch chunks in %d columns; ops narrower than a "
				"column do not show", s.m * s.v, GANTT_COLUMNS);
		printf("\n%s", g);
		free(g);
	}
	rc = RC_OK;
	if (f->timeline) {
		rc = sim_trace_write(f->timeline, &s, &tl);
		if (rc == RC_OK)
			gp_info("wrote %s (%ld operations)", f->timeline, e.ops);
	}
	if (want)
		sim_event_timeline_release(&tl);
	sched_release(&s);
	sim_event_result_release(&e);
	return rc;
}

enum rc cmd_simulate(int argc, char **argv)
{
	struct flags f;
	struct sim_plan p;
	struct plan_interrupt ip;
	const char *plan_path = NULL;
	char why[256];
	enum rc rc;
	int gpus, helped = 0;
	double planned_s = 0, planned_usd = 0;

	memset(&f, 0, sizeof(f));
	memset(&p, 0, sizeof(p));
	rc = parse_flags(argc, argv, &f, &plan_path, &helped);
	if (rc != RC_OK || helped)
		return rc;
	if (plan_path) {
		rc = sim_plan_read(plan_path, &p);
		if (rc != RC_OK)
			return rc;
	}
	if ((rc = build_model(&f, plan_path != NULL, &p)) != RC_OK
	    || (rc = build_cluster(&f, plan_path != NULL, &p)) != RC_OK
	    || (rc = build_parallel(&f, plan_path != NULL, &p)) != RC_OK
	    || (rc = cli_calibration_plan(&p, f.calibration)) != RC_OK)
		return rc;
	/* A network no one stated is a figure assumed: recorded in the plan
	 * and the JSON, and said below (plan never clusters such an
	 * offering; simulate is a what-if). */
	if (!(p.cluster.inter_bytes_per_s > 0) &&
	    (long)p.par.tp * p.par.pp * p.par.dp * p.par.cp > p.cluster.gpus_per_node) {
		snprintf(why, sizeof(why), "cluster: no inter-node bandwidth stated "
			 "(--inter-node-gbps): %.0f Gb/s a node assumed",
			 SIM_DEFAULT_INTER_BYTES_PER_S * 8 / 1e9);
		sim_plan_assume(&p, "cluster.inter_bytes_per_s", SIM_DEFAULT_INTER_BYTES_PER_S, why);
	} else {
		sim_plan_unassume(&p, "cluster.inter_bytes_per_s");
	}
	/* the "cpu" device is the executor's CPU ranks: priced as they run */
	if (gp_streq_nocase(p.cluster.gpu.name, "cpu"))
		exec_price_parallel("cpu", EXEC_PRECISION_FP32, &p.par);
	if (f.ft.offload_set == 2) {
		gp_error("--offload: expected none, cpu or nvme, found 'auto' (plan searches it)");
		return RC_USAGE;
	}
	if ((rc = ft_cli_apply(&f.ft, SET(&f, O_TOKENS), &p.tokens, &p.par.ft,
			       &p.cluster.host)) != RC_OK)
		return rc;
	/* the loss of the trainer that runs the method, as plan prices it;
	 * a plan's own unless --finetune changes the method */
	if (f.ft.method_set || !plan_path)
		p.par.loss = plan_trainer_loss(&p.par.ft);
	if (f.ft.epochs > 0) {
		p.epochs = f.ft.epochs;
		p.dataset_tokens = f.ft.dataset_tokens;
	} else if (SET(&f, O_TOKENS)) {
		p.epochs = p.dataset_tokens = 0;
	}
	if (SET(&f, O_TOKENS))
		p.tokens = f.tokens;
	else if (f.ft.epochs > 0) {
		planned_s = planned_usd = 0;
	} else {
		planned_s = p.time_to_train_s;
		planned_usd = p.cost_usd;
	}
	/* A price of one's own replaces the offering's: the offering and its
	 * purchase option no longer say what the hours cost, so neither the
	 * output nor a written plan names them. */
	if (SET(&f, O_USD)) {
		planned_s = planned_usd = 0;
		p.usd_per_gpu_hour = f.usd;
		memset(&p.offering, 0, sizeof(p.offering));
		p.purchase = PRICE_PURCHASE_ON_DEMAND;
		p.spot = 0;
	}
	if (p.usd_per_gpu_hour > 0 && !(p.tokens > 0)) {
		gp_error("--usd-per-gpu-hour: expected --tokens N as well, to price a training run");
		return RC_USAGE;
	}
	if (sim_check(&p.model, &p.par, &p.cluster, why, sizeof(why)) != RC_OK) {
		gp_error("simulate: %s", why);
		return RC_USAGE;
	}
	if (!plan_path && !SET(&f, O_GBS) && p.model.gbs < 1) {
		snprintf(why, sizeof(why), "gbs %d sequences of %d (about 4 Mi tokens, as plan "
			 "assumes): the model states no batch; --gbs sets one", p.par.gbs,
			 p.model.seq);
		sim_plan_assume(&p, "parallel.gbs", p.par.gbs, why);
	} else if (SET(&f, O_GBS)) {
		sim_plan_unassume(&p, "parallel.gbs");
	}
	/* every figure assumed, a plan file's too, said once the layout
	 * stands, so that a bad one gets one line */
	for (int i = 0; i < p.n_assumptions; i++)
		gp_info("%s", p.assumptions[i].why);
	sim_step(&p.model, &p.par, &p.cluster, &p.result);
	gpus = p.par.tp * p.par.pp * p.par.dp * p.par.cp;
	p.time_to_train_s = sim_time_to_train_s(&p.result, p.tokens);
	p.cost_usd = p.time_to_train_s / 3600.0 * gpus * p.usd_per_gpu_hour;
	simulate_fill_interrupts(&p, gpus, &ip);

	gp_strlcpy(p.command, cli_command_line(), sizeof(p.command));
	if (f.output && (rc = sim_plan_write(f.output, &p)) != RC_OK)
		return rc;
	if (f.json) {
		char *s = sim_prediction_to_json(&p);

		puts(s);
		free(s);
	} else {
		simulate_print_table(&p, &ip, planned_s, planned_usd);
	}
	if ((rc = replay(&p, &f, f.json)) != RC_OK)
		return rc;
	if (f.output)
		gp_info("wrote %s", f.output);
	if (f.plot) {
		fflush(stdout);
		return plot_breakdown_chart(&p, "--plot", f.plot);
	}
	return RC_OK;
}
