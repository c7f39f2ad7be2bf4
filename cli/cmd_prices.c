/*
 * cmd_prices.c - `gpuplan prices list|update|fetch|history`: show the
 * price table in the units people budget in (USD per node-hour, per
 * GPU-hour and per 730-hour month), merge a new price file, or a
 * provider's own price list, into the user's table (the rows laid over the
 * shipped table), and show what changed when.  Parsing and printing only;
 * the pricing module fetches, validates, merges and writes.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "price.h"

static void help(void)
{
	printf("usage: gpuplan prices [list] [options]\n"
	       "       gpuplan prices update FILE [--dry-run] [--provider P] [--json]\n"
	       "       gpuplan prices fetch aws|azure|gcp|lambda [--region R ...] [--from-file FILE]\n"
	       "                            [--endpoint URL] [--timeout S] [--commitments-out FILE]\n"
	       "                            [--dry-run] [--json]\n"
	       "       gpuplan prices history [--json]\n\n"
	       "list: one row per offering, cheapest first.\n"
	       "  --gpu G         only this GPU (name or alias, e.g. H100, A100-80GB); default all\n"
	       "  --provider P    only this provider (aws, gcp, azure, lambda, runpod, vast, oracle); default all\n"
	       "  --region R      only regions containing R (us-east matches us-east-1); default all\n"
	       "  --sort KEY      usd_per_gpu_hour (default), usd_per_hour, gpu or provider\n"
	       "  --spot          price at the spot rate and drop offerings without one; default on-demand\n"
	       "  --mine          only your rows (those your updates added or changed); default all\n"
	       "  --json          JSON (schema gpuplan.prices/1) instead of a table\n\n"
	       "update FILE: validate all of FILE, merge it by (provider, instance_type, region)\n"
	       "into the table (the shipped one with your rows over it), and store your rows\n"
	       "(those that differ from the shipped table) in the user's table ($GPUPLAN_DATA_DIR,\n"
	       "else $XDG_DATA_HOME/gpuplan, else ~/.local/share/gpuplan) atomically, appending\n"
	       "every change to its history.  Rows a newer shipped table changes or adds show\n"
	       "through wherever you have no row of your own.\n"
	       "FILE has gpuplan's columns (as data/prices.csv) or a SkyPilot catalog's\n"
	       "(InstanceType, AcceleratorName, AcceleratorCount, Region, Price, SpotPrice, ...).\n"
	       "  --dry-run       validate and show the diff; write nothing (default off)\n"
	       "  --provider P    the cloud a SkyPilot catalog is for (required for one);\n"
	       "                  for a gpuplan file every row must have this provider\n"
	       "  --json          the report as JSON (schema gpuplan.price_update/1)\n\n"
	       "fetch PROVIDER: read the GPU offerings' prices from the provider's own price\n"
	       "list and merge them as 'update' does (diff, atomic write, history): AWS's\n"
	       "Price List bulk offer files (one CSV per region, read as it arrives), Azure's\n"
	       "Retail Prices API, Google's Cloud Billing Catalog API (needs $GOOGLE_API_KEY),\n"
	       "Lambda's Cloud API instance types (needs $LAMBDA_API_KEY; keys are read from\n"
	       "the environment only).  Each row is dated and names its SKU; GCP's\n"
	       "nodes are priced as GPUs + vCPUs + memory (data/machines.csv).  Nothing is\n"
	       "written unless every response was read whole.\n"
	       "  --region R      a region to fetch (repeat for more); default the regions the\n"
	       "                  table prices the provider in\n"
	       "  --from-file F   read a response saved elsewhere (one offer file or page)\n"
	       "  --endpoint URL  the price list's base URL, for mirrors and tests; default\n"
	       "                  $GPUPLAN_PRICE_URL_AWS|_AZURE|_GCP|_LAMBDA, else the provider's\n"
	       "  --timeout S     seconds for each response, connect to last byte (default %d)\n"
	       "  --commitments-out FILE  also write the reservations (Azure's) as\n"
	       "                  commitments.csv rows, for plan --reserved --commitments FILE\n"
	       "                  (default none)\n"
	       "  --dry-run       fetch and show the diff; write nothing (default off)\n"
	       "  --json          the report as JSON (schema gpuplan.price_fetch/1)\n\n"
	       "history: every change an update made, oldest first.\n"
	       "  --json          JSON (schema gpuplan.price_history/1)\n\n"
	       "  -h, --help      this help\n", PRICE_FETCH_DEFAULT_TIMEOUT_S);
}

static void fmt_money(char *buf, size_t size, double v, int decimals)
{
	if (v < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.*f", decimals, v);
}

static enum rc do_list(const char *gpu, const char *provider, const char *region,
		       enum price_sort sort, int spot, int mine, int json)
{
	struct price_opts o;
	struct price_catalog cat;
	struct price_query q;
	size_t *idx = NULL, n = 0;
	int w_prov = 8, w_inst = 8, w_gpus = 4, w_reg = 6, any_ineligible = 0;
	long today;
	enum rc rc;

	rc = unit_today(&today);
	if (rc != RC_OK)
		return rc;
	price_opts_init(&o);
	o.data_dir = cli_data_dir();
	rc = price_catalog_load(&cat, &o);
	if (rc != RC_OK)
		return rc;
	price_query_init(&q);
	q.gpu = gpu;
	q.provider = provider;
	q.region = region;
	q.sort = sort;
	q.spot = spot;
	q.mine = mine;
	rc = price_catalog_query(&cat, &q, &idx, &n);
	if (rc != RC_OK) {
		char hint[PRICE_NAME_MAX];

		gp_error("--gpu: expected a GPU name or alias from gpus.csv, found '%s'", gpu);
		if (price_gpu_suggest(cat.gpus, cat.n_gpus, gpu, hint, sizeof(hint)) == 0)
			gp_hint("did you mean '%s'? ('gpuplan gpus list' shows every name)", hint);
		price_catalog_release(&cat);
		return RC_USAGE;
	}
	if (json) {
		cli_print_json(price_offers_to_json(&cat, idx, n, spot, today));
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		const struct price_offering *of = &cat.offers[idx[i]];
		char gpus[PRICE_NAME_MAX + 16];
		int len;

		len = snprintf(gpus, sizeof(gpus), "%dx %s*", of->gpus_per_node, of->gpu);
		if ((int)strlen(of->provider) > w_prov)
			w_prov = (int)strlen(of->provider);
		if ((int)strlen(of->instance_type) > w_inst)
			w_inst = (int)strlen(of->instance_type);
		if (len > w_gpus)
			w_gpus = len;
		if ((int)strlen(of->region) > w_reg)
			w_reg = (int)strlen(of->region);
	}
	printf("%-*s  %-*s  %-*s  %-*s  %10s  %10s  %12s  %8s  %5s  %6s  %-10s  %6s\n", w_prov,
	       "PROVIDER", w_inst, "INSTANCE", w_gpus, "GPUS", w_reg, "REGION",
	       spot ? "SPOT $/H" : "$/HOUR", "$/GPU-HOUR", "$/MONTH", "NET GB/S", "NODES", "NVLINK",
	       "DATE", "AGE");
	for (size_t i = 0; i < n; i++) {
		const struct price_offering *of = &cat.offers[idx[i]];
		double node = price_offering_usd_per_hour(of, spot);
		char gpus[PRICE_NAME_MAX + 16], a[32], b[32], c[32], net[32], ages[24], nodes[16];
		int ok = price_offering_eligible(&cat, of, NULL, 0);
		struct price_node_limit lim;
		long age = price_date_age_days(of->price_date, today);

		any_ineligible |= !ok;
		snprintf(gpus, sizeof(gpus), "%dx %s%s", of->gpus_per_node, of->gpu, ok ? "" : "*");
		fmt_money(a, sizeof(a), node, 2);
		fmt_money(b, sizeof(b), price_offering_usd_per_gpu_hour(of, spot), 3);
		if (node >= 0)
			unit_fmt_usd(c, sizeof(c), node * UNIT_HOURS_PER_MONTH);
		else
			snprintf(c, sizeof(c), "-");
		if (of->inter_node_bytes_per_s > 0)
			snprintf(net, sizeof(net), "%g", of->inter_node_bytes_per_s * 8 / 1e9);
		else
			snprintf(net, sizeof(net), "-");
		price_offering_node_limit(of, spot, &lim);
		if (age != PRICE_AGE_UNKNOWN)
			snprintf(ages, sizeof(ages), "%ldd", age);
		else
			snprintf(ages, sizeof(ages), "-");
		/* a bound that is gpuplan's policy, not the provider's, says so */
		snprintf(nodes, sizeof(nodes), "%d%s", lim.nodes,
			 lim.why == PRICE_LIMIT_POLICY || lim.why == PRICE_LIMIT_SPOT ? "p" : "");
		printf("%-*s  %-*s  %-*s  %-*s  %10s  %10s  %12s  %8s  %5s  %6d  %-10s  %6s\n",
		       w_prov, of->provider, w_inst, of->instance_type, w_gpus, gpus, w_reg,
		       of->region, a, b, c, net, nodes,
		       price_nvlink_domain(of, price_gpu_find(&cat, of->gpu)),
		       of->price_date[0] ? of->price_date : "-", ages);
	}
	printf("NET: inter-node Gb/s a node, - none stated; NODES: the most one plan rents at "
	       "this rate: a bound the provider states, your quota, or gpuplan's policy (p; "
	       "capacity.csv), one without a network or any of these; "
	       "NVLINK: GPUs of one NVLink domain (the row's nvlink_domain, else the GPU's, else "
	       "the node); DATE: the date its source states for the price, AGE: days since, - not "
	       "stated\n");
	if (any_ineligible)
		printf("* gpus.csv lacks a figure planning needs for this GPU ('gpuplan gpus list' says which)\n");
	if (cat.user_table)
		gp_info("%zu offerings from %s with %zu rows of yours from %s (%s; month = %.0f hours)",
			n, cat.prices_path, cat.n_user_offers, cat.user_prices_path,
			spot ? "spot" : "on-demand", UNIT_HOURS_PER_MONTH);
	else
		gp_info("%zu offerings from %s (%s; month = %.0f hours)", n, cat.prices_path,
			spot ? "spot" : "on-demand", UNIT_HOURS_PER_MONTH);
	if (cat.user_legacy)
		gp_info("%s is a full copy an older gpuplan wrote: all its rows count as yours until the next 'prices update' keeps only those that differ from %s",
			cat.user_prices_path, cat.prices_path);
	if (mine && !cat.n_user_offers)
		gp_info("you have no rows of your own ('gpuplan prices update FILE' adds them)");
