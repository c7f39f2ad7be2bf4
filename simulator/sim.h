/*
 * sim.h - model specs, parallel configurations and the analytic step-time
 * and memory model of GPT-style decoder training.
 *
 * sim_step() is the planner's hot path: it allocates nothing, reads only
 * its arguments and fills a struct sim_result.  Every prediction carries a
 * breakdown (where the step time goes, where the memory goes).
 *
 * Its files call one way, bottom up; a file includes only its own header
 * and those of files below it (X.h and X_internal.h are X.c's; this one
 * and sim_const.h are the folder's), and tests/layers checks both:
 *   sim_const.h (the constants and their sources), sim_names.c (enum
 *   names) < sim_cost.c (a kernel's, a GEMM's, attention's time; the
 *   bytes of training states), sim_comm.c (collectives), sim_shape.c
 *   (counts, stage cuts), sched.c < sim_finetune.c < sim_memory.c,
 *   sim_layer.c (a layer's time) < sim_check.c (defaults, checks), sim.c
 *   (the step)
 *   < sim_event.c (the replay), sim_models.c (presets)
 *   < sim_json.c, sim_trace_json.c (files).
 */
#ifndef GPUPLAN_SIM_H
#define GPUPLAN_SIM_H

#include <stddef.h>

#include "common.h"
#include "price.h"
#include "sim_const.h"

enum sim_mlp { SIM_MLP_GELU, SIM_MLP_SWIGLU };
/* How a model encodes positions: rotary (Su et al. 2021), a learned
 * absolute table of seq x hidden (GPT-2/3), or attention biases (ALiBi,
 * Press et al. 2022; no parameters). */
enum sim_pos { SIM_POS_ROPE, SIM_POS_LEARNED, SIM_POS_ALIBI };
/* How a RoPE model rescales its rotary frequencies for a longer context,
 * as its config.json's rope_scaling names it (sim_rope_scaling_names):
 * none (null), linear position interpolation, Llama 3.1's "llama3"
 * per-band scaling, or YaRN (Peng et al. 2023), whose attention factor
 * multiplies cos and sin (sim_rope_attn_factor). */
enum sim_rope_scaling { SIM_ROPE_NONE, SIM_ROPE_LINEAR, SIM_ROPE_LLAMA3, SIM_ROPE_YARN };
/* RMSNorm (Zhang and Sennrich 2019): a weight vector; LayerNorm (Ba et
 * al. 2016) as Megatron-LM builds it: a weight and a bias vector. */
enum sim_norm { SIM_NORM_RMSNORM, SIM_NORM_LAYERNORM };
enum sim_recompute { SIM_RECOMPUTE_NONE, SIM_RECOMPUTE_SELECTIVE, SIM_RECOMPUTE_FULL };
/* Modules selective recomputation redoes in the backward instead of
 * keeping their activations, beside the attention core (Megatron-Core
 * --recompute-granularity selective --recompute-modules, a bit each):
 * the norms' outputs, MLA's up-projections (queries, keys and values
 * rebuilt from the latents), the experts' activation function, the dense
 * MLPs whole. */
enum sim_recompute_module {
	SIM_RECOMPUTE_LAYERNORM = 1 << 0,
	SIM_RECOMPUTE_MLA_UP_PROJ = 1 << 1,
	SIM_RECOMPUTE_MOE_ACT = 1 << 2,
	SIM_RECOMPUTE_MLP = 1 << 3
};
#define SIM_RECOMPUTE_MODULES 4
/* The linear layers' GEMM precision: bf16; fp8 with a scale per tensor
 * (Transformer Engine's delayed or current scaling); MXFP8 and NVFP4,
 * block-scaled (OCP Microscaling; NVIDIA Blackwell). */
enum sim_precision { SIM_PRECISION_BF16, SIM_PRECISION_FP8, SIM_PRECISION_MXFP8,
		     SIM_PRECISION_NVFP4 };
/* How a ZeRO-3 implementation gathers weights and scatters gradients. */
enum sim_zero3_gather {
	/* One collective per transformer block on a flat buffer, the next
	 * block's gather prefetched under this block's compute (PyTorch
	 * FSDP; DeepSpeed since its coalesced, prefetched gathers). */
	SIM_ZERO3_BLOCK,
	/* One collective per parameter tensor, each finished before the
	 * compute that needs it starts (DeepSpeed's stage 3 as released in
	 * 2021, the one Narayanan et al. SC'21 Table 2 compares with). */
	SIM_ZERO3_TENSOR_SYNC
};
/* Which data-parallel collectives the trainer runs under its compute. */
enum sim_dp_overlap {
	/* The gradient sums under the backward (all but the last bucket),
	 * and ZeRO-1/2's gather of the updated weights likewise: Megatron-LM
	 * with --overlap-grad-reduce --overlap-param-gather (what gpuplan
	 * export writes), PyTorch DDP and FSDP. */
	SIM_DP_OVERLAP_ALL,
	/* The sums as above, but ZeRO-1/2's gather waits at the end of the
	 * optimizer step: DeepSpeed's stages 1 and 2 (all_gather_dp_groups
	 * at the end of step(), deepspeed/runtime/zero/stage_1_and_2.py),
	 * the executor's CUDA trainer. */
	SIM_DP_OVERLAP_SUMS,
	/* Nothing under compute: gradients reduced after the backward and
	 * ZeRO-3's weights gathered when needed: DeepSpeed without ZeRO
	 * (allreduce_gradients after loss.backward(), runtime/engine.py),
	 * the executor's CPU trainer. */
	SIM_DP_OVERLAP_NONE
};

/* Which fused attention kernel runs the attention core when flash is on:
 * a kernel generation, each with its own published speed per GPU
 * architecture (simulator/sim_internal.h). */
enum sim_attn_kernel {
	/* What a current framework picks on the GPU: Transformer Engine's
	 * cuDNN attention on Hopper and newer, FlashAttention-2 elsewhere
	 * ("Transformer Engine prefers cuDNN flash attention on Hopper+
	 * architectures, and Tri Dao flash attention on Ampere", NeMo
	 * Framework docs, memory_optimizations.rst). */
	SIM_ATTN_AUTO,
	/* FlashAttention (v1, Dao et al. 2022): 2022 to mid-2023 stacks. */
	SIM_ATTN_FA1,
	/* FlashAttention-2 (Dao 2023): PyTorch's SDPA, flash-attn 2.x. */
	SIM_ATTN_FA2,
	/* FlashAttention-3 (Shah et al. 2024): Hopper only; FA2 elsewhere. */
	SIM_ATTN_FA3,
	/* cuDNN's fused flash attention (Transformer Engine's FusedAttention):
	 * on Ampere and older, FA2's speed. */
	SIM_ATTN_CUDNN
};

/* How the routed experts' GEMMs run: a kernel generation of Transformer
 * Engine's GroupedLinear, each with its own host cost (sim_internal.h,
 * SIM_HOST_MOE_LAYER_S). */
