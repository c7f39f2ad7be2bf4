/*
 * plan_enum.c - candidate enumeration: for every offering that passes the
 * filters, every parallel configuration worth simulating, simulated with
 * the analytic model, priced (with their expected interruptions: failures,
 * and preemptions on spot), and pruned to the offering's Pareto frontier.
 *
 * What keeps it fast:
 *  - offerings with the same hardware (GPU, GPUs per node, inter-node
 *    bandwidth) are simulated once; spot and on-demand, and every region
 *    and provider selling that machine, only re-price the results;
 *  - GPU counts are whole nodes and tp x pp x cp x dp with dp dividing the
 *    global batch, so no shape is simulated that the batch cannot use;
 *  - context parallelism is searched only for long sequences (see
 *    PLAN_CP_MIN_LOCAL_SEQ);
 *  - expert parallelism, for models with experts, is walked from the
 *    largest degree the shape allows down and stops where nothing fits:
 *    a smaller one holds more experts a GPU (search_experts);
 *  - per (shape, micro-batch, interleave) the ZeRO stages and
 *    recomputation modes are walked from the most memory-frugal down: a
 *    combination that does not fit rules out every combination with a
 *    lower stage and less recomputation (memory never grows with either),
 *    and a micro-batch that does not fit even at ZeRO-3 with full
 *    recomputation rules out the larger ones;
 *  - at one node count on one offering the rate is fixed, so only the
 *    fastest fitting configuration can be on the frontier: one is kept.
 * It does not solve anything: plan_lp.c chooses among what this returns;
 * what a candidate costs and how long it runs is plan_price.c's.
 */
#include "plan_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const int tp_values[] = { 1, 2, 4, 8 };
static const int mbs_values[] = { 1, 2, 4, 8 };
static const int v_values[] = { 1, 2, 4 };

/*
 * Context parallelism, when --cp does not pin it, is searched in powers of
 * two while every rank keeps at least PLAN_CP_MIN_LOCAL_SEQ tokens and
 * tp x cp stays within PLAN_CP_TP_MAX.  With ring attention each step's
 * attention, which hides the KV exchange, shrinks with the square of the
 * local sequence and the exchange only linearly, so short local sequences
 * leave it exposed; Llama 3 405B kept 8K tokens a rank (128K over cp 16,
 * tp 8: Dubey et al. 2024, sec. 3.3.2 and table 4), and 8 x 16 is also
 * the bound on tp x cp.  The first bound means cp > 1 is searched only
 * from 2 x 4096 = 8192 tokens: that is where it starts to matter, since
 * with GQA's few KV heads the exchange is far smaller than the activations
 * TP moves, and cp 2 with tp 4 can beat tp 8 (it does for the shipped
 * llama3-405b at 8192; Megatron-Core's context-parallel overview offers
 * CP for long sequences for the same reasons).  Shorter sequences (4096
 * and below) search exactly the shapes they did with cp fixed at 1.
 */
#define PLAN_CP_MIN_LOCAL_SEQ 4096
#define PLAN_CP_TP_MAX 128

/* Offerings that share a machine. */
struct hw_group {
	const struct price_gpu *gpu;
	int gpn;
	int domain;                /* GPUs of one NVLink domain (price_nvlink_domain) */
	double inter_bytes_per_s;
	struct price_host host;    /* offload's figures (all 0: none stated) */
	int max_nodes;             /* largest node limit among members */
	size_t *members;           /* offering indices */
	size_t n_members;
};

/* The fastest fitting configuration at one node count. */
struct best_at {
	int have;
	struct sim_parallel par;
	struct sim_result res;
	double nofit_step_s;       /* fastest that did not fit; 0 none */
	int nofit_only;            /* simulated something here, none fitted */
};

/* ---- filters and grouping --------------------------------------------- */

static int offering_passes(const struct price_offering *o, const struct plan_filter *f)
{
	if (f->provider[0] && !gp_streq_nocase(o->provider, f->provider))
		return 0;
	if (f->region[0] && !gp_streq_nocase(o->region, f->region))
		return 0;
	return 1;
}

