/*
 * cmd_scaling.c - `gpuplan scaling --model M --gpu G`: throughput and
 * scaling efficiency against the number of GPUs, beside ideal linear
 * scaling, the way people check that a training setup scales.
 *
 * For each GPU count (powers of two inside a node, then whole nodes
 * doubling) the planner's own search (plan_frontier over a one-offering
 * catalog of the chosen machine, exactly that many GPUs) gives the fastest
 * configuration that fits; nothing here searches or models anything
 * itself.  The global batch stays fixed across the sweep (strong scaling),
 * as when a run is moved to a larger cluster without retuning it.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_calib.h"
#include "cmd_scaling.h"
#include "plan.h"
#include "plot.h"
#include "price.h"
#include "progress.h"

#define SCALING_DEFAULT_MAX_GPUS 1024
#define SCALING_MAX_POINTS 64
/* Tokens of the job handed to the planner: only its time and cost
 * columns depend on it, and the sweep reads neither. */
#define SCALING_JOB_TOKENS 1e12

enum {
	O_MODEL = 256, O_MODELS, O_GPU, O_MIN_GPUS, O_MAX_GPUS, O_GPN, O_INTER, O_GBS,
	O_GBS_TOKENS, O_TP, O_PP, O_ZERO, O_FRAMEWORK, O_PLOT, O_CSV, O_JSON,
};

static void help(void)
{
	printf("usage: gpuplan scaling --model NAME --gpu NAME [options]\n\n"
	       "Throughput and scaling efficiency against the number of GPUs, beside ideal\n"
	       "linear scaling.  Each count is a power of two inside one node, then whole\n"
	       "nodes doubling; at each the planner's search picks the fastest parallel\n"
	       "configuration that fits, with the global batch fixed (strong scaling).\n"
	       "Efficiency is tokens/s per GPU over the best per-GPU rate of the sweep, so it\n"
	       "is at most 1; speedup is throughput over that of the smallest count that fits.\n\n"
	       "  --model NAME            model preset (gpuplan models; required)\n"
	       "  --models FILE           model presets (default: the shipped data/models.csv)\n"
	       "  --gpu NAME              GPU name or alias (gpuplan gpus; required)\n"
	       "  --min-gpus N            smallest count (default 1)\n"
	       "  --max-gpus N            largest count (default %d)\n"
	       "  --gpus-per-node N       node size (default: the largest node the price table\n"
	       "                          offers with this GPU, else 8)\n"
	       "  --inter-node-gbps X     per node, one direction, Gb/s (default: the fastest\n"
	       "                          network among those nodes, else the simulator's)\n"
	       "  --gbs N                 global batch in sequences (default: the preset's, else\n"
	       "                          4 Mi tokens as a power of two of sequences)\n"
	       "  --gbs-tokens N          global batch in tokens (4M), rounded to whole sequences\n"
	       "  --tp N, --pp N          pin tensor / pipeline parallelism (default: searched)\n"
	       "  --zero N                pin the ZeRO stage 0-3 (default: searched)\n"
	       "  --framework NAME        any, megatron or deepspeed: only layouts it runs, priced\n"
	       "                          as it runs them, as plan --framework (default megatron)\n"
	       "  --plot FILE             draw throughput and efficiency to FILE.png or FILE.svg\n"
	       "                          with gnuplot (default none; without gnuplot the data\n"
	       "                          and a script are written as FILE.csv and FILE.gp)\n"
	       "  --csv FILE              also write the sweep as CSV (default none)\n"
	       "  --json                  JSON (schema gpuplan.scaling/1) instead of a table\n"
	       "                          (default off)\n"
	       "  -q, --quiet             no progress or notes on stderr (default off)\n"
	       "  -h, --help              this help\n\n"
	       "exit status: 0 ok, 2 bad usage or input, 3 nothing fits at any count\n",
	       SCALING_DEFAULT_MAX_GPUS);
}

struct flags {
	const char *model, *models, *gpu, *plot, *csv;
	int min_gpus, max_gpus, gpn, gbs, tp, pp, zero, json;
	enum plan_framework framework;
	double inter_gbps, gbs_tokens;
};

