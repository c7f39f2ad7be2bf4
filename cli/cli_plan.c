/*
 * cli_plan.c - what the commands that plan share (`plan`, `frontier`,
 * `compare`): the job, filter and overhead flags with their help text,
 * loading the catalog, the model presets and the jobs those flags name,
 * and the lines they print alike (an offering, the ages of the prices an
 * answer uses).  Front-end code only; the planning is planner/plan.h's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_calib.h"
#include "cli_plan.h"

void plan_cli_init(struct plan_cli *pc)
{
	memset(pc, 0, sizeof(*pc));
	plan_opts_init(&pc->opts);
	cost_cli_init(&pc->cost);
}

static enum rc copy_name(const char *flag, const char *arg, char *dst, size_t size)
{
	if (!arg[0] || gp_strlcpy(dst, arg, size) != 0) {
		gp_error("%s: expected a name of 1 to %zu bytes, found '%s'", flag, size - 1, arg);
		return RC_USAGE;
	}
	return RC_OK;
}

int plan_cli_flag(struct plan_cli *pc, int code, const char *arg, enum rc *rc)
{
	struct plan_opts *o = &pc->opts;
	struct plan_filter *f = &o->filter;
	double d;

	*rc = RC_OK;
	switch (code) {
	case PCLI_MODEL: pc->model = arg; break;
	case PCLI_TOKENS: *rc = cli_parse_count("--tokens", arg, &pc->tokens); break;
	case PCLI_JOBS: pc->jobs_path = arg; break;
	case PCLI_MODELS: pc->models_path = arg; break;
	case PCLI_GBS: *rc = cli_parse_int("--gbs", arg, 1, 1 << 24, &o->gbs); break;
	case PCLI_GBS_TOKENS: *rc = cli_parse_count("--gbs-tokens", arg, &pc->gbs_tokens); break;
	case PCLI_GPU: *rc = copy_name("--gpu", arg, f->gpu, sizeof(f->gpu)); break;
	case PCLI_PROVIDER: *rc = copy_name("--provider", arg, f->provider, sizeof(f->provider)); break;
	case PCLI_REGION: *rc = copy_name("--region", arg, f->region, sizeof(f->region)); break;
	case PCLI_SPOT: f->spot = 1; break;
	case PCLI_NO_SPOT: f->spot = 0; break;
	case PCLI_MAX_GPUS: *rc = cli_parse_int("--max-gpus", arg, 1, 1 << 20, &f->max_gpus); break;
	case PCLI_MIN_GPUS: *rc = cli_parse_int("--min-gpus", arg, 1, 1 << 20, &f->min_gpus); break;
	case PCLI_TP: *rc = cli_parse_int("--tp", arg, 1, 1024, &f->tp); break;
	case PCLI_PP: *rc = cli_parse_int("--pp", arg, 1, 4096, &f->pp); break;
	case PCLI_CP: *rc = cli_parse_int("--cp", arg, 1, 1024, &f->cp); break;
	case PCLI_EP: *rc = cli_parse_int("--ep", arg, 1, SIM_MAX_EXPERTS, &f->ep); break;
	case PCLI_ETP: *rc = cli_parse_int("--etp", arg, 1, 1024, &f->etp); break;
	case PCLI_PRECISION:
		*rc = plan_precision_parse(arg, &f->precision);
		if (*rc != RC_OK)
			gp_error("--precision: expected auto, bf16, fp8 or mxfp8, found '%s'", arg);
		break;
	case PCLI_ZERO: *rc = cli_parse_int("--zero", arg, 0, 3, &f->zero); break;
	case PCLI_FRAMEWORK:
		f->framework_stated = 1;
		*rc = plan_framework_parse(arg, &f->framework);
		if (*rc != RC_OK)
			gp_error("--framework: expected any, megatron or deepspeed, found '%s'", arg);
		break;
	case PCLI_FAILURE_RATE:
		*rc = cli_parse_double("--failure-rate", arg, 0, 1, &o->failures_per_gpu_hour);
		break;
	case PCLI_STACK: {
		int v = 0;

		*rc = cli_parse_choice("--stack", arg, sim_stack_names + 1, 2, &v);
		f->stack = (enum sim_stack)(v + 1);
		break;
	}
	case PCLI_PREEMPT:
		*rc = cli_parse_double("--preempt-rate", arg, 0, 1e3, &o->preempt_per_node_hour);
		break;
	case PCLI_RESTART:
		*rc = cli_parse_duration("--restart-time", arg, &o->restart_s);
		break;
	case PCLI_STARTUP:
		*rc = cli_parse_duration("--startup", arg, &o->startup_s);
		break;
	case PCLI_CKPT_BW:
		*rc = cli_parse_double("--ckpt-bw", arg, 0, 1e6, &d);
		if (*rc == RC_OK && !(d > 0)) {
			gp_error("--ckpt-bw: expected GB/s per node > 0, found '%s'", arg);
			*rc = RC_USAGE;
		}
		o->ckpt_bytes_per_s_per_node = d * 1e9;
		break;
	case PCLI_JSON: pc->json = 1; break;
	case PCLI_MAX_PRICE_AGE:
		*rc = cli_parse_duration("--max-price-age", arg, &d);
		o->max_price_age_days = d / 86400.0;
		break;
	case PCLI_MAX_DURATION:
	case PCLI_MAX_SPOT_DURATION: {
		const char *flag = code == PCLI_MAX_DURATION ? "--max-duration" : "--max-spot-duration";

		*rc = cli_parse_duration(flag, arg, &d);
		if (*rc == RC_OK && !(d > 0)) {
			gp_error("%s: expected a duration > 0, found '%s'", flag, arg);
			*rc = RC_USAGE;
		}
		*(code == PCLI_MAX_DURATION ? &o->max_duration_s : &o->max_spot_duration_s) = d;
		break;
	}
	default:
		if (code >= PCLI_FT && code <= PCLI_FT_LAST) {
			*rc = ft_cli_parse(&pc->ft, code - PCLI_FT, arg);
			break;
		}
		return cost_cli_flag(pc, code, arg, rc);
	}
	return 1;
}

void plan_cli_help(FILE *f)
{
	fprintf(f,
		"job:\n"
		"  --model NAME          model preset (gpuplan models)\n"
		"  --tokens N            tokens to train: 1T, 300B, 2.5e12\n"
		"  --jobs FILE           plan only: several jobs instead, a CSV with columns\n"
		"                        model, tokens and optionally deadline, priority, gbs, name\n"
		"  --models FILE         model presets (default: the shipped data/models.csv)\n"
		"  --gbs N               global batch in sequences (default: the preset's, else\n"
		"                        4 Mi tokens as a power of two of sequences)\n"
		"  --gbs-tokens N        global batch in tokens (4M), rounded to whole sequences\n"
		"filters (default: everything in the price table):\n"
		"  --gpu NAME            only this GPU (name or alias)\n"
		"  --provider NAME       only this provider\n"
		"  --region NAME         only this region\n"
		"  --spot / --no-spot    only spot / only on-demand (default both)\n"
		"  --max-gpus N          at most N GPUs (default %d)\n"
		"  --min-gpus N          at least N GPUs (default 1)\n"
		"  --tp N, --pp N        pin tensor / pipeline parallelism (default: searched;\n"
		"                        TP within a node in {1,2,4,8}, PP dividing the layers)\n"
		"  --cp N                pin context parallelism (default: searched in powers of\n"
		"                        two keeping 4096 tokens a rank, so from seq 8192; else 1)\n"
		"  --ep N, --etp N       pin expert / expert tensor parallelism for a model with\n"
		"                        experts (default: searched; ep dividing the experts and\n"
		"                        tp x cp x dp, etp 1 or a power of two dividing tp)\n"
		"  --precision P         the linear layers' GEMMs: auto (MXFP8 on Blackwell, FP8\n"
		"                        where the GPU has an FP8 rate, else BF16), bf16, fp8 or\n"
		"                        mxfp8 (only GPUs with the rate) (default: auto for a\n"
		"                        model with experts, bf16 for a dense one)\n"
		"  --zero N              pin the ZeRO stage 0-3 (default: searched)\n"
		"  --framework NAME      what will run the plan: any (gpuplan execute runs every\n"
		"                        layout), megatron or deepspeed: ZeRO-2/3 only without\n"
		"                        pipeline parallelism; megatron: experts folded over\n"
		"                        tp x cp x dp, the flex dispatcher on Hopper and\n"
		"                        Blackwell, EP all-to-alls overlapped where it can;\n"
		"                        deepspeed: no context parallelism, ZeRO-2 reduces\n"
		"                        every micro-batch, DP traffic overlaps as DeepSpeed\n"
		"                        overlaps it, ep dividing dp, etp 1 or tp, no ZeRO-3\n"
		"                        with experts (default megatron; export --format names\n"
		"                        the launcher)\n"
		"  --stack te2.14|te2.16 the framework release the plan assumes, with megatron:\n"
		"                        te2.14 is Megatron-Core on Transformer Engine 2.14.1 or\n"
		"                        older (Megatron-Bridge 26.02 to 26.04.01: host-looped\n"
		"                        expert GEMMs, EP all-to-alls not overlapped); te2.16 a\n"
		"                        newer one (26.06 on: device grouped GEMMs on Blackwell,\n"
		"                        EP overlap where it can); both the flex dispatcher on\n"
		"                        Hopper and Blackwell (default te2.16)\n"
		"overheads (stated with every answer):\n"
		"  --startup DUR         job start-up on running nodes: container pull, ranks,\n"
		"                        NCCL and data loaders; billed (default %gs); each\n"
		"                        offering's provisioning and billing unit come from\n"
		"                        data/capacity.csv\n"
		"interruption model (stated with every answer: expected interruptions and\n"
		"effective training time, included in time and cost):\n"
		"  --failure-rate R      job failures per GPU-hour, any plan (default %.3g:\n"
		"                        Llama 3's 466 in 54 days on 16,384 H100); 0: none\n"
		"  --preempt-rate R      spot preemptions per node-hour (default %g)\n"
		"  --restart-time DUR    replacement node and reload after one (default %gs)\n"
		"  --ckpt-bw GBPS        checkpoint write GB/s per node (default %g); checkpoint\n"
		"                        size %g bytes per parameter; interval Young/Daly\n"
		"                        against the combined rate (--ckpt-interval pins one)\n"
		"  --json                JSON for programs instead of a table (default off)\n"
		"  --max-price-age DUR   warn when a price the answer uses is older than this,\n"
		"                        or states no date (default %dd; prices.csv's\n"
		"                        price_date)\n"
		"answers that are plans (docs/plan.md):\n"
		"  --max-duration DUR    a plan lasting longer is no answer; the refusal says\n"
		"                        what would make the job fit (default %.0fd)\n"
		"  --max-spot-duration DUR  the longest a spot fleet is held, gpuplan policy\n"
		"                        (default %.0fd)\n",
		PLAN_DEFAULT_MAX_GPUS, PLAN_DEFAULT_STARTUP_S, PLAN_DEFAULT_FAILURES_PER_GPU_HOUR,
		PLAN_DEFAULT_PREEMPT_PER_NODE_HOUR,
		PLAN_DEFAULT_RESTART_S,
		PLAN_DEFAULT_CKPT_BYTES_PER_S_PER_NODE / 1e9, PLAN_CKPT_BYTES_PER_PARAM,
		PRICE_DEFAULT_MAX_AGE_DAYS, PLAN_DEFAULT_MAX_DURATION_S / 86400.0,
		PLAN_DEFAULT_MAX_SPOT_DURATION_S / 86400.0);
	ft_cli_help(f, 1);
	cost_cli_help(f);
}

void plan_cli_release(struct plan_cli_data *d)
{
	if (d->have_cat)
		price_catalog_release(&d->cat);
	if (d->have_models)
		sim_model_table_release(&d->models);
	price_commitments_release(&d->commitments);
	price_hardware_release(&d->hardware);
	price_blocks_release(&d->blocks);
	plan_published_release(&d->published);
	free(d->jobs);
	memset(d, 0, sizeof(*d));
}

/* --gbs-tokens to sequences for one job. */
static enum rc apply_gbs_tokens(const struct plan_cli *pc, struct plan_job *j)
{
	double seqs;

