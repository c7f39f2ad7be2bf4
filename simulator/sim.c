/*
 * sim.c - the analytic step-time model of GPT-style decoder training:
 * sim_step(), the planner's hot path, on top of the simulator's other
 * files (the checks a configuration must pass first are sim_check.c's,
 * parameter and FLOP counts sim_shape.c's, kernel and GEMM times
 * sim_cost.c's, collectives sim_comm.c's, the memory sim_memory.c's).
 *
 * sim_step() times every GEMM of one layer at its own shape on one GPU,
 * adds element-wise work at HBM bandwidth, tensor/context-parallel
 * communication per layer, assembles pipeline stages and the 1F1B or
 * interleaved schedule, then data-parallel reduction and the optimizer
 * step.  It allocates nothing and reads only its arguments.  It does not
 * simulate the schedule event by event, model kernel fusion beyond the
 * counts stated below, overlap tensor-parallel communication unless the
 * plan says its framework does (tp_overlap), nor slow down for memory
 * pressure near the GPU's capacity.
 *
 * One layer's and the edges' times are sim_layer.c's.  It calls down
 * only: sim_layer.c, sim_cost.c, sim_comm.c, sim_shape.c, sim_finetune.c
 * and sim_memory.c; sim_event.c calls it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim_internal.h"

double sim_time_to_train_s(const struct sim_result *r, double tokens)
{
	if (!r || !(r->tokens_per_s > 0) || !(tokens > 0) || !isfinite(tokens))
		return 0;
	return tokens / r->tokens_per_s;
}

/* One stage's per micro-batch time. */
struct stage_time {
	double compute_s, tp_s, cp_s, ep_s, total_s;
	double fwd_s, bwd_s;   /* compute split, for DP overlap */
	double ep_total_s;     /* EP all-to-all, hidden or not */
	double ep_fwd_share;   /* the forward's share of the MoE layers' compute */
	double edge_bwd_s;     /* the embedding's and head's backward compute */
	double tp_bwd_s, tp_all_bwd_s; /* TP exposed in the backward; its link time */
};

/* A stage of dense dense layers and moe MoE layers (the MTP modules' on
 * the last stage among them). */
static void stage_time(const struct sim_parallel *p, const struct layer_time *ld,
		       const struct layer_time *lm, const struct edge_time *et, int dense, int moe,
		       struct stage_time *st)
{
	int full = p->recompute == SIM_RECOMPUTE_FULL;

	st->fwd_s = dense * ld->fwd_s;
	st->bwd_s = dense * (ld->bwd_s + ld->recompute_s);
	st->tp_s = dense * ld->tp_fwd_s * (full ? 3.0 : 2.0) + et->tp_s;
	st->edge_bwd_s = et->bwd_s;
	st->tp_bwd_s = dense * ld->tp_fwd_s * (full ? 2.0 : 1.0) + et->tp_bwd_s;
	st->tp_all_bwd_s = dense * ld->tp_all_fwd_s * (full ? 2.0 : 1.0) + et->tp_bwd_s;
	st->cp_s = dense * (ld->cp_fwd_s * (full ? 2.0 : 1.0) + ld->cp_bwd_s);
	st->ep_s = st->ep_total_s = st->ep_fwd_share = 0;
	if (moe > 0) {
		/* Dispatch and combine forward, again in full recomputation's
		 * extra forward, and their gradients backward.  With ep_overlap
		 * (Megatron-Core's --overlap-moe-expert-parallel-comm, after
		 * DeepSeek-V3's DualPipe, sec. 3.2.1) one micro-batch's all-to-
		 * alls run under another's forward and backward compute: only
		 * what outlasts it shows, plus the contention cost of the rest
		 * (SIM_OVERLAP_SLOWDOWN).  The compute is one window for every
		 * collective under it (dp_window): on links the TP collectives
		 * share (both inside the NVLink domain or both across the
		 * network), the time TP keeps them busy is not the all-to-
		 * all's; on others, the wall time TP adds to the layer is. */
		double passes = full ? 3.0 : 2.0;
		double ep = lm->ep_fwd_s * passes;
		double under = lm->fwd_s + lm->bwd_s + lm->recompute_s
			       + passes * (lm->tp_fwd_s - (lm->ep_net == lm->tp_net ? lm->tp_all_fwd_s : 0));
		double hidden;

		if (under < 0)
			under = 0;
		hidden = p->ep_overlap ? (ep < under ? ep : under) : 0;

		st->fwd_s += moe * lm->fwd_s;
		st->bwd_s += moe * (lm->bwd_s + lm->recompute_s);
		st->tp_s += moe * lm->tp_fwd_s * (full ? 3.0 : 2.0);
		st->tp_bwd_s += moe * lm->tp_fwd_s * (full ? 2.0 : 1.0);
		st->tp_all_bwd_s += moe * lm->tp_all_fwd_s * (full ? 2.0 : 1.0);
		st->cp_s += moe * (lm->cp_fwd_s * (full ? 2.0 : 1.0) + lm->cp_bwd_s);
		st->ep_total_s = moe * ep;
		if (p->ep_overlap)
			ep = ep - hidden + SIM_OVERLAP_SLOWDOWN * hidden;
		st->ep_s = moe * ep;
		st->ep_fwd_share = lm->fwd_s + lm->bwd_s + lm->recompute_s > 0 ?
				   lm->fwd_s / (lm->fwd_s + lm->bwd_s + lm->recompute_s) : 0;
	}
	st->compute_s = st->fwd_s + st->bwd_s + et->compute_s;
	st->total_s = st->compute_s + st->tp_s + st->cp_s + st->ep_s;
}

