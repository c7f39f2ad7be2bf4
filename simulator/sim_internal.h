/*
 * sim_internal.h - pieces of the analytic model shared by sim.c,
 * sim_comm.c, sim_memory.c and sim_shape.c, and exposed to the
 * simulator's tests.  Calls run one way: sim.c uses sim_memory.c,
 * sim_comm.c and sim_shape.c; sim_memory.c uses sim_shape.c; sim_shape.c
 * and sim_comm.c use nothing of the others.
 *
 * Nothing here allocates; every function is a pure function of its
 * arguments.  The constants are the model's documented defaults: one set
 * for every GPU, never tuned per source of measurements.
 */
#ifndef GPUPLAN_SIM_INTERNAL_H
#define GPUPLAN_SIM_INTERNAL_H

#include <stdio.h>

#include "sim.h"

/* Fills why[size] (when why is not NULL) and returns RC_INPUT: the one
 * way sim_check and sim_model_check refuse. */
#define SIM_WHY(...) do { if (why && size) snprintf(why, size, __VA_ARGS__); \
			  return RC_INPUT; } while (0)

/* ---- default efficiency curve (sim.c, sim_kernel_time_s) --------------
 * One curve for every GPU, from the GPU's own peak FLOP/s and HBM
 * bandwidth.  A GEMM (m x k)(k x n) takes
 *   flops / (peak * SIM_GEMM_EFF_MAX * d / (d + SIM_GEMM_DIM_HALF))
 *   + bytes / (hbm * SIM_HBM_EFF) + SIM_KERNEL_S
 * where d = min(m, n, k): a small dimension starves the tensor-core tiles
 * (head dimension 64 or 128 in attention, TP-split widths), and bytes is
 * what the kernel moves through HBM: at least its operands and result,
 * and at least flops / SIM_GEMM_TILE_FLOPS_PER_BYTE because output tiles
 * re-read their operands (2-byte operands; half the bytes at fp8).  The
 * additive form (compute and memory traffic overlapping imperfectly, the
 * roofline of Williams et al., CACM 2009, without its max) is why a GPU
 * with a high FLOP:byte ratio (H100: 295) reaches a lower fraction of its
 * peak than one with a low ratio (A100: 153), as measured GEMMs do.
 * Element-wise work moves its bytes at SIM_HBM_EFF of the HBM bandwidth.
 * The constants were set once against all of bench/accuracy's sources
 * together, never per source. */
#define SIM_GEMM_EFF_MAX 1.0
#define SIM_GEMM_DIM_HALF 128.0
#define SIM_HBM_EFF 0.80
#define SIM_GEMM_TILE_FLOPS_PER_BYTE 500.0
/* FLOP per byte of HBM traffic of a flash-attention kernel, added to its
 * compute time as for a GEMM: FlashAttention-2 (Dao 2023) keeps a block
 * of 128 queries on chip and streams K and V past it, 4 d_h FLOP a score
 * against 4 d_h / 128 bytes.  Bandwidth, not peak, then sets attention's
 * speed: llm-foundry's 32k-token MPT-13B runs leave about 100 TFLOP/s
 * for attention on A100 and 170 on H100 once their GEMMs are taken at 80%
 * and 65% of peak, the ratio of the HBM bandwidths (1.6), not of the
 * peaks (3.2). */
#define SIM_ATTN_FLOPS_PER_BYTE 128.0
/* Flash attention's backward against its forward: 5 products to 2 (it
 * recomputes the scores; Dao 2023, sec. 3.1). */