static enum rc parse(int argc, char **argv, struct flags *f, int *helped)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, O_MODEL },
		{ "models", required_argument, NULL, O_MODELS },
		{ "gpu", required_argument, NULL, O_GPU },
		{ "min-gpus", required_argument, NULL, O_MIN_GPUS },
		{ "max-gpus", required_argument, NULL, O_MAX_GPUS },
		{ "gpus-per-node", required_argument, NULL, O_GPN },
		{ "inter-node-gbps", required_argument, NULL, O_INTER },
		{ "gbs", required_argument, NULL, O_GBS },
		{ "gbs-tokens", required_argument, NULL, O_GBS_TOKENS },
		{ "tp", required_argument, NULL, O_TP },
		{ "pp", required_argument, NULL, O_PP },
		{ "zero", required_argument, NULL, O_ZERO },
		{ "framework", required_argument, NULL, O_FRAMEWORK },
		{ "plot", required_argument, NULL, O_PLOT },
		{ "csv", required_argument, NULL, O_CSV },
		{ "json", no_argument, NULL, O_JSON },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum rc rc = RC_OK;
	enum plot_format pf;
	int c;

	memset(f, 0, sizeof(*f));
	f->min_gpus = 1;
	f->max_gpus = SCALING_DEFAULT_MAX_GPUS;
	f->zero = -1;
	f->framework = PLAN_FRAMEWORK_MEGATRON;
	optind = 1;
	opterr = 0;
	while (rc == RC_OK && (c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case O_MODEL: f->model = optarg; break;
		case O_MODELS: f->models = optarg; break;
		case O_GPU: f->gpu = optarg; break;
		case O_MIN_GPUS: rc = cli_parse_int("--min-gpus", optarg, 1, 1 << 20, &f->min_gpus); break;
		case O_MAX_GPUS: rc = cli_parse_int("--max-gpus", optarg, 1, 1 << 20, &f->max_gpus); break;
		case O_GPN: rc = cli_parse_int("--gpus-per-node", optarg, 1, 1024, &f->gpn); break;
		case O_INTER:
			rc = cli_parse_double("--inter-node-gbps", optarg, 0, PRICE_GBPS_MAX, &f->inter_gbps);
			if (rc == RC_OK && !(f->inter_gbps > 0)) {
				gp_error("--inter-node-gbps: expected Gb/s > 0, found '%s'", optarg);
				rc = RC_USAGE;
			}
			break;
		case O_GBS: rc = cli_parse_int("--gbs", optarg, 1, 1 << 24, &f->gbs); break;
		case O_GBS_TOKENS: rc = cli_parse_count("--gbs-tokens", optarg, &f->gbs_tokens); break;
		case O_TP: rc = cli_parse_int("--tp", optarg, 1, 1024, &f->tp); break;
		case O_PP: rc = cli_parse_int("--pp", optarg, 1, 4096, &f->pp); break;
		case O_ZERO: rc = cli_parse_int("--zero", optarg, 0, 3, &f->zero); break;
		case O_FRAMEWORK:
			rc = plan_framework_parse(optarg, &f->framework);
			if (rc != RC_OK)
				gp_error("--framework: expected any, megatron or deepspeed, found '%s'",
					 optarg);
			break;
		case O_PLOT: f->plot = optarg; rc = plot_check_path("--plot", optarg, &pf); break;
		case O_CSV: f->csv = optarg; break;
		case O_JSON: f->json = 1; break;
		case 'q': gp_log_quiet(1); break;
		case 'h': help(); *helped = 1; return RC_OK;
		default: return cli_bad_option("scaling", optopt, argv[optind - 1]);
		}
	}
	if (rc != RC_OK)
		return rc;
	if (optind < argc) {
		gp_error("scaling: expected options only, found '%s'", argv[optind]);
		return RC_USAGE;
	}
	if (!f->model || !f->gpu) {
		gp_error("scaling: expected --model NAME and --gpu NAME, found %s",
			 f->model ? "no --gpu" : "no --model");
		gp_hint("gpuplan scaling --model llama3-8b --gpu H100 --max-gpus 256");
		return RC_USAGE;
	}
	if (f->min_gpus > f->max_gpus) {
		gp_error("--min-gpus/--max-gpus: expected min <= max, found %d and %d", f->min_gpus,
			 f->max_gpus);
		return RC_USAGE;
	}
	if (f->gbs && f->gbs_tokens > 0) {
		gp_error("--gbs/--gbs-tokens: expected one of them, found both");
		return RC_USAGE;
	}
	return RC_OK;
}

/* The node the sweep is run on: the GPU's largest node in the price table,
 * the fastest network among those; flags override. */
