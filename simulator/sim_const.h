/*
 * sim_const.h - the analytic model's constants, each with the
 * measurement, paper or source file it was read from.  One set for every
 * GPU, never tuned per source of measurements: the efficiency curve was
 * set once against all of bench/accuracy's sources together.  Each
 * section names the file that prices with it.
 *
 * Constants only: no declarations, no includes, no file of its own; every
 * file of the simulator may read it, and sim.h includes it for the two
 * the CLI names (SIM_DEFAULT_INTER_BYTES_PER_S, SIM_NF4_BITS).
 */
#ifndef GPUPLAN_SIM_CONST_H
#define GPUPLAN_SIM_CONST_H

/* ---- default efficiency curve (sim_cost.c, sim_kernel_time_s) --------------
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
/* ---- fused attention kernels as data (sim_cost.c, sim_attn_kernel_time_s)
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

/* ---- host time, launches, element-wise traffic (sim.c, sim_cost.c) ---- */
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
/* The chunks torchtune's CEWithChunkedOutputLoss splits the logits into
 * (num_output_chunks = 8, its default); the loss's bytes by kind are
 * sim_cost.c's (sim_loss_cost). */
#define SIM_LOSS_CHUNKS 8.0
/* Bytes per attention score without flash attention (Megatron-LM's
 * unfused path): forward, the fused scale-mask-softmax reads and writes
 * the scores (4) and dropout reads, writes and keeps a mask (5);
 * backward, the softmax gradient reads probabilities and gradient and
 * writes one (6), dropout's reads gradient and mask and writes (5). */
#define SIM_SOFTMAX_FWD_BYTES 9.0
#define SIM_SOFTMAX_BWD_BYTES 11.0
/* HBM bytes per element Transformer Engine moves to give one fp8 GEMM
 * operand: its cast_transpose reads the bf16 tensor and writes the fp8
 * tensor and its transpose (the weight-gradient GEMM reads the transpose),
 * 2 + 1 + 1 (transformer_engine/common/transpose/cast_transpose.cu;
 * Micikevicius et al. 2022, "FP8 Formats for Deep Learning", sec. 4: per-
 * tensor scaled casts).  Weights are cast once a step and not counted. */
#define SIM_FP8_CAST_BYTES 4.0
/* HBM bytes per element of the experts' second GEMM output (copies x
 * hidden) that Megatron-Core moves to add biased experts' fc2 bias
 * (TEGroupedMLP._apply_bias, megatron/core/transformer/moe/experts.py,
 * since "Enable bias in expert mlp [gpt-oss 5/5]", a329dd6, 2025-09-22):
 * fc2 runs with skip_bias_add and the bias is added per local expert in
 * eager PyTorch, t + b * p, with the routing weight p in fp32, so every
 * temporary is fp32.  Forward: b * p written (4), t + it read 2 + 4 and
 * written 4, torch.cat read 4 and written 4, .to(bf16) read 4 and written
 * 2: 28.  Backward: the cast's gradient read 2 and written 4, the add's
 * gradient to t cast back read 4 written 2, the product's two gradients
 * (grad x p summed over tokens for b, grad x b summed over the hidden
 * units for p) read 4 written 4 and read 4 again each, the split's
 * gradient gathered read 2 written 2: 40.  (The packed-bias path of
 * 883533e, 2026-08-14, moves 36 forward.) */
#define SIM_EXPERT_BIAS_FWD_BYTES 28.0
#define SIM_EXPERT_BIAS_BWD_BYTES 40.0
/* HBM bytes per element of a clamped Quick-GEGLU's input in an MoE
 * layer (GPT-OSS's experts, 2 x the expert width a copy), at 2-byte
 * activations:
 * Megatron-Core's weighted_bias_quick_geglu_impl
 * (megatron/core/fusions/fused_bias_geglu.py, since 2e29a5e, 2025-09-09)
 * clamps the two halves and concatenates them in eager PyTorch before its
 * fused kernel (the clamped SwiGLU clamps inside its fused kernel and pays
 * nothing): forward the two clamps read and write their half (4) and the
 * cat reads and writes the whole (4): 8.  Backward: torch's
 * clamp_backward, where(self <= max, grad, 0) on the gate half (a compare
 * read 2 written 1, the where read 3 written 2: 8) and where((self >=
 * min) & (self <= max), grad, 0) on the linear half (14), 11 on average,
 * and the halves' gradients gathered into one (read 2, write 2): 15. */
#define SIM_GLU_CLAMP_FWD_BYTES 8.0
#define SIM_GLU_CLAMP_BWD_BYTES 15.0
/* HBM bytes per rotated element of the queries and keys (at 2-byte
 * activations) that applying RoPE moves, and its kernels per layer, on
 * the two paths Megatron-Core has (sim_rope_fused).  Fused (Transformer
 * Engine's fused_apply_rotary_pos_emb, called for q and for k): each
 * kernel reads the tensor and writes the result, and backward reads the
 * gradient and writes the input's: 4 and 4 bytes, 2 kernels each way;
 * the cos/sin table (sequence x head width, fp32) is read once per
 * position and not counted.  Megatron-Core's MLA kernels
 * (fused_mla_yarn_rope_apply.py) rotate q's rope part in place and the
 * shared rope key into each head's key, priced the same.  Eager
 * (_apply_rotary_pos_emb_bshd, rope_utils.py, at Megatron-LM d98e8a6),
 * per call: the negated half (read 1, write 1 per element: 2) and
 * torch.cat into the rotated copy (4), t * cos and rotated * sin (4
 * each), their sum (6), torch.cat with the empty unrotated part (4): 24
 * forward over 6 kernels, plus 6 small ones making cos and sin (times
 * the attention factor) from the table; backward, the two products'
 * gradients (4 each), the negation's (2), the chunk's cat of the halves
 * (4), the sum of t's two gradients (6), the slices' zeros and copy into
 * the whole head (6 and 2) and their sum (6): 34 over 9 kernels. */
#define SIM_ROPE_FUSED_FWD_BYTES 4.0
#define SIM_ROPE_FUSED_BWD_BYTES 4.0
#define SIM_ROPE_FUSED_KERNELS 2
#define SIM_ROPE_EAGER_FWD_BYTES 24.0
#define SIM_ROPE_EAGER_BWD_BYTES 34.0
#define SIM_ROPE_EAGER_FWD_KERNELS 24
#define SIM_ROPE_EAGER_BWD_KERNELS 18
/* Kernels one optimizer step runs (sim_optimizer_bytes, sim_cost.h). */
#define SIM_OPT_KERNELS 10

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
/* The inter-node bandwidth a cluster without a figure is simulated with
 * (200 Gb/s per node), so that simulate answers a what-if; simulate says
 * so, and the planner never clusters an offering without a figure. */
#define SIM_DEFAULT_INTER_BYTES_PER_S 25e9

/* ---- memory defaults (sim_memory.c) ----------------------------------- */
/* CUDA context, cuBLAS workspace and NCCL buffers per GPU, bytes. */
#define SIM_CONTEXT_BYTES 1.5e9
/* Caching-allocator fragmentation, fraction of the tensors' bytes. */
#define SIM_ALLOC_SLACK 0.05

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
/* Bits a QLoRA base parameter is stored in: 4-bit NormalFloat and its
 * double-quantised block constants, 8/64 + 32/(64 * 256) = 0.127 bits a
 * parameter (Dettmers et al. 2023, QLoRA, sec. 3, Double Quantization). */
#define SIM_NF4_BITS 4.127

#endif
