/*
 * cmd_gpus.c - `gpuplan gpus list [--json]`: the GPU catalog with its
 * figures in datasheet units, and which GPUs cannot be planned for (a
 * figure missing) and why.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "price.h"

static void help(void)
{
	printf("usage: gpuplan gpus [list] [--json]\n\n"
	       "Lists data/gpus.csv: memory, memory bandwidth, dense tensor peaks (bf16,\n"
	       "fp8, the microscaling MXFP8 and NVFP4, tf32), the intra-node link, the\n"
	       "NVLink domain (GPUs joined by NVLink across nodes, as in an NVL72 rack;\n"
	       "'node' where the domain is one node) and board power; an empty figure\n"
	       "('-') is one no source gave, and a GPU without memory, bf16 or bandwidth\n"
	       "figures cannot be planned for.\n\n"
	       "  --json       JSON (schema gpuplan.gpus/1) instead of a table (default off)\n"
	       "  -h, --help   this help\n");
}

/* A figure in the catalog's unit to digits significant digits, or "-"
 * when the catalog has none. */
static const char *fig(char *buf, size_t size, double v, double unit, int digits)
{
	if (v > 0)
		snprintf(buf, size, "%.*g", digits, v / unit);
	else
		snprintf(buf, size, "-");
	return buf;
}

enum rc cmd_gpus(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct price_opts o;
	struct price_catalog cat;
	int json = 0, c, w = 4;
	enum rc rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'h': help(); return RC_OK;
		default: return cli_bad_option("gpus", optopt, argv[optind - 1]);
		}
	}
	if (optind < argc && strcmp(argv[optind], "list") == 0)
		optind++;
	if (optind < argc) {
		gp_error("gpus: expected 'list' or no argument, found '%s'", argv[optind]);
		return RC_USAGE;
	}
	price_opts_init(&o);
	o.data_dir = cli_data_dir();
	rc = price_catalog_load(&cat, &o);
	if (rc != RC_OK)
		return rc;
	if (json) {
		char *s = price_gpus_to_json(&cat);

		if (s) {
			printf("%s\n", s);
			free(s);
		}
		price_catalog_release(&cat);
		return RC_OK;
	}
	for (size_t i = 0; i < cat.n_gpus; i++)
		if ((int)strlen(cat.gpus[i].name) > w)
			w = (int)strlen(cat.gpus[i].name);
	printf("%-*s  %6s  %8s  %6s  %6s  %6s  %6s  %6s  %6s  %8s  %6s  %6s  %5s  %s\n", w, "NAME",
	       "MEM_GB", "HBM_TB/S", "BF16", "FP8", "MXFP8", "NVFP4", "TF32", "FP32", "LINK_GB/S",
	       "NVLINK", "DOMAIN", "TDP_W",
	       "NOTE (TFLOP/s dense; link per GPU, both directions)");
	for (size_t i = 0; i < cat.n_gpus; i++) {
		const struct price_gpu *g = &cat.gpus[i];
		char b[10][32], dom[16], why[160];
		int ok = price_gpu_eligible(g, why, sizeof(why));

		if (g->nvlink_domain > 0)
			snprintf(dom, sizeof(dom), "%d", g->nvlink_domain);
		else
			snprintf(dom, sizeof(dom), "node");
		printf("%-*s  %6s  %8s  %6s  %6s  %6s  %6s  %6s  %6s  %8s  %6s  %6s  %5s  %s\n", w,
		       g->name,
		       fig(b[0], 32, g->memory_bytes, 1e9, 4),
		       fig(b[1], 32, g->hbm_bytes_per_s, 1e12, 4),
		       fig(b[2], 32, g->bf16_flops_per_s, 1e12, 6),
		       fig(b[3], 32, g->fp8_flops_per_s, 1e12, 6),
		       fig(b[4], 32, g->mxfp8_flops_per_s, 1e12, 6),
		       fig(b[5], 32, g->nvfp4_flops_per_s, 1e12, 6),
		       fig(b[6], 32, g->tf32_flops_per_s, 1e12, 6),
		       fig(b[7], 32, g->fp32_flops_per_s, 1e12, 4),
		       fig(b[8], 32, g->intra_bytes_per_s * 2, 1e9, 5),
		       g->nvlink ? "yes" : "no", dom,
		       fig(b[9], 32, g->tdp_w, 1, 5),
		       ok ? g->aliases : why + strlen(g->name) + 2);
	}
	gp_info("%zu GPUs from %s; DOMAIN: GPUs of one NVLink domain across nodes (an NVL72 "
		"rack), node: the node's GPUs; NOTE lists aliases, or why a GPU cannot be planned for",
		cat.n_gpus, cat.gpus_path);
	price_catalog_release(&cat);
	return RC_OK;
}