enum sim_moe_gemm {
	/* What a current framework picks: SIM_MOE_GEMM_DEVICE where it
	 * exists (bf16 and MXFP8 on Blackwell), SIM_MOE_GEMM_LOOP elsewhere. */
	SIM_MOE_GEMM_AUTO,
	/* One GEMM per local expert, each launched from the host with the
	 * quantization of its operands, after the host has read the
	 * experts' token counts from the GPU (GroupedLinear takes them as a
	 * host list, m_splits), so that the host cannot run ahead of the
	 * GPU through the experts: Megatron-Core on Transformer Engine 2.14
	 * and older (Megatron-Bridge containers to 26.04.01, TE 2.14.1). */
	SIM_MOE_GEMM_LOOP,
	/* One grouped kernel that reads the counts on the device, safe to
	 * capture in a CUDA graph: TE's bf16 and MXFP8 grouped GEMM "with
	 * on-device group sizes" (TE 2.14 release notes, #2748, #2669), made
	 * graph-safe in GroupedLinear (#2923), in Megatron-Bridge from 26.06
	 * (TE at 4220403e, May 2026). */
	SIM_MOE_GEMM_DEVICE
};

/* The software generation a plan assumes: which expert GEMM, token
 * dispatcher and EP overlap the framework's release runs (sim_stack_apply
 * sets them; sim_stack_describe names them).  Megatron-Bridge's
 * containers pin one Transformer Engine each (pyproject.toml). */
enum sim_stack {
	/* none stated: the flags as given (simulate's default) */
	SIM_STACK_UNSTATED,
	/* Megatron-Core on Transformer Engine 2.14.1 or older (Megatron-Bridge
	 * containers 26.02 to 26.04.01): host-looped expert GEMMs, the flex
	 * dispatcher (DeepEP/HybridEP) on Hopper and Blackwell, the EP
	 * all-to-all not overlapped (off in those releases' recipes), eager
	 * launches. */
	SIM_STACK_TE214,
	/* Megatron-Core on Transformer Engine after 2.14.1 (at 4220403e, May
	 * 2026; Megatron-Bridge 26.06 on): device grouped GEMMs where TE has
	 * them (bf16, MXFP8, NVFP4 on Blackwell), the flex dispatcher, the
	 * EP overlap wherever Megatron-Core allows it, as those recipes
	 * set it, with full-iteration CUDA graphs (not modelled: the host
	 * floor stays an eager framework's). */
	SIM_STACK_TE216
};

/* ---- fine-tuning and offload (simulator/sim_finetune.c) -------------
 * What a job trains and where its model states live: pre-training and
 * full fine-tuning train every weight; LoRA (Hu et al. 2021) trains
 * low-rank adapters beside frozen base weights, QLoRA (Dettmers et al.
 * 2023) with the base in 4-bit NormalFloat.  Offload keeps optimizer
 * states (and with ZeRO-3 the weights) in host memory or on NVMe with the
 * optimizer step on the CPU (ZeRO-Offload, Ren et al. 2021; ZeRO-Infinity,
 * Rajbhandari et al. 2021; FSDP's CPU offload).  The defaults (all 0) are
 * pre-training without offload, what every plan was before. */
enum sim_ft_method { SIM_FT_NONE, SIM_FT_FULL, SIM_FT_LORA, SIM_FT_QLORA };
enum sim_offload { SIM_OFFLOAD_NONE, SIM_OFFLOAD_CPU, SIM_OFFLOAD_NVME };
/* The projections LoRA adapts, a bit set: attention's query, key, value
 * and output, the MLP's gate (SwiGLU only), up (its first matrix) and
 * down (its second). */
#define SIM_LORA_Q 1u
#define SIM_LORA_K 2u
#define SIM_LORA_V 4u
#define SIM_LORA_O 8u
#define SIM_LORA_GATE 16u
#define SIM_LORA_UP 32u
#define SIM_LORA_DOWN 64u
#define SIM_LORA_ALL 127u
/* LoRA's defaults: rank 16 (torchtune's Llama 3.1 70B and 405B configs)
 * on every linear layer of the blocks ("LoRA on all linear transformer
 * block layers are required to match full finetuning performance",
 * Dettmers et al. 2023, sec. 4). */
#define SIM_LORA_DEFAULT_RANK 16
/* The global batch of a fine-tuning job that states none, sequences:
 * Llama 2-Chat's supervised fine-tuning used "a batch size of 64 and a
 * sequence length of 4096 tokens" (Touvron et al. 2023, sec. 3.1). */
#define SIM_FT_DEFAULT_GBS 64
#define SIM_LORA_MAX_RANK 65536

struct sim_finetune {
	enum sim_ft_method method;  /* default SIM_FT_NONE: pre-training */
	int lora_rank;              /* LoRA/QLoRA: 0 reads as SIM_LORA_DEFAULT_RANK */
	unsigned lora_targets;      /* LoRA/QLoRA: 0 reads as SIM_LORA_ALL */
	enum sim_offload offload;   /* default SIM_OFFLOAD_NONE */
};

/* The names files and flags spell the values with: "none", "full",
 * "lora", "qlora"; "none", "cpu", "nvme"; "q", "k", "v", "o", "gate",
 * "up", "down" (bit i of the target set). */
extern const char *const sim_ft_method_names[4];
extern const char *const sim_offload_names[3];
extern const char *const sim_lora_target_names[7];

/* ---- end of fine-tuning and offload (see also its functions below) ---- */

/* A router's score function, balancing loss and a gated MLP's
 * activation (struct sim_model); sim_router_score_names, sim_balance_names
 * and sim_glu_act_names spell them. */
enum sim_router_score { SIM_ROUTER_SOFTMAX, SIM_ROUTER_SIGMOID };
enum sim_balance {
	SIM_BALANCE_UNKNOWN,
	SIM_BALANCE_AUX,        /* Switch/GShard's, over the micro-batch */
	SIM_BALANCE_SEQ_AUX,    /* per sequence (DeepSeek-V3's) */
	SIM_BALANCE_GLOBAL_AUX, /* over the global batch (Qwen3's) */
	SIM_BALANCE_NONE,
};
enum sim_glu_act { SIM_GLU_SILU, SIM_GLU_QUICK_GELU };