done:
	free(idx);
	price_catalog_release(&cat);
	return RC_OK;
}

static void print_report_tail(const struct price_update_report *r, int dry_run);

static void print_report(const char *file, const char *provider,
			 const struct price_update_report *r, int dry_run)
{
	/* Paths and cells are the environment's and the file's: escaped. */
	char e1[1024], e2[1024];

	printf("%s: %zu rows read (%s columns%s%s)\n", gp_term_escape(e1, sizeof(e1), file),
	       r->rows_read, r->skypilot ? "SkyPilot" : "gpuplan", provider ? ", provider " : "",
	       provider ? gp_term_escape(e2, sizeof(e2), provider) : "");
	if (r->skipped_no_gpu)
		printf("  skipped %zu rows without a GPU (CPU instances)\n", r->skipped_no_gpu);
	if (r->skipped_unknown_gpu)
		printf("  skipped %zu rows whose GPU gpus.csv lacks: %s\n", r->skipped_unknown_gpu,
		       gp_term_escape(e1, sizeof(e1), r->unknown_gpus));
	if (r->skipped_no_instance)
		printf("  skipped %zu GPU-only rows with no instance type\n", r->skipped_no_instance);
	if (r->completed_with_host)
		printf("  completed %zu GPU rows with their host VM row (the catalog prices the "
		       "host apart): host + GPUs\n", r->completed_with_host);
	if (r->skipped_no_host)
		printf("  skipped %zu GPU rows whose host VM row is missing or priced 0 (%s): "
		       "a part price is not a node's price\n", r->skipped_no_host,
		       gp_term_escape(e1, sizeof(e1), r->no_host));
	if (r->skipped_fractional)
		printf("  skipped %zu rows with a fractional GPU count\n", r->skipped_fractional);
	if (r->skipped_no_price)
		printf("  skipped %zu rows with neither an on-demand nor a spot price\n",
		       r->skipped_no_price);
	if (r->az_regions)
		printf("  %zu availability-zone rows folded into %zu region%s; each keeps its lowest price\n",
		       r->az_rows, r->az_regions, r->az_regions == 1 ? "" : "s");
	print_report_tail(r, dry_run);
}