int plan_same_offering(const struct plan_candidate *a, const struct price_offering *b,
		       const struct plan_opts *opts)
{
	const struct price_offering *o = a->offering;
	const struct price_block *bb;

	/* another region the filters let in, bounded alike (the same quota) */
	if (b == o || o->owned || b->owned || strcmp(b->region, o->region) == 0 ||
	    !offering_passes(b, &opts->filter) || b->quota != o->quota ||
	    !gp_streq_nocase(b->provider, o->provider) ||
	    strcmp(b->instance_type, o->instance_type) != 0 || strcmp(b->gpu, o->gpu) != 0 ||
	    b->inter_node_bytes_per_s != o->inter_node_bytes_per_s ||
	    b->gpus_per_node != o->gpus_per_node || b->max_nodes != o->max_nodes ||
	    b->capacity_nodes != o->capacity_nodes || b->policy_nodes != o->policy_nodes ||
	    b->spot_capacity_nodes != o->spot_capacity_nodes || b->node_multiple != o->node_multiple)
		return 0;
	switch (a->purchase) {
	case PRICE_PURCHASE_SPOT:
		return b->spot_usd_per_hour >= 0 && b->spot_usd_per_hour == o->spot_usd_per_hour;
	case PRICE_PURCHASE_BLOCK:
		bb = price_block_find(opts->blocks, b);
		return a->block && bb && bb->usd_per_hour == a->block->usd_per_hour &&
		       bb->max_nodes == a->block->max_nodes && bb->max_days == a->block->max_days &&
		       bb->payment == a->block->payment;
	case PRICE_PURCHASE_OWNED:
		return 0;
	default:
		/* on demand, and reserved off the same on-demand price */
		return b->on_demand_usd_per_hour >= 0 &&
		       b->on_demand_usd_per_hour == o->on_demand_usd_per_hour;
	}
}

static int spot_allowed(const struct price_offering *o, const struct plan_filter *f, int spot)
{
	double p = spot ? o->spot_usd_per_hour : o->on_demand_usd_per_hour;

	if (f->spot >= 0 && f->spot != spot)
		return 0;
	return p >= 0;
}

/* Whether a capacity block of plan_opts.blocks sells offering of and the
 * filter allows it (it is not spot). */
static const struct price_block *block_allowed(const struct price_offering *of,
					       const struct plan_opts *o)
{
	if (o->filter.spot == 1)
		return NULL;
	return price_block_find(o->blocks, of);
}

/* The purchase options of an offering, in the order they are priced:
 * on-demand (owned for the user's own hardware), the reserved terms that
 * have a published discount, a capacity block, and spot.  Returns the
 * count. */
static int purchase_options(const struct price_offering *of, const struct plan_opts *o,
			    enum price_purchase *out)
{
	int n = 0;

	if (block_allowed(of, o))
		out[n++] = PRICE_PURCHASE_BLOCK;
	if (spot_allowed(of, &o->filter, 0)) {
		out[n++] = of->owned ? PRICE_PURCHASE_OWNED : PRICE_PURCHASE_ON_DEMAND;
		if (price_commitment_find(o->commitments, of, 12))
			out[n++] = PRICE_PURCHASE_RESERVED_1Y;
		if (price_commitment_find(o->commitments, of, 36))
			out[n++] = PRICE_PURCHASE_RESERVED_3Y;
	}
	if (spot_allowed(of, &o->filter, 1))
		out[n++] = PRICE_PURCHASE_SPOT;
	return n;
}

static size_t group_of(struct hw_group **groups, size_t *n, const struct price_gpu *gpu,
		       const struct price_offering *o)
{
	int domain = price_nvlink_domain(o, gpu);
	struct hw_group *g;

	for (size_t i = 0; i < *n; i++) {
		g = &(*groups)[i];
		if (g->gpu == gpu && g->gpn == o->gpus_per_node && g->domain == domain &&
		    g->inter_bytes_per_s == o->inter_node_bytes_per_s &&
		    memcmp(&g->host, &o->host, sizeof(g->host)) == 0)
			return i;
	}
	*groups = xrealloc(*groups, (*n + 1) * sizeof(**groups));
	g = &(*groups)[*n];
	memset(g, 0, sizeof(*g));
	g->gpu = gpu;
	g->gpn = o->gpus_per_node;
	g->domain = domain;
	g->inter_bytes_per_s = o->inter_node_bytes_per_s;
	g->host = o->host;
	return (*n)++;
}

static void groups_free(struct hw_group *groups, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(groups[i].members);
	free(groups);
}