#define SIM_ATTN_BWD 2.5
/* ---- fused attention kernels as data (sim.c, sim_attn_kernel_time_s) --
 * Each kernel generation runs causal attention at its own fraction of the
 * GPU's dense bf16 peak, forward and backward, on each architecture: the
 * long-sequence plateau at head dimension 128, read off the kernels'
 * published benchmarks and stated in the FLOPs sim_attn_flops counts.
 *   Hopper (H100 SXM5, 989 TFLOP/s), Shah et al. 2024, FlashAttention-3,
 *   arXiv:2407.08608, Fig. 5 (forward, causal, head dim 128, 16k tokens:
 *   FA2 335, cuDNN 539, FA3 616 TFLOP/s) and Fig. 6 (backward, head dim
 *   128, 16k: FA2 322, cuDNN 516, FA3 561, without the causal mask; taken
 *   causal at each kernel's forward ratio causal/non-causal of Fig. 5:
 *   335/370, 539/595, 616/648).
 *   Ampere (A100), Dao 2023, FlashAttention-2, arXiv:2307.08691, sec. 4.1:
 *   up to 73% of peak forward and 63% backward, without the mask; causal
 *   at FA2's 335/370 as above.
 *   Blackwell: no published kernel benchmark was read; Hopper's fractions
 *   for the kernels that run there (FA2 and cuDNN; FA3 is Hopper-only).
 * FlashAttention (v1) keeps the bandwidth-bound model of
 * sim_flash_attn_s: "only 25-40% of the theoretical maximum FLOPs/s" on
 * A100 (Dao 2023, sec. 1), 28% there. */
#define SIM_ATTN_HOPPER_FA2_FWD 0.347
#define SIM_ATTN_HOPPER_FA2_BWD 0.302
#define SIM_ATTN_HOPPER_CUDNN_FWD 0.558
#define SIM_ATTN_HOPPER_CUDNN_BWD 0.484
#define SIM_ATTN_HOPPER_FA3_FWD 0.638
#define SIM_ATTN_HOPPER_FA3_BWD 0.552
#define SIM_ATTN_AMPERE_FA2_FWD 0.661
#define SIM_ATTN_AMPERE_FA2_BWD 0.570
/* Sequence length at which a fused kernel reaches half its plateau rate,
 * tokens: s / (s + SIM_ATTN_SEQ_HALF) fits Fig. 5's causal head-dim-128
 * rise from 512 to 16k tokens (FA2 160, FA3 290 on its own). */
#define SIM_ATTN_SEQ_HALF 256.0
/* Head dimension at which a fused kernel reaches half its rate, relative
 * to 128: FA2 and FA3 at head dim 64 reach 88% and 77% of their head-dim-
 * 128 rate (FA3 paper, Fig. 5, 16k tokens without the mask); 32 gives 83%. */
#define SIM_ATTN_DH_HALF 32.0

/* The kernel that runs when a plan asks for k on architecture a: AUTO is
 * cuDNN on Hopper and Blackwell, FA2 elsewhere; FA3 outside Hopper is FA2
 * (cuDNN on Blackwell); cuDNN outside Hopper and Blackwell is FA2. */
enum sim_attn_kernel sim_attn_kernel_resolve(enum sim_attn_kernel k, enum sim_arch a);

/* Seconds of one causal attention forward (*fwd) and backward (*bwd) by
 * kernel k (resolved; not FA1) on architecture a: b sequences of sl
 * queries against s keys, heads query heads of dh, at peak dense bf16
 * FLOP/s.  The FLOPs are sim_attn_flops's, backward SIM_ATTN_BWD times
 * the forward's; the rate is the table's fraction of peak times
 * sl / (sl + SIM_ATTN_SEQ_HALF) times the head-dimension factor; one
 * kernel launch each. */
void sim_attn_kernel_time_s(enum sim_attn_kernel k, enum sim_arch a, double b, double heads,
			    double sl, double s, double dh, double peak, double *fwd, double *bwd);

/* FLOP per byte of HBM assumed when the catalog lacks the bandwidth (the
 * H100 SXM's 989 TFLOP/s over 3.35 TB/s). */
#define SIM_DEFAULT_FLOPS_PER_BYTE 295.0
/* Host time to dispatch one layer's forward kernels in an eager framework
 * (PyTorch with Megatron-style modules); backward takes twice as long.
 * It is the floor under a layer's time for small shapes: vTrain's smallest
 * runs (hidden 1024, one sequence of 1024 tokens, full recomputation, TP
 * 1) take 3.0-3.2 ms per layer for forward, recomputed forward and
 * backward: 4 x 0.8 ms. */
#define SIM_HOST_LAYER_S 0.8e-3
/* Host time to issue one tensor-parallel collective (the autograd
 * function around it, torch.distributed and the NCCL enqueue): vTrain's
 * host-bound runs with TP 2 and 4 take 0.35-0.45 ms more per layer and
 * micro-batch than TP 1 at the same shapes, over six collectives. */