/* Times stage i (an MTP module's layer on the last is an MoE layer when
 * the model has experts, else a dense one) and adds it n times to *sum,
 * keeping the slowest in *bot. */
static void stage_add(const struct sim_model *m, const struct sim_parallel *p,
		      const struct sim_shape *sh, const struct layer_time *ld,
		      const struct layer_time *lm, const struct edge_time *et, int i, int n,
		      double *sum, struct stage_time *bot)
{
	int layers = sim_stage_layers(sh, i);
	int mtp = i == sh->p - 1 ? m->mtp_layers : 0;
	struct stage_time cur;

	if (m->experts > 0) {
		int dense = sim_stage_dense_layers(sh, sim_dense_layer_count(m), i);

		stage_time(p, ld, lm, et, dense, layers - dense + mtp, &cur);
	} else {
		stage_time(p, ld, lm, et, layers + mtp, 0, &cur);
	}
	*sum += n * cur.total_s;
	if (cur.total_s > bot->total_s)
		*bot = cur;
}

static double finite_or_zero(double x)
{
	return isfinite(x) ? x : 0;
}

/* Data-parallel communication of one group of parameters on each rank:
 * grad_params of them train (all but a fine-tuning's frozen base), held
 * in weight_bytes (layer_weight_bytes of them one layer's), over n ranks
 * linked by l, under a backward of hidden_b and a forward of hidden_f
 * seconds.  *total is all of it; *exposed what is not hidden (before
 * dp_overlap none and the contention cost). */