/* ---- the search over one machine -------------------------------------- */

struct search {
	const struct plan_job *job;
	const struct plan_opts *o;
	struct sim_cluster cluster;
	enum sim_precision precision; /* plan_precision_pick's for the machine */
	int gbs;
	int max_nodes;
	struct best_at *best;      /* [max_nodes + 1] */
	struct plan_stats *stats;
	double min_need_bytes;
	double min_host_need_bytes; /* offload that fits the GPU, not the host */
	int offload_tried;
	int any_fit;
};

/* Simulates one configuration; returns 1 when it fits, 0 when it does
 * not, -1 when sim_check refused it. */
static int try_config(struct search *s, const struct sim_parallel *par, int nodes)
{
	struct sim_result r;
	struct best_at *b = &s->best[nodes];

	s->stats->enumerated++;
	if (sim_check(&s->job->model, par, &s->cluster, NULL, 0) != RC_OK) {
		s->stats->rejected_check++;
		return -1;
	}
	sim_step(&s->job->model, par, &s->cluster, &r);
	s->stats->simulated++;
	s->offload_tried |= par->ft.offload != SIM_OFFLOAD_NONE;
	if (r.memory.total > 0 && (s->min_need_bytes < 0 || r.memory.total < s->min_need_bytes))
		s->min_need_bytes = r.memory.total;
	if (par->ft.offload != SIM_OFFLOAD_NONE && r.memory.total <= r.memory.capacity &&
	    r.memory.host > r.memory.host_capacity &&
	    (s->min_host_need_bytes < 0 || r.memory.host < s->min_host_need_bytes))
		s->min_host_need_bytes = r.memory.host;
	if (!r.fits || !(r.step_time_s > 0) || !isfinite(r.step_time_s)) {
		if (r.step_time_s > 0 && (b->nofit_step_s == 0 || r.step_time_s < b->nofit_step_s))
			b->nofit_step_s = r.step_time_s;
		if (!b->have)
			b->nofit_only = 1;
		return 0;
	}
	s->stats->fit++;
	s->any_fit = 1;
	if (!b->have || r.step_time_s < b->res.step_time_s) {
		b->have = 1;
		b->nofit_only = 0;
		b->par = *par;
		b->res = r;
	}
	return 1;
}

/* Every ZeRO stage from zhi down to zlo and every recomputation mode of
 * par, the most frugal first; a mode that does not fit rules out the
 * leaner ones at that stage and the stages below.  *frugal_fits is set
 * when one chunk a stage fits with ZeRO zhi and full recomputation.
 * Returns 1 when something fitted. */
static int search_memory(struct search *s, struct sim_parallel *par, int nodes, int zlo,
			 int zhi, int *frugal_fits)
{
	const struct plan_filter *f = &s->o->filter;
	/* bad[z]: recompute modes <= bad[z] are known not to fit */
	int bad[4] = { -1, -1, -1, -1 }, any = 0;

	/* adapters train under TRL, whose Accelerate offloads through
	 * DeepSpeed's ZeRO (export --format trl) */
	enum plan_framework fw = par->ft.method == SIM_FT_LORA || par->ft.method == SIM_FT_QLORA
					 ? PLAN_FRAMEWORK_DEEPSPEED : f->framework;

	for (int z = zhi; z >= zlo; z--) {
		if (!plan_framework_runs_offload(fw, z, par->ft.offload))
			continue;
		for (int rc = SIM_RECOMPUTE_FULL; rc >= SIM_RECOMPUTE_NONE; rc--) {
			int fit;

			if (rc <= bad[z]) {
				s->stats->enumerated++;
				continue;
			}
			par->zero = z;
			par->recompute = (enum sim_recompute)rc;
			plan_framework_price(f->framework, &s->job->model, &s->cluster.gpu, par);
			fit = try_config(s, par, nodes);
			any |= fit == 1;
			if (fit == 1 && par->interleave == 1 && z == zhi && rc == SIM_RECOMPUTE_FULL)
				*frugal_fits = 1;
			if (fit == 0)
				for (int zz = z; zz >= zlo; zz--)
					if (bad[zz] < rc)
						bad[zz] = rc;
		}
	}
	return any;
}