#define SIM_HOST_COLL_S 60e-6
/* Host time an MoE layer adds to SIM_HOST_LAYER_S forward (twice it
 * backward) where GroupedLinear loops over the local experts
 * (SIM_MOE_GEMM_LOOP): the router, the dispatcher reading the experts'
 * token counts back to the host, a launch and a quantization per expert
 * GEMM.  From the one published run that is host time throughout:
 * Qwen3-30B-A3B on 8 B200 at one sequence of 4096 a micro-batch
 * (Megatron-Bridge 26.02; a few microseconds of GPU per expert GEMM)
 * steps 8.8 ms per layer and micro-batch, 3 x 2.93 ms, of which 0.8 is
 * the dense layer's.  Not per expert: the same model on 16 H100 with 8
 * and with 16 local experts (26.06, 26.02.01) steps within 2% of each
 * other. */
#define SIM_HOST_MOE_LAYER_S 2.1e-3
/* Per-kernel fixed cost (launch and tail), seconds. */
#define SIM_KERNEL_S 4e-6
/* Element-wise bytes per token and hidden unit of one layer's forward:
 * two layer norms (read 2, write 2 each) and Megatron-LM's two fused
 * bias-dropout-residual adds (read 4, write 2, a 1-byte mask each). */
#define SIM_ELT_BYTES 22.0
/* Backward element-wise traffic over forward: a backward reads the
 * output gradient and a saved input and writes the input gradient where
 * the forward read one tensor and wrote one. */
#define SIM_ELT_BWD 1.5
/* Kernels of one layer's element-wise forward (norms, adds, activation,
 * dropout); backward launches SIM_ELT_BWD times as many. */
#define SIM_ELT_KERNELS 8
/* Bytes per logit of the fp32 cross-entropy, forward and backward
 * (Megatron-LM's vocab_parallel_cross_entropy; counted in sim.c). */
#define SIM_LOSS_BYTES 52.0
/* Bytes per attention score without flash attention (Megatron-LM's
 * unfused path): forward, the fused scale-mask-softmax reads and writes
 * the scores (4) and dropout reads, writes and keeps a mask (5);
 * backward, the softmax gradient reads probabilities and gradient and
 * writes one (6), dropout's reads gradient and mask and writes (5). */
#define SIM_SOFTMAX_FWD_BYTES 9.0
#define SIM_SOFTMAX_BWD_BYTES 11.0

/* ---- communication defaults (sim_comm.c) ------------------------------ */
/* Achieved bus bandwidth over the link's one-direction figure (nccl-tests
 * PERFORMANCE.md busbw against NVLink/IB line rate). */
#define SIM_LINK_EFF 0.80
/* Used when the cluster and the GPU give no intra-node figure, bytes/s one
 * direction per GPU: NVLink 3 (A100) and PCIe Gen4 x16. */
#define SIM_DEFAULT_NVLINK_BYTES_PER_S 300e9
#define SIM_DEFAULT_PCIE_BYTES_PER_S 32e9
/* Latency of one ring step when the cluster gives none, seconds: NCCL's
 * own model of its Simple protocol (src/graph/tuning.cc, hwLat for
 * Ring/Simple): 3.4 us over NVLink, 5.7 us over PCIe, 9.6 us for a step
 * that crosses the network.  A ring spanning nodes takes nodes - 1 of its
 * steps over the network and the rest inside nodes, as NCCL counts them. */
#define SIM_NVLINK_STEP_S 3.4e-6
#define SIM_PCIE_STEP_S 5.7e-6
#define SIM_NET_STEP_S 9.6e-6
/* Fraction of an overlapped collective's time that the compute under it
 * loses to contention (Lee et al., "Characterizing Compute-Communication
 * Overlap in GPU-Accelerated Distributed Deep Learning", arXiv:2507.03114,
 * 2025: 18.9% average compute slowdown during overlap, A100 and H100). */
#define SIM_OVERLAP_SLOWDOWN 0.189
/* Data-parallel gradient bucket (Megatron-LM's default, 40M elements). */
#define SIM_DP_BUCKET_PARAMS 40e6

