/*
 * cmd_calibrate.c - `gpuplan calibrate`: measures this machine's GEMM
 * rate, memory bandwidth and collective bandwidth through the executor's
 * backend and writes the figures the simulator reads as a calibration
 * file that simulate, plan and execute then use.
 *
 * Started by hand with --np N it starts mpirun (one rank per GPU); under
 * mpirun or srun it is one of the ranks.  Rank 0 prints and writes, and on
 * a terminal shows which measurement is running.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_calib.h"
#include "progress.h"

static void help(void)
{
	printf("usage: gpuplan calibrate [options]\n\n"
	       "Measures this machine through the executor's backend: GEMMs of a transformer\n"
	       "layer's shapes forward and backward, device memory copies, a layer's\n"
	       "element-wise kernels (norms, residual adds, GELU or SwiGLU), a layer's\n"
	       "attention core forward and backward, one optimizer step (gradient norm,\n"
	       "AdamW, working copy, zeroing), and with more than one rank an nccl-tests\n"
	       "style sweep of all-reduce, all-gather and reduce-scatter (algorithm and bus\n"
	       "bandwidth per size).  Fits the figures the simulator reads (bf16 peak and\n"
	       "GEMM knee, HBM, element-wise, optimizer and intra-node bandwidth, attention\n"
	       "rate, latency) so its predictions reproduce what was measured, and writes\n"
	       "them as JSON (gpuplan.calibration/1).  simulate, plan, frontier, compare,\n"
	       "scaling and execute use the file: named with --calibration FILE (simulate,\n"
	       "execute) or $GPUPLAN_CALIBRATION, or found in the user data directory for\n"
	       "the GPU it was measured on.\n\n"
	       "  --backend cpu|cuda    (default: cuda when built in and a GPU is found, else cpu;\n"
	       "                        built in: %s)\n"
	       "  --np N                ranks, one per GPU; more than one adds the collective\n"
	       "                        sweep and starts mpirun (default: 1)\n"
	       "  --precision bf16|fp32 GEMM arithmetic on a GPU (default: bf16)\n"
	       "  --gpu NAME            catalog GPU the calibration is for (default: the one\n"
	       "                        whose name and memory match the device's)\n"
	       "  -o, --output FILE     (default: USERDIR/calibration/GPU.json, where the other\n"
	       "                        commands find it; USERDIR as for `gpuplan prices`)\n"
	       "  --quick               a few small shapes, in seconds (a smoke test)\n"
	       "  --json                print the calibration as JSON instead of a table\n"
	       "  -q, --quiet           no progress and no notes on stderr\n"
	       "  -h, --help            this help\n",
	       exec_backends_built());
}

enum { OPT_BACKEND = 256, OPT_NP, OPT_PRECISION, OPT_GPU, OPT_QUICK, OPT_JSON };

struct flags {
	const char *backend, *gpu, *output;
	int np, quick, json, help, quiet;
	enum exec_precision precision;
};

static enum rc parse_args(int argc, char **argv, struct flags *f)
{
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "np", required_argument, NULL, OPT_NP },
		{ "precision", required_argument, NULL, OPT_PRECISION },
		{ "gpu", required_argument, NULL, OPT_GPU },
		{ "output", required_argument, NULL, 'o' },
		{ "quick", no_argument, NULL, OPT_QUICK },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum rc rc = RC_OK;
	int c;

	memset(f, 0, sizeof(*f));
	f->np = 1;
	optind = 1;
	opterr = 0;
	while (rc == RC_OK && (c = getopt_long(argc, argv, "o:hq", opts, NULL)) != -1) {
		switch (c) {
		case OPT_BACKEND:
			if (strcmp(optarg, "cpu") != 0 && strcmp(optarg, "cuda") != 0) {
				gp_error("--backend: expected cpu or cuda, found '%s'", optarg);
				rc = RC_USAGE;
			}
			f->backend = optarg;
			break;
		case OPT_NP: rc = cli_parse_int("--np", optarg, 1, 1 << 16, &f->np); break;
		case OPT_PRECISION:
			if (exec_precision_parse(optarg, &f->precision) != RC_OK) {
				gp_error("--precision: expected bf16 or fp32, found '%s'", optarg);
				rc = RC_USAGE;
			}
			break;
		case OPT_GPU: f->gpu = optarg; break;
		case 'o': f->output = optarg; break;
		case OPT_QUICK: f->quick = 1; break;
		case OPT_JSON: f->json = 1; break;
		case 'q': f->quiet = 1; break;
		case 'h': f->help = 1; return RC_OK;
		default: return cli_bad_option("calibrate", optopt, argv[optind - 1]);
		}
	}
	if (rc == RC_OK && optind < argc) {
		gp_error("calibrate: expected options only, found '%s'", argv[optind]);
		rc = RC_USAGE;
	}
	return rc;
}

/* Names the catalog GPU c was measured on: --gpu, else the catalog's
 * match for the device; the catalog's figures into *cat_gpu (zeroed when
 * none).  Without a match the device's own name stands, with a warning. */
