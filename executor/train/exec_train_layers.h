/*
 * exec_train_layers.h - what each file of the trainer lends the others,
 * a section a file.  The files, bottom up (each calls only files listed
 * before it; exec_trace.c, exec_data.c and exec_opts.c, exec_train.h's,
 * and exec_train_state.c below them all):
 *   exec_train_state.c      the trainer's state (exec_train_state.h) and
 *                           the accessors of exec_train.h over it
 *   exec_train_comm.c       collectives and schedule ops, traced
 *   exec_train_lora.c       LoRA's adapters beside a layer's projections
 *   exec_train_tp.c         norms and tensor/sequence-parallel sums
 *   exec_train_embed.c      embedding (and the tied word matrix)
 *   exec_train_attention.c  a layer's attention block, context parallel
 *   exec_train_mlp.c        a layer's MLP block (and its MLP, the shared experts')
 *   exec_train_moe.c        a mixture-of-experts layer's MLP block
 *   exec_train_head.c       final norm, LM head, cross-entropy
 *   exec_train_act.c        activation records
 *   exec_train_params.c     parameters, their shards, init, ZeRO
 *   exec_train_schedule.c   a layer, a chunk, the pipeline schedule
 *   exec_train_optimizer.c  gradient norm, clipping, AdamW
 *   exec_trainer.c          the driver: build, step, free (exec_train.h)
 * How the layout cuts the model is exec_trainer.c's opening comment.  The
 * device's kernels these call are device/'s (struct exec_backend).
 */
#ifndef GPUPLAN_EXEC_TRAIN_LAYERS_H
#define GPUPLAN_EXEC_TRAIN_LAYERS_H

#include "train/exec_train_state.h"

/* ---- exec_train_comm.c --------------------------------------------- */

/* Collectives and schedule ops, recorded on the trace when it is on: every
 * collective of the trainer goes through these. */
enum rc train_all_reduce(struct exec_trainer *t, struct exec_group *g, void *buf, size_t n,
			 enum exec_dtype dt, enum exec_redop op);
enum rc train_grads_sum_start(struct exec_trainer *t, struct unit *u);
enum rc train_all_to_all(struct exec_trainer *t, struct exec_group *g, const void *send,
			 const size_t *send_n, void *recv, const size_t *recv_n, enum exec_dtype dt);
enum rc train_reduce_scatter(struct exec_trainer *t, struct exec_group *g, const void *send,
			     void *recv, size_t count, enum exec_dtype dt);
enum rc train_all_gather(struct exec_trainer *t, struct exec_group *g, void *buf, size_t count,
			 enum exec_dtype dt);
long train_op_begin(struct exec_trainer *t, const struct sched_op *op, int kind, double bytes);
void train_op_end(struct exec_trainer *t, long h, int kind);
enum rc train_tp_sum(struct exec_trainer *t, void *buf, size_t n, enum exec_dtype dt);

/* ---- exec_train_lora.c -------------------------------------------- */

/* LoRA's adapters (Hu et al. 2021; their unit's shapes are
 * exec_train_params.c's): whether layer u's base tensor w (T_WQ ...) has
 * one, whether a run's layers adapt the projection of slot L_Q ... (a
 * layer record's rank-r activation), and its forward and backward beside the base GEMM: out[N, oc] += s B A x
 * keeping z = x A^T in lz, and the gradients of A and B and dx[N, ic] +=
 * from dy[N, oc], out's gradient. */
int train_lora_has(const struct exec_trainer *t, const struct unit *u, int w);
int train_lora_adapts(const struct exec_trainer *t, int slot);
void train_lora_forward(struct exec_trainer *t, const struct unit *u, int w, void *out,
			const void *x, void *lz, int ic, int oc);
void train_lora_backward(struct exec_trainer *t, const struct unit *u, int w, void *dx,
			 const void *dy, const void *x, const void *lz, int ic, int oc);

/* ---- exec_train_tp.c ----------------------------------------------- */

/* Tensor and sequence parallelism: the norms on this rank's slice of the
 * residual stream, the gather after them and the sums of row-parallel
 * GEMMs. */
void train_norm_forward(struct exec_trainer *t, void *out, float *mean, float *rstd,
			const void *inp, const void *w, const void *b);
void train_norm_backward(struct exec_trainer *t, void *dinp, float *dw, float *db,
			 const void *dout, const void *inp, const void *w,
			 const float *mean, const float *rstd);
enum rc train_seq_gather(struct exec_trainer *t, const void *x, void *full,
			 const void **out);
enum rc train_seq_reduce(struct exec_trainer *t, void *full, void **out);
enum rc train_row_parallel(struct exec_trainer *t, void **out, const void *inp,
			   const struct unit *u, int w, int bias, void *lz, int ic);