	if (!(pc->gbs_tokens > 0) || j->gbs > 0)
		return RC_OK;
	/* Rounded to whole sequences: 4M tokens of 8192 is 488 sequences. */
	seqs = floor(pc->gbs_tokens / j->model.seq + 0.5);
	if (seqs < 1 || seqs > (1 << 24)) {
		gp_error("--gbs-tokens: expected at least one sequence of %s (%d tokens), found %.0f",
			 j->model.name, j->model.seq, pc->gbs_tokens);
		return RC_USAGE;
	}
	j->gbs = (int)seqs;
	return RC_OK;
}

enum rc plan_cli_load(struct plan_cli *pc, const char *cmd, struct plan_cli_data *d)
{
	struct price_opts po;
	struct sim_finetune ft;
	char path[4096];
	enum rc rc;

	memset(d, 0, sizeof(*d));
	/* Ages of the prices an answer uses are counted from today. */
	rc = unit_today(&pc->opts.today_days);
	if (rc != RC_OK)
		return rc;
	/* --epochs x --dataset-tokens is the job's --tokens */
	memset(&ft, 0, sizeof(ft));
	rc = ft_cli_apply(&pc->ft, pc->tokens > 0, &pc->tokens, &ft, NULL);
	if (rc != RC_OK)
		return rc;
	if (pc->ft.epochs > 0 && pc->jobs_path) {
		gp_error("--epochs: expected --model with it (a jobs file states each job's tokens), "
			 "found --jobs");
		return RC_USAGE;
	}
	pc->opts.filter.offload = pc->ft.offload_set == 1 ? (int)ft.offload : -1;
	if (!pc->jobs_path && (!pc->model || !(pc->tokens > 0))) {
		gp_error("%s: expected --model and --tokens (or --jobs FILE), found %s", cmd,
			 pc->model ? "no --tokens" : "no --model");
		gp_hint("gpuplan %s --model llama3-70b --tokens 1T ...", cmd);
		return RC_USAGE;
	}
	if (pc->jobs_path && pc->model) {
		gp_error("%s: expected --jobs or --model, found both", cmd);
		return RC_USAGE;
	}
	/* as scaling says: one of the two would be ignored */
	if (pc->opts.gbs > 0 && pc->gbs_tokens > 0) {
		gp_error("--gbs/--gbs-tokens: expected one of them, found both");
		return RC_USAGE;
	}
	if (pc->models_path)
		snprintf(path, sizeof(path), "%s", pc->models_path);
	else
		snprintf(path, sizeof(path), "%s/models.csv", cli_data_dir());
	rc = sim_model_table_load(&d->models, path);
	if (rc != RC_OK)
		return rc;
	d->have_models = 1;
	price_opts_init(&po);
	po.data_dir = cli_data_dir();
	rc = price_catalog_load(&d->cat, &po);
	if (rc != RC_OK)
		goto fail;
	d->have_cat = 1;
	/* the published runs an answer is placed against; a data folder
	 * without the table places none */
	{
		char pub[4096];

		snprintf(pub, sizeof(pub), "%s/published.csv", cli_data_dir());
		if (access(pub, F_OK) == 0 &&
		    (rc = plan_published_load(pub, &d->cat, &d->published)) != RC_OK)
			goto fail;
	}
	/* measured figures (gpuplan calibrate) replace the catalog's */
	if ((rc = cli_calibration_catalog(&d->cat, NULL)) != RC_OK)
		goto fail;
	/* An unknown --gpu gets its "did you mean" here, before the search. */
	if (pc->opts.filter.gpu[0] && !price_gpu_resolve(&d->cat, "--gpu", pc->opts.filter.gpu)) {
		rc = RC_USAGE;
		goto fail;
	}
	if (pc->jobs_path) {
		rc = plan_jobs_load(pc->jobs_path, &d->models, &d->jobs, &d->n_jobs);
		if (rc != RC_OK)
			goto fail;
	} else {
		const struct sim_model *m = cli_model_find(&d->models, "--model", path, pc->model,
							   "run 'gpuplan models' for the list");

		if (!m) {
			rc = RC_USAGE;
			goto fail;
		}
		d->jobs = xcalloc(1, sizeof(*d->jobs));
		d->n_jobs = 1;
		plan_job_init(&d->jobs[0], m, pc->tokens);
	}
	for (size_t j = 0; j < d->n_jobs; j++) {
		rc = apply_gbs_tokens(pc, &d->jobs[j]);
		if (rc != RC_OK)
			goto fail;
		d->jobs[j].ft = ft;
		d->jobs[j].ft.offload = SIM_OFFLOAD_NONE;
		d->jobs[j].epochs = pc->ft.epochs;
		d->jobs[j].dataset_tokens = pc->ft.dataset_tokens;
	}
	rc = cost_cli_load(pc, d);
	if (rc != RC_OK)
		goto fail;
	/* --host describes the machines one owns (--have) or would buy
	 * (compare) */
	if (pc->ft.host_set) {
		if (pc->cost.n_have == 0 && !pc->cost.need_hardware) {
			gp_error("--host: states the host of GPUs you own, expected --have NxGPU with it, "
				 "found none");
			rc = RC_USAGE;
			goto fail;
		}
		for (size_t i = 0; i < d->cat.n_offers; i++)
			if (d->cat.offers[i].owned)
				ft_cli_host(&pc->ft, &d->cat.offers[i].host);
		for (size_t i = 0; i < d->hardware.n; i++)
			ft_cli_host(&pc->ft, &d->hardware.rows[i].host);
	}
	/* an unknown --provider or --region too, rather than "no offering
	 * passes the filters" after the search (owned GPUs included) */
	if (price_offering_resolve(&d->cat, "--provider", pc->opts.filter.provider, 0) != RC_OK ||
	    price_offering_resolve(&d->cat, "--region", pc->opts.filter.region, 1) != RC_OK) {
		rc = RC_USAGE;
		goto fail;
	}
	return RC_OK;
fail:
	plan_cli_release(d);
	return rc;
}