struct sim_model {
	char name[PRICE_NAME_MAX];
	int layers;
	int hidden;
	int heads;
	int kv_heads;          /* == heads without GQA */
	int ffn;               /* MLP inner width */
	int vocab;
	int seq;               /* training sequence length */
	enum sim_mlp mlp;
	int tied_embeddings;   /* 1: LM head shares the input embedding */
	int gbs;               /* default global batch, sequences; 0 unknown */
	double published_params; /* the count the authors state; 0 unknown */
	/* Architecture facts (data/models.csv; sim_model_facts_init gives a
	 * Llama-style model, what a plan without them is read as). */
	enum sim_pos pos;      /* position encoding */
	double rotary_base;    /* RoPE's theta; 0 without RoPE */
	enum sim_norm norm;
	int linear_bias;       /* 1: every linear layer has a bias vector */
	double dropout;        /* attention and hidden dropout, 0..1 */
	char tokenizer[PRICE_NAME_MAX]; /* Hugging Face name; "" unknown */
	int tokenizer_gated;   /* 1: the Hub serves it only with a token (a
				* licence to accept first: Llama, Mistral) */
	int window;            /* sliding attention window, tokens; 0 none */
	double rotary_percent; /* share of each head's dimensions RoPE rotates,
				* (0, 1] (GPT-NeoX 0.25); 0: all of them */
	/* RoPE's scaling as the config states it: the kind, its factor
	 * (rope_scaling.factor; 0 without scaling) and YaRN's mscale and
	 * mscale_all_dim (0: the config states none). */
	enum sim_rope_scaling rope_scaling;
	double rope_factor, rope_mscale, rope_mscale_all_dim;
	int parallel_residual; /* 1: attention and MLP read the same input and
				* add to the residual together (GPT-J, GPT-NeoX) */
	int embedding_norm;    /* 1: a norm right after the input embedding
				* (BLOOM), counted as the final norm is */
	/* With a window: every n-th layer (the n-th, 2n-th, ...) attends to
	 * the whole sequence and the others to the window (GPT-OSS: 2, its
	 * layer_types alternating sliding and full); 0: every layer windowed
	 * (Mistral 7B). */
	int window_full_every;
	int head_dim;          /* query/key/value head width; 0: hidden / heads */
	int attn_sinks;        /* 1: a learned sink logit per head and layer
				* (GPT-OSS's attention sinks) */
	/* Multi-head latent attention (DeepSeek-AI 2024, DeepSeek-V2, sec.
	 * 2.1), on when kv_lora_rank > 0: keys and values come up from a
	 * kv_lora_rank latent (plus a shared rope key of qk_rope_dim),
	 * queries from a q_lora_rank one (0: projected from the hidden state
	 * at full rank); a query/key head is qk_nope_dim + qk_rope_dim wide, a
	 * value head v_head_dim.  kv_heads equals heads. */
	int q_lora_rank, kv_lora_rank;
	int qk_nope_dim, qk_rope_dim, v_head_dim;
	/* Mixture of experts, on when experts > 0: each MoE layer's MLP is
	 * experts routed MLPs of width expert_ffn of which a router picks
	 * top_k per token, plus shared_experts MLPs of width shared_ffn (0:
	 * expert_ffn) every token passes through; the first dense_layers
	 * layers keep a dense MLP of width ffn (DeepSeek-V3: 3). */
	int experts, top_k, expert_ffn;
	int shared_experts, shared_ffn;
	int dense_layers;
	/* The chosen experts' weights: 0 their softmax probabilities over
	 * their sum, i.e. the softmax of the chosen logits (Megatron-Core's
	 * default; Mixtral's router renormalises, and Qwen3-MoE's, DeepSeek-
	 * V3's and Kimi K2's config.json say norm_topk_prob true); 1 the
	 * probabilities of a softmax over every expert as they are
	 * (Megatron-Core's --moe-router-pre-softmax; norm_topk_prob false, as
	 * Qwen1.5-MoE).  The executor routes by it; the simulator's costs do
	 * not depend on it. */
	int router_pre_softmax;
	/* How the router scores, balances and scales, as the model's recipe
	 * trains it (data/models.csv's router_ columns, each from the model's
	 * public config or report): the score function (softmax over the
	 * chosen logits, or DeepSeek-V3's sigmoid), the balancing loss and
	 * its coefficient (SIM_BALANCE_UNKNOWN: no source gives it), the
	 * aux-loss-free expert bias and its update rate (0: unknown), group-
	 * limited routing (router_group_topk of router_groups expert groups;
	 * 0: none) and the routed weights' scaling (0: none).  Export writes
	 * them; the simulator's costs do not depend on them. */
	enum sim_router_score router_score;
	enum sim_balance router_balance;
	double router_aux_coeff;
	int router_expert_bias;
	double router_bias_rate;
	int router_groups, router_group_topk;
	double router_topk_scale;
	/* 1: a norm on the queries and keys (Qwen3's q_norm and k_norm; with
	 * MLA, on the query and key-value latents) */
	int qk_norm;
	/* The gated MLP's activation: SiLU (SwiGLU), or gpt-oss's
	 * x * sigmoid(1.702 x) (Megatron-Core's quick_gelu), with the
	 * linear half offset by glu_offset and the projection clamped to
	 * glu_clamp (0: none). */
	enum sim_glu_act glu_act;
	double glu_offset, glu_clamp;
	/* Multi-token prediction modules trained beside the model (DeepSeek-
	 * V3, sec. 2.2): each a projection of 2 hidden to hidden, two norms
	 * and one more layer (an MoE one when the model has experts), sharing
	 * the embedding and the LM head; not in the published totals. */
	int mtp_layers;
	double published_active_params; /* the active count stated; 0 unknown */
};

/* Adam's states per trained parameter, by what a trainer keeps:
 * - FP32: an fp32 master copy beside the 16-bit weights and fp32 moments,
 *   4 + 4 + 4 = 12 bytes (Rajbhandari et al., SC'20, sec. 3.1); with fp32
 *   weights, their own master, 8.
 * - BF16: the fp32 master and bf16 moments, 4 + 2 + 2 = 8 (Megatron-Core
 *   --use-precision-aware-optimizer --exp-avg-dtype bf16
 *   --exp-avg-sq-dtype bf16); 4 beside fp32 weights.
 * - BF16_NO_MASTER: bf16 weights updated in place, bf16 moments, 2 + 2 =
 *   4 (a trainer whose parameters are bf16 and whose optimizer keeps its
 *   states in the parameters' dtype: torchtune's dtype bf16 with
 *   torch.optim.AdamW).
 * - INT8_NO_MASTER: the same with 8-bit block-wise quantised moments,
 *   1 + 1 = 2 (Dettmers et al. 2022, "8-bit Optimizers via Block-wise
 *   Quantization", sec. 2; bitsandbytes' AdamW8bit and PagedAdamW8bit;
 *   the fp32 absmax of each 2048-value block, 0.2% more, not counted). */
enum sim_opt_states {
	SIM_OPT_FP32,
	SIM_OPT_BF16,
	SIM_OPT_BF16_NO_MASTER,
	SIM_OPT_INT8_NO_MASTER
};

/* How the trainer computes the cross-entropy over the logits, which sets
 * the loss's bytes (sim_layer.c) and what it holds (sim_memory.c); each kind's
 * figures and sources are sim_cost.c's (sim_loss_cost):
 * - VOCAB_PARALLEL: Megatron-LM's vocab_parallel_cross_entropy, the
 *   logits cast to fp32 and the fp32 softmax kept for backward (Megatron-
 *   LM, and the Megatron layers DeepSpeed's exports train).
 * - EAGER_FP32: the logits cast to fp32, then torch's log_softmax (its
 *   fp32 output kept) and nll_loss, eager: transformers' ForCausalLMLoss
 *   (TRL's trainers), torchtune's torch.nn.CrossEntropyLoss over its
 *   model's fp32 logits.
 * - CHUNKED_BF16: torchtune's CEWithChunkedOutputLoss, compiled: bf16
 *   logits in eight chunks, each cast to fp32 only inside the compiled
 *   cross-entropy (the bf16 logits kept). */
