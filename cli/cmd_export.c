/*
 * cmd_export.c - `gpuplan export plan.json --format F [--framework F] [-o FILE]`:
 * writes the plan in the form another tool launches.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plan.h"
#include "export.h"
#include "sim.h"

/* The formats --framework applies to, "a, b or c" (sep "or") into
 * out[size]. */
static void framework_formats(char *out, size_t size, const char *sep)
{
	size_t n = 0, k = 0, len = 0;

	for (size_t i = 0; i < export_formats_len; i++)
		n += export_formats[i].takes_framework != 0;
	out[0] = '\0';
	for (size_t i = 0; i < export_formats_len && len < size; i++) {
		if (!export_formats[i].takes_framework)
			continue;
		k++;
		len += (size_t)snprintf(out + len, size - len, "%s%s",
					k == 1 ? "" : k == n ? sep : ", ", export_formats[i].name);
	}
}

static void help(void)
{
	char launchers[128];

	framework_formats(launchers, sizeof(launchers), " and ");
	printf("usage: gpuplan export PLAN.json --format FORMAT [--framework F] [-o FILE]\n\n"
	       "Writes the plan for the tool you train with.\n\nformats:\n");
	for (size_t i = 0; i < export_formats_len; i++)
		printf("  %-16s%s\n", export_formats[i].name, export_formats[i].help);
	printf("\n"
	       "  -f, --format F      one of the formats above (required)\n"
	       "      --framework F   what %s\n"
	       "                      launch: megatron (pretrain_gpt.py) or deepspeed (your\n"
	       "                      TRAIN_SCRIPT with the config) (default: the one the\n"
	       "                      plan was priced for, else megatron)\n"
	       "  -o, --output FILE   write to FILE (default: stdout)\n"
	       "  -h, --help          this help\n", launchers);
}

enum rc cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "framework", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = NULL, *out = NULL, *framework = NULL;
	enum plan_framework fw = PLAN_FRAMEWORK_MEGATRON;
	const struct export_format_info *f;
	struct sim_plan plan;
	enum rc rc;
	char *text;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'o': out = optarg; break;
		case 'F': framework = optarg; break;
		case 'h': help(); return RC_OK;
		default: return cli_bad_option("export", optopt, argv[optind - 1]);
		}
	}
	if (optind != argc - 1) {
		gp_error("export: expected one plan file, found %d arguments", argc - optind);
		gp_hint("gpuplan export plan.json --format megatron");
		return RC_USAGE;
	}
	if (!format) {
		gp_error("export: --format is required (%s)", export_format_names());
		return RC_USAGE;
	}
	f = export_format_find(format);
	if (!f) {
		gp_error("--format: expected one of %s, found '%s'",
			 export_format_names(), format);
		return RC_USAGE;
	}
	if (framework && !f->takes_framework) {
		char launchers[128];

		framework_formats(launchers, sizeof(launchers), " or ");
		gp_error("--framework: expected only with --format %s, found --format %s",
			 launchers, format);
		gp_hint("the megatron and deepspeed formats are their frameworks already");
		return RC_USAGE;
	}
	if (framework && (plan_framework_parse(framework, &fw) != RC_OK ||
			  fw == PLAN_FRAMEWORK_ANY)) {
		gp_error("--framework: expected megatron or deepspeed, found '%s'", framework);
		return RC_USAGE;
	}
	rc = sim_plan_read(argv[optind], &plan);
	if (rc != RC_OK)
		return rc;
	/* the launchers start the trainer the plan was priced for */
	if (!framework && plan.framework == 2)
		fw = PLAN_FRAMEWORK_DEEPSPEED;
	text = export_plan(&plan, f->format, fw, &rc);
	if (!text)
		return rc;
	if (out) {
		/* a failed write leaves an existing FILE as it was */
		rc = gp_write_text_atomic(out, text);
		if (rc != RC_OK) {
			free(text);
			return rc;
		}
		gp_info("wrote %s (%s)", out, format);
	} else {
		fputs(text, stdout);
	}
	free(text);
	/* The config alone does not start anything: with -o the launch line
	 * naming that file goes to stdout; without, stdout stays one JSON
	 * document and the line is a note on stderr. */
	if (f->format == EXPORT_DEEPSPEED) {
		char *launch = export_deepspeed_launch(&plan, out ? out : "ds_config.json");

		if (out) {
			fputs(launch, stdout);
		} else {
			fflush(stdout);
			gp_info("launch it with (the config saved as ds_config.json):\n%.*s",
				(int)strlen(launch) - 1, launch);
		}
		free(launch);
	}
	return RC_OK;
}
