/*
 * sim_cost.h - the bottom of the simulator (sim_cost.c): one kernel's
 * time on the GPU's efficiency curve, a GEMM's, attention's FLOPs and
 * kernels, element-wise and fp8-cast bytes, the bytes of a parameter's
 * training states and of an optimizer step; and the inline helpers every
 * file reads a plan's element widths with.  It includes only sim.h and
 * sim_const.h.
 */
#ifndef GPUPLAN_SIM_COST_H
#define GPUPLAN_SIM_COST_H

#include <math.h>

#include "sim.h"
#include "sim_const.h"

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

/* Seconds for a kernel doing flops FLOPs and moving bytes bytes whose
 * smallest GEMM dimension is dmin, at peak FLOP/s and hbm bytes/s, by the
 * efficiency curve of sim_const.h with dim_half in place of SIM_GEMM_DIM_HALF
 * (price_gpu.gemm_dim_half; <= 0: the default), one kernel launch
 * included. */
double sim_kernel_time_s(double flops, double bytes, double dmin, double dim_half,
			 double peak, double hbm);
/* The memory bandwidth a GEMM's bytes move at on g, whose other kernels
 * see hbm: unbounded where g's GEMMs compute from cache
 * (price_gpu.gemm_cached), so that sim_gemm_time_s adds no memory term. */
static inline double sim_gemm_hbm(const struct price_gpu *g, double hbm)
{
	return g->gemm_cached ? HUGE_VAL : hbm;
}

/* Seconds for batch GEMMs (m x k) * (k x n) of elem-byte operands and a
 * bf16 output, launched as one kernel, dim_half as above. */
double sim_gemm_time_s(double batch, double m, double n, double k,
		       double elem, double dim_half, double peak, double hbm);

/* Bytes one layer's element-wise forward moves (SIM_ELT_BYTES): its norms
 * and residual adds over stream elements of the residual stream, its MLP
 * activation (GELU, or SwiGLU when swiglu) over mlp elements of the MLP's
 * width, in elements of act_bytes. */
double sim_layer_elt_bytes(int swiglu, double stream, double mlp, double act_bytes);
/* The part of sim_layer_elt_bytes() that is the MLP activation's over mlp
 * elements. */
double sim_layer_act_bytes(int swiglu, double mlp, double act_bytes);

/* Elements RoPE rotates in one token's queries and keys on a rank of a_l
 * query and kv_l key heads qk wide: the rotary share (rotary_percent, 0:
 * all) of each head, or with MLA qk_rope_dim of every query head and
 * of every key head (the shared rope key expanded to each); 0 without
 * RoPE. */
double sim_rope_elems(const struct sim_model *m, double a_l, double kv_l, double qk);

/* Bytes the fp8 casts of GEMM operands of tok rows and width elements
 * in all move (SIM_FP8_CAST_BYTES each): sim.c passes the summed widths
 * of a layer's four GEMM inputs forward and of their output gradients
 * backward. */
double sim_fp8_cast_bytes(double tok, double width);

/* What one kind of loss (sim_loss) costs per logit a GPU computes (V / tp
 * a token, for each head): the HBM bytes it moves forward and backward,
 * the bytes it keeps from its forward to its backward, and the bytes
 * live at its fullest moment, those kept included (sim_memory.c). */
struct sim_loss_cost {
	double bytes;
	double held_bytes;
	double peak_bytes;
};

/* The figures of loss l (sim_check's range); never NULL. */
const struct sim_loss_cost *sim_loss_cost(enum sim_loss l);

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

/* Model states of params parameters under ZeRO stage zero over dp ranks
 * (Rajbhandari et al., SC'20, sec. 5 and Fig. 1: 2 + 2 + K bytes with
 * K = 12) for weights of weight_bytes and gradients of grad_bytes (0
 * reads as 2 for either) and K = opt_bytes (0 reads as 12, 8 beside
 * fp32 weights): fills out->weights, grads, optimizer. */
void sim_model_states(double params, int zero, int dp, double weight_bytes,
		      double grad_bytes, double opt_bytes, struct sim_memory *out);

/* Bytes one optimizer step moves (sim.c times the GPU's step by them,
 * sim_finetune.c the CPU's): AdamW over own_params (the local shard) reads and
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
double sim_optimizer_bytes(const struct sim_parallel *p, double own_params, double grad_params);

/* Bytes of optimizer state per trained parameter under p (sim.h's enum
 * sim_opt_states: the master copy where one is kept, and the moments). */
double sim_opt_state_bytes(const struct sim_parallel *p);

/* 1 when p's optimizer keeps an fp32 master copy apart from the working
 * weights (16-bit weights with fp32 or bf16 moments), else 0. */
int sim_opt_has_master(const struct sim_parallel *p);

#endif