enum sim_loss {
	SIM_LOSS_VOCAB_PARALLEL,
	SIM_LOSS_EAGER_FP32,
	SIM_LOSS_CHUNKED_BF16
};

struct sim_parallel {
	int tp, pp, dp, cp;    /* GPUs = tp * pp * dp * cp */
	/* Expert parallelism, folded over the attention's tp x cp x dp GPUs
	 * of a pipeline stage as Megatron-Core's MoE parallel folding does
	 * (Liu et al. 2025, "MoE Parallel Folding", arXiv:2504.14960): ep
	 * ranks share the routed experts (each holds experts / ep), etp split
	 * each expert's MLP width, and the ep x etp expert group repeats
	 * tp x cp x dp / (ep x etp) times, the expert data parallelism over
	 * which expert gradients are reduced.  1 = none (sim_parallel_init; 0
	 * reads as 1). */
	int ep, etp;
	/* Routed tokens the busiest EP rank receives over the mean: 1 when
	 * the router spreads them evenly, as the published MoE benchmarks
	 * force (sim_parallel_init; 0 reads as 1); above 1 for real routing.
	 * The experts' compute, their activations and the dispatch traffic
	 * scale with it. */
	double moe_imbalance;
	/* 1: one micro-batch's EP all-to-alls run under another's compute
	 * (Megatron-Core --overlap-moe-expert-parallel-comm; DeepSeek-V3's
	 * DualPipe); 0 (sim_parallel_init): they wait in line. */
	int ep_overlap;
	/* 1: the token dispatcher sends a token across the network once per
	 * NVLink domain holding one of its experts, and fans it out there
	 * (DeepEP, HybridEP: Megatron-Core's --moe-token-dispatcher-type
	 * flex); 0 (sim_parallel_init): NCCL's all-to-all, every copy on
	 * its own (Megatron-Core's alltoall dispatcher). */
	int ep_flex;
	int mbs;               /* micro-batch, sequences */
	int gbs;               /* global batch, sequences */
	int zero;              /* 0..3; FSDP is 3 */
	enum sim_zero3_gather zero3_gather; /* with zero 3; default SIM_ZERO3_BLOCK */
	enum sim_recompute recompute;
	/* With recompute selective: the sim_recompute_module bits also
	 * recomputed (0, sim_parallel_init: the attention core alone,
	 * Megatron-Core's default module). */
	unsigned recompute_modules;
	/* How the optimizer keeps its states (sim_opt_states; default
	 * SIM_OPT_FP32: Rajbhandari et al.'s 12 bytes a parameter). */
	enum sim_opt_states opt_states;
	/* How the loss runs (sim_loss; default SIM_LOSS_VOCAB_PARALLEL:
	 * Megatron-LM's). */
	enum sim_loss loss;
	int interleave;        /* virtual stages per GPU; 1 = plain 1F1B */
	/* Decoder layers of the last virtual stage, which also holds the
	 * final norm, the LM head, the loss and the MTP modules; the other
	 * pp x interleave - 1 split the rest evenly, each at least one
	 * (Megatron-Core's --pipeline-model-parallel-layout "Et*c|t*c|..|
	 * t*N,m,L", the layout Megatron-Bridge gives DeepSeek-V3).  0: the
	 * simulator's own split (sim_virtual_stage_layers). */
	int pp_last_layers;
	int seq_parallel;      /* Megatron sequence parallelism (needs tp > 1) */
	int tp_overlap;        /* 1: TP collectives overlap the layer's GEMMs
				* (Megatron-Core --tp-comm-overlap, NeMo's
				* ub_tp_comm_overlap); default 0 */
	int flash;             /* flash attention: no s^2 activations */
	enum sim_attn_kernel attn_kernel; /* with flash; default SIM_ATTN_AUTO */
	enum sim_moe_gemm moe_gemm; /* with experts; default SIM_MOE_GEMM_AUTO */
	enum sim_stack stack;       /* default SIM_STACK_UNSTATED */
	int zero2_every_micro_batch; /* 1: ZeRO-2 reduce-scatters each
				* micro-batch's gradients after its backward
				* (DeepSpeed's stage 2, the executor's
				* trainer); default 0: the step's sum once,
				* as Llama 3's FSDP (Dubey et al. 2024, sec.
				* 3.3.2), which the held-out Llama 3 405B
				* runs bear out (bench/accuracy) */
	enum sim_dp_overlap dp_overlap; /* default SIM_DP_OVERLAP_ALL */
	/* How pipeline stages pass activations (sim_pp_send_names): 0,
	 * "split", Megatron-LM's 1F1B, each TP rank sending its 1/tp share
	 * (Narayanan et al., SC'21, sec. 4.1, scatter/gather) with a send and
	 * a receive batched into one exchange, two a micro-batch and chunk;
	 * 1, "whole", DeepSpeed's PipelineEngine, every TP rank sending the
	 * whole activation (runtime/pipe/engine.py, _exec_send_activations:
	 * p2p.send of the stage's outputs) and its TrainSchedule's sends and
	 * receives run one after the other, blocking, four a micro-batch. */
	int pp_send_whole;
	/* 1: with FP8 or MXFP8 GEMMs, the data-parallel gathers of weights
	 * (ZeRO-1/2's after the step, ZeRO-3's) move their low-precision
	 * copy, a byte an element (MXFP8: and its scales), not bf16's two:
	 * Megatron-LM's --fp8-param-gather ("perform the param all-gather in
	 * fp8"), which Megatron-Bridge's FP8 mixed precisions set
	 * (training/mixed_precision.py: fp8_param_gather = True).  Default
	 * 0; no effect at other precisions or without ZeRO. */
	int fp8_param_gather;
	enum sim_precision precision;
	/* Bytes of one element of a stored activation tensor: 2 for a bf16
	 * trainer (sim_parallel_init; 0 reads as 2), 4 for one that keeps
	 * activations in fp32 (the executor's fp32 backends).  Dropout masks
	 * (1 byte), the attention log-sum-exp and the logits (fp32) keep
	 * their own sizes. */
	double act_bytes_per_element;
	/* Bytes of one parameter's gradient: 2 for a trainer that reduces
	 * bf16 gradients (DeepSpeed ZeRO; sim_parallel_init, 0 reads as 2),
	 * 4 for one that accumulates them in fp32 (the executor's bf16 CUDA
	 * backend; Megatron-LM with --bf16, which sets
	 * accumulate_allreduce_grads_in_fp32). */
	double grad_bytes_per_param;
	struct sim_finetune ft;    /* what is trained, where states live */
};