/* ---- memory defaults (sim_memory.c) ----------------------------------- */
/* CUDA context, cuBLAS workspace and NCCL buffers per GPU, bytes. */
#define SIM_CONTEXT_BYTES 1.5e9
/* Caching-allocator fragmentation, fraction of the tensors' bytes. */
#define SIM_ALLOC_SLACK 0.05

/* One link a collective group runs over. */
struct sim_link {
	double bytes_per_s;   /* achieved bus bandwidth per rank, one direction */
	double latency_s;     /* per ring step, averaged over the ring's steps */
};

/* ---- shapes (sim_shape.c) --------------------------------------------- */

/* Shapes derived once per sim_step call. */
struct sim_shape {
	int t, p, d, c, v;    /* tp, pp, dp, cp, interleave */
	int e, et, ed;        /* ep, etp, expert data parallel t c d / (e et) */
	int layers;           /* the model's */
	/* Parameters of one dense layer (sim_layer_params), of one MoE layer
	 * but its routed experts (sim_moe_layer_params(m, 0)), of one MoE
	 * layer's routed experts, all of them; 0 without experts. */
	double layer_params, moe_rest_params, routed_params;
	int gpus;
	int micro;            /* micro-batches per step per DP rank */
	double b;             /* micro-batch, sequences */
	double s;             /* full sequence */
	double sl;            /* local sequence, s / cp */
	double tok;           /* local tokens per micro-batch, b * sl */
	double h, f, V;
	double a_l, kv_l;     /* heads and KV heads held by one TP rank */
	double dh, dv;        /* query/key and value head widths */
	/* Bytes a linear layer keeps of its input for the weight gradient:
	 * the activation's element (sim_shape_init), or with a low precision
	 * the quantized operand's (sim_step sets it), as Transformer Engine
	 * saves the quantized input of an fp8 or MXFP8 GEMM. */
	double lin_bytes;
	/* Layers per pipeline stage: L = p * base + rem.  The rem extra
	 * layers go to the middle stages first, since the first stage also
	 * holds the embedding and the last the LM head and loss (Llama 3
	 * 405B's 126 layers over 16 stages: 7 on the first and the last, 8 on
	 * the others; Dubey et al. 2024, sec. 3.3.2); only when every middle
	 * stage has one does the first stage take the last extra layer.
	 * Middle stages 1 .. mid_stages_long have base + 1. */
	int layers_base, layers_first, layers_last;
	int mid_stages, mid_stages_long;   /* middle stages; those with base + 1 */
	/* With sim_parallel.pp_last_layers: the last stage's last chunk
	 * holds chunk_last layers, every other chunk chunk_even; 0 else. */
	int chunk_last, chunk_even;
};

/* Layers of pipeline stage `stage` (0-based) under sh's split. */
int sim_stage_layers(const struct sim_shape *sh, int stage);
/* Of those, the dense layers of a model whose first `dense` layers are
 * dense (sim_dense_layer_count): the layers run in virtual-stage order,
 * chunk k of every stage before chunk k + 1. */
int sim_stage_dense_layers(const struct sim_shape *sh, int dense, int stage);
/* Parameters one GPU of a pipeline stage holds, split by how they are
 * sharded: *tp_params over the TP ranks (attention, dense MLPs, shared
 * experts, routers and norms; the embedding and a learned position table,
 * whole, on the first stage; the final norm, the LM head and the MTP
 * modules on the last), *expert_params the routed experts over the EP x
 * ETP ranks.  layers of the stage, dense of them dense. */
void sim_stage_params(const struct sim_model *m, const struct sim_shape *sh, int layers,
		      int dense, int first, int last, double *tp_params, double *expert_params);
/* Layers of chunk `chunk` of stage `stage` with the interleaved schedule:
 * the stage's layers split as evenly as possible, earlier chunks taking
 * the remainder, except on the first stage, whose later chunks take it.
 * A first stage with one layer fewer than chunks leaves its first chunk
 * to the embedding alone, a last stage so its last to the LM head and
 * loss: Megatron-LM's --account-for-embedding-in-pipeline-split and
 * --account-for-loss-in-pipeline-split, Llama 3 405B's layout (126
 * layers over 16 stages of 8 one-layer chunks; Dubey et al. 2024, sec.
 * 3.3.2: "the first model chunk on the first stage has only the
 * embedding, and the last model chunk on the last stage has only output
 * projection and loss calculation"). */