/* The merge's counts, its changes and how it ended. */
static void print_report_tail(const struct price_update_report *r, int dry_run)
{
	char e2[1024], e3[1024];

	printf("added %zu, changed %zu, unchanged %zu\n", r->added, r->changed, r->unchanged);
	for (size_t i = 0; i < r->n_changes; i++) {
		const struct price_change *c = &r->changes[i];
		char key[3 * PRICE_NAME_MAX + 4];

		snprintf(key, sizeof(key), "%s %s %s", c->provider, c->instance_type, c->region);
		cli_print_change(key, c);
	}
	if (cli_print_update_end(dry_run, r->written, r->table_path)) {
		printf("wrote %s (%zu rows of yours; %zu offerings with the shipped table); history in %s\n",
		       gp_term_escape(e2, sizeof(e2), r->table_path), r->user_rows, r->offers_after,
		       gp_term_escape(e3, sizeof(e3), r->history_path));
		if (r->legacy_copy)
			printf("  it was a full copy an older gpuplan wrote; it now keeps only the rows that differ from the shipped table\n");
	}
}

static void fmt_opt(char *buf, size_t size, const char *what, double usd, const char *unit)
{
	if (usd >= 0)
		snprintf(buf, size, ", %s %.4f%s", what, usd, unit);
	else
		buf[0] = '\0';
}