struct sim_cluster {
	struct price_gpu gpu;
	int gpus_per_node;
	double intra_bytes_per_s;  /* per GPU, one direction */
	double inter_bytes_per_s;  /* per node, one direction */
	/* GPUs that reach each other over NVLink at intra_bytes_per_s: 8 on
	 * an HGX board, 72 in a GB200/GB300 NVL72 rack of 18 nodes of 4;
	 * 0 = the node.  TP, CP and EP groups inside one use NVLink, groups
	 * across domains the nodes' network.  Ranks fill domains in order. */
	int nvlink_domain;
	double latency_s;          /* per collective step; 0 = default */
	/* Host time to dispatch one layer's forward kernels: 0 = an eager
	 * framework's (SIM_HOST_LAYER_S, PyTorch/Megatron), < 0 = none (a
	 * framework with no host-bound dispatch, like gpuplan's own CPU
	 * executor).  Backward and TP collectives scale with it. */
	double host_layer_s;
	struct price_host host;    /* the node's host: offload needs it */
};

/* Where one step's time goes; the parts add up to step_time_s. */
struct sim_breakdown {
	double compute_s;          /* GEMMs and element-wise work, incl. recompute */
	double tp_comm_s;
	double cp_comm_s;          /* context-parallel KV exchange not hidden by attention */
	double pp_bubble_s;
	double pp_comm_s;
	double ep_comm_s;          /* expert-parallel all-to-all not hidden */
	double ep_comm_total_s;    /* all of it, hidden or not (not in the sum) */
	double dp_comm_exposed_s;  /* DP/ZeRO communication not hidden by backward */
	double dp_comm_total_s;    /* all of it, hidden or not (not in the sum) */
	double optimizer_s;        /* on the CPU with offload */
	double offload_s;          /* host transfers not hidden (sim_finetune.c) */
};

/* Memory per GPU, bytes. */
struct sim_memory {
	double weights;
	double grads;
	double optimizer;
	double activations;
	double other;              /* the loss's buffers beyond a layer's backward, CUDA
				    * context, allocator slack */
	double total;
	double capacity;           /* the GPU's memory */
	/* With offload, per node: host memory held (model states, their
	 * staging), the host's memory, and what lies on NVMe; 0 without. */
	double host, host_capacity, nvme;
};

struct sim_result {
	double step_time_s;
	double tokens_per_s;
	double model_flops_per_gpu_s;    /* achieved, no recomputation counted */
	double hardware_flops_per_gpu_s; /* achieved, recomputation counted */
	double mfu, hfu;                 /* fractions of the GPU's peak */
	int grad_accum;                  /* micro-batches per step per DP rank */
	int fits;                        /* memory.total <= memory.capacity */
	struct sim_breakdown breakdown;
	struct sim_memory memory;
};

/* The smallest GEMM dimension at which the simulator's efficiency curve
 * reaches half its maximum: dim_half (a calibration's,
 * price_gpu.gemm_dim_half) when > 0, else the default for every GPU. */
double sim_gemm_dim_half(double dim_half);

/* Sets p to 1-way everything (ep and etp too), mbs 1, gbs 1, zero 0
 * (gathers by block when set to 3), no recompute, interleave 1, no
 * sequence parallelism, flash on with the architecture's kernel
 * (SIM_ATTN_AUTO), bf16 with 2-byte activations, balanced routing
 * (moe_imbalance 1), the alltoall dispatcher, no EP overlap. */
void sim_parallel_init(struct sim_parallel *p);

/* The names plan files and flags spell each enum's values with, indexed
 * by the value (sim_zero2_reduce_names by zero2_every_micro_batch). */
extern const char *const sim_mlp_names[2];
extern const char *const sim_pos_names[3];   /* "rope", "learned", "alibi" */
extern const char *const sim_norm_names[2];  /* "rmsnorm", "layernorm" */
extern const char *const sim_router_score_names[2]; /* "softmax", "sigmoid" */
/* "unknown", "aux_loss", "seq_aux_loss", "global_aux_loss", "none":
 * Megatron-LM's --moe-router-load-balancing-type values but the first */
extern const char *const sim_balance_names[5];
extern const char *const sim_glu_act_names[2]; /* "silu", "quick_gelu" */
extern const char *const sim_rope_scaling_names[4]; /* "none", "linear", "llama3", "yarn" */
extern const char *const sim_recompute_names[3];
/* By bit: "layernorm", "mla_up_proj", "moe_act", "mlp" (Megatron-Core's
 * names). */
extern const char *const sim_recompute_module_names[SIM_RECOMPUTE_MODULES];
/* By opt_states: "fp32", "bf16", "bf16_no_master", "int8_no_master". */
extern const char *const sim_opt_state_names[4];
/* By loss: "vocab_parallel", "eager_fp32", "chunked_bf16". */
extern const char *const sim_loss_names[3];
extern const char *const sim_precision_names[4]; /* "bf16", "fp8", "mxfp8", "nvfp4" */
extern const char *const sim_zero3_gather_names[2];
extern const char *const sim_zero2_reduce_names[2];
extern const char *const sim_dp_overlap_names[3];
extern const char *const sim_pp_send_names[2]; /* by pp_send_whole: "split", "whole" */
extern const char *const sim_attn_kernel_names[5];
extern const char *const sim_moe_gemm_names[3];
extern const char *const sim_stack_names[3]; /* "", "te2.14", "te2.16" */
extern const char *const sim_plan_framework_names[4];
extern const char *const sim_ep_dispatcher_names[2]; /* by ep_flex: "alltoall", "flex" */

/* Static lower-case names used in files and tables: "gelu"/"swiglu",
 * "none"/"selective"/"full", "bf16"/"fp8". */
const char *sim_mlp_str(enum sim_mlp m);
const char *sim_recompute_str(enum sim_recompute r);
const char *sim_precision_str(enum sim_precision p);

/* The peak MFU and HFU are counted against (price_gpu.mfu_flops_per_s,
 * else the bf16 peak). */
double sim_mfu_peak(const struct price_gpu *g);

/* The dense peak the plan's precision runs the linear layers at on g:
 * bf16's; fp8's (bf16's without one); MXFP8's figure, else on Blackwell
 * its FP8 rate (the tensor cores run both at one rate); NVFP4's figure.
 * 0 where the GPU has no such rate (sim_check refuses the plan). */
double sim_precision_peak(const struct sim_parallel *p, const struct price_gpu *g);

/* GPU architectures the kernel tables (and the planner's framework
 * rules) tell apart. */
enum sim_arch { SIM_ARCH_OTHER, SIM_ARCH_HOPPER, SIM_ARCH_BLACKWELL };

/* The architecture of g from its canonical name: H100, H200 and GH200 are
 * Hopper; B200, B300, GB200 and GB300 Blackwell; anything else (Ampere,
 * Ada, Volta, other vendors) takes Ampere's figures. */
enum sim_arch sim_gpu_arch(const struct price_gpu *g);