int sim_chunk_layers(const struct sim_shape *sh, int stage, int chunk);

void sim_shape_init(struct sim_shape *sh, const struct sim_model *m,
		    const struct sim_parallel *p);

/* Parameters of one layer's attention: its projections and their biases,
 * MLA's latent norms, attention sinks. */
double sim_attn_params(const struct sim_model *m);
/* Parameters of one MLP of width (2 matrices for GELU, 3 for SwiGLU, and
 * their biases). */
double sim_mlp_params(const struct sim_model *m, double width);
/* Parameters of one dense transformer layer (attention, an MLP of width
 * ffn, two norms). */
double sim_layer_params(const struct sim_model *m);
/* Parameters of one MoE layer counting routed of its routed experts
 * (experts: all of them; top_k: those one token uses): attention, the
 * experts, every shared expert, the router, two norms. */
double sim_moe_layer_params(const struct sim_model *m, double routed);
/* Layers with a dense MLP: all of them without experts, else the first
 * dense_layers. */
int sim_dense_layer_count(const struct sim_model *m);
/* Parameters of the final norm: hidden, twice with LayerNorm's bias. */
double sim_final_norm_params(const struct sim_model *m);

/* Seconds for a kernel doing flops FLOPs and moving bytes bytes whose
 * smallest GEMM dimension is dmin, at peak FLOP/s and hbm bytes/s, by the
 * efficiency curve above with dim_half in place of SIM_GEMM_DIM_HALF
 * (price_gpu.gemm_dim_half; <= 0: the default), one kernel launch
 * included. */
double sim_kernel_time_s(double flops, double bytes, double dmin, double dim_half,
			 double peak, double hbm);
/* Seconds for batch GEMMs (m x k) * (k x n) of elem-byte operands and a
 * bf16 output, launched as one kernel, dim_half as above. */
double sim_gemm_time_s(double batch, double m, double n, double k,
		       double elem, double dim_half, double peak, double hbm);

/* ---- collectives (sim_comm.c), NCCL ring algorithm, alpha-beta -------- */

/* The link a group of n ranks uses on cluster c when k of them share an
 * NVLink domain (k >= n: the whole group sits in one domain). */
void sim_group_link_k(const struct sim_cluster *c, int n, int k,
		      struct sim_link *out);
/* The same for ranks spaced stride apart in rank order (ranks fill
 * NVLink domains, sim_cluster_domain, in order). */
void sim_group_link(const struct sim_cluster *c, int n, int stride,
		    struct sim_link *out);
/* Ring all-reduce of bytes over n ranks: 2(n-1)/n of the buffer per rank. */
double sim_allreduce_s(double bytes, int n, const struct sim_link *l);
/* Ring reduce-scatter or all-gather of a bytes buffer: (n-1)/n of it. */
double sim_allgather_s(double bytes, int n, const struct sim_link *l);
/* One point-to-point send of bytes. */
double sim_p2p_s(double bytes, const struct sim_link *l);
/* One MoE dispatch (or combine) over an expert group of n ranks spaced
 * stride apart in rank order: each rank sends tokens tokens of
 * token_bytes, each to k experts spread evenly over the n ranks.  The
 * copies for ranks in the sender's NVLink domain go over NVLink, the
 * others over its share of the node's NIC, both at once.  Without flex
 * (NCCL's all-to-all, Megatron-Core's alltoall dispatcher) each copy
 * travels on its own; with flex (DeepEP, HybridEP: Megatron-Core's flex
 * dispatcher; DeepSeek-V3, sec. 3.2.2) a token crosses the network once
 * per NVLink domain holding one of its experts and fans out there. */
double sim_dispatch_s(const struct sim_cluster *c, double tokens, double token_bytes,
		      double k, int n, int stride, int flex);

/* ---- pieces for the event-driven replay (sim.c; used by sim_event.c) --- */

/* Per micro-batch times on one GPU that sim_step() builds its stages from:
 * one transformer layer, the embedding (first stage) and the final norm,
 * logits and loss (last stage). */