static void choose_machine(const struct price_catalog *cat, const struct price_gpu *g,
			   const struct flags *f, struct sim_cluster *c, char *desc, size_t size)
{
	const struct price_offering *pick = NULL;

	for (size_t i = 0; i < cat->n_offers; i++) {
		const struct price_offering *o = &cat->offers[i];

		if (price_gpu_find(cat, o->gpu) != g || o->gpus_per_node < 1)
			continue;
		if (f->gpn && o->gpus_per_node != f->gpn)
			continue;
		if (!pick || o->gpus_per_node > pick->gpus_per_node ||
		    (o->gpus_per_node == pick->gpus_per_node &&
		     o->inter_node_bytes_per_s > pick->inter_node_bytes_per_s))
			pick = o;
	}
	memset(c, 0, sizeof(*c));
	c->gpu = *g;
	c->intra_bytes_per_s = g->intra_bytes_per_s;
	c->gpus_per_node = f->gpn ? f->gpn : pick ? pick->gpus_per_node : 8;
	c->inter_bytes_per_s = pick ? pick->inter_node_bytes_per_s : 0;
	if (f->inter_gbps > 0)
		c->inter_bytes_per_s = price_gbps_to_bytes_per_s(f->inter_gbps);
	if (pick)
		snprintf(desc, size, "as %s %s", pick->provider, pick->instance_type);
	else if (f->gpn)
		snprintf(desc, size, "no offering in the price table has %d per node", f->gpn);
	else
		snprintf(desc, size, "no offering in the price table");
}

/* Powers of two below a node, then whole nodes doubling, in [lo, hi]. */
static size_t gpu_counts(int gpn, int lo, int hi, int *out, size_t cap)
{
	size_t k = 0;

	for (long n = 1; n < gpn && n <= hi && k < cap; n *= 2)
		if (n >= lo)
			out[k++] = (int)n;
	for (long n = gpn; n <= hi && k < cap; n *= 2)
		if (n >= lo)
			out[k++] = (int)n;
	return k;
}

/* The planner's fastest fitting configuration at exactly gpus GPUs of the
 * machine: a one-offering catalog priced at 1 USD per node-hour, so that
 * the search and its pruning are the planner's, unchanged. */
static enum rc search_count(const struct plan_job *job, const struct sim_cluster *mc,
			    const struct plan_opts *base, int gpus, struct scaling_point *pt)
{
	struct price_gpu g = mc->gpu;
	struct price_offering off;
	struct price_catalog cat;
	struct plan_opts o = *base;
	struct plan_candidate *c = NULL;
	size_t n = 0;
	enum rc rc;

	memset(&off, 0, sizeof(off));
	snprintf(off.provider, sizeof(off.provider), "scaling");
	snprintf(off.instance_type, sizeof(off.instance_type), "node");
	snprintf(off.region, sizeof(off.region), "-");
	gp_strlcpy(off.gpu, g.name, sizeof(off.gpu));
	off.gpus_per_node = gpus < mc->gpus_per_node ? gpus : mc->gpus_per_node;
	off.on_demand_usd_per_hour = 1.0;
	off.spot_usd_per_hour = -1;
	off.inter_node_bytes_per_s = mc->inter_bytes_per_s;
	/* A sweep asks what the count would do, so the machine is sold at
	 * that count; without a network figure it stays one node. */
	off.max_nodes = (gpus + off.gpus_per_node - 1) / off.gpus_per_node;
	memset(&cat, 0, sizeof(cat));
	cat.gpus = &g;
	cat.n_gpus = 1;
	cat.offers = &off;
	cat.n_offers = 1;
	o.filter.min_gpus = gpus;
	o.filter.max_gpus = gpus;
	o.filter.spot = 0;

	memset(pt, 0, sizeof(*pt));
	pt->gpus = gpus;
	pt->gpus_per_node = off.gpus_per_node;
	pt->nodes = gpus / off.gpus_per_node;
	rc = plan_frontier(job, &cat, &o, &c, &n, NULL, NULL);
	if (rc == RC_INFEASIBLE)
		return RC_OK;
	if (rc != RC_OK)
		return rc;
	/* One offering at one size: the frontier is that size's fastest. */
	pt->fits = 1;
	pt->par = c[0].par;
	pt->res = c[0].res;
	pt->nodes = c[0].nodes;
	free(c);
	return RC_OK;
}