static enum rc name_gpu(const struct flags *f, struct exec_calibration *c,
			struct price_gpu *cat_gpu)
{
	struct price_catalog cat;
	struct price_opts po;
	const struct price_gpu *g = NULL;
	enum rc rc;

	memset(cat_gpu, 0, sizeof(*cat_gpu));
	if (strcmp(c->backend, "cpu") == 0) {
		*cat_gpu = *cli_cpu_gpu();
		gp_strlcpy(c->gpu, "cpu", sizeof(c->gpu));
		return RC_OK;
	}
	price_opts_init(&po);
	po.data_dir = cli_data_dir();
	rc = price_catalog_load(&cat, &po);
	if (rc != RC_OK)
		return rc;
	if (f->gpu) {
		g = price_gpu_resolve(&cat, "--gpu", f->gpu);
		if (!g)
			rc = RC_USAGE;
	} else {
		for (size_t i = 0; i < cat.n_gpus && !g; i++)
			if (exec_gpu_matches(c->device, c->device_memory_bytes, cat.gpus[i].name,
					     cat.gpus[i].memory_bytes))
				g = &cat.gpus[i];
		if (!g)
			gp_warn("no GPU of %s/gpus.csv matches '%s'; the calibration is named after "
				"the device (give --gpu NAME to name it)", po.data_dir, c->device);
	}
	if (g) {
		*cat_gpu = *g;
		gp_strlcpy(c->gpu, g->name, sizeof(c->gpu));
	} else if (rc == RC_OK) {
		gp_strlcpy(c->gpu, c->device, sizeof(c->gpu));
	}
	price_catalog_release(&cat);
	return rc;
}

/* The default output: USERDIR/calibration/GPU.json, the directory made. */
static enum rc default_output(const char *gpu, char *buf, size_t size)
{
	struct price_opts po;
	char dir[2048], sub[2100];

	price_opts_init(&po);
	if (price_user_dir(&po, dir, sizeof(dir)) != RC_OK) {
		gp_error("calibrate: no user data directory (HOME unset); give -o FILE");
		return RC_ERR;
	}
	snprintf(sub, sizeof(sub), "%s/calibration", dir);
	if (gp_mkdir_p(sub) != RC_OK)
		return RC_ERR;
	exec_calibration_path(buf, size, dir, gpu);
	return RC_OK;
}

/* A time with three significant digits in us, ms or s. */
static const char *fmt_time(char *buf, size_t size, double s)
{
	if (s < 1e-3)
		snprintf(buf, size, "%.3g us", s * 1e6);
	else if (s < 1)
		snprintf(buf, size, "%.3g ms", s * 1e3);
	else
		snprintf(buf, size, "%.3g s", s);
	return buf;
}

