/*
 * sim_names.c - the names plan files, models.csv and flags spell the
 * simulator's enums with (sim.h), below every file that reads or writes
 * them.  It calls no other file.
 */
#include "sim.h"

const char *const sim_mlp_names[2] = { "gelu", "swiglu" };
const char *const sim_pos_names[3] = { "rope", "learned", "alibi" };
const char *const sim_norm_names[2] = { "rmsnorm", "layernorm" };
const char *const sim_router_score_names[2] = { "softmax", "sigmoid" };
const char *const sim_balance_names[5] = { "unknown", "aux_loss", "seq_aux_loss",
					   "global_aux_loss", "none" };
const char *const sim_glu_act_names[2] = { "silu", "quick_gelu" };
const char *const sim_rope_scaling_names[4] = { "none", "linear", "llama3", "yarn" };
const char *const sim_recompute_names[3] = { "none", "selective", "full" };
const char *const sim_precision_names[4] = { "bf16", "fp8", "mxfp8", "nvfp4" };
const char *const sim_zero3_gather_names[2] = { "block", "tensor_sync" };
const char *const sim_zero2_reduce_names[2] = { "step", "micro_batch" };
const char *const sim_dp_overlap_names[3] = { "all", "sums", "none" };
const char *const sim_pp_send_names[2] = { "split", "whole" };
const char *const sim_attn_kernel_names[5] = { "auto", "fa1", "fa2", "fa3", "cudnn" };
const char *const sim_moe_gemm_names[3] = { "auto", "loop", "device" };
const char *const sim_stack_names[3] = { "", "te2.14", "te2.16" };
const char *const sim_plan_framework_names[4] = { "", "megatron", "deepspeed", "trl" };
const char *const sim_ep_dispatcher_names[2] = { "alltoall", "flex" };
const char *const sim_opt_state_names[4] = { "fp32", "bf16", "bf16_no_master", "int8_no_master" };
const char *const sim_loss_names[3] = { "vocab_parallel", "eager_fp32", "chunked_bf16" };
const char *const sim_recompute_module_names[SIM_RECOMPUTE_MODULES] = {
	"layernorm", "mla_up_proj", "moe_act", "mlp"
};

const char *sim_mlp_str(enum sim_mlp m)
{
	return sim_mlp_names[m == SIM_MLP_SWIGLU];
}

const char *sim_recompute_str(enum sim_recompute r)
{
	return sim_recompute_names[r == SIM_RECOMPUTE_FULL ? 2 : r == SIM_RECOMPUTE_SELECTIVE];
}

const char *sim_precision_str(enum sim_precision p)
{
	return (int)p >= 0 && (int)p < 4 ? sim_precision_names[p] : sim_precision_names[0];
}