void scaling_derive(struct scaling_sweep *s)
{
	double best = 0, base = 0;

	s->best = -1;
	for (size_t i = 0; i < s->n; i++) {
		struct scaling_point *p = &s->points[i];

		if (!p->fits)
			continue;
		p->tokens_per_s_per_gpu = p->res.tokens_per_s / p->gpus;
		if (s->best < 0 || p->tokens_per_s_per_gpu > best) {
			best = p->tokens_per_s_per_gpu;
			s->best = (int)i;
		}
		if (!(base > 0))
			base = p->res.tokens_per_s;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct scaling_point *p = &s->points[i];

		if (!p->fits || !(best > 0))
			continue;
		p->ideal_tokens_per_s = best * p->gpus;
		p->efficiency = p->tokens_per_s_per_gpu / best;
		p->speedup = p->res.tokens_per_s / base;
	}
}

static const char *recompute_name(enum sim_recompute r)
{
	return r == SIM_RECOMPUTE_FULL ? "full" : r == SIM_RECOMPUTE_SELECTIVE ? "sel" : "none";
}

static void print_table(const struct scaling_sweep *s)
{
	char a[32], b[32], c[32], d[32];
	const struct scaling_point *bp = s->best >= 0 ? &s->points[s->best] : NULL;

	printf("gpuplan scaling: %s on %s, %d per node, %s between nodes (%s); "
	       "global batch %d x %d tokens", s->model.name, s->cluster.gpu.name,
	       s->cluster.gpus_per_node,
	       s->cluster.inter_bytes_per_s > 0
		       ? (snprintf(a, sizeof(a), "%.0f Gb/s", s->cluster.inter_bytes_per_s * 8 / 1e9), a)
		       : "the simulator's default network",
	       s->machine, s->gbs, s->model.seq);
	if (s->framework && strcmp(s->framework, "any") != 0)
		printf("; layouts %s runs", s->framework);
	printf("\n\n");
	printf("%-6s %-6s %-13s %-9s %-4s %-4s %-9s %-9s %-9s %-9s %-8s %-6s %s\n", "GPUS", "NODES",
	       "TP/PP/DP/CP", "MBSxACC", "ZERO", "RCMP", "STEP", "TOK/S", "PER GPU", "IDEAL",
	       "SPEEDUP", "EFF", "MFU");
	for (size_t i = 0; i < s->n; i++) {
		const struct scaling_point *p = &s->points[i];
		char par[48], mb[32];

		if (!p->fits) {
			printf("%-6d %-6d %s\n", p->gpus, p->nodes,
			       "no configuration fits in memory");
			continue;
		}
		snprintf(par, sizeof(par), "%d/%d/%d/%d", p->par.tp, p->par.pp, p->par.dp, p->par.cp);
		snprintf(mb, sizeof(mb), "%dx%d", p->par.mbs, p->res.grad_accum);
		printf("%-6d %-6d %-13s %-9s %-4d %-4s %-9s %-9s %-9s %-9s %-8.2f %-6.1f %.1f\n",
		       p->gpus, p->nodes, par, mb, p->par.zero, recompute_name(p->par.recompute),
		       unit_fmt_duration(a, sizeof(a), p->res.step_time_s),
		       unit_fmt_count(b, sizeof(b), p->res.tokens_per_s),
		       unit_fmt_count(c, sizeof(c), p->tokens_per_s_per_gpu),
		       unit_fmt_count(d, sizeof(d), p->ideal_tokens_per_s), p->speedup,
		       100.0 * p->efficiency, 100.0 * p->res.mfu);
	}
	if (bp)
		printf("\nideal: linear scaling of the best per-GPU rate, %s tokens/s at %d GPUs; "
		       "EFF = PER GPU / that rate (%%), MFU in %%\n",
		       unit_fmt_count(a, sizeof(a), bp->tokens_per_s_per_gpu), bp->gpus);
}

static void csv_header(FILE *f)
{
	fprintf(f, "gpus,nodes,gpus_per_node,fits,tp,pp,dp,cp,mbs,grad_accum,zero,recompute,"
		   "interleave,step_time_s,tokens_per_s,tokens_per_s_per_gpu,ideal_tokens_per_s,"
		   "speedup,efficiency,mfu,memory_per_gpu_bytes\n");
}

static void csv_row(FILE *f, const struct scaling_point *p)
{
	fprintf(f, "%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s,%d,%.6g,%.6g,%.6g,%.6g,%.4f,%.4f,%.4f,%.6g\n",
		p->gpus, p->nodes, p->gpus_per_node, p->fits, p->par.tp, p->par.pp, p->par.dp,
		p->par.cp, p->par.mbs, p->res.grad_accum, p->par.zero,
		recompute_name(p->par.recompute), p->par.interleave, p->res.step_time_s,
		p->res.tokens_per_s, p->tokens_per_s_per_gpu, p->ideal_tokens_per_s, p->speedup,
		p->efficiency, p->res.mfu, p->res.memory.total);
}