/* ---- exec_train_embed.c -------------------------------------------- */

/* The embedding unit (and the tied word matrix both ends read). */
const void *train_word_params(const struct exec_trainer *t, const struct unit *u, int untied);
float *train_word_grads(const struct exec_trainer *t, const struct unit *u, int untied);
enum rc train_embed_forward(struct exec_trainer *t, const struct unit *u, struct act *a);
enum rc train_embed_backward(struct exec_trainer *t, const struct unit *u,
			     const struct act *a, const void *dx);

/* ---- exec_train_attention.c ---------------------------------------- */

/* A layer's attention block (with context parallelism). */
enum rc train_attention_forward(struct exec_trainer *t, const struct unit *u, const void *x,
				struct layer_act *a, int att);
enum rc train_attention_backward(struct exec_trainer *t, const struct unit *u, const void *x,
				 const struct layer_act *a, int att, void *dx);

/* ---- exec_train_mlp.c ---------------------------------------------- */

/* A layer's MLP block; its MLP alone, between the norm and the residual
 * (the shared experts' in an MoE layer). */
enum rc train_mlp_forward(struct exec_trainer *t, const struct unit *u, struct layer_act *a,
			  void *out);
enum rc train_mlp_backward(struct exec_trainer *t, const struct unit *u,
			   const struct layer_act *a, void *dx);
enum rc train_ffn_forward(struct exec_trainer *t, const struct unit *u, struct layer_act *a,
			  void **y);
enum rc train_ffn_backward(struct exec_trainer *t, const struct unit *u,
			   const struct layer_act *a, const void *dx, void **dn);

/* ---- exec_train_moe.c ---------------------------------------------- */

/* An MoE layer's MLP block; what its forward left for the backward
 * freed (accepts a dense layer's record and does nothing then). */
enum rc train_moe_forward(struct exec_trainer *t, const struct unit *u, struct layer_act *a,
			  void *out);
enum rc train_moe_backward(struct exec_trainer *t, const struct unit *u, struct layer_act *a,
			   void *dx);
void train_moe_release(struct exec_trainer *t, struct layer_act *a);

/* ---- exec_train_head.c --------------------------------------------- */

/* The head unit: final norm, LM head and cross-entropy. */
enum rc train_head_forward(struct exec_trainer *t, const struct unit *u, struct act *a);
enum rc train_head_backward(struct exec_trainer *t, const struct unit *u, struct act *a);

/* ---- exec_train_act.c ---------------------------------------------- */

/* Activation records: what a chunk keeps from a micro-batch's forward to
 * its backward, carved from one allocation and reused. */
void train_carve_layer(const struct exec_trainer *t, struct carve *c,
		       struct layer_act *a, int att, int layer);
struct act *train_act_acquire(struct exec_trainer *t, int chunk, int mb);
void train_act_release(struct exec_trainer *t, struct act *a);
void train_act_free(struct exec_trainer *t, struct act *a);

/* ---- exec_train_params.c ------------------------------------------- */

/* Parameters: each unit's tensors, their initial values, its ZeRO shard
 * and range, ZeRO-3's gather and drop, and the end of a unit's backward. */
void train_unit_shapes(struct exec_trainer *t, struct unit *u);
void train_own_range(const struct exec_trainer *t, const struct exec_group *g, long n,
		     long *shard, long *off, long *len);
void train_unit_alloc(struct exec_trainer *t, struct unit *u);
void train_unit_free(struct exec_trainer *t, struct unit *u);
enum rc train_unit_gather(struct exec_trainer *t, struct unit *u);
void train_unit_drop(struct exec_trainer *t, struct unit *u);
void train_grads_begin(struct exec_trainer *t, struct unit *u);
enum rc train_grads_end(struct exec_trainer *t, struct unit *u);

/* ---- exec_train_schedule.c ----------------------------------------- */

/* The pipeline schedule's ops, a chunk and a micro-batch at a time. */
struct unit *train_chunk_layer(struct exec_trainer *t, int chunk, int i);
enum rc train_run_schedule(struct exec_trainer *t, int backward);

/* ---- exec_train_optimizer.c ---------------------------------------- */

/* The optimizer step: gradient norm, clipping, AdamW, ZeRO's gathers. */
enum rc train_world_sums(struct exec_trainer *t, double loss, int norm, double out[2]);
int train_counts_loss(const struct exec_trainer *t);
void train_zero_grads(struct exec_trainer *t);
enum rc train_optimizer_step(struct exec_trainer *t, int step, double *loss,
			     double *grad_norm);

#endif
