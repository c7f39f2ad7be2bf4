/*
 * cmd_simulate_report.c - what `gpuplan simulate` prints for people: the
 * model, cluster and layout, the step's parts, memory, MFU, the time and
 * cost of a run with the interruptions it expects (the planner's
 * interruption model, plan_interrupt_model) that plan files and --json
 * carry.  cmd_simulate.c, the command, calls it; it calls no other
 * command's file.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_finetune.h"
#include "cmd_simulate.h"
#include "plan.h"
#include "price.h"
#include "sim.h"

void simulate_print_part(const char *name, double s, double step)
{
	char buf[32];

	printf("  %-18s %12s  %5.1f%%\n", name, unit_fmt_duration(buf, sizeof(buf), s),
	       step > 0 ? 100 * s / step : 0);
}

static void mem(const char *name, double b, double total)
{
	char buf[32];

	printf("  %-18s %12s  %5.1f%%\n", name, unit_fmt_bytes(buf, sizeof(buf), b),
	       total > 0 ? 100 * b / total : 0);
}

/* "fp32" for a trainer that keeps fp32 activations (the executor's CPU
 * ranks), else the GEMM precision. */
static const char *precision_label(const struct sim_parallel *q)
{
	return q->act_bytes_per_element >= 4 ? "fp32" : sim_precision_str(q->precision);
}

int simulate_fill_interrupts(struct sim_plan *p, int gpus, struct plan_interrupt *ip)
{
	struct sim_interrupts *si = &p->interrupts;
	struct plan_opts o;
	int gpn = p->cluster.gpus_per_node > 0 ? p->cluster.gpus_per_node : gpus;
	int nodes = (gpus + gpn - 1) / gpn;
	double ckpt = sim_trainable_params(&p->model, &p->par.ft) * PLAN_CKPT_BYTES_PER_PARAM;

	plan_opts_init(&o);
	if (si->stated) {
		o.failures_per_gpu_hour = si->failures_per_gpu_hour;
		/* a plan not on spot states no preemption rate */
		if (p->spot)
			o.preempt_per_node_hour = si->preemptions_per_node_hour;
		o.restart_s = si->restart_s;
		if (si->ckpt_bytes_per_s_per_node > 0)
			o.ckpt_bytes_per_s_per_node = si->ckpt_bytes_per_s_per_node;
	}
	if (p->ckpt_interval_s > 0)
		o.ckpt_interval_s = p->ckpt_interval_s;
	memset(si, 0, sizeof(*si));
	memset(ip, 0, sizeof(*ip));
	if (!(p->tokens > 0) || !(p->time_to_train_s > 0))
		return 0;
	if (plan_interrupt_model(ckpt, gpus, nodes, p->spot, p->time_to_train_s, &o, ip))
		return -1;
	si->stated = 1;
	si->failures_per_gpu_hour = o.failures_per_gpu_hour;
	si->preemptions_per_node_hour = p->spot ? o.preempt_per_node_hour : 0;
	si->restart_s = o.restart_s;
	si->ckpt_bytes_per_s_per_node = o.ckpt_bytes_per_s_per_node;
	si->mtbf_s = ip->mtbf_s;
	si->expected = ip->expected;
	si->effective = 1.0 - ip->waste;
	return 0;
}

/* The interruptions simulate_fill_interrupts reckoned (ip: its model,
 * for the checkpoint interval and whether the plan pinned it) on gpus GPUs;
 * planned: the plan file's answer, which includes them, is printed
 * below. */
static void print_interrupts(const struct sim_plan *p, const struct plan_interrupt *ip, int gpus,
			     int planned)
{
	const struct sim_interrupts *i = &p->interrupts;
	char a[32], b[32], n[32];

	if (!i->stated) {
		printf("interruptions: they would waste more than half of the run's time\n");
		return;
	}
	printf("interruptions: %s expected (failures %.3g/GPU-hour x %d GPUs",
	       cli_fmt_expected(n, sizeof(n), i->expected), i->failures_per_gpu_hour, gpus);
	if (p->spot)
		printf(", spot preemptions %g/node-hour x %d nodes", i->preemptions_per_node_hour,
		       p->nodes);
	printf(": one every %s), checkpoints every %s (%s): effective training time %.2f%%, %s\n",
	       unit_fmt_duration(a, sizeof(a), i->mtbf_s),
	       unit_fmt_duration(b, sizeof(b), ip->interval_s),
	       ip->pinned ? "the plan's" : "Young/Daly", 100.0 * i->effective,
	       planned ? "in the plan's answer below" : "not in the time above (plan includes them)");
}