static void print_fetch(const struct price_fetch_report *r, int dry_run,
			const char *commitments_out)
{
	printf("%s: %zu response%s, %zu bytes, %zu items read; %zu GPU offerings priced\n",
	       r->provider, r->responses, r->responses == 1 ? "" : "s", r->bytes, r->items,
	       r->n_rows);
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct price_fetched *f = &r->rows[i];
		char od[64], sp[64], r1[64], r3[64];

		if (f->on_demand_usd_per_hour >= 0)
			snprintf(od, sizeof(od), "on-demand %.4f", f->on_demand_usd_per_hour);
		else
			snprintf(od, sizeof(od), "no on-demand price");
		fmt_opt(sp, sizeof(sp), "spot", f->spot_usd_per_hour, "");
		fmt_opt(r1, sizeof(r1), "reserved 1y", f->reserved_usd_per_hour[0], "/h");
		fmt_opt(r3, sizeof(r3), "reserved 3y", f->reserved_usd_per_hour[1], "/h");
		printf("  %s %s: %dx %s %s%s%s%s (%s; %s)\n", f->instance_type, f->region,
		       f->gpus_per_node, f->gpu, od, sp, r1, r3, f->price_date, f->source);
	}
	if (r->skipped)
		printf("  skipped %zu: %s\n", r->skipped, r->skipped_why);
	for (size_t i = 0; i < r->n_rows; i++)
		if (r->rows[i].reserved_usd_per_hour[0] >= 0 || r->rows[i].reserved_usd_per_hour[1] >= 0) {
			printf("  reserved: the term's price over its hours (8,760 a year); the price table keeps "
			       "none (--commitments-out FILE writes them as commitments)\n");
			break;
		}
	print_report_tail(&r->update, dry_run);
	if (commitments_out && !dry_run)
		printf("wrote %s (%zu commitments: discounts off the on-demand price)\n",
		       commitments_out, r->commitments);
}

static enum rc do_fetch(struct price_fetch_opts *f, int json)
{
	struct price_opts o;
	struct price_fetch_report rep;
	enum rc rc;

	price_opts_init(&o);
	o.data_dir = cli_data_dir();
	rc = price_fetch(f, &o, &rep);
	if (rc != RC_OK)
		return rc;
	if (json)
		cli_print_json(price_fetch_report_to_json(&rep));
	else
		print_fetch(&rep, f->dry_run, f->commitments_out);
	price_fetch_report_release(&rep);
	return RC_OK;
}

static enum rc do_update(const char *file, const char *provider, int dry_run, int json)
{
	struct price_opts o;
	struct price_update_opts u;
	struct price_update_report rep;
	enum rc rc;

	price_opts_init(&o);
	o.data_dir = cli_data_dir();
	price_update_opts_init(&u);
	u.provider = provider;
	u.dry_run = dry_run;
	rc = price_update(file, &o, &u, &rep);
	if (rc != RC_OK)
		return rc;
	if (json)
		cli_print_json(price_update_report_to_json(&rep));
	else
		print_report(file, provider, &rep, dry_run);
	price_update_report_release(&rep);
	return RC_OK;
}