/* Every micro-batch, interleaving, ZeRO stage and recomputation mode of
 * one layout (base: tp, pp, cp, dp, ep, etp) with offload off.  Returns 1
 * when something fitted. */
static int search_knobs(struct search *s, const struct sim_parallel *base, int nodes,
			enum sim_offload off)
{
	const struct plan_filter *f = &s->o->filter;
	const struct sim_model *m = &s->job->model;
	int zlo = f->zero >= 0 ? f->zero : 0, zhi = f->zero >= 0 ? f->zero : 3;
	int zmax = plan_framework_max_zero(f->framework, m, base->pp), any = 0;
	struct sim_parallel par = *base;

	/* ZeRO shards over the data-parallel replicas; with one there is
	 * nothing to shard and every stage is the same plan, but for
	 * offload, which moves the optimizer states from stage 1 and the
	 * weights too at stage 3. */
	if (par.dp * par.cp == 1 && f->zero < 0 && off == SIM_OFFLOAD_NONE)
		zhi = 0;
	if (off != SIM_OFFLOAD_NONE && zlo < 1)
		zlo = 1;
	if (zhi > zmax)
		zhi = zmax;
	if (zlo > zhi)
		return 0;
	par.gbs = s->gbs;
	par.seq_parallel = par.tp > 1;
	par.flash = 1;
	par.precision = s->precision;
	par.ft = s->job->ft;
	par.ft.offload = off;
	par.loss = plan_trainer_loss(&par.ft);
	for (size_t mi = 0; mi < GP_ARRAY_LEN(mbs_values); mi++) {
		int mbs = mbs_values[mi];
		int frugal_fits = 0;

		if (s->gbs % (mbs * par.dp))
			break;
		par.mbs = mbs;
		for (size_t vi = 0; vi < GP_ARRAY_LEN(v_values); vi++) {
			int v = v_values[vi];
			/* Where the layers do not split evenly, the simulator's
			 * split and the one Megatron-Bridge gives DeepSeek-V3
			 * (sim_front_filled_last) */
			int splits[2] = { 0, sim_front_filled_last(m, par.pp, v) };

			/* Each chunk needs a layer; uneven splits are the
			 * simulator's (sim_max_interleave). */
			if (v > 1 && v > sim_max_interleave(m, par.pp))
				continue;
			par.interleave = v;
			for (int si = 0; si < 2 && (si == 0 || splits[si] > 0); si++) {
				par.pp_last_layers = splits[si];
				any |= search_memory(s, &par, nodes, zlo, zhi, &frugal_fits);
			}
			if (v == 1 && !frugal_fits)
				break;
		}
		/* Activations grow with the micro-batch: if the most frugal
		 * setting did not fit, no larger micro-batch will. */
		if (!frugal_fits)
			break;
	}
	return any;
}

/* The expert layouts of one (tp, pp, cp, dp) shape, for a model with
 * experts: etp 1, then each power of two dividing tp and the expert
 * width (or --etp, where it divides them); for each, ep over the divisors of the experts that
 * divide tp x cp x dp / etp (or --ep), the framework's rules applied
 * (plan_framework_runs_experts), from the largest down.  A smaller ep
 * holds more experts' weights, gradients and (without ZeRO) optimizer
 * states a GPU and the same activations, so where nothing fits at one,
 * no smaller one is tried.  A dense model has ep = etp = 1.  Returns 1
 * when something fitted. */
static int search_experts(struct search *s, const struct sim_parallel *shape, int nodes,
			  enum sim_offload off)
{
	const struct plan_filter *f = &s->o->filter;
	const struct sim_model *m = &s->job->model;
	long attn = (long)shape->tp * shape->cp * shape->dp;
	struct sim_parallel par = *shape;
	int any = 0;

	if (m->experts == 0)
		return search_knobs(s, shape, nodes, off);
	for (int etp = f->etp > 0 ? f->etp : 1; etp <= (f->etp > 0 ? f->etp : shape->tp);
	     etp *= 2) {
		if (etp > 1 && (shape->tp % etp || m->expert_ffn % etp))
			continue;
		par.etp = etp;
		for (int ep = m->experts; ep >= 1; ep--) {
			if (m->experts % ep || (attn / etp) % ep || (f->ep > 0 && ep != f->ep))
				continue;
			par.ep = ep;
			if (!plan_framework_runs_experts(f->framework, &par))
				continue;
			if (!search_knobs(s, &par, nodes, off))
				break;
			any = 1;
		}
		if (f->etp > 0)
			break;
	}
	return any;
}