static void dp_group_comm(const struct sim_model *m, const struct sim_parallel *p,
			  const struct sim_shape *sh, double grad_params, double weight_bytes,
			  double layer_weight_bytes, double gather, int n,
			  const struct sim_link *dl, double hidden_f, double hidden_b,
			  double *total, double *exposed)
{
	double grad_bytes = sim_grad_bytes(p) * grad_params;
	int M = sh->micro, zero = p->zero;

	*total = *exposed = 0;
	if (n <= 1 || !(grad_params > 0))
		return;
	if (zero <= 2) {
		/* One all-reduce per gradient bucket, each paying the ring's
		 * latency. */
		double b_bytes = sim_grad_bytes(p) * SIM_DP_BUCKET_PARAMS;
		double buckets = ceil(grad_bytes / b_bytes);
		double ar = buckets * sim_allreduce_s(grad_bytes / buckets, n, dl);
		double last_b = sim_allreduce_s(grad_bytes / buckets, n, dl);

		/* Weights gathered narrower than their gradients (gather < 1,
		 * fp8_param_gather): the reduce-scatter at the gradients'
		 * width, the gather at the weights' low-precision one. */
		if (zero >= 1 && gather < 1) {
			ar = buckets * (sim_allgather_s(grad_bytes / buckets, n, dl)
					+ sim_allgather_s(gather * weight_bytes / buckets, n, dl));
			last_b = ar / buckets;
		}
		*total = ar;
		*exposed = ar - hidden_b > last_b ? ar - hidden_b : last_b;
		/* A gather of the updated weights after the optimizer step
		 * leaves only the reduce-scatter under the backward; the
		 * gather, the same bytes, waits. */
		if (zero >= 1 && p->dp_overlap == SIM_DP_OVERLAP_SUMS) {
			double rs = buckets * sim_allgather_s(grad_bytes / buckets, n, dl);
			double last_rs = sim_allgather_s(grad_bytes / buckets, n, dl);
			double ag = gather < 1 ? buckets * sim_allgather_s(gather * weight_bytes / buckets,
									   n, dl) : rs;

			*total = rs + ag;
			*exposed = (rs - hidden_b > last_rs ? rs - hidden_b : last_rs) + ag;
		}
		/* A ZeRO-2 that keeps only its shard of the gradients
		 * reduce-scatters every micro-batch's as its backward ends
		 * (DeepSpeed issue #2252: "gradient reduction is required
		 * after every backward because of gradient partitioning"; the
		 * executor's trainer), each under its own backward but for
		 * its last bucket, the last micro-batch's as above. */
		if (zero == 2 && p->zero2_every_micro_batch && M > 1) {
			double rs = buckets * sim_allgather_s(grad_bytes / buckets, n, dl);
			double last_rs = sim_allgather_s(grad_bytes / buckets, n, dl);

			*total += (M - 1) * rs;
			*exposed += (M - 1) * (rs - hidden_b > last_rs ? rs - hidden_b : last_rs);
		}
	} else if (p->zero3_gather == SIM_ZERO3_TENSOR_SYNC) {
		/* One collective per parameter tensor: each matrix with its
		 * bias and each norm's weight and bias, plus the embedding and
		 * head, gathered in every forward, again in full
		 * recomputation's extra forward and in backward, its gradient
		 * reduce-scattered once.  Each waits for the GPU to finish
		 * before it starts (DeepSpeed PR #1188, 2021: "each all_gather
		 * calls torch.cuda.synchronize()"), so nothing overlaps, and
		 * each pays the ring's n - 1 step latencies plus a copy kernel
		 * per rank (PyTorch's list all_gather and reduce_scatter copy
		 * each rank's part). */
		double per_layer = 2.0 * (m->mlp == SIM_MLP_SWIGLU ? 5.0 : 4.0) + 4.0;
		double tensors = sh->layers_first * per_layer + 4.0;
		double ag = tensors * (sim_allgather_s(gather * weight_bytes / tensors, n, dl)
				       + (n - 1) * SIM_KERNEL_S);
		double scatter = tensors * (sim_allgather_s(grad_bytes / tensors, n, dl)
					    + (n - 1) * SIM_KERNEL_S);
		int gathers = p->recompute == SIM_RECOMPUTE_FULL ? 3 : 2;

		*total = *exposed = M * (gathers * ag + scatter);
	} else {
		/* One collective per transformer block (and one for the
		 * embedding and head), prefetched under the compute: all-gather
		 * forward, all-gather and reduce-scatter backward; one block's
		 * gather is exposed each way. */
		double units = sh->layers_first + 1.0;
		double ag = units * sim_allgather_s(gather * weight_bytes / units, n, dl);
		double rs = units * sim_allgather_s(grad_bytes / units, n, dl);
		double layer_ag = sim_allgather_s(gather * layer_weight_bytes, n, dl);
		double xf = ag - hidden_f, xb = ag + rs - hidden_b;

		*total = M * (2.0 * ag + rs);
		*exposed = M * ((xf > layer_ag ? xf : layer_ag) + (xb > layer_ag ? xb : layer_ag));
	}
}

/* Whether two groups share their links: both inside the NVLink domain,
 * or both across the network (the group of n ranks spaced stride apart
 * and one whose crossing is given). */
static int shares_links(const struct sim_cluster *c, int n, int stride, int other_net)
{
	return sim_group_crosses(c, n, stride) == other_net;
}