enum rc cmd_prices(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "gpu", required_argument, NULL, 'g' },
		{ "provider", required_argument, NULL, 'p' },
		{ "region", required_argument, NULL, 'r' },
		{ "sort", required_argument, NULL, 's' },
		{ "spot", no_argument, NULL, 'S' },
		{ "mine", no_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "from-file", required_argument, NULL, 'F' },
		{ "endpoint", required_argument, NULL, 'E' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "commitments-out", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *gpu = NULL, *provider = NULL, *region = NULL, *sub = "list";
	enum price_sort sort = PRICE_SORT_USD_PER_GPU_HOUR;
	int spot = 0, mine = 0, json = 0, dry_run = 0, list_only = 0, fetch_only = 0, c;
	struct price_fetch_opts fo;

	price_fetch_opts_init(&fo);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'g': gpu = optarg; list_only = 'g'; break;
		case 'p': provider = optarg; break;
		case 'r':
			region = optarg;
			if (fo.n_regions == PRICE_FETCH_MAX_REGIONS) {
				gp_error("--region: expected at most %d regions, found more",
					 PRICE_FETCH_MAX_REGIONS);
				return RC_USAGE;
			}
			fo.regions[fo.n_regions++] = optarg;
			break;
		case 'F': fo.from_file = optarg; fetch_only = 'F'; break;
		case 'E':
			if (strncmp(optarg, "https://", 8) != 0 && strncmp(optarg, "http://", 7) != 0) {
				gp_error("--endpoint: expected a URL starting https:// or http://, found '%s'",
					 optarg);
				return RC_USAGE;
			}
			fo.endpoint = optarg;
			fetch_only = 'E';
			break;
		case 'C': fo.commitments_out = optarg; fetch_only = 'C'; break;
		case 'T':
			if (unit_parse_double(optarg, &fo.timeout_s) != RC_OK || fo.timeout_s <= 0 ||
			    fo.timeout_s > 86400) {
				gp_error("--timeout: expected seconds from 0 to 86400, found '%s'", optarg);
				return RC_USAGE;
			}
			fetch_only = 'T';
			break;
		case 's':
			if (price_sort_parse(optarg, &sort) != RC_OK) {
				gp_error("--sort: expected usd_per_gpu_hour, usd_per_hour, gpu or provider, found '%s'",
					 optarg);
				return RC_USAGE;
			}
			list_only = 's';
			break;
		case 'S': spot = 1; list_only = 'S'; break;
		case 'm': mine = 1; list_only = 'm'; break;
		case 'j': json = 1; break;
		case 'n': dry_run = 1; break;
		case 'h': help(); return RC_OK;
		default: return cli_bad_option("prices", optopt, argv[optind - 1]);
		}
	}
	if (optind < argc)
		sub = argv[optind++];
	if (fetch_only && strcmp(sub, "fetch") != 0) {
		gp_error("prices %s: --from-file, --endpoint, --timeout and --commitments-out belong to 'prices fetch'",
			 sub);
		return RC_USAGE;
	}
	if (fo.n_regions > 1 && strcmp(sub, "fetch") != 0) {
		gp_error("--region: expected once (with 'prices list'), found %zu times", fo.n_regions);
		return RC_USAGE;
	}
	if (region && strcmp(sub, "fetch") != 0)
		list_only = 'r';
	if (strcmp(sub, "list") == 0) {
		if (optind < argc) {
			gp_error("prices list: expected no more arguments, found '%s'", argv[optind]);
			return RC_USAGE;
		}
		if (dry_run) {
			gp_error("--dry-run: expected with 'prices update', found with 'prices list'");
			return RC_USAGE;
		}
		return do_list(gpu, provider, region, sort, spot, mine, json);
	}
	if (strcmp(sub, "update") == 0) {
		if (optind != argc - 1) {
			gp_error("prices update: expected one price file, found %d arguments", argc - optind);
			gp_hint("gpuplan prices update new.csv [--dry-run] [--provider aws]");
			return RC_USAGE;
		}
		if (list_only) {
			gp_error("prices update: --gpu, --region, --sort, --spot and --mine belong to 'prices list'");
			return RC_USAGE;
		}
		return do_update(argv[optind], provider, dry_run, json);
	}
	if (strcmp(sub, "fetch") == 0) {
		if (optind != argc - 1) {
			gp_error("prices fetch: expected one provider (aws, azure, gcp or lambda), found %d arguments",
				 argc - optind);
			gp_hint("gpuplan prices fetch aws --region us-east-1 --dry-run");
			return RC_USAGE;
		}
		if (list_only || provider) {
			gp_error("prices fetch: --gpu, --provider, --sort, --spot and --mine do not apply (the provider is its argument)");
			return RC_USAGE;
		}
		fo.provider = argv[optind];
		fo.dry_run = dry_run;
		return do_fetch(&fo, json);
	}
	if (strcmp(sub, "history") == 0) {
		if (optind < argc || list_only || dry_run || provider) {
			gp_error("prices history: expected no arguments but --json, found more");
			return RC_USAGE;
		}
		return cli_show_history(0, json);
	}
	gp_error("prices: expected list, update, fetch or history, found '%s'", sub);
	gp_hint("run 'gpuplan prices --help'");
	return RC_USAGE;
}