static void print_table(const struct exec_calibration *c, const struct price_gpu *g)
{
	char a[32], b[32];

	printf("calibrate: %s backend on %s (%s), %s GEMMs, %d rank%s; kernels timed by %s\n\n",
	       c->backend, c->device, c->gpu, exec_precision_str(c->precision), c->ranks,
	       c->ranks > 1 ? "s" : "",
	       strcmp(c->clock, "cpu") == 0 ? "CPU time" : "the wall clock");
	printf("%-24s %11s %11s %11s\n", "GEMM tokens x out x in", "time", "TFLOP/s", "simulator");
	for (int i = 0; i < c->n_gemm; i++) {
		char shape[48];

		snprintf(shape, sizeof(shape), "%.0f x %.0f x %.0f%s", c->gemm[i].m, c->gemm[i].n,
			 c->gemm[i].k, c->gemm[i].backward ? " bwd" : "");
		printf("%-24s %11s %11.3g %11s\n", shape,
		       fmt_time(a, sizeof(a), c->gemm[i].time_s),
		       c->gemm[i].flops_per_s / 1e12,
		       fmt_time(b, sizeof(b), c->gemm[i].predicted_s));
	}
	printf("\n%-24s %11s %11s\n", "copy", "time", "GB/s");
	for (int i = 0; i < c->n_copy; i++)
		printf("%-24s %11s %11.1f\n", unit_fmt_bytes(a, sizeof(a), c->copy[i].bytes),
		       fmt_time(b, sizeof(b), c->copy[i].time_s),
		       c->copy[i].bytes_per_s / 1e9);
	if (c->n_elt > 0) {
		printf("\n%-24s %11s %11s\n", "element-wise layer", "time", "GB/s");
		for (int i = 0; i < c->n_elt; i++) {
			char what[48];

			snprintf(what, sizeof(what), "%s %.0f x %.0f", c->elt[i].mlp,
				 c->elt[i].tokens, c->elt[i].hidden);
			printf("%-24s %11s %11.3g\n", what, fmt_time(a, sizeof(a), c->elt[i].time_s),
			       c->elt[i].bytes_per_s / 1e9);
		}
	}
	if (c->attn.batch > 0) {
		char what[48];

		printf("\n%-24s %11s %11s\n", "attention (fwd + bwd)", "time", "TFLOP/s");
		snprintf(what, sizeof(what), "%d x %d, %d/%d x %d", c->attn.batch, c->attn.seq,
			 c->attn.heads, c->attn.kv_heads, c->attn.head_dim);
		printf("%-24s %11s %11.3g\n", what, fmt_time(a, sizeof(a), c->attn.time_s),
		       c->attn.flops_per_s / 1e12);
	}
	if (c->opt.params > 0) {
		char what[48];

		printf("\n%-24s %11s %11s\n", "optimizer step", "time", "GB/s");
		snprintf(what, sizeof(what), "%s parameters",
			 unit_fmt_count(b, sizeof(b), c->opt.params));
		printf("%-24s %11s %11.3g\n", what, fmt_time(a, sizeof(a), c->opt.time_s),
		       c->opt.bytes_per_s / 1e9);
	}
	if (c->n_coll > 0) {
		printf("\n%-15s %5s %10s %11s %11s %11s\n", "collective", "ranks", "bytes", "time",
		       "algbw GB/s", "busbw GB/s");
		for (int i = 0; i < c->n_coll; i++)
			printf("%-15s %5d %10s %11s %11.2f %11.2f\n", c->coll[i].op, c->coll[i].ranks,
			       unit_fmt_bytes(a, sizeof(a), c->coll[i].bytes),
			       fmt_time(b, sizeof(b), c->coll[i].time_s),
			       c->coll[i].algbw_bytes_per_s / 1e9, c->coll[i].busbw_bytes_per_s / 1e9);
	}
	printf("\n%-24s %14s %14s\n", "simulator figure", "catalog", "calibrated");
	/* the simulator adds a GEMM's HBM traffic to its compute, so the
	 * peak that reproduces a measurement may exceed the data sheet's */
	printf("%-24s %14.4g %14.4g", "bf16 peak, TFLOP/s", g->bf16_flops_per_s / 1e12,
	       c->bf16_flops_per_s / 1e12);
	if (g->bf16_flops_per_s > 0)
		printf("  (%.0f%%)", 100 * c->bf16_flops_per_s / g->bf16_flops_per_s);
	printf("\n%-24s %14.4g %14.4g\n", "HBM, GB/s", g->hbm_bytes_per_s / 1e9,
	       c->hbm_bytes_per_s / 1e9);
	for (int i = 0; i < 2; i++)
		if (c->elt_bytes_per_s[i] > 0)
			printf("%-24s %14.4g %14.4g\n",
			       c->act_bytes_per_s[i] > 0 ? (i ? "norms, adds SwiGLU GB/s"
							      : "norms, adds GELU GB/s")
			       : i ? "element-wise SwiGLU GB/s" : "element-wise GELU GB/s",
			       (g->elt_bytes_per_s[i] > 0 ? g->elt_bytes_per_s[i]
							  : g->hbm_bytes_per_s) / 1e9,
			       c->elt_bytes_per_s[i] / 1e9);
	for (int i = 0; i < 2; i++)
		if (c->act_bytes_per_s[i] > 0)
			printf("%-24s %14.4g %14.4g\n",
			       i ? "SwiGLU alone GB/s" : "GELU alone GB/s",
			       (g->act_bytes_per_s[i] > 0 ? g->act_bytes_per_s[i]
			        : g->elt_bytes_per_s[i] > 0 ? g->elt_bytes_per_s[i]
							    : g->hbm_bytes_per_s) / 1e9,
			       c->act_bytes_per_s[i] / 1e9);
	if (c->attn_flops_per_s > 0)
		printf("%-24s %14.4g %14.4g\n", "attention, TFLOP/s",
		       (g->attn_flops_per_s > 0 ? g->attn_flops_per_s
						: exec_calibration_catalog_attn(c, g)) / 1e12,
		       c->attn_flops_per_s / 1e12);
	if (c->opt_bytes_per_s > 0)
		printf("%-24s %14.4g %14.4g\n", "optimizer GB/s",
		       (g->opt_bytes_per_s > 0 ? g->opt_bytes_per_s : g->hbm_bytes_per_s) / 1e9,
		       c->opt_bytes_per_s / 1e9);
	/* the smallest GEMM side at which the curve gives half the peak */
	printf("%-24s %14.4g %14.4g\n", "GEMM half-rate side", sim_gemm_dim_half(g->gemm_dim_half),
	       sim_gemm_dim_half(c->gemm_dim_half));
	if (c->intra_bytes_per_s > 0) {
		printf("%-24s %14.4g %14.4g\n", "intra-node link, GB/s", g->intra_bytes_per_s / 1e9,
		       c->intra_bytes_per_s / 1e9);
		printf("%-24s %14s %14.3g\n", "latency per step, us", "-", c->latency_s * 1e6);
	}
}