struct sim_parts {
	double layer_fwd_s, layer_bwd_s, layer_recompute_s; /* compute */
	double layer_attn_fwd_s, layer_attn_bwd_s;          /* of which attention core */
	double layer_tp_s;          /* TP communication of one pass over the layer */
	double layer_cp_fwd_s, layer_cp_bwd_s;              /* exposed CP exchange */
	/* an MoE layer's (the dense layer's without experts), and the EP
	 * all-to-all it exposes in a micro-batch, forward and backward */
	double moe_layer_fwd_s, moe_layer_bwd_s, moe_layer_recompute_s, moe_layer_attn_bwd_s;
	double moe_layer_ep_s;
	double embed_compute_s, embed_tp_s;  /* forward and backward together */
	double head_compute_s, head_tp_s;    /* forward and backward together */
};

/* Fills out for m, p on c.  Requires sim_check() == RC_OK. */
void sim_parts(const struct sim_model *m, const struct sim_parallel *p,
	       const struct sim_cluster *c, struct sim_parts *out);

/* Bytes one layer's element-wise forward moves (SIM_ELT_BYTES): its norms
 * and residual adds over stream elements of the residual stream, its MLP
 * activation (GELU, or SwiGLU when swiglu) over mlp elements of the MLP's
 * width, in elements of act_bytes. */
double sim_layer_elt_bytes(int swiglu, double stream, double mlp, double act_bytes);

/* Bytes one optimizer step moves (sim.c; sim_finetune.c prices the CPU's
 * step by them too): AdamW over own_params (the local shard) reads and
 * writes its states (sim_opt_state_bytes: with a master copy, the fp32
 * master weight, m and v, 12 bytes for p's defaults) and reads the fp32
 * gradient (4), then writes the working weight of 2 bytes from the
 * master (read 4, write 2): 34 bytes a parameter.  Without a separate
 * master (fp32 weights, or bf16 weights updated in place) it reads and
 * writes the weight itself with the states, and reads the gradient at
 * its own width (fp32 weights: 4 + 4 + 4 + 4 read, 12 written, 28 bytes;
 * bf16 ones with bf16 moments: 2 + 2 + 2 + 2 read, 6 written, 14).  Over
 * grad_params of gradients, the inf/nan check, the norm for clipping and
 * the zeroing for the next step (4 bytes each).  It runs as
 * SIM_OPT_KERNELS kernels. */
#define SIM_OPT_KERNELS 10
double sim_optimizer_bytes(const struct sim_parallel *p, double own_params, double grad_params);

/* Bytes of optimizer state per trained parameter under p (sim.h's enum
 * sim_opt_states: the master copy where one is kept, and the moments). */
double sim_opt_state_bytes(const struct sim_parallel *p);

/* 1 when p's optimizer keeps an fp32 master copy apart from the working
 * weights (16-bit weights with fp32 or bf16 moments), else 0. */
int sim_opt_has_master(const struct sim_parallel *p);

/* HBM bytes per element Transformer Engine moves to give one fp8 GEMM
 * operand: its cast_transpose reads the bf16 tensor and writes the fp8
 * tensor and its transpose (the weight-gradient GEMM reads the transpose),
 * 2 + 1 + 1 (transformer_engine/common/transpose/cast_transpose.cu;
 * Micikevicius et al. 2022, "FP8 Formats for Deep Learning", sec. 4: per-
 * tensor scaled casts).  Weights are cast once a step and not counted. */
#define SIM_FP8_CAST_BYTES 4.0
/* Bytes the fp8 casts of GEMM operands of tok rows and width elements
 * in all move (SIM_FP8_CAST_BYTES each): sim.c passes the summed widths
 * of a layer's four GEMM inputs forward and of their output gradients
 * backward. */
double sim_fp8_cast_bytes(double tok, double width);

/* FLOPs of causal flash attention's forward over bh (sequence, head)
 * pairs of sl queries against s keys of dh each: scores and values, 4 bh
 * sl s dh, less the blocks above the diagonal (128-wide blocks keep a
 * fraction (1 + 128/s)/2 of them).  Backward does 2.5 times as many
 * (SIM_ATTN_BWD). */
