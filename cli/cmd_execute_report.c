/*
 * cmd_execute_report.c - what rank 0 of `gpuplan execute` prints: the
 * run's header, each step's line with its progress and metrics, the
 * checkpoint line, --check's findings and the closing summary of
 * measured against predicted.  Calls common's unit formats, the progress
 * line and the executor's metrics; called by cmd_execute.c.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_execute.h"

static void print_step(const struct exec_step_info *s)
{
	char t[32], c[32];

	printf("step %*d/%d  loss %.4f  grad norm %.4f  %s",
	       s->steps >= 100 ? 3 : s->steps >= 10 ? 2 : 1, s->step, s->steps,
	       s->loss, s->grad_norm, unit_fmt_duration(t, sizeof(t), s->time_s));
	if (s->cpu_timed)
		printf(" (%s CPU)", unit_fmt_duration(c, sizeof(c), s->cpu_s));
	printf("\n");
	fflush(stdout);
}

void execute_metrics_sample(const struct metrics_ctx *mc, struct exec_metrics_sample *x)
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

	execute_metrics_sample(mc, &x);
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

void execute_progress_step(struct step_ctx *sc, int step, int steps)
{
	char what[48];

	snprintf(what, sizeof(what), "execute: step %d/%d", step, steps);
	sc->prog = cli_progress_start(what, 0);
}

void execute_on_step(void *ctx, const struct exec_step_info *s)
{
	struct step_ctx *sc = ctx;

	gp_progress_done(sc->prog);
	sc->prog = NULL;
	print_step(s);
	if (sc->mc)
		metrics_step(sc->mc, s);
	if (s->step < s->steps)
		execute_progress_step(sc, s->step + 1, s->steps);
}

void execute_print_header(const struct exec_opts *o)
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

void execute_print_ckpt(const struct exec_opts *o, int resume_at)
{
	printf("checkpoint: every %d step%s and after the last, into %s", o->ckpt_every,
	       o->ckpt_every == 1 ? "" : "s", o->ckpt_dir);
	if (resume_at > 0)
		printf("; resuming after step %d", resume_at);
	printf("\n");
	fflush(stdout);
}

static void print_pct(double measured, double predicted)
{
	if (predicted > 0)
		printf("  %+7.1f%%\n", 100.0 * (measured - predicted) / predicted);
	else
		printf("\n");
}

void execute_print_check(const struct exec_check *k, const struct exec_expect *e,
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

void execute_print_summary(const struct exec_result *r, const struct sim_result *pred,
			   double catalog_peak)
{
	char a[32], b[32];
	double peak = exec_peak_memory(r), want = pred ? exec_predicted_memory(pred) : 0, fb, opt;
	double step, scale;

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
	/* Where every rank's thread runs its kernels itself (the CPU backend,
	 * one BLAS thread) the step set against the prediction is its CPU
	 * time, which a machine's other work does not lengthen, and the
	 * rates follow it; the wall clock is shown beside it.  On a GPU the
	 * wall clock. */
	step = r->cpu_timed ? r->step_cpu_median_s : r->step_time_median_s;
	scale = step > 0 ? r->step_time_median_s / step : 0;
	printf("%-22s %12s %12s", r->cpu_timed ? "step CPU time (median)" : "step time (median)",
	       unit_fmt_duration(a, sizeof(a), step),
	       pred ? unit_fmt_duration(b, sizeof(b), pred->step_time_s) : "-");
	print_pct(step, pred ? pred->step_time_s : 0);
	if (r->cpu_timed)
		printf("%-22s %12s %12s\n", "step wall time", unit_fmt_duration(a, sizeof(a),
		       r->step_time_median_s), "-");
	snprintf(a, sizeof(a), "%.0f", r->tokens_per_s * scale);
	snprintf(b, sizeof(b), "%.0f", pred ? pred->tokens_per_s : 0);
	printf("%-22s %12s %12s", "tokens/s", a, pred ? b : "-");
	print_pct(r->tokens_per_s * scale, pred ? pred->tokens_per_s : 0);
	snprintf(a, sizeof(a), "%.3g", r->model_flops_per_rank_s * scale / 1e9);
	snprintf(b, sizeof(b), "%.3g", pred ? pred->model_flops_per_gpu_s / 1e9 : 0);
	printf("%-22s %12s %12s", "model GFLOP/s per rank", a, pred ? b : "-");
	print_pct(r->model_flops_per_rank_s * scale, pred ? pred->model_flops_per_gpu_s : 0);
	if (catalog_peak > 0) {
		/* model FLOPs (no recomputation) over the catalog's bf16 peak */
		snprintf(a, sizeof(a), "%.1f%%", 100 * r->model_flops_per_rank_s * scale / catalog_peak);
		snprintf(b, sizeof(b), "%.1f%%",
			 pred ? 100 * pred->model_flops_per_gpu_s / catalog_peak : 0);
		printf("%-22s %12s %12s", "MFU", a, pred ? b : "-");
		print_pct(r->model_flops_per_rank_s * scale, pred ? pred->model_flops_per_gpu_s : 0);
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