/* The wall time of stage st's forward and backward under which a
 * gradient reduction over n ranks spaced stride apart can run.  The
 * window is one: collectives on separate streams share the links they
 * both use (NCCL's channels split them), so the time an EP all-to-all
 * or a TP collective keeps this group's links busy is not the
 * reduction's, while the wall time either adds to the compute (what it
 * exposes, the contention cost included) is, over links it leaves
 * free.  Counting the whole backward for each collective hidden under
 * it had more compute shorten a step.  The backward includes the
 * head's and the embedding's, as the event replay's does; the EP
 * all-to-all splits between forward and backward as the MoE layers'
 * compute does. */
static void dp_window(const struct sim_cluster *c, const struct sim_shape *sh,
		      const struct stage_time *st, int n, int stride, double *win_f,
		      double *win_b)
{
	double ep = st->ep_s - (shares_links(c, n, stride, sim_group_crosses(c, sh->e, sh->et))
				? st->ep_total_s : 0);
	double tp = st->tp_bwd_s - (shares_links(c, n, stride, sim_group_crosses(c, sh->t, 1))
				    ? st->tp_all_bwd_s : 0);

	*win_f = st->fwd_s + ep * st->ep_fwd_share;
	*win_b = st->bwd_s + st->edge_bwd_s + ep * (1 - st->ep_fwd_share) + tp;
	if (*win_f < 0)
		*win_f = 0;
	if (*win_b < 0)
		*win_b = 0;
}