static enum rc write_csv(const char *path, const struct scaling_sweep *s)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		gp_error("%s: cannot write: %s", path, strerror(errno));
		return RC_ERR;
	}
	csv_header(f);
	for (size_t i = 0; i < s->n; i++)
		csv_row(f, &s->points[i]);
	if (fclose(f) != 0) {
		gp_error("%s: cannot write: %s", path, strerror(errno));
		return RC_ERR;
	}
	return RC_OK;
}

/* Two panels over a log2 GPU axis: throughput with the ideal line, then
 * efficiency with the 100% line. */
static enum rc draw(const struct scaling_sweep *s, const char *path)
{
	struct plot p;
	char t[512], q[600];
	double lo = 0, hi = 0;
	int fallback;
	enum rc rc;

	plot_init(&p);
	p.height = 800;
	plot_row(&p, "gpus,tokens_per_s,ideal_tokens_per_s,efficiency_pct,label");
	for (size_t i = 0; i < s->n; i++) {
		const struct scaling_point *x = &s->points[i];

		if (!x->fits)
			continue;
		lo = lo > 0 ? fmin(lo, x->res.tokens_per_s) : x->res.tokens_per_s;
		hi = fmax(hi, x->ideal_tokens_per_s);
		plot_row(&p, "%d,%.6g,%.6g,%.3f,%d/%d/%d", x->gpus, x->res.tokens_per_s,
			 x->ideal_tokens_per_s, 100.0 * x->efficiency, x->par.tp, x->par.pp,
			 x->par.dp);
	}
	snprintf(t, sizeof(t), "%s on %s (%d per node), global batch %d sequences; "
		 "labels: TP/PP/DP", s->model.name, s->cluster.gpu.name, s->cluster.gpus_per_node,
		 s->gbs);
	plot_cmd(&p, "set multiplot layout 2,1 title %s", plot_quote(q, sizeof(q), t));
	plot_cmd(&p, "set logscale x 2");
	plot_cmd(&p, "set format x '%%g'");
	plot_cmd(&p, "set grid xtics ytics lc rgb '#dddddd'");
	plot_cmd(&p, "set key top left box opaque");
	plot_cmd(&p, "set xrange [*:*] noextend");
	plot_cmd(&p, "set offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05");
	plot_cmd(&p, "set logscale y 10");
	plot_cmd(&p, "set yrange [%.6g:%.6g]", lo / 1.5, hi * 2);
	plot_cmd(&p, "set format y '%%.0s%%c'");
	plot_cmd(&p, "set ylabel 'tokens/s'");
	plot_cmd(&p, "set xlabel 'GPUs'");
	plot_cmd(&p, "plot $data every ::1 using 1:3 with lines dt 2 lw 2 lc rgb '#888888' "
		     "title 'ideal (linear in the best per-GPU rate)', "
		     "'' every ::1 using 1:2 with linespoints pt 7 ps 1.2 lw 2 lc rgb '#1f77b4' "
		     "title 'predicted throughput', "
		     "'' every ::1 using 1:2:5 with labels offset 0,1.1 font ',8' tc rgb '#555555' "
		     "notitle");
	plot_cmd(&p, "unset logscale y");
	plot_cmd(&p, "set ylabel 'scaling efficiency (%%)'");
	plot_cmd(&p, "set yrange [0:110]");
	plot_cmd(&p, "set offsets graph 0.04, graph 0.04, 0, 0");
	plot_cmd(&p, "set key bottom left box opaque");
	plot_cmd(&p, "plot 100 with lines dt 2 lw 2 lc rgb '#888888' title 'ideal', "
		     "$data every ::1 using 1:4 with linespoints pt 7 ps 1.2 lw 2 lc rgb '#d62728' "
		     "title 'efficiency: per-GPU tokens/s over the best'");
	plot_cmd(&p, "unset multiplot");
	rc = plot_render(&p, "--plot", path, &fallback);
	plot_release(&p);
	if (rc == RC_OK && !fallback)
		gp_info("plot written to %s", path);
	return rc;
}