const char *plan_cli_recompute(enum sim_recompute r)
{
	return r == SIM_RECOMPUTE_FULL ? "full" : r == SIM_RECOMPUTE_SELECTIVE ? "sel" : "none";
}

const char *plan_cli_offering(char *buf, size_t size, const struct plan_candidate *c)
{
	snprintf(buf, size, "%s %s %s %s", c->offering->provider, c->offering->instance_type,
		 c->offering->region, c->purchase == PRICE_PURCHASE_BLOCK
					      ? price_block_kind(c->block)
					      : price_purchase_str(c->purchase));
	return buf;
}

const char *plan_cli_layout(char *buf, size_t size, const struct sim_parallel *q)
{
	size_t n;

	snprintf(buf, size, "%d/%d/%d/%d", q->tp, q->pp, q->dp, q->cp);
	if (q->interleave > 1 && (n = strlen(buf)) < size)
		snprintf(buf + n, size - n, " v%d", q->interleave);
	if (q->ep > 1 && (n = strlen(buf)) < size)
		snprintf(buf + n, size - n, " ep%d", q->ep);
	if (q->etp > 1 && (n = strlen(buf)) < size)
		snprintf(buf + n, size - n, " etp%d", q->etp);
	return buf;
}

void plan_cli_print_layout(const struct sim_plan *p, const struct plan_published_table *pub)
{
	const struct sim_parallel *q = &p->par;
	int ep = q->ep > 0 ? q->ep : 1, etp = q->etp > 0 ? q->etp : 1;

	printf("layout    tp%d pp%d", q->tp, q->pp);
	if (q->interleave > 1)
		printf(" vp%d", q->interleave);
	if (q->pp_last_layers > 0)
		printf(" (%d layers a virtual stage, %d in the last)",
		       sim_virtual_stage_layers(&p->model, q, 0), q->pp_last_layers);
	printf(" dp%d cp%d", q->dp, q->cp);
	if (p->model.experts > 0)
		printf(" ep%d etp%d (expert dp %d)", ep, etp, q->tp * q->cp * q->dp / (ep * etp));
	/* the links the GPUs have: an NVLink domain, or the node's PCIe
	 * where gpus.csv gives the GPU no NVLink (nor XGMI) */
	printf(" on %d GPUs, ", q->tp * q->pp * q->cp * q->dp);
	if (p->cluster.gpu.nvlink)
		printf("NVLink domains of %d", sim_cluster_domain(&p->cluster));
	else
		printf("PCIe within nodes of %d", p->cluster.gpus_per_node);
	printf("; mbs %d x %d micro-batches, ZeRO-%d, %s "
	       "recompute, %s",
	       q->mbs, p->result.grad_accum, q->zero, sim_recompute_str(q->recompute),
	       sim_precision_str(q->precision));
	if (ep > 1)
		printf("; %s dispatcher, EP all-to-alls %s", sim_ep_dispatcher_names[q->ep_flex],
		       q->ep_overlap ? "overlapped" : "not overlapped");
	printf("\n");
	{
		char stack[320];

		sim_stack_describe(q, sim_gpu_arch(&p->cluster.gpu), p->model.experts > 0, stack, sizeof(stack));
		printf("stack     %s\n", stack);
	}
	plan_cli_print_published(p, pub);
}