/* One (tp, pp, cp, dp) shape: on the GPUs alone, and where nothing fits
 * there and the host states what offload needs, with the optimizer
 * states (and ZeRO-3's weights) in host memory, then on NVMe (ZeRO-
 * Offload before ZeRO-Infinity: host memory is the faster of the two);
 * or with the offload --offload pins.  A model with experts is not
 * offloaded (sim_check refuses it). */
static void search_shape(struct search *s, int tp, int pp, int cp, int dp, int nodes)
{
	const struct price_host *h = &s->cluster.host;
	struct sim_parallel shape;

	sim_parallel_init(&shape);
	shape.stack = s->o->filter.stack;
	shape.tp = tp;
	shape.pp = pp;
	shape.cp = cp;
	shape.dp = dp;
	if (s->o->filter.offload >= 0) {
		search_experts(s, &shape, nodes, (enum sim_offload)s->o->filter.offload);
		return;
	}
	if (search_experts(s, &shape, nodes, SIM_OFFLOAD_NONE) || s->job->model.experts > 0 ||
	    !(h->memory_bytes > 0) || !(h->cpu_cores > 0))
		return;
	if (search_experts(s, &shape, nodes, SIM_OFFLOAD_CPU) || !(h->nvme_bytes_per_s > 0))
		return;
	search_experts(s, &shape, nodes, SIM_OFFLOAD_NVME);
}

/* The largest context-parallel degree to search: --cp when given, else
 * the largest power of two leaving every rank PLAN_CP_MIN_LOCAL_SEQ
 * tokens (1 below 8192 tokens). */
static int cp_max(const struct plan_filter *f, const struct sim_model *m)
{
	int cp = 1;

	if (f->cp > 0)
		return f->cp;
	/* DeepSpeed's context parallelism is Ulysses' all-to-all (Jacobs et
	 * al. 2023), not the ring attention the simulator prices. */
	if (f->framework == PLAN_FRAMEWORK_DEEPSPEED)
		return 1;
	while (cp * 2 <= PLAN_CP_TP_MAX && m->seq / (cp * 2) >= PLAN_CP_MIN_LOCAL_SEQ)
		cp *= 2;
	return cp;
}

/* Whether a searched (not pinned) cp > 1 is worth a shape at this tp:
 * within PLAN_CP_TP_MAX, and meeting sim_check's rules, 2 cp chunks of
 * the sequence (Megatron-LM's load balancing of causal attention) and,
 * with sequence parallelism (on for tp > 1), tp dividing the local
 * sequence.  Other shapes are skipped, not counted as rejected. */
static int cp_usable(const struct sim_model *m, int tp, int cp)
{
	if ((long)tp * cp > PLAN_CP_TP_MAX || m->seq % (2 * cp))
		return 0;
	return tp == 1 || (m->seq / cp) % tp == 0;
}

static void search_machine(struct search *s, const struct hw_group *g)
{
	const struct plan_filter *f = &s->o->filter;
	const struct sim_model *m = &s->job->model;
	int cp_hi = cp_max(f, m);
	/* Adapters train under TRL with PEFT, which Accelerate starts as
	 * data parallelism sharded by ZeRO (export --format trl): a searched
	 * layout has no tensor, pipeline or context parallelism (a pinned
	 * one runs under gpuplan execute). */
	int adapters = s->job->ft.method == SIM_FT_LORA || s->job->ft.method == SIM_FT_QLORA;

	if (adapters && f->cp <= 0)
		cp_hi = 1;
	for (size_t ti = 0; ti < GP_ARRAY_LEN(tp_values); ti++) {
		int tp = tp_values[ti];

		if (f->tp > 0) {
			if (ti > 0)
				break;
			tp = f->tp;
		} else if (tp > g->gpn || g->gpn % tp || (adapters && tp > 1)) {
			continue;
		}
		for (int pp = 1; pp <= m->layers; pp++) {
			/* Divisors of the layer count, and powers of two with an
			 * uneven split (Llama 3 405B ran 126 layers on 16 stages). */
			if (f->pp > 0 ? pp != f->pp : m->layers % pp != 0 && (pp & (pp - 1)) != 0)
				continue;
			if (f->pp <= 0 && adapters && pp > 1)
				break;
			/* A pinned cp is walked alone (cp_max returns it and
			 * sim_check judges it); a searched one from 1 in powers
			 * of two. */
			for (int cp = f->cp > 0 ? f->cp : 1; cp <= cp_hi; cp *= 2) {
				if (f->cp <= 0 && cp > 1 && !cp_usable(m, tp, cp))
					continue;
				for (int dp = 1; dp <= s->gbs; dp++) {
					long gpus = (long)tp * pp * cp * dp;
					long nodes;

					if (gpus > f->max_gpus)
						break;
					if (s->gbs % dp || gpus < f->min_gpus || gpus % g->gpn)
						continue;
					nodes = gpus / g->gpn;
					if (nodes > s->max_nodes)
						break;
					search_shape(s, tp, pp, cp, dp, (int)nodes);
				}
			}
		}
	}
}