enum rc cmd_scaling(int argc, char **argv)
{
	struct flags f;
	struct sim_model_table models;
	struct price_catalog cat;
	struct price_opts po;
	struct scaling_sweep s;
	struct plan_opts o;
	struct plan_job job;
	struct gp_progress *prog;
	const struct sim_model *m;
	const struct price_gpu *g;
	int counts[SCALING_MAX_POINTS];
	char path[4096], why[256];
	size_t nc;
	int helped = 0, any = 0;
	enum rc rc;

	rc = parse(argc, argv, &f, &helped);
	if (rc != RC_OK || helped)
		return rc;
	if (f.models)
		snprintf(path, sizeof(path), "%s", f.models);
	else
		snprintf(path, sizeof(path), "%s/models.csv", cli_data_dir());
	rc = sim_model_table_load(&models, path);
	if (rc != RC_OK)
		return rc;
	m = cli_model_find(&models, "--model", path, f.model, "run 'gpuplan models' for the list");
	if (!m) {
		sim_model_table_release(&models);
		return RC_USAGE;
	}
	price_opts_init(&po);
	po.data_dir = cli_data_dir();
	rc = price_catalog_load(&cat, &po);
	if (rc != RC_OK) {
		sim_model_table_release(&models);
		return rc;
	}
	memset(&s, 0, sizeof(s));
	/* measured figures (gpuplan calibrate) replace the catalog's, as in
	 * plan, frontier and compare */
	if ((rc = cli_calibration_catalog(&cat, NULL)) != RC_OK)
		goto out;
	s.model = *m;
	rc = RC_USAGE;
	g = price_gpu_resolve(&cat, "--gpu", f.gpu);
	if (!g)
		goto out;
	if (!price_gpu_eligible(g, why, sizeof(why))) {
		gp_error("--gpu: expected a GPU with the figures planning needs: %s", why);
		goto out;
	}
	choose_machine(&cat, g, &f, &s.cluster, s.machine, sizeof(s.machine));

	plan_opts_init(&o);
	o.filter.tp = f.tp;
	o.filter.pp = f.pp;
	o.filter.zero = f.zero;
	o.filter.framework = f.framework;
	s.framework = plan_framework_str(f.framework);
	plan_job_init(&job, m, SCALING_JOB_TOKENS);
	if (f.gbs)
		job.gbs = f.gbs;
	if (f.gbs_tokens > 0) {
		double seqs = floor(f.gbs_tokens / m->seq + 0.5);

		if (seqs < 1 || seqs > (1 << 24)) {
			gp_error("--gbs-tokens: expected at least one sequence of %d tokens, found %.0f",
				 m->seq, f.gbs_tokens);
			goto out;
		}
		job.gbs = (int)seqs;
	}

	nc = gpu_counts(s.cluster.gpus_per_node, f.min_gpus, f.max_gpus, counts,
			GP_ARRAY_LEN(counts));
	if (nc == 0) {
		gp_error("--min-gpus/--max-gpus: expected a power of two below %d or whole nodes "
			 "doubling between %d and %d, found none", s.cluster.gpus_per_node,
			 f.min_gpus, f.max_gpus);
		goto out;
	}
	s.points = xcalloc(nc, sizeof(*s.points));
	s.n = nc;
	prog = gp_progress_start("scaling: searching", nc);
	for (size_t i = 0; i < nc; i++) {
		char d[32];

		snprintf(d, sizeof(d), "%d GPUs", counts[i]);
		gp_progress_update(prog, i, d);
		rc = search_count(&job, &s.cluster, &o, counts[i], &s.points[i]);
		if (rc != RC_OK)
			break;
		if (s.points[i].fits) {
			any = 1;
			s.gbs = s.points[i].par.gbs;
		}
	}
	gp_progress_done(prog);
	if (rc != RC_OK)
		goto out;
	if (!any) {
		gp_error("scaling: %s does not fit on %d to %d x %s with any configuration searched",
			 m->name, counts[0], counts[nc - 1], g->name);
		rc = RC_INFEASIBLE;
		goto out;
	}
	scaling_derive(&s);

	if (f.json) {
		char *js = scaling_to_json(&s);

		printf("%s\n", js);
		free(js);
	} else {
		print_table(&s);
	}
	fflush(stdout);
	rc = RC_OK;
	if (f.csv) {
		rc = write_csv(f.csv, &s);
		if (rc == RC_OK)
			gp_info("sweep written to %s", f.csv);
	}
	if (rc == RC_OK && f.plot)
		rc = draw(&s, f.plot);
out:
	free(s.points);
	price_catalog_release(&cat);
	sim_model_table_release(&models);
	return rc;
}
