/*
 * cmd_quotas.c - `gpuplan quotas list|update|history`: show the user's
 * GPU quotas (how many GPUs of a kind they may run with a provider, in a
 * region or all, of an instance type or any) with the offerings each
 * bounds, merge a quota file into the user's quotas.csv, and show what
 * changed when.  Parsing and printing only; the pricing module validates,
 * merges and writes.  It does not plan with quotas.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "price.h"

static void help(void)
{
	printf("usage: gpuplan quotas [list] [--json]\n"
	       "       gpuplan quotas update FILE [--dry-run] [--json]\n"
	       "       gpuplan quotas history [--json]\n\n"
	       "list: your quotas, with how many offerings of the price table each bounds.\n"
	       "  --json          JSON (schema gpuplan.quotas/1) instead of a table\n\n"
	       "update FILE: validate all of FILE, merge it by (provider, region, gpu,\n"
	       "instance_type) into your quotas.csv ($GPUPLAN_DATA_DIR, else\n"
	       "$XDG_DATA_HOME/gpuplan, else ~/.local/share/gpuplan, beside your prices.csv)\n"
	       "atomically, appending every change to quotas.history.csv.  A row of a key\n"
	       "you have replaces it; an empty max_gpus removes it.\n"
	       "FILE columns: provider, region ('*': any region), gpu (a name or alias of\n"
	       "gpus.csv), max_gpus (0 to 1000000; 0: none allowed) and optionally\n"
	       "instance_type (empty or '*': any).  A row no offering matches is kept, with\n"
	       "a warning.\n"
	       "  --dry-run       validate and show the diff; write nothing (default off)\n"
	       "  --json          the report as JSON (schema gpuplan.quota_update/1)\n\n"
	       "history: every change an update made, oldest first.\n"
	       "  --json          JSON (schema gpuplan.quota_history/1)\n\n"
	       "  -h, --help      this help\n");
}

static enum rc do_list(int json)
{
	struct price_opts o;
	struct price_catalog cat;
	int w_prov = 8, w_reg = 6, w_gpu = 3, w_inst = 8;
	enum rc rc;

	price_opts_init(&o);
	o.data_dir = cli_data_dir();
	rc = price_catalog_load(&cat, &o);
	if (rc != RC_OK)
		return rc;
	if (json) {
		cli_print_json(price_quotas_to_json(&cat));
		price_catalog_release(&cat);
		return RC_OK;
	}
	if (cat.n_quotas == 0) {
		gp_info("you have no quotas ('gpuplan quotas update FILE' adds them)");
		price_catalog_release(&cat);
		return RC_OK;
	}
	for (size_t i = 0; i < cat.n_quotas; i++) {
		const struct price_quota *q = &cat.quotas[i];

		if ((int)strlen(q->provider) > w_prov)
			w_prov = (int)strlen(q->provider);
		if ((int)strlen(q->region) > w_reg)
			w_reg = (int)strlen(q->region);
		if ((int)strlen(q->gpu) > w_gpu)
			w_gpu = (int)strlen(q->gpu);
		if ((int)strlen(q->instance_type) > w_inst)
			w_inst = (int)strlen(q->instance_type);
	}
	printf("%-*s  %-*s  %-*s  %-*s  %8s  %9s\n", w_prov, "PROVIDER", w_reg, "REGION", w_gpu,
	       "GPU", w_inst, "INSTANCE", "MAX_GPUS", "OFFERINGS");
	for (size_t i = 0; i < cat.n_quotas; i++) {
		const struct price_quota *q = &cat.quotas[i];

		printf("%-*s  %-*s  %-*s  %-*s  %8d  %9zu\n", w_prov, q->provider, w_reg, q->region,
		       w_gpu, q->gpu, w_inst, cli_any(q->instance_type), q->max_gpus,
		       price_quota_offerings(&cat, q));
	}
	gp_info("%zu quotas from %s", cat.n_quotas, cat.quotas_path);
	price_catalog_release(&cat);
	return RC_OK;
}

static void print_report(const char *file, const struct price_quota_report *r, int dry_run)
{
	char e1[1024], e2[1024];

	printf("%s: %zu rows read\n", gp_term_escape(e1, sizeof(e1), file), r->rows_read);
	printf("added %zu, changed %zu, removed %zu, unchanged %zu\n", r->added, r->changed,
	       r->removed, r->unchanged);
	for (size_t i = 0; i < r->n_changes; i++) {
		const struct price_change *c = &r->changes[i];
		char key[4 * PRICE_NAME_MAX + 4];

		snprintf(key, sizeof(key), "%s %s %s %s", c->provider, c->region, c->gpu,
			 cli_any(c->instance_type));
		cli_print_change(key, c);
	}
	if (cli_print_update_end(dry_run, r->written, r->table_path))
		printf("wrote %s (%zu quotas); history in %s\n", gp_term_escape(e1, sizeof(e1), r->table_path),
		       r->quotas_after, gp_term_escape(e2, sizeof(e2), r->history_path));
}

static enum rc do_update(const char *file, int dry_run, int json)
{
	struct price_opts o;
	struct price_update_opts u;
	struct price_quota_report rep;
	enum rc rc;

	price_opts_init(&o);
	o.data_dir = cli_data_dir();
	price_update_opts_init(&u);
	u.dry_run = dry_run;
	rc = price_quota_update(file, &o, &u, &rep);
	if (rc != RC_OK)
		return rc;
	if (json)
		cli_print_json(price_quota_report_to_json(&rep));
	else
		print_report(file, &rep, dry_run);
	price_quota_report_release(&rep);
	return RC_OK;
}

enum rc cmd_quotas(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sub = "list";
	int json = 0, dry_run = 0, c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'n': dry_run = 1; break;
		case 'h': help(); return RC_OK;
		default: return cli_bad_option("quotas", optopt, argv[optind - 1]);
		}
	}
	if (optind < argc)
		sub = argv[optind++];
	if (strcmp(sub, "update") == 0) {
		if (optind != argc - 1) {
			gp_error("quotas update: expected one quota file, found %d arguments",
				 argc - optind);
			gp_hint("gpuplan quotas update quotas.csv [--dry-run]");
			return RC_USAGE;
		}
		return do_update(argv[optind], dry_run, json);
	}
	if (strcmp(sub, "list") != 0 && strcmp(sub, "history") != 0) {
		gp_error("quotas: expected list, update or history, found '%s'", sub);
		gp_hint("run 'gpuplan quotas --help'");
		return RC_USAGE;
	}
	if (optind < argc || dry_run) {
		gp_error("quotas %s: expected no arguments but --json, found %s", sub,
			 dry_run ? "--dry-run" : argv[optind]);
		return RC_USAGE;
	}
	return strcmp(sub, "list") == 0 ? do_list(json) : cli_show_history(1, json);
}