/* The expert GEMM kernel p runs on architecture a: auto resolved to the
 * device-side grouped GEMM for bf16, MXFP8 and NVFP4 on Blackwell (TE's
 * grouped GEMMs for those, #2748, #2669, #2971), the loop elsewhere. */
enum sim_moe_gemm sim_moe_gemm_resolve(const struct sim_parallel *p, enum sim_arch a);

/* Sets p's dispatcher and EP overlap as p->stack's release runs model m
 * on architecture a (nothing without a stack or without experts):
 * the flex dispatcher on Hopper and Blackwell with ep > 1; with
 * SIM_STACK_TE216 the overlap where Megatron-Core's transformer_config.py
 * allows it (ep > 1, pp 1 or virtual stages, no full recomputation, at
 * most one MTP layer).  The expert GEMM follows from the stack in
 * sim_moe_gemm_resolve. */
void sim_stack_apply(const struct sim_model *m, enum sim_arch a, struct sim_parallel *p);

/* Writes into buf (size n) the line naming the software p assumes on
 * architecture a: framework and Transformer Engine generation, expert
 * GEMM, dispatcher and EP overlap (with moe, a model with experts), CUDA
 * graphs. */
void sim_stack_describe(const struct sim_parallel *p, enum sim_arch a, int moe, char *buf,
			size_t n);

/* GPUs of c that share one NVLink domain: nvlink_domain, never fewer
 * than a node's. */
int sim_cluster_domain(const struct sim_cluster *c);

/* Sets m's architecture facts to a Llama-style model's: RoPE with base
 * 10000 over every dimension, RMSNorm, no biases, no dropout, no window,
 * attention then MLP, no embedding norm, tokenizer unknown.
 * The shapes are left as they are. */
void sim_model_facts_init(struct sim_model *m);

/* Exact parameter count from the model's shapes and facts: every weight
 * matrix, the biases when linear_bias, two norms per layer and a final
 * one (LayerNorm's bias too), the input embedding, the LM head unless
 * tied, a learned position table of seq x hidden and an embedding norm;
 * every routed and shared expert and the routers; MLA's latent norms;
 * attention sinks.
 * The multi-token prediction modules are left out, as the published
 * totals leave them (sim_mtp_params). */
double sim_model_params(const struct sim_model *m);

/* Parameters one token passes through: sim_model_params less the routed
 * experts the router does not pick (experts - top_k of every MoE layer),
 * less the input embedding and a learned position table (a row looked up,
 * no arithmetic), the LM head kept.  This is how OpenAI (gpt-oss model
 * card, Table 1: 5.13B of 116.83B) and DeepSeek (V2-Lite: 2.4B) count
 * active parameters; Mistral and Qwen count the input embedding too, so
 * their figures compare with this plus vocab x hidden.  0 for a model
 * without layers. */
double sim_model_active_params(const struct sim_model *m);

/* Head widths: queries and keys (MLA: qk_nope_dim + qk_rope_dim; else
 * head_dim, or hidden / heads), values (MLA: v_head_dim; else the same). */
double sim_qk_head_dim(const struct sim_model *m);
double sim_v_head_dim(const struct sim_model *m);

/* YaRN's attention factor (the "concentration factor" Megatron-Core
 * multiplies cos and sin by, _yarn_get_concentration_factor): with
 * mscale and mscale_all_dim stated, (0.1 mscale ln f + 1) / (0.1
 * mscale_all_dim ln f + 1) (DeepSeek-V3's 1.0 / 1.0: 1); with either
 * unstated, 0.1 ln f + 1 (GPT-OSS's f = 32: 1.35); 1 for a factor of 1
 * or less and without YaRN. */
double sim_rope_attn_factor(const struct sim_model *m);

/* 1 when Megatron-Core applies m's RoPE in a fused kernel, 0 when in its
 * eager PyTorch path (rope_utils.py), as its recipes run them with rope
 * fusion on: without MLA, Transformer Engine's fused_apply_rotary_pos_emb
 * unless the model has YaRN (position_embedding_type yarn, for which
 * Megatron-LM's arguments.py and Megatron-Bridge's
 * validate_rope_fusion_compatibility turn fusion off, and
 * apply_rotary_pos_emb falls back for an attention factor other than 1);
 * with MLA, Megatron-Core's fused MLA kernels, which it allows only with
 * YaRN (MLATransformerConfig).  Meaningless without RoPE. */
int sim_rope_fused(const struct sim_model *m);

/* Parameters of the multi-token prediction modules (mtp_layers of them):
 * trained, and held in memory, with the model; 0 without. */
double sim_mtp_params(const struct sim_model *m);

/* The integer fields of struct sim_model beyond the basic shape (0:
 * none), each with the names models.csv, plan files and simulate's flags
 * give it: one table the three read. */
struct sim_model_field {
	const char *column;   /* models.csv */
	const char *key;      /* plan files' .model */
	const char *flag;     /* simulate's */
	size_t offset;        /* of an int in struct sim_model */
	int max;
};
#define SIM_MODEL_FIELDS 18
extern const struct sim_model_field sim_model_fields[SIM_MODEL_FIELDS];
/* The field f of m. */
static inline int *sim_model_field(struct sim_model *m, const struct sim_model_field *f)
{
	return (int *)((char *)m + f->offset);
}

/* Checks the model alone (what sim_check checks of it): shapes positive,
 * heads divisible by kv_heads and hidden by heads unless head_dim or MLA
 * sets the head width, the MoE and MLA fields consistent (top_k from 1 to
 * experts, an expert width, dense layers at most the layers, MLA's ranks
 * and head widths, no MoE or MLA field without the feature), the window
 * pattern only with a window.  Returns RC_OK, or RC_INPUT with a one-line
 * reason "field: expected X, found Y" in why[size] (why may be NULL). */
enum rc sim_model_check(const struct sim_model *m, char *why, size_t size);

/* Parameters outside the layers held with the input embedding: the
 * position table of a learned encoding (seq x hidden, not split over
 * tensor parallelism, as Megatron-LM keeps it) and the embedding norm
 * (embedding_norm); 0 without either. */
double sim_input_params(const struct sim_model *m);

/* Keys one query attends to on average over the layers in FLOP counts:
 * seq, or the sliding window when it is shorter on the layers that have
 * it (Beltagy et al. 2020; Jiang et al. 2023, sec. 2: each token attends
 * to at most window earlier tokens; sim_window_layers). */
double sim_attention_span(const struct sim_model *m);
/* Layers that attend over the sliding window: 0 without one (or one no
 * shorter than seq), else every layer but each window_full_every-th. */
int sim_window_layers(const struct sim_model *m);

/* Most GPUs one layout may use (tp x pp x dp x cp): 2^26, far beyond any
 * cluster built, and small enough that GPU and node counts fit an int. */
#define SIM_MAX_GPUS (1 << 26)

/* The GPUs layout p uses, tp x pp x dp x cp, in double: each degree fits
 * an int, their product need not (sim_check.c). */