/* ---- per job ------------------------------------------------------------ */

static enum rc check_filter(const struct price_catalog *cat, const struct plan_job *job,
			    const struct plan_filter *f, const struct price_gpu **want)
{
	const struct sim_model *m = &job->model;

	*want = NULL;
	if (f->gpu[0]) {
		*want = price_gpu_find(cat, f->gpu);
		if (!*want) {
			gp_error("--gpu: expected a GPU of the catalog, found '%s'", f->gpu);
			gp_hint("run 'gpuplan gpus' for the list");
			return RC_USAGE;
		}
	}
	if (f->min_gpus < 1 || f->max_gpus < f->min_gpus) {
		gp_error("--min-gpus/--max-gpus: expected 1 <= min <= max, found %d and %d",
			 f->min_gpus, f->max_gpus);
		return RC_USAGE;
	}
	if (f->framework == PLAN_FRAMEWORK_DEEPSPEED && f->cp > 1) {
		gp_error("--cp: expected 1 with --framework deepspeed (its context parallelism is "
			 "Ulysses' all-to-all, which gpuplan does not price), found %d", f->cp);
		return RC_USAGE;
	}
	if (f->zero > plan_framework_max_zero(f->framework, m, f->pp)) {
		gp_error("--zero: expected at most %d with --framework %s and --pp %d for %s (%s), "
			 "found %d", plan_framework_max_zero(f->framework, m, f->pp),
			 plan_framework_str(f->framework), f->pp, m->name,
			 f->pp > 1 ? "it shards gradients only without pipeline parallelism"
				   : "DeepSpeed runs no MoE layer under ZeRO-3", f->zero);
		return RC_USAGE;
	}
	if (f->offload > SIM_OFFLOAD_NONE && f->zero >= 0 && job->ft.method != SIM_FT_LORA &&
	    job->ft.method != SIM_FT_QLORA &&
	    !plan_framework_runs_offload(f->framework, f->zero, (enum sim_offload)f->offload)) {
		gp_error("--offload %s: %s does not run it with ZeRO-%d (%s)",
			 sim_offload_names[f->offload], plan_framework_title(f->framework), f->zero,
			 f->framework == PLAN_FRAMEWORK_MEGATRON
				 ? "it offloads only the optimizer to host memory, with ZeRO-1"
				 : "it offloads to NVMe only with ZeRO-3, to host memory from ZeRO-1");
		return RC_USAGE;
	}
	/* --ep and --etp as sim_check reads them, said once before the
	 * search rather than as "no configuration" after it */
	if ((f->ep > 1 || f->etp > 1) && m->experts == 0) {
		gp_error("--%s: expected 1 for %s, a model without experts, found %d",
			 f->ep > 1 ? "ep" : "etp", m->name, f->ep > 1 ? f->ep : f->etp);
		return RC_USAGE;
	}
	if (f->ep > 0 && m->experts > 0 && m->experts % f->ep) {
		gp_error("--ep: expected a divisor of the %d experts of %s, found %d", m->experts,
			 m->name, f->ep);
		return RC_USAGE;
	}
	if (f->etp > 1 && m->experts > 0 && m->expert_ffn % f->etp) {
		gp_error("--etp: expected a divisor of the expert width %d of %s, found %d",
			 m->expert_ffn, m->name, f->etp);
		return RC_USAGE;
	}
	return RC_OK;
}