double sim_attn_flops(double bh, double sl, double s, double dh);

/* Flash attention's forward time over b sequences of sl queries against s
 * keys, heads query heads sharing kv_heads of dh, act_bytes an element,
 * on a device of GEMM knee dim_half, peak FLOP/s and hbm bytes/s. */
double sim_flash_attn_s(double b, double heads, double kv_heads, double sl, double s, double dh,
			double act_bytes, double dim_half, double peak, double hbm);

/* ---- memory (sim_memory.c) -------------------------------------------- */

/* Bytes of one activation element (sim_parallel's act_bytes_per_element;
 * 0 reads as 2).  Activations moved between ranks and through HBM have
 * this size too. */
static inline double sim_act_bytes(const struct sim_parallel *p)
{
	return p->act_bytes_per_element > 0 ? p->act_bytes_per_element : 2.0;
}

/* Bytes of one parameter's gradient, as stored and as reduced
 * (grad_bytes_per_param; 0 reads as 2). */
static inline double sim_grad_bytes(const struct sim_parallel *p)
{
	return p->grad_bytes_per_param > 0 ? p->grad_bytes_per_param : 2.0;
}

/* Bytes of one working weight: 4 for a trainer whose activations are
 * fp32 (it computes with its fp32 weights and keeps no master copy),
 * else 2. */
static inline double sim_weight_bytes(const struct sim_parallel *p)
{
	return sim_act_bytes(p) >= 4 ? 4.0 : 2.0;
}

/* Routed tokens the busiest EP rank gets over the mean
 * (sim_parallel.moe_imbalance; 0 reads as 1). */
static inline double sim_moe_imbalance(const struct sim_parallel *p)
{
	return p->moe_imbalance > 0 ? p->moe_imbalance : 1.0;
}

/* Model states of params parameters under ZeRO stage zero over dp ranks
 * (Rajbhandari et al., SC'20, sec. 5 and Fig. 1: 2 + 2 + K bytes with
 * K = 12) for weights of weight_bytes and gradients of grad_bytes (0
 * reads as 2 for either) and K = opt_bytes (0 reads as 12, 8 beside
 * fp32 weights): fills out->weights, grads, optimizer. */
void sim_model_states(double params, int zero, int dp, double weight_bytes,
		      double grad_bytes, double opt_bytes, struct sim_memory *out);

/* Activation bytes of one layer for one micro-batch (Korthikanti et al.
 * 2022, sec. 4.1-4.2, generalised to GQA, head widths, MLA's latents and
 * SwiGLU): a dense layer's, or with moe an MoE layer's (its routed
 * tokens' copies through the experts, its shared experts). */
double sim_layer_activation_bytes(const struct sim_model *m,
				  const struct sim_parallel *p,
				  const struct sim_shape *sh, int moe);

/* Fills out with the memory of the fullest pipeline stage. */
void sim_memory_estimate(const struct sim_model *m, const struct sim_parallel *p,
			 const struct sim_cluster *c, const struct sim_shape *sh,
			 struct sim_memory *out);

/* ---- fine-tuning and offload (sim_finetune.c) ------------------------ */

/* DeepSpeed's CPU Adam, parameters updated per second per physical host
 * core: "it reduces the optimizer time from 56 seconds to 8.2 seconds
 * [for] an 11.6B parameter GPT2 model" (DeepSpeed PR #735, 2021-02-08, by
 * its author, a DeepSpeed developer) on the team's DGX-2 hosts, two
 * 24-core Xeon Platinum 8168 (Ren et al. 2021, ZeRO-Offload, sec. 6.1):
 * 11.6e9 / 8.2 s / 48 cores.  The step runs at this rate over the node's
 * cores (price_host.cpu_cores), shared by the node's GPUs' shards. */
#define SIM_CPU_ADAM_PARAMS_PER_CORE_S (11.6e9 / 8.2 / 48.0)
/* Bytes a parameter the step measured above moves: mixed-precision Adam
 * over fp32 master, m, v and gradient with a 16-bit copy written, what
 * sim_optimizer_bytes counts for those states. */