void simulate_print_table(const struct sim_plan *p, const struct plan_interrupt *ip,
			  double planned_s, double planned_usd)
{
	const struct sim_model *m = &p->model;
	const struct sim_parallel *q = &p->par;
	const struct sim_cluster *c = &p->cluster;
	const struct sim_result *r = &p->result;
	const struct sim_breakdown *b = &r->breakdown;
	const struct sim_memory *x = &r->memory;
	int gpus = q->tp * q->pp * q->dp * q->cp;
	double flops_unit;
	char b1[32], b2[32], b3[32], rc_label[64], stack[320];

	printf("model     %s: %d layers, hidden %d, %d heads (%d KV), ffn %d %s, vocab %d, seq %d, %s params",
	       m->name, m->layers, m->hidden, m->heads, m->kv_heads, m->ffn,
	       sim_mlp_str(m->mlp), m->vocab, m->seq,
	       unit_fmt_count(b1, sizeof(b1), sim_model_params(m)));
	if (m->experts > 0)
		printf(" (%s active), %d experts of %d, top-%d, %d shared", unit_fmt_count(b2, sizeof(b2),
		       sim_model_active_params(m)), m->experts, m->expert_ffn, m->top_k, m->shared_experts);
	if (m->kv_lora_rank > 0)
		printf(", MLA");
	printf("\n");
	printf("cluster   %d x %s (%d node%s of %d)", gpus, c->gpu.name, p->nodes,
	       p->nodes == 1 ? "" : "s", c->gpus_per_node);
	if (p->offering.provider[0])
		printf(", %s %s %s %s", p->offering.provider, p->offering.instance_type,
		       p->offering.region, price_purchase_str(p->purchase));
	printf("\n");
	rc_label[0] = 0;
	for (int k = 0, n = 0; k < SIM_RECOMPUTE_MODULES; k++)
		if (q->recompute == SIM_RECOMPUTE_SELECTIVE && (q->recompute_modules & (1u << k)))
			n += snprintf(rc_label + n, sizeof(rc_label) - (size_t)n, "%s%s",
				      n ? "," : " (and ", sim_recompute_module_names[k]);
	if (rc_label[0])
		strcat(rc_label, ")");
	printf("parallel  tp %d, pp %d, dp %d, cp %d, mbs %d, gbs %d (%d micro-batch%s), zero %d, "
	       "recompute %s%s, interleave %d, seq-parallel %s, flash %s, %s\n",
	       q->tp, q->pp, q->dp, q->cp, q->mbs, q->gbs, r->grad_accum,
	       r->grad_accum == 1 ? "" : "es", q->zero,
	       sim_recompute_str(q->recompute), rc_label, q->interleave, q->seq_parallel ? "on" : "off",
	       !q->flash ? "off" : q->attn_kernel == SIM_ATTN_AUTO ? "on"
	       : sim_attn_kernel_names[q->attn_kernel], precision_label(q));
	if (m->experts > 0)
		printf("experts   ep %d, etp %d, expert data parallel %d, imbalance %g, %s dispatcher, "
		       "all-to-all overlap %s, expert GEMMs %s; NVLink domain %d GPUs\n", q->ep, q->etp,
		       q->tp * q->cp * q->dp / (q->ep * q->etp), q->moe_imbalance > 0 ? q->moe_imbalance : 1,
		       sim_ep_dispatcher_names[q->ep_flex != 0], q->ep_overlap ? "on" : "off",
		       sim_moe_gemm_names[sim_moe_gemm_resolve(q, sim_gpu_arch(&c->gpu))],
		       sim_cluster_domain(c));
	sim_stack_describe(q, sim_gpu_arch(&c->gpu), m->experts > 0, stack, sizeof(stack));
	printf("stack     %s\n", stack);
	if (q->pp_last_layers > 0)
		printf("layers    %d in each virtual stage, %d in the last (with the loss)\n",
		       sim_virtual_stage_layers(m, q, 0), q->pp_last_layers);
	ft_cli_print(p);
	printf("\nstep time %s\n", unit_fmt_duration(b1, sizeof(b1), r->step_time_s));
	simulate_print_part("compute", b->compute_s, r->step_time_s);
	simulate_print_part("tp comm", b->tp_comm_s, r->step_time_s);
	simulate_print_part("cp comm", b->cp_comm_s, r->step_time_s);
	simulate_print_part("ep comm", b->ep_comm_s, r->step_time_s);
	simulate_print_part("pp bubble", b->pp_bubble_s, r->step_time_s);
	simulate_print_part("pp comm", b->pp_comm_s, r->step_time_s);
	simulate_print_part("dp comm exposed", b->dp_comm_exposed_s, r->step_time_s);
	simulate_print_part(q->ft.offload ? "optimizer (CPU)" : "optimizer", b->optimizer_s,
			    r->step_time_s);
	if (q->ft.offload)
		simulate_print_part("offload transfers", b->offload_s, r->step_time_s);
	printf("  (dp comm in all %s, %s of it hidden by backward)\n",
	       unit_fmt_duration(b1, sizeof(b1), b->dp_comm_total_s),
	       unit_fmt_duration(b2, sizeof(b2), fmax(0, b->dp_comm_total_s - b->dp_comm_exposed_s)));
	if (b->ep_comm_total_s > 0)
		printf("  (ep all-to-all in all %s, %s of it hidden by compute)\n",
		       unit_fmt_duration(b1, sizeof(b1), b->ep_comm_total_s),
		       unit_fmt_duration(b2, sizeof(b2), fmax(0, b->ep_comm_total_s - b->ep_comm_s)));
	printf("\nthroughput       %s tokens/s (%s tokens/s per GPU)\n",
	       unit_fmt_count(b1, sizeof(b1), r->tokens_per_s),
	       unit_fmt_count(b2, sizeof(b2), r->tokens_per_s / gpus));
	/* GFLOP/s for a device below a TFLOP/s (the executor's CPU ranks),
	 * where one decimal of TFLOP/s would read 0.0 */
	flops_unit = c->gpu.bf16_flops_per_s >= 1e12 ? 1e12 : 1e9;
	printf("%s per GPU  %.1f model, %.1f hardware (peak %.1f %s)\n",
	       flops_unit == 1e12 ? "TFLOP/s" : "GFLOP/s", r->model_flops_per_gpu_s / flops_unit,
	       r->hardware_flops_per_gpu_s / flops_unit, sim_mfu_peak(&c->gpu) / flops_unit,
	       q->act_bytes_per_element >= 4 ? "fp32" : "bf16");
	printf("MFU %.1f%%, HFU %.1f%%\n", 100 * r->mfu, 100 * r->hfu);
	printf("\nmemory per GPU %s of %s: ", unit_fmt_bytes(b1, sizeof(b1), x->total),
	       unit_fmt_bytes(b2, sizeof(b2), x->capacity));
	if (r->fits)
		printf("fits, %s free\n", unit_fmt_bytes(b3, sizeof(b3), x->capacity - x->total));
	else
		printf("does NOT fit, over by %s\n", unit_fmt_bytes(b3, sizeof(b3), x->total - x->capacity));
	mem("weights", x->weights, x->total);
	mem("gradients", x->grads, x->total);
	mem("optimizer", x->optimizer, x->total);
	mem("activations", x->activations, x->total);
	mem("other", x->other, x->total);
	printf("  (other: the loss's buffers beyond a layer's backward%s allocator slack)\n",
	       c->gpu.context_bytes < 0 ? " and" : ", CUDA context and");
	if (q->ft.offload) {
		printf("host memory per node %s of %s: %s\n", unit_fmt_bytes(b1, sizeof(b1), x->host),
		       unit_fmt_bytes(b2, sizeof(b2), x->host_capacity),
		       x->host <= x->host_capacity ? "fits" : "does NOT fit");
		if (x->nvme > 0)
			printf("NVMe per node %s\n", unit_fmt_bytes(b1, sizeof(b1), x->nvme));
	}
	if (p->tokens > 0) {
		printf("\ntime to train %s tokens: %s", unit_fmt_count(b1, sizeof(b1), p->tokens),
		       unit_fmt_duration(b2, sizeof(b2), p->time_to_train_s));
		if (p->usd_per_gpu_hour > 0) {
			printf(", cost %s at %s per GPU-hour", unit_fmt_usd(b3, sizeof(b3), p->cost_usd),
			       unit_fmt_usd(b1, sizeof(b1), p->usd_per_gpu_hour));
			if (p->offering.provider[0])
				printf(" (%s)", price_purchase_str(p->purchase));
		}
		printf("\n");
		print_interrupts(p, ip, gpus, planned_s > 0);
		/* plan's answer adds interruptions and restarts, checkpoints,
		 * start-up, a reservation's whole days and a reserved term's
		 * hours to the steps (plan.h) */
		if (planned_s > 0 && fabs(planned_s - p->time_to_train_s) > 5e-3 * planned_s)
			printf("  the plan's answer, %s for %s, adds what running the steps costs "
			       "beyond them (interruptions, checkpoints, start-up, a reservation's "
			       "whole days, reserved terms)\n",
			       unit_fmt_duration(b2, sizeof(b2), planned_s),
			       unit_fmt_usd(b3, sizeof(b3), planned_usd));
	}
}