void plan_cli_print_published(const struct sim_plan *p, const struct plan_published_table *pub)
{
	const struct plan_published *best = plan_published_best(pub, p->model.name,
								 p->cluster.gpu.name);
	const struct sim_parallel *q = &p->par;
	double gpus = (double)q->tp * q->pp * q->cp * q->dp, per;

	if (!best || !(gpus > 0) || !(p->result.tokens_per_s > 0))
		return;
	per = p->result.tokens_per_s / gpus;
	if (per > best->tokens_per_s_per_gpu)
		printf("published %.0f tokens/s per GPU predicted exceeds every published run of %s on "
		       "%s: the best is %.0f (%s; %s), %.0f%% below; no run backs this speed\n",
		       per, p->model.name, p->cluster.gpu.name, best->tokens_per_s_per_gpu, best->run,
		       best->source, 100.0 * (1.0 - best->tokens_per_s_per_gpu / per));
	else
		printf("published %.0f tokens/s per GPU predicted, within published runs of %s on %s "
		       "(best %.0f: %s; %s)\n", per, p->model.name, p->cluster.gpu.name,
		       best->tokens_per_s_per_gpu, best->run, best->source);
}

/* What to do about an old (stale 1) or undated price of provider: fetch
 * it again where gpuplan reads the provider's own price list. */