enum rc plan_enumerate(const struct plan_job *job, const struct price_catalog *cat,
		       const struct plan_opts *o, struct plan_candidate **out,
		       size_t *n, struct plan_stats *stats, struct plan_nearest *nearest)
{
	const struct price_gpu *want;
	struct hw_group *groups = NULL;
	size_t n_groups = 0, n_out = 0, cap_out = 0;
	struct plan_candidate *res = NULL;
	struct timespec t0, t1;
	enum rc rc;

	*out = NULL;
	*n = 0;
	rc = check_filter(cat, job, &o->filter, &want);
	if (rc != RC_OK)
		return rc;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < cat->n_offers; i++) {
		const struct price_offering *of = &cat->offers[i];
		const struct price_gpu *gpu;
		struct hw_group *g;
		size_t gi;

		if (!offering_passes(of, &o->filter) || of->gpus_per_node < 1)
			continue;
		gpu = price_gpu_find(cat, of->gpu);
		if (!gpu || (want && gpu != want) || !(gpu->memory_bytes > 0) ||
		    !(gpu->bf16_flops_per_s > 0) ||
		    plan_precision_pick(o->filter.precision, &job->model, gpu) < 0)
			continue;
		if (!spot_allowed(of, &o->filter, 0) && !spot_allowed(of, &o->filter, 1) &&
		    !block_allowed(of, o))
			continue;
		stats->offerings += spot_allowed(of, &o->filter, 0) + spot_allowed(of, &o->filter, 1) +
				    (block_allowed(of, o) != NULL);
		gi = group_of(&groups, &n_groups, gpu, of);
		g = &groups[gi];
		g->members = xrealloc(g->members, (g->n_members + 1) * sizeof(size_t));
		g->members[g->n_members++] = i;
		/* The machine is searched up to its best-stocked offering. */
		for (int spot = 0; spot <= 1; spot++) {
			struct price_node_limit lim;

			if (!spot_allowed(of, &o->filter, spot))
				continue;
			price_offering_node_limit(of, spot, &lim);
			if (lim.nodes > g->max_nodes)
				g->max_nodes = lim.nodes;
		}
		if (block_allowed(of, o)) {
			struct price_node_limit lim;

			price_block_node_limit(of, block_allowed(of, o), &lim);
			if (lim.nodes > g->max_nodes)
				g->max_nodes = lim.nodes;
		}
		if (nearest && gpu->memory_bytes > nearest->largest_gpu_bytes)
			nearest->largest_gpu_bytes = gpu->memory_bytes;
	}
	stats->machines += n_groups;
	/* Whether every machine is one node for want of a network figure:
	 * what a refusal for memory then names as its cause. */
	if (nearest && n_groups > 0) {
		size_t big = 0; /* the example: the machine with the most memory */

		nearest->all_one_node_network = 1;
		for (size_t gi = 0; gi < n_groups; gi++) {
			/* not where --max-gpus holds it to one node, nor on
			 * hardware the user owns (its machines are the bound) */
			if (groups[gi].inter_bytes_per_s > 0 || groups[gi].max_nodes > 1 ||
			    o->filter.max_gpus / groups[gi].gpn <= 1)
				nearest->all_one_node_network = 0;
			for (size_t k = 0; k < groups[gi].n_members; k++)
				if (cat->offers[groups[gi].members[k]].owned)
					nearest->all_one_node_network = 0;
			if (groups[gi].gpu->memory_bytes > groups[big].gpu->memory_bytes)
				big = gi;
		}
		if (nearest->all_one_node_network)
			nearest->one_node_example = &cat->offers[groups[big].members[0]];
	}

	for (size_t gi = 0; gi < n_groups; gi++) {
		struct hw_group *g = &groups[gi];
		struct search s;
		int cap = o->filter.max_gpus / g->gpn;

		memset(&s, 0, sizeof(s));
		s.job = job;
		s.o = o;
		s.stats = stats;
		s.gbs = plan_job_gbs(job, o);
		s.min_need_bytes = -1;
		s.min_host_need_bytes = -1;
		s.max_nodes = g->max_nodes < cap ? g->max_nodes : cap;
		if (s.max_nodes < 1)
			continue;
		s.cluster.gpu = *g->gpu;
		s.cluster.gpus_per_node = g->gpn;
		s.cluster.intra_bytes_per_s = g->gpu->intra_bytes_per_s;
		s.cluster.inter_bytes_per_s = g->inter_bytes_per_s;
		s.cluster.nvlink_domain = g->domain;
		s.cluster.host = g->host;
		s.precision = (enum sim_precision)plan_precision_pick(o->filter.precision,
								      &job->model, g->gpu);
		s.best = xcalloc((size_t)s.max_nodes + 1, sizeof(*s.best));
		search_machine(&s, g);
		if (nearest) {
			if (s.min_need_bytes > 0 && (nearest->smallest_need_bytes < 0 ||
						     s.min_need_bytes < nearest->smallest_need_bytes))
				nearest->smallest_need_bytes = s.min_need_bytes;
			nearest->offload_searched |= s.offload_tried;
			if (s.min_host_need_bytes > 0 &&
			    (nearest->smallest_host_need_bytes < 0 ||
			     s.min_host_need_bytes < nearest->smallest_host_need_bytes)) {
				nearest->smallest_host_need_bytes = s.min_host_need_bytes;
				nearest->host_capacity_bytes = s.cluster.host.memory_bytes;
			}
			if (s.any_fit && (nearest->smallest_fit_memory_bytes < 0 ||
					  g->gpu->memory_bytes < nearest->smallest_fit_memory_bytes))
				nearest->smallest_fit_memory_bytes = g->gpu->memory_bytes;
		}

		/* Price the machine's results for every offering and purchase
		 * option. */
		for (size_t k = 0; k < g->n_members; k++) {
			const struct price_offering *of = &cat->offers[g->members[k]];
			enum price_purchase opts[PRICE_PURCHASE_N];
			int n_opts = purchase_options(of, o, opts);

			for (int pi = 0; pi < n_opts; pi++) {
				size_t first = n_out;
				int nofit_below = 0;
				struct price_node_limit lim;
				const struct price_block *blk =
					opts[pi] == PRICE_PURCHASE_BLOCK ? block_allowed(of, o) : NULL;

				if (blk)
					price_block_node_limit(of, blk, &lim);
				else
					price_offering_node_limit(of, opts[pi] == PRICE_PURCHASE_SPOT, &lim);
				for (int nodes = 1; nodes <= s.max_nodes; nodes++) {
					struct best_at *b = &s.best[nodes];
					struct plan_candidate *c;

					if (b->nofit_only)
						nofit_below = 1;
					if (!b->have || nodes > lim.nodes)
						continue;
					if (n_out == cap_out) {
						cap_out = cap_out ? 2 * cap_out : 64;
						res = xrealloc(res, cap_out * sizeof(*res));
					}
					c = &res[n_out];
					memset(c, 0, sizeof(*c));
					c->offering = of;
					c->block = blk;
					c->purchase = opts[pi];
					c->nodes = nodes;
					c->par = b->par;
					c->res = b->res;
					c->cluster = s.cluster;
					c->nofit_step_s = b->nofit_step_s;
					c->smaller_nofit = nofit_below;
					if (plan_candidate_price(c, job, o) != 0)
						continue;
					if (plan_candidate_too_long(c, o)) {
						/* no answer, but what would make one */
						if (nearest && (!nearest->have_over_max ||
								c->time_s < nearest->over_max.time_s)) {
							nearest->over_max = *c;
							nearest->have_over_max = 1;
						}
						continue;
					}
					n_out++;
				}
				n_out = first + plan_pareto(res + first, n_out - first);
			}
		}
		free(s.best);
	}
	groups_free(groups, n_groups);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	stats->enumerate_s += (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	if (nearest)
		for (size_t i = 0; i < n_out; i++) {
			const struct plan_candidate *c = &res[i];

			if (nearest->cheapest_cost_usd < 0 || c->cost_usd < nearest->cheapest_cost_usd)
				nearest->cheapest_cost_usd = c->cost_usd;
			if (nearest->fastest_time_s < 0 || c->time_s < nearest->fastest_time_s)
				nearest->fastest_time_s = c->time_s;
			if (nearest->lowest_usd_per_hour < 0 ||
			    c->usd_per_hour < nearest->lowest_usd_per_hour)
				nearest->lowest_usd_per_hour = c->usd_per_hour;
		}
	*out = res;
	*n = n_out;
	return RC_OK;
}