double sim_parallel_gpus(const struct sim_parallel *p);

/* The largest value of each integer of a model and a layout, the same on
 * the command line (simulate's flags), in models.csv and in plan files
 * (sim_plan_read), so that a plan gpuplan writes it reads back. */
#define SIM_MAX_LAYERS (1 << 20)
#define SIM_MAX_HIDDEN (1 << 24)
#define SIM_MAX_HEADS (1 << 20)
#define SIM_MAX_FFN (1 << 26)
#define SIM_MAX_VOCAB (1 << 26)
#define SIM_MAX_SEQ (1 << 26)
#define SIM_MAX_EXPERTS (1 << 16)     /* experts, top_k, shared experts */
#define SIM_MAX_RANK (1 << 20)        /* MLA ranks and head widths, head_dim */
#define SIM_MAX_DEGREE (1 << 16)      /* tp, pp, cp, interleave, gpus per node */
#define SIM_MAX_DP (1 << 24)
#define SIM_MAX_MBS (1 << 24)
#define SIM_MAX_GBS (1 << 30)

/* Checks that p can be applied to m on c: the model (sim_model_check),
 * heads divisible by tp, kv_heads divisible by tp or tp by kv_heads (KV
 * heads replicated), with experts: ep dividing experts, etp expert_ffn,
 * ep x etp dividing tp x cp x dp (MoE parallel folding), sequence
 * parallelism with tp > 1, moe_imbalance 1 to 1000; without: ep and etp
 * 1; a precision the GPU runs (MXFP8, NVFP4), nvlink_domain in range,
 * layers >= pp (uneven stages allowed without interleaving; with it, pp *
 * interleave must divide layers and pp the micro-batch count), gbs by
 * mbs * dp, seq by 2 * cp, seq / cp by tp with sequence parallelism, zero
 * 0..3, the GPU's bf16 FLOP/s and memory present, gpus_per_node >= 1,
 * at most SIM_MAX_GPUS GPUs, rates 0 (default) or >= 1 per second.
 * Returns RC_OK, or RC_INPUT with a one-line reason "field: expected X,
 * found Y" in why[size] (why may be NULL; nothing is printed). */
enum rc sim_check(const struct sim_model *m, const struct sim_parallel *p,
		  const struct sim_cluster *c, char *why, size_t size);

/* The analytic model: fills every field of out (breakdown parts add up to
 * step_time_s; every figure finite).  Requires sim_check() == RC_OK.
 * Allocates nothing and keeps no state, so it may run on many threads.
 * The models, their papers and equations are cited in simulator/sim.c,
 * sim_comm.c, sim_memory.c and sim_shape.c; the default constants in
 * sim_internal.h. */
void sim_step(const struct sim_model *m, const struct sim_parallel *p,
	      const struct sim_cluster *c, struct sim_result *out);

/* Layers of virtual stage k (0 <= k < pp x interleave; chunk k / pp of
 * stage k % pp, activations flowing from k to k + 1) as the simulator cuts
 * m over p's pipeline: extra layers to the middle stages, then the first;
 * a stage's chunks as even as possible, earlier ones taking the rest
 * (on the first stage, later ones).  0 for a chunk holding only the
 * embedding or only the loss (sim_max_interleave).
 * Requires sim_check() == RC_OK. */
int sim_virtual_stage_layers(const struct sim_model *m, const struct sim_parallel *p, int k);

/* The pp_last_layers of the split Megatron-Bridge gives DeepSeek-V3
 * over pp x v virtual stages: every one ceil(layers / (pp v)) layers but
 * the last, which holds the rest (beside the loss and MTP modules); 0
 * where that is the even split, or leaves the last nothing, or pp < 2. */
int sim_front_filled_last(const struct sim_model *m, int pp, int v);

/* The most interleaved chunks per stage m takes over pp stages: every
 * chunk holds a layer, except the first stage's first chunk and the last
 * stage's last, which may hold only the embedding and only the loss
 * (sim_virtual_stage_layers).  1 without pipeline parallelism. */
int sim_max_interleave(const struct sim_model *m, int pp);

/* Seconds to train tokens at r's throughput; 0 when r has no throughput. */
double sim_time_to_train_s(const struct sim_result *r, double tokens);

/* Training FLOPs (forward + backward) of sequences full sequences of m,
 * summed over every GEMM of the model at its own shape (Narayanan et al.,
 * SC'21, eq. 3 for GPT shapes): MLA's projections, each MoE layer's top_k
 * routed and its shared experts and its router, the MTP modules with
 * their logits.  Attention scores count the full s x s product, as eq. 3
 * does (the window's s x w on window layers).  recompute adds what it recomputes: full adds one
 * more forward of every layer (eq. 3's 4/3 on the layer terms), selective
 * the attention scores and values.  Model FLOPs (for MFU) pass
 * SIM_RECOMPUTE_NONE. */
double sim_train_flops(const struct sim_model *m, double sequences,
		       enum sim_recompute recompute);

/* ---- fine-tuning and offload: functions (simulator/sim_finetune.c) --- */

/* Parameters of LoRA's adapters on m: rank r x (in + out) for every
 * adapted projection of every layer (Hu et al. 2021, sec. 4.1); 0 for a
 * method without adapters. */
double sim_lora_params(const struct sim_model *m, const struct sim_finetune *ft);

/* Parameters ft trains: the adapters for LoRA and QLoRA, else all. */
double sim_trainable_params(const struct sim_model *m, const struct sim_finetune *ft);

/* Training FLOPs of sequences sequences of m under ft: sim_train_flops
 * for pre-training and full fine-tuning; with frozen base weights no
 * weight-gradient GEMMs for them (the layers' linear layers and the LM
 * head), the adapters' forward and twice that backward. */
double sim_finetune_train_flops(const struct sim_model *m, const struct sim_finetune *ft,
				double sequences, enum sim_recompute recompute);

/* Bytes a stored base parameter of a linear layer takes under ft: NF4
 * with double quantisation for QLoRA (SIM_NF4_BITS / 8), else w. */
double sim_base_weight_bytes(const struct sim_finetune *ft, double w);

/* Of one step's compute on the first pipeline stage (its layers over its
 * micro-batches, recomputation included): LoRA's adapters and QLoRA's
 * dequantisation, seconds; 0 for a method without them. */
void sim_finetune_parts(const struct sim_model *m, const struct sim_parallel *p,
			const struct sim_cluster *c, double *adapters_s, double *dequant_s);

/* Parses a LoRA target list, "all" or names of sim_lora_target_names
 * separated by ',' ("q,v"), into *out.  Returns RC_OK, or RC_INPUT for
 * an empty list or an unknown name (nothing printed; *out untouched). */
enum rc sim_lora_targets_parse(const char *s, unsigned *out);
/* Writes targets (0: all) as "all" or its names joined by ',' into
 * buf[size]. */
void sim_lora_targets_str(unsigned targets, char *buf, size_t size);

/* ---- model presets (data/models.csv) --------------------------------- */