void sim_step(const struct sim_model *m, const struct sim_parallel *p,
	      const struct sim_cluster *c, struct sim_result *out)
{
	struct sim_shape sh;
	struct layer_time ld, lm;
	struct edge_time e_first, e_last, e_both, e_none;
	struct stage_time bot;
	int M, zero = p->zero, ndp, nd = sim_dense_layer_count(m);
	double sum, params_first, params_last, params_stage, ex_first, ex_last, ex_stage;
	double train_stage;
	double hbm, peak = c->gpu.bf16_flops_per_s;
	double mfu_peak = sim_mfu_peak(&c->gpu);
	double dp_total, dp_exposed, ex_total, ex_exposed, shard, opt_s, gather, win_f, win_b;
	double model_flops, hw_flops, tokens, step;
	struct sim_link dl, pl;
	struct sim_breakdown *bd = &out->breakdown;
	enum sim_recompute hw_rc;

	memset(out, 0, sizeof(*out));
	sim_shape_init(&sh, m, p);
	M = sh.micro;
	hbm = c->gpu.hbm_bytes_per_s > 0 ? c->gpu.hbm_bytes_per_s
					 : peak / SIM_DEFAULT_FLOPS_PER_BYTE;
	sim_layer_time(m, p, c, &sh, 0, &ld);
	if (m->experts > 0)
		sim_layer_time(m, p, c, &sh, 1, &lm);
	else
		lm = ld;

	/* Stages: first (embedding), middle ones, last (head and MTP
	 * modules); one stage holds both ends when there is no pipeline. */
	if (sh.p == 1) {
		sim_edge_time(m, p, c, &sh, 1, 1, &e_both);
	} else {
		sim_edge_time(m, p, c, &sh, 1, 0, &e_first);
		sim_edge_time(m, p, c, &sh, 0, 1, &e_last);
		sim_edge_time(m, p, c, &sh, 0, 0, &e_none);
	}
	/* Every stage's time, each kind once: the first, the last, the
	 * middle stages that hold dense layers (they lead the model), then
	 * the middle stages of base + 1 layers and those of base. */
	sum = 0;
	memset(&bot, 0, sizeof(bot));
	stage_add(m, p, &sh, &ld, &lm, sh.p == 1 ? &e_both : &e_first, 0, 1, &sum, &bot);
	if (sh.p > 1) {
		int i = 1, mid_long, mid_short;

		stage_add(m, p, &sh, &ld, &lm, &e_last, sh.p - 1, 1, &sum, &bot);
		while (m->experts > 0 && nd > 0 && i < sh.p - 1 &&
		       sim_stage_dense_layers(&sh, nd, i) > 0)
			stage_add(m, p, &sh, &ld, &lm, &e_none, i++, 1, &sum, &bot);
		mid_long = sh.mid_stages_long - i + 1 > 0 ? sh.mid_stages_long - i + 1 : 0;
		mid_short = sh.p - 1 - i - mid_long;
		if (mid_long > 0)
			stage_add(m, p, &sh, &ld, &lm, &e_none, i, mid_long, &sum, &bot);
		if (mid_short > 0)
			stage_add(m, p, &sh, &ld, &lm, &e_none, sh.p - 2, mid_short, &sum, &bot);
	}

	/* Pipeline schedule (Narayanan et al., SC'21, sec. 2.2): m micro-
	 * batches through p stages take (m - 1) t_max + sum_i t_i, so the
	 * bubble is (p - 1)/m of the ideal time for equal stages, (p-1)/(v m)
	 * with v interleaved chunks per GPU. */
	bd->compute_s = M * bot.compute_s;
	bd->tp_comm_s = M * bot.tp_s;
	bd->cp_comm_s = M * bot.cp_s;
	bd->ep_comm_s = M * bot.ep_s;
	bd->ep_comm_total_s = M * bot.ep_total_s;
	bd->pp_bubble_s = (sum - bot.total_s) / sh.v;

	/* Point-to-point sends between stages: one activation forward and one
	 * gradient backward per micro-batch and chunk, scattered over the TP
	 * ranks (sec. 4.1's scatter/gather optimisation), each a blocking
	 * exchange in Megatron's 1F1B; and the pipeline's fill and drain,
	 * priced above as compute alone, wait for one send a hop, p - 1 hops
	 * forward and p - 1 back.  DeepSpeed's pipeline engine
	 * (pp_send_whole) sends the whole activation from every TP rank, and
	 * a stage's send and receive of each run one after the other: four
	 * transfers a micro-batch on its path instead of two exchanges. */
	if (sh.p > 1) {
		double whole = p->pp_send_whole ? 1.0 : 0.0;

		sim_group_link(c, sh.p, sh.t * sh.c * sh.d, &pl);
		bd->pp_comm_s = ((2.0 + 2.0 * whole) * M * sh.v + 2.0 * (sh.p - 1)) *
				sim_p2p_s(sim_act_bytes(p) * sh.tok * sh.h / (whole ? 1 : sh.t), &pl);
	}

	/* Data parallelism over the dp x cp replicas of each weight shard
	 * (context-parallel ranks hold the same weights).  Ring all-reduce of
	 * bf16 gradients for ZeRO-0; ZeRO-1/2 reduce-scatter the gradients
	 * and all-gather the updated weights, the same bytes (Rajbhandari et
	 * al., SC'20, sec. 7.2); both overlap backward except the last bucket,
	 * unless the plan's dp_overlap says the trainer leaves the gather, or
	 * everything, after the backward.
	 * With zero2_every_micro_batch ZeRO-2 reduce-scatters every micro-
	 * batch's gradients, not the step's sum.
	 * ZeRO-3 gathers weights forward and backward and reduce-scatters
	 * gradients in every micro-batch (1.5x the bytes), by prefetched
	 * blocks or tensor by tensor as the plan's zero3_gather says.
	 * Gradients are reduced at their stored width (sim_grad_bytes);
	 * weights gathered at theirs, or with fp8_param_gather at their FP8
	 * copy's (param_gather_share).
	 * The routed experts' gradients are reduced over the expert data-
	 * parallel ranks instead (Liu et al. 2025, sec. 3), under what of
	 * the backward the rest leaves.
	 * Both hide under what the EP all-to-alls and the TP collectives
	 * leave of the window (dp_window). */
	ndp = sh.d * sh.c;
	sim_stage_params(m, &sh, sh.layers_first, sim_stage_dense_layers(&sh, nd, 0), 1, sh.p == 1,
			 &params_first, &ex_first);
	if (sh.p > 1)
		sim_stage_params(m, &sh, sh.layers_last, sim_stage_dense_layers(&sh, nd, sh.p - 1), 0,
				 1, &params_last, &ex_last);
	else
		params_last = params_first, ex_last = ex_first;
	params_stage = params_first > params_last ? params_first : params_last;
	ex_stage = ex_first > ex_last ? ex_first : ex_last;
	dp_total = dp_exposed = ex_total = ex_exposed = 0;
	train_stage = sim_ft_stage_trainable(m, p, &sh, params_stage);
	gather = sim_param_gather_share(p, c);
	if (ndp > 1) {
		/* one DP x CP group's ranks lie tp apart: TP innermost, then
		 * CP, DP, PP (Megatron-Core's "tp-cp-ep-dp-pp", DeepSpeed's
		 * pipe-data-model topology) */
		sim_group_link(c, ndp, sh.t, &dl);
		dp_window(c, &sh, &bot, ndp, sh.t, &win_f, &win_b);
		dp_group_comm(m, p, &sh, train_stage, sim_ft_stage_weight_bytes(m, p, &sh, params_stage),
			      nd > 0 ? sim_ft_layer_weight_bytes(m, p, &sh)
				     : sim_weight_bytes(p) * sh.moe_rest_params / sh.t,
			      gather, ndp, &dl, win_f, win_b, &dp_total, &dp_exposed);
	}
	if (sh.ed > 1 && ex_stage > 0) {
		/* expert data-parallel ranks lie ep x etp apart */
		double left_f, left_b;

		dp_window(c, &sh, &bot, sh.ed, sh.e * sh.et, &win_f, &win_b);
		left_f = win_f - dp_total > 0 ? win_f - dp_total : 0;
		left_b = win_b - dp_total > 0 ? win_b - dp_total : 0;

		sim_group_link(c, sh.ed, sh.e * sh.et, &dl);
		dp_group_comm(m, p, &sh, ex_stage, sim_weight_bytes(p) * ex_stage,
			      sim_weight_bytes(p) * sh.routed_params / ((double)sh.e * sh.et), gather,
			      sh.ed, &dl, left_f, left_b, &ex_total, &ex_exposed);
		dp_total += ex_total;
		dp_exposed += ex_exposed;
	}
	if (p->dp_overlap == SIM_DP_OVERLAP_NONE)
		dp_exposed = dp_total;
	/* Communication hidden under compute still slows it: NCCL's kernels
	 * take SMs and memory bandwidth from the GEMMs they overlap (Lee et
	 * al., arXiv:2507.03114, 2025: 18.9% slower compute on average on
	 * A100 and H100 while a collective runs). */
	dp_exposed += SIM_OVERLAP_SLOWDOWN * (dp_total - dp_exposed);
	bd->dp_comm_total_s = dp_total;
	bd->dp_comm_exposed_s = dp_exposed;

	/* The optimizer step is memory-bound (sim_optimizer_bytes over the
	 * local shard and the local gradients), at the HBM rate, or at the
	 * rate a calibration of this device measured for it; the experts'
	 * states shard over the expert data-parallel ranks. */
	shard = train_stage / (zero >= 1 ? ndp : 1) + ex_stage / (zero >= 1 ? sh.ed : 1);
	opt_s = sim_hbm_time_s(sim_optimizer_bytes(p, shard,
					       train_stage / (zero >= 2 ? ndp : 1)
					       + ex_stage / (zero >= 2 ? sh.ed : 1)),
			   c->gpu.opt_bytes_per_s > 0 ? c->gpu.opt_bytes_per_s : hbm,
			   SIM_OPT_KERNELS);
	bd->optimizer_s = opt_s;
	sim_ft_offload_time(m, p, c, &sh, train_stage, params_stage, bot.fwd_s, bot.bwd_s, bd);

	step = bd->compute_s + bd->tp_comm_s + bd->cp_comm_s + bd->ep_comm_s + bd->pp_bubble_s
	       + bd->pp_comm_s + bd->dp_comm_exposed_s + bd->optimizer_s
	       + bd->offload_s;

	/* Model FLOPs count no recomputation (MFU); hardware FLOPs count what
	 * is recomputed (HFU).  Flash attention's own recomputation in its
	 * backward is not counted, and selective recomputation with flash
	 * recomputes nothing more. */
	hw_rc = p->recompute;
	if (hw_rc == SIM_RECOMPUTE_SELECTIVE && p->flash)
		hw_rc = SIM_RECOMPUTE_NONE;
	model_flops = sim_finetune_train_flops(m, &p->ft, p->gbs, SIM_RECOMPUTE_NONE);
	hw_flops = hw_rc == SIM_RECOMPUTE_NONE ? model_flops : sim_finetune_train_flops(m, &p->ft, p->gbs, hw_rc);
	tokens = (double)p->gbs * m->seq;

	out->step_time_s = finite_or_zero(step);
	if (out->step_time_s > 0) {
		out->tokens_per_s = finite_or_zero(tokens / step);
		out->model_flops_per_gpu_s = finite_or_zero(model_flops / step / sh.gpus);
		out->hardware_flops_per_gpu_s = finite_or_zero(hw_flops / step / sh.gpus);
		out->mfu = finite_or_zero(out->model_flops_per_gpu_s / mfu_peak);
		out->hfu = finite_or_zero(out->hardware_flops_per_gpu_s / mfu_peak);
	}
	out->grad_accum = M;
	{
		struct gemm_prec g;

		sim_gemm_precision(p, c, &g);
		sh.lin_bytes = g.elem;
	}
	sim_memory_estimate(m, p, c, &sh, &out->memory);
	out->fits = out->memory.total <= out->memory.capacity && sim_ft_host_fits(p, &out->memory);
}