#define SIM_CPU_ADAM_BYTES 34.0
/* Bytes per parameter offload keeps in host memory for the shard it
 * updates: the fp32 master weight, Adam's m and v (12) and the fp32
 * gradient they are accumulated into (4) (DeepSpeed's stage_1_and_2.py
 * and stage3.py keep fp32 gradient partitions beside the fp32 optimizer
 * states on the CPU); with ZeRO-3 the 16-bit weights too (offload_param). */
#define SIM_OFFLOAD_HOST_BYTES 16.0

/* Matrix parameters of one layer's linear layers (Q, K, V, output, the
 * MLP's two or three): what LoRA adapts beside and QLoRA stores in NF4. */
double sim_layer_matrix_params(const struct sim_model *m);

/* The hooks sim.c and sim_memory.c call; each leaves pre-training
 * (p->ft all 0) exactly as it was. */

/* Changes one layer's per micro-batch compute on one GPU (*fwd_s,
 * *bwd_s) for p->ft: frozen base weights drop the weight-gradient GEMMs
 * (gemm_s is the layer's forward GEMMs, which backward ran twice);
 * LoRA's adapters add two thin GEMMs forward, four backward, and their
 * scaled sum into the base output; QLoRA dequantises every base matrix
 * before each GEMM pass. */
void sim_ft_layer_time(const struct sim_model *m, const struct sim_parallel *p,
		       const struct sim_cluster *c, const struct sim_shape *sh, double gemm_s,
		       double *fwd_s, double *bwd_s);
/* GEMMs of the LM head per micro-batch: forward, input and weight
 * gradient (3), without the weight gradient when it is frozen (2). */
double sim_ft_head_gemms(const struct sim_parallel *p);
/* Trainable parameters per TP rank of the stage holding params_stage
 * (the fullest, sim_step): all of them, or its layers' adapters as TP
 * cuts them (each with its projection: the other factor whole). */
double sim_ft_stage_trainable(const struct sim_model *m, const struct sim_parallel *p,
			      const struct sim_shape *sh, double params_stage);
/* Bytes of the weights of that stage as stored (ZeRO-3 gathers them),
 * and of one layer's per TP rank: at w bytes, QLoRA's matrices in NF4. */
double sim_ft_stage_weight_bytes(const struct sim_model *m, const struct sim_parallel *p,
				 const struct sim_shape *sh, double params_stage);
double sim_ft_layer_weight_bytes(const struct sim_model *m, const struct sim_parallel *p,
				 const struct sim_shape *sh);
/* Re-states one pipeline stage's model states (out->weights, grads,
 * optimizer, host and nvme per GPU) for p->ft: frozen base weights with
 * trainable adapters, offloaded states on the host or NVMe.  params is
 * the stage's parameters per TP rank, layers its layer count, first and
 * last whether it holds the embedding and the LM head. */
void sim_ft_states(const struct sim_model *m, const struct sim_parallel *p,
		   const struct sim_shape *sh, double params, int layers, int first, int last,
		   struct sim_memory *out);
/* Scales the stage's host and NVMe bytes to the node's GPUs and states
 * the host's capacity. */
void sim_ft_node_memory(const struct sim_parallel *p, const struct sim_cluster *c,
			const struct sim_shape *sh, struct sim_memory *out);
/* 1 when the node's host holds what offload puts there (always without
 * offload). */
int sim_ft_host_fits(const struct sim_parallel *p, const struct sim_memory *mem);
/* With offload, the step's CPU optimizer (bd->optimizer_s) and the host
 * transfers not hidden by compute (bd->offload_s) for a stage training
 * train_stage of params_stage parameters per TP rank, whose micro-batch
 * computes fwd_s forward and bwd_s backward, M micro-batches a step. */
void sim_ft_offload_time(const struct sim_model *m, const struct sim_parallel *p,
			 const struct sim_cluster *c, const struct sim_shape *sh,
			 double train_stage, double params_stage, double fwd_s, double bwd_s,
			 struct sim_breakdown *bd);
/* sim_check's part for p->ft (RC_OK, or RC_INPUT and a reason in why). */
enum rc sim_ft_check(const struct sim_model *m, const struct sim_parallel *p,
		     const struct sim_cluster *c, char *why, size_t size);

#endif