static const char *refresh_hint(char *buf, size_t size, const char *provider, int stale)
{
	int fetch = gp_streq_nocase(provider, "aws") || gp_streq_nocase(provider, "azure") ||
		    gp_streq_nocase(provider, "gcp") || gp_streq_nocase(provider, "lambda");

	if (stale && fetch)
		snprintf(buf, size, "refresh them (gpuplan prices fetch %s)", provider);
	else if (stale)
		snprintf(buf, size, "check them or update them (gpuplan prices update)");
	else if (fetch)
		snprintf(buf, size, "refresh it with gpuplan prices fetch %s, or date it with gpuplan "
			 "prices update (a price_date column)", provider);
	else
		snprintf(buf, size, "check it, or date it with gpuplan prices update (a price_date column)");
	return buf;
}

void plan_cli_print_price_ages(const struct plan_cli *pc,
			       const struct plan_candidate *const *cs, size_t n)
{
	double max_age = pc->opts.max_price_age_days;
	long today = pc->opts.today_days, oldest = -1, newest = -1;
	size_t undated = 0, stale = 0, owned = 0;
	const struct plan_candidate *worst = NULL;
	char off[256], a[16], hint[160];

	for (size_t i = 0; i < n; i++) {
		long age = price_date_age_days(plan_candidate_price_date(cs[i]), today);

		/* an owned machine is charged its running cost (--owned), no
		 * market price that ages */
		if (cs[i]->purchase == PRICE_PURCHASE_OWNED) {
			owned++;
			continue;
		}
		if (age == PRICE_AGE_UNKNOWN) {
			undated++;
			if (!worst)
				worst = cs[i];
			continue;
		}
		if (age > max_age) {
			stale++;
			if (!worst || age > oldest)
				worst = cs[i];
		}
		if (oldest < 0 || age > oldest)
			oldest = age;
		if (newest < 0 || age < newest)
			newest = age;
	}
	if (n == 1 && cs[0]->purchase == PRICE_PURCHASE_OWNED) {
		printf("prices: %s: running cost only (power at --owned's usd-per-kwh), "
		       "no market price to age\n", plan_cli_offering(off, sizeof(off), cs[0]));
		return;
	}
	if (n == 1) {
		const struct plan_candidate *c = cs[0];
		const char *d = plan_candidate_price_date(c);

		printf("prices: %s %s %s (%s)", plan_cli_offering(off, sizeof(off), c),
		       d[0] ? "dated" : "states", d[0] ? d : "no date",
		       c->purchase == PRICE_PURCHASE_BLOCK && c->block ? c->block->source
								 : c->offering->version);
		if (d[0])
			printf(": %ld days old on %s\n", oldest, unit_fmt_date(a, sizeof(a), today));
		else
			printf(": its age is unknown\n");
	} else if (n > 1) {
		printf("prices: %zu rates", n - owned);
		if (oldest >= 0 && oldest != newest)
			printf(", %ld to %ld days old on %s", newest, oldest,
			       unit_fmt_date(a, sizeof(a), today));
		else if (oldest >= 0)
			printf(", %ld days old on %s", oldest, unit_fmt_date(a, sizeof(a), today));
		if (undated)
			printf(", %zu with no date stated", undated);
		if (owned)
			printf("; %zu owned, charged their running cost", owned);
		printf("\n");
	}
	if (!worst)
		return;
	{
		const char *d = plan_candidate_price_date(worst);

		if (d[0])
			gp_warn("%zu of the answer's %zu price%s older than %.0f days (--max-price-age): "
				"%s dated %s, %ld days; prices move, %s", stale, n - owned, stale == 1 ? " is" : "s are", max_age,
				plan_cli_offering(off, sizeof(off), worst), d,
				price_date_age_days(d, today),
				refresh_hint(hint, sizeof(hint), worst->offering->provider, 1));
		else
			gp_warn("%zu of the answer's %zu price%s no date: %s (%s) is of unknown age; "
				"%s",
				undated, n - owned, undated == 1 ? " states" : "s state",
				plan_cli_offering(off, sizeof(off), worst), worst->offering->version,
				refresh_hint(hint, sizeof(hint), worst->offering->provider, 0));
	}
}