struct sim_model_table {
	struct sim_model *models;
	size_t n;
};

/* Loads path into t.  Returns RC_OK, RC_INPUT (message names file:line:col)
 * or RC_ERR.  Release with sim_model_table_release(). */
enum rc sim_model_table_load(struct sim_model_table *t, const char *path);
void sim_model_table_release(struct sim_model_table *t);
/* Finds a preset by name, case-insensitive; NULL when unknown. */
const struct sim_model *sim_model_find(const struct sim_model_table *t,
				       const char *name);
/* The preset whose name is nearest name (case folded, '_' and ' ' read
 * as '-'), into buf[size]: 0, or -1 (buf empty) when none is near enough
 * to be a misspelling of it (gp_suggest_limit). */
int sim_model_suggest(const struct sim_model_table *t, const char *name, char *buf,
		      size_t size);
/* m's global batch in sequences: its preset's, else about 4 Mi tokens
 * (the batch Llama 2 and Llama 3 train their 7-70B models with), the
 * largest power of two of sequences within it. */
int sim_model_gbs(const struct sim_model *m);

/* ---- plan files (gpuplan.plan/1 JSON; simulator/sim_json.c writes them,
 * sim_json_read.c reads them) ------------------------------------------- */
#define SIM_PLAN_SCHEMA "gpuplan.plan/1"

/* One plan: what `simulate -o` and `plan -o` write and what `simulate`,
 * `execute` and `export` read. */
/* A figure a run assumed because no one stated it (a multi-node
 * cluster's inter-node bandwidth, a batch the model does not state): the
 * plan field it stands for, its value in that field's unit, and the
 * sentence that said so.  Kept in the plan and simulate --json, not only
 * on stderr. */
#define SIM_PLAN_MAX_ASSUMPTIONS 8
struct sim_assumption {
	char field[48];          /* "cluster.inter_bytes_per_s", "parallel.gbs" */
	double value;
	char why[200];
};

/* A plan's interruptions: the rates and restart time they were reckoned
 * at, and what they come to over the run. */
struct sim_interrupts {
	int stated;                     /* 0: the plan does not say */
	double failures_per_gpu_hour;
	double preemptions_per_node_hour; /* 0 unless spot */
	double restart_s;               /* after each, before training again */
	double ckpt_bytes_per_s_per_node; /* checkpoint writes; 0 not stated */
	double mtbf_s;                  /* between two; 0 when none happen */
	double expected;                /* over the run's wall time */
	double effective;               /* training time / wall time, (0, 1] */
};

struct sim_plan {
	struct sim_model model;
	struct sim_parallel par;
	struct sim_cluster cluster;
	struct price_offering offering; /* empty provider for a custom cluster */
	int spot;                       /* 1 when priced at the spot rate */
	/* How the offering's hours are paid for (on-demand, spot, reserved
	 * 1y/3y, owned): what usd_per_gpu_hour is.  On-demand without an
	 * offering. */
	enum price_purchase purchase;
	int nodes;
	double tokens;                  /* tokens to train; 0 when not given */
	/* Fine-tuning is stated as epochs over a dataset: tokens = epochs x
	 * dataset_tokens; both 0 when the job was stated in tokens. */
	double epochs, dataset_tokens;
	double usd_per_gpu_hour;        /* 0 when not given */
	struct sim_result result;       /* the prediction */
	double time_to_train_s;         /* 0 when tokens not given */
	double cost_usd;                /* 0 when not priced */
	/* Checkpoints as priced: seconds between two (Young/Daly on spot)
	 * and how many are kept; 0 when the plan does not say.  `execute
	 * --checkpoint-dir` and the exports' save interval turn the interval
	 * into steps. */
	double ckpt_interval_s;
	int ckpt_keep;
	/* The interruptions the run expects (failures, spot preemptions) as
	 * the planner's interruption model reckons them over its wall time
	 * (plan_interrupt_model), and the effective training time they leave;
	 * all 0 when the plan does not state them. */
	struct sim_interrupts interrupts;
	/* What produced the plan (DESIGN.md: "the inputs' identity"): the
	 * command line, and price_catalog.digest of the catalog it read;
	 * empty when not known. */
	char command[512];
	char catalog_digest[32];
	/* The trainer the plan was priced for (sim_plan_framework_names):
	 * 0 none stated (simulate, plan --framework any), 1 Megatron-LM,
	 * 2 DeepSpeed, 3 TRL with PEFT; export launches it by default. */
	int framework;
	/* Figures assumed (sim_plan_assume), in the order first assumed. */
	int n_assumptions;
	struct sim_assumption assumptions[SIM_PLAN_MAX_ASSUMPTIONS];
};

/* Records in p that field was assumed to be value, and why (one line,
 * printable): replaces an earlier assumption of field; a plan already
 * holding SIM_PLAN_MAX_ASSUMPTIONS others keeps them and drops this one
 * (RC_ERR; the callers assume fewer).  RC_OK otherwise. */
enum rc sim_plan_assume(struct sim_plan *p, const char *field, double value, const char *why);
/* Forgets p's assumption of field (it is stated now); none is no error. */
void sim_plan_unassume(struct sim_plan *p, const char *field);
/* p's assumption of field, or NULL. */
const struct sim_assumption *sim_plan_assumption(const struct sim_plan *p, const char *field);

/* Writes p as JSON (schema "gpuplan.plan/1") to path atomically (temp file,
 * fsync, rename).  Same inputs give byte-identical files.  Returns RC_OK or
 * RC_ERR (message printed). */
enum rc sim_plan_write(const char *path, const struct sim_plan *p);
/* Returns p as a JSON string (caller frees with free()). */
char *sim_plan_to_json(const struct sim_plan *p);
/* Returns p's prediction alone as a JSON object (what `simulate --json`
 * prints: step_time_s, tokens_per_s, model/hardware_tflops_per_gpu, mfu,
 * hfu, memory_per_gpu_bytes, fits, breakdown {compute, tp_comm, cp_comm,
 * ep_comm, ep_comm_total, pp_bubble, pp_comm, dp_comm_exposed,
 * dp_comm_total, optimizer} in
 * seconds, memory {weights, grads, optimizer, activations, other, total,
 * capacity} in bytes, time_to_train_s, cost_usd, and with an offering
 * purchase, the option its price is for).  Caller frees. */
char *sim_prediction_to_json(const struct sim_plan *p);
/* Parses the plan JSON in buf[0..len), naming it name in messages, as
 * sim_plan_read() does (RC_INPUT on a bad field; out untouched then). */
enum rc sim_plan_parse(const char *name, const char *buf, size_t len,
		       struct sim_plan *out);
/* Reads path into p.  A bad field gets one line naming the file and the
 * field ("plan.json: .parallel.tp: expected an integer >= 1, found -2") and
 * RC_INPUT; an unreadable file RC_ERR.  p is untouched on failure. */
enum rc sim_plan_read(const char *path, struct sim_plan *p);

#endif