/* ---- pieces for the event-driven replay (sim_event.c) ---------------- */

void sim_parts(const struct sim_model *m, const struct sim_parallel *p,
	       const struct sim_cluster *c, struct sim_parts *out)
{
	struct sim_shape sh;
	struct layer_time lt, lm;
	struct edge_time first, last;
	struct stage_time st;
	struct edge_time none = { 0, 0, 0, 0 };
	int dp_n, dp_stride;

	sim_shape_init(&sh, m, p);
	sim_layer_time(m, p, c, &sh, 0, &lt);
	if (m->experts > 0)
		sim_layer_time(m, p, c, &sh, 1, &lm);
	else
		lm = lt;
	sim_edge_time(m, p, c, &sh, 1, 0, &first);
	sim_edge_time(m, p, c, &sh, 0, 1, &last);
	out->layer_fwd_s = lt.fwd_s;
	out->layer_bwd_s = lt.bwd_s;
	out->layer_recompute_s = lt.recompute_s;
	out->layer_attn_fwd_s = lt.attn_fwd_s;
	out->layer_attn_bwd_s = lt.attn_bwd_s;
	out->layer_tp_s = lt.tp_fwd_s;
	out->layer_cp_fwd_s = lt.cp_fwd_s;
	out->layer_cp_bwd_s = lt.cp_bwd_s;
	out->moe_layer_fwd_s = lm.fwd_s;
	out->moe_layer_bwd_s = lm.bwd_s;
	out->moe_layer_recompute_s = lm.recompute_s;
	out->moe_layer_attn_bwd_s = lm.attn_bwd_s;
	/* the EP all-to-all one MoE layer exposes in a micro-batch */
	stage_time(p, &lt, &lm, &none, 0, 1, &st);
	out->moe_layer_ep_s = st.ep_s;
	out->moe_layer_tp_s = lm.tp_fwd_s;
	out->moe_layer_ep_fwd_share = st.ep_fwd_share;
	/* the links of the DP reduction that sim_step() times first (the
	 * dense one's group, or the experts' where there is none) that the
	 * all-to-all and the TP collectives keep busy (dp_window) */
	dp_n = sh.d * sh.c > 1 ? sh.d * sh.c : sh.ed;
	dp_stride = sh.d * sh.c > 1 ? sh.t : sh.e * sh.et;
	out->moe_layer_ep_busy_s = shares_links(c, dp_n, dp_stride, lm.ep_net) ? st.ep_total_s : 0;
	out->layer_tp_busy_s = shares_links(c, dp_n, dp_stride, lt.tp_net) ? lt.tp_all_fwd_s : 0;
	out->embed_compute_s = first.compute_s;
	out->embed_tp_s = first.tp_s;
	out->head_compute_s = last.compute_s;
	out->head_tp_s = last.tp_s;
}