/* The measurement running, on world rank 0: the indicator starts with
 * the first measurement, when their number is known. */
struct phase_ctx {
	struct gp_progress *prog;
};

static void on_phase(void *ctx, const char *phase, int done, int total)
{
	struct phase_ctx *pc = ctx;

	if (!pc->prog)
		pc->prog = cli_progress_start("calibrate", (size_t)total);
	gp_progress_update(pc->prog, (size_t)done, phase);
}

enum rc cmd_calibrate(int argc, char **argv)
{
	struct exec_calibrate_opts o;
	struct exec_calibration *c;
	struct price_gpu cat_gpu;
	struct phase_ctx pc = { NULL };
	struct flags f;
	char path[4096], why[512];
	enum rc rc;

	rc = parse_args(argc, argv, &f);
	if (rc != RC_OK)
		return rc;
	if (f.help) {
		help();
		return RC_OK;
	}
	if (f.quiet)
		gp_log_quiet(1);
	exec_calibrate_opts_init(&o);
	o.on_phase = on_phase;
	o.on_phase_ctx = &pc;
	o.precision = f.precision;
	o.quick = f.quick;
	o.backend = f.backend;
	if (!o.backend)
		o.backend = exec_backend_probe("cuda", why, sizeof(why)) == RC_OK ? "cuda" : "cpu";
	if (f.gpu) {
		/* a bad --gpu fails now, not after minutes of measuring */
		struct price_catalog cat;
		struct price_opts po;

		price_opts_init(&po);
		po.data_dir = cli_data_dir();
		if ((rc = price_catalog_load(&cat, &po)) != RC_OK)
			return rc;
		rc = price_gpu_resolve(&cat, "--gpu", f.gpu) ? RC_OK : RC_USAGE;
		price_catalog_release(&cat);
		if (rc != RC_OK)
			return rc;
	}
	if (!exec_under_launcher()) {
		if (exec_backend_probe(o.backend, why, sizeof(why)) != RC_OK) {
			gp_error("calibrate: %s", why);
			return RC_DEVICE;
		}
		if (f.np > 1) {
			cli_progress_pass();
			return exec_launch(f.np, argc, argv);
		}
	}
	c = xcalloc(1, sizeof(*c));
	rc = exec_calibrate(&o, c);
	gp_progress_done(pc.prog);
	if (rc != RC_OK || exec_launcher_rank() != 0)
		goto out;
	rc = name_gpu(&f, c, &cat_gpu);
	if (rc != RC_OK)
		goto out;
	if (f.output)
		gp_strlcpy(path, f.output, sizeof(path));
	else if ((rc = default_output(c->gpu, path, sizeof(path))) != RC_OK)
		goto out;
	if (f.json) {
		char *s = exec_calibration_to_json(c);

		printf("%s\n", s);
		free(s);
	} else {
		print_table(c, &cat_gpu);
	}
	rc = exec_calibration_write(path, c);
	if (rc == RC_OK)
		gp_info("wrote %s", path);
out:
	free(c);
	return rc;
}
