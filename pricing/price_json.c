/*
 * price_json.c - the pricing module's --json output: the GPU catalog, a
 * selection of offerings, the user's quotas, the change histories and the
 * reports of price and quota updates, each
 * as a versioned JSON document ("schema": "gpuplan.<what>/1").  Keys come
 * in a fixed order and numbers in cJSON's fixed format, so the same inputs
 * give byte-identical output.  Figures are in the catalog's units (GB,
 * TB/s, TFLOP/s, Gbit/s, USD per hour); a figure the catalog lacks is null.
 *
 * With the fetch's page parsers (price_fetch_azure_json.c,
 * price_fetch_gcp_json.c), the only pricing file that includes cJSON; it
 * reads nothing from disk.
 *
 * It calls price_table.c, price_quota.c, price_cost.c, price_gpu.c,
 * price_find.c and common/; nothing in pricing/ calls it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "price.h"

/* enum price_change_kind's names. */
static const char *const change_kinds[] = { "added", "changed", "removed" };

/* s, or null when it is "" (a quota's instance type: any). */
static void add_str_or_null(cJSON *obj, const char *key, const char *s)
{
	if (s[0])
		cJSON_AddStringToObject(obj, key, s);
	else
		cJSON_AddNullToObject(obj, key);
}

static void add_num_or_null(cJSON *obj, const char *key, double v, int have)
{
	if (have && isfinite(v))
		cJSON_AddNumberToObject(obj, key, v);
	else
		cJSON_AddNullToObject(obj, key);
}

/* Rounds v to 10 significant digits so unit conversions (1e9 * 80 / 1e9)
 * print as the catalog's figures. */
static double tidy(double v)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.10g", v);
	return strtod(buf, NULL);
}

static char *finish(cJSON *root)
{
	char *s = cJSON_Print(root);

	cJSON_Delete(root);
	if (!s)
		gp_error("out of memory while formatting JSON");
	return s;
}

char *price_gpus_to_json(const struct price_catalog *cat)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *arr;

	cJSON_AddStringToObject(root, "schema", "gpuplan.gpus/1");
	arr = cJSON_AddArrayToObject(root, "gpus");
	for (size_t i = 0; i < cat->n_gpus; i++) {
		const struct price_gpu *g = &cat->gpus[i];
		cJSON *o = cJSON_CreateObject();
		char why[256];
		int ok = price_gpu_eligible(g, why, sizeof(why));

		cJSON_AddStringToObject(o, "name", g->name);
		cJSON_AddStringToObject(o, "aliases", g->aliases);
		add_num_or_null(o, "memory_gb", tidy(g->memory_bytes / 1e9), g->memory_bytes > 0);
		add_num_or_null(o, "hbm_tb_per_s", tidy(g->hbm_bytes_per_s / 1e12), g->hbm_bytes_per_s > 0);
		add_num_or_null(o, "bf16_dense_tflops", tidy(g->bf16_flops_per_s / 1e12),
				g->bf16_flops_per_s > 0);
		add_num_or_null(o, "fp8_dense_tflops", tidy(g->fp8_flops_per_s / 1e12),
				g->fp8_flops_per_s > 0);
		add_num_or_null(o, "mxfp8_dense_tflops", tidy(g->mxfp8_flops_per_s / 1e12),
				g->mxfp8_flops_per_s > 0);
		add_num_or_null(o, "nvfp4_dense_tflops", tidy(g->nvfp4_flops_per_s / 1e12),
				g->nvfp4_flops_per_s > 0);
		add_num_or_null(o, "tf32_dense_tflops", tidy(g->tf32_flops_per_s / 1e12),
				g->tf32_flops_per_s > 0);
		add_num_or_null(o, "fp32_tflops", tidy(g->fp32_flops_per_s / 1e12), g->fp32_flops_per_s > 0);
		cJSON_AddStringToObject(o, "intra_node_link", g->intra_link);
		add_num_or_null(o, "intra_node_gb_per_s_bidir", tidy(g->intra_bytes_per_s * 2 / 1e9),
				g->intra_bytes_per_s > 0);
		cJSON_AddBoolToObject(o, "nvlink", g->nvlink);
		add_num_or_null(o, "nvlink_domain", g->nvlink_domain, g->nvlink_domain > 0);
		cJSON_AddBoolToObject(o, "p2p", g->p2p);
		add_num_or_null(o, "tdp_w", g->tdp_w, g->tdp_w > 0);
		cJSON_AddBoolToObject(o, "eligible", ok);
		if (ok)
			cJSON_AddNullToObject(o, "ineligible_because");
		else
			cJSON_AddStringToObject(o, "ineligible_because", why);
		cJSON_AddItemToArray(arr, o);
	}
	return finish(root);
}

char *price_offers_to_json(const struct price_catalog *cat, const size_t *idx,
			   size_t n, int spot, long today)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *arr;

	cJSON_AddStringToObject(root, "schema", "gpuplan.prices/1");
	cJSON_AddStringToObject(root, "rate", spot ? "spot" : "on_demand");
	cJSON_AddStringToObject(root, "table", cat->prices_path ? cat->prices_path : "");
	if (cat->user_prices_path)
		cJSON_AddStringToObject(root, "user_table", cat->user_prices_path);
	else
		cJSON_AddNullToObject(root, "user_table");
	cJSON_AddNumberToObject(root, "hours_per_month", UNIT_HOURS_PER_MONTH);
	arr = cJSON_AddArrayToObject(root, "offerings");
	for (size_t i = 0; i < n; i++) {
		const struct price_offering *of = &cat->offers[idx[i]];
		double node = price_offering_usd_per_hour(of, spot);
		double gpu = price_offering_usd_per_gpu_hour(of, spot);
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "provider", of->provider);
		cJSON_AddStringToObject(o, "instance_type", of->instance_type);
		cJSON_AddStringToObject(o, "gpu", of->gpu);
		cJSON_AddNumberToObject(o, "gpus_per_node", of->gpus_per_node);
		cJSON_AddStringToObject(o, "region", of->region);
		add_num_or_null(o, "usd_per_hour", node, node >= 0);
		add_num_or_null(o, "usd_per_gpu_hour", gpu, gpu >= 0);
		add_num_or_null(o, "usd_per_month", node * UNIT_HOURS_PER_MONTH, node >= 0);
		add_num_or_null(o, "on_demand_usd_per_hour", of->on_demand_usd_per_hour,
				of->on_demand_usd_per_hour >= 0);
		add_num_or_null(o, "spot_usd_per_hour", of->spot_usd_per_hour, of->spot_usd_per_hour >= 0);
		add_num_or_null(o, "inter_node_gbps", tidy(of->inter_node_bytes_per_s * 8 / 1e9),
				of->inter_node_bytes_per_s > 0);
		add_num_or_null(o, "max_nodes", of->max_nodes, of->max_nodes > 0);
		/* the row's own figure (null: not stated), then what planning
		 * uses: the row's, else the GPU's, else the node */
		add_num_or_null(o, "nvlink_domain_stated", of->nvlink_domain, of->nvlink_domain > 0);
		cJSON_AddNumberToObject(o, "nvlink_domain",
					price_nvlink_domain(of, price_gpu_find(cat, of->gpu)));
		{
			struct price_node_limit l;

			/* what one plan may rent at this rate, and why no more */
			price_offering_node_limit(of, spot, &l);
			cJSON_AddNumberToObject(o, "node_limit", l.nodes);
			cJSON_AddStringToObject(o, "node_limit_by", price_limit_str(l.why));
			/* nodes are rented in whole units of this many */
			cJSON_AddNumberToObject(o, "node_multiple", l.multiple);
		}
		cJSON_AddStringToObject(o, "catalog_version", of->version);
		{
			long age = price_date_age_days(of->price_date, today);

			if (of->price_date[0])
				cJSON_AddStringToObject(o, "price_date", of->price_date);
			else
				cJSON_AddNullToObject(o, "price_date");
			add_num_or_null(o, "age_days", (double)age, age != PRICE_AGE_UNKNOWN);
		}
		cJSON_AddBoolToObject(o, "mine", of->user);
		cJSON_AddItemToArray(arr, o);
	}
	return finish(root);
}

/* Adds to o the key of a changed row and what changed: prices' rows by
 * (provider, instance_type, region), quotas' (quota 1) by (provider,
 * region, gpu, instance_type), the instance type null when any. */
static void add_change(cJSON *o, const char *provider, const char *instance_type,
		       const char *region, const char *gpu, const char *field,
		       const char *old_value, const char *new_value, int quota)
{
	cJSON_AddStringToObject(o, "provider", provider);
	if (quota) {
		cJSON_AddStringToObject(o, "region", region);
		cJSON_AddStringToObject(o, "gpu", gpu);
		add_str_or_null(o, "instance_type", instance_type);
	} else {
		cJSON_AddStringToObject(o, "instance_type", instance_type);
		cJSON_AddStringToObject(o, "region", region);
	}
	cJSON_AddStringToObject(o, "field", field);
	cJSON_AddStringToObject(o, "old", old_value);
	cJSON_AddStringToObject(o, "new", new_value);
}

/* Adds to root the array "changes" of changes[0..n) (quota: see
 * add_change). */
static void add_changes(cJSON *root, const struct price_change *changes, size_t n, int quota)
{
	cJSON *arr = cJSON_AddArrayToObject(root, "changes");

	for (size_t i = 0; i < n; i++) {
		const struct price_change *c = &changes[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "kind", change_kinds[c->kind]);
		add_change(o, c->provider, c->instance_type, c->region, c->gpu, c->field,
			   c->old_value, c->new_value, quota);
		cJSON_AddItemToArray(arr, o);
	}
}

/* A history as JSON under schema; with gpu, each change names its GPU
 * (quotas' history). */
static char *history_json(const struct price_history *h, const char *schema, int gpu)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *arr;

	cJSON_AddStringToObject(root, "schema", schema);
	arr = cJSON_AddArrayToObject(root, "changes");
	for (size_t i = 0; i < h->n; i++) {
		const struct price_history_entry *e = &h->entries[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "timestamp", e->timestamp);
		add_change(o, e->provider, e->instance_type, e->region, e->gpu, e->field,
			   e->old_value, e->new_value, gpu);
		cJSON_AddItemToArray(arr, o);
	}
	return finish(root);
}

char *price_history_to_json(const struct price_history *h)
{
	return history_json(h, "gpuplan.price_history/1", 0);
}

char *price_quota_history_to_json(const struct price_history *h)
{
	return history_json(h, "gpuplan.quota_history/1", 1);
}

static cJSON *update_report_json(const struct price_update_report *rep)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *skipped;

	cJSON_AddStringToObject(root, "schema", "gpuplan.price_update/1");
	cJSON_AddStringToObject(root, "format", rep->skypilot ? "skypilot" : "gpuplan");
	cJSON_AddNumberToObject(root, "rows_read", (double)rep->rows_read);
	cJSON_AddNumberToObject(root, "offerings_in_file", (double)rep->offers_in_file);
	cJSON_AddNumberToObject(root, "added", (double)rep->added);
	cJSON_AddNumberToObject(root, "changed", (double)rep->changed);
	cJSON_AddNumberToObject(root, "unchanged", (double)rep->unchanged);
	skipped = cJSON_AddObjectToObject(root, "skipped");
	cJSON_AddNumberToObject(skipped, "no_gpu", (double)rep->skipped_no_gpu);
	cJSON_AddNumberToObject(skipped, "unknown_gpu", (double)rep->skipped_unknown_gpu);
	cJSON_AddStringToObject(skipped, "unknown_gpu_names", rep->unknown_gpus);
	cJSON_AddNumberToObject(skipped, "no_instance_type", (double)rep->skipped_no_instance);
	cJSON_AddNumberToObject(skipped, "no_host_row", (double)rep->skipped_no_host);
	cJSON_AddStringToObject(skipped, "no_host_row_names", rep->no_host);
	cJSON_AddNumberToObject(root, "completed_with_host", (double)rep->completed_with_host);
	cJSON_AddNumberToObject(skipped, "no_price", (double)rep->skipped_no_price);
	cJSON_AddNumberToObject(skipped, "fractional_gpus", (double)rep->skipped_fractional);
	cJSON_AddNumberToObject(root, "zone_rows_folded", (double)rep->az_rows);
	cJSON_AddNumberToObject(root, "regions_with_several_zones", (double)rep->az_regions);
	cJSON_AddNumberToObject(root, "offerings_after", (double)rep->offers_after);
	cJSON_AddNumberToObject(root, "user_rows", (double)rep->user_rows);
	cJSON_AddBoolToObject(root, "legacy_copy", rep->legacy_copy);
	cJSON_AddBoolToObject(root, "written", rep->written);
	cJSON_AddStringToObject(root, "table", rep->table_path);
	add_changes(root, rep->changes, rep->n_changes, 0);
	return root;
}

char *price_update_report_to_json(const struct price_update_report *rep)
{
	return finish(update_report_json(rep));
}

/* A price < 0 (none) as null. */
static void add_price(cJSON *o, const char *key, double usd)
{
	if (usd < 0)
		cJSON_AddNullToObject(o, key);
	else
		cJSON_AddNumberToObject(o, key, usd);
}

char *price_fetch_report_to_json(const struct price_fetch_report *rep)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *arr, *upd;

	cJSON_AddStringToObject(root, "schema", "gpuplan.price_fetch/1");
	cJSON_AddStringToObject(root, "provider", rep->provider);
	cJSON_AddNumberToObject(root, "responses", (double)rep->responses);
	cJSON_AddNumberToObject(root, "bytes", (double)rep->bytes);
	cJSON_AddNumberToObject(root, "items", (double)rep->items);
	cJSON_AddNumberToObject(root, "skipped", (double)rep->skipped);
	cJSON_AddStringToObject(root, "skipped_why", rep->skipped_why);
	arr = cJSON_AddArrayToObject(root, "offerings");
	for (size_t i = 0; i < rep->n_rows; i++) {
		const struct price_fetched *r = &rep->rows[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "instance_type", r->instance_type);
		cJSON_AddStringToObject(o, "gpu", r->gpu);
		cJSON_AddNumberToObject(o, "gpus_per_node", r->gpus_per_node);
		cJSON_AddStringToObject(o, "region", r->region);
		add_price(o, "on_demand_usd_per_hour", r->on_demand_usd_per_hour);
		add_price(o, "spot_usd_per_hour", r->spot_usd_per_hour);
		add_price(o, "reserved_1y_usd_per_hour", r->reserved_usd_per_hour[0]);
		add_price(o, "reserved_3y_usd_per_hour", r->reserved_usd_per_hour[1]);
		cJSON_AddStringToObject(o, "price_date", r->price_date);
		cJSON_AddStringToObject(o, "source", r->source);
		cJSON_AddItemToArray(arr, o);
	}
	upd = update_report_json(&rep->update);
	cJSON_DeleteItemFromObjectCaseSensitive(upd, "schema");
	cJSON_AddItemToObject(root, "update", upd);
	return finish(root);
}

char *price_quotas_to_json(const struct price_catalog *cat)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *arr;

	cJSON_AddStringToObject(root, "schema", "gpuplan.quotas/1");
	if (cat->quotas_path)
		cJSON_AddStringToObject(root, "table", cat->quotas_path);
	else
		cJSON_AddNullToObject(root, "table");
	arr = cJSON_AddArrayToObject(root, "quotas");
	for (size_t i = 0; i < cat->n_quotas; i++) {
		const struct price_quota *q = &cat->quotas[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "provider", q->provider);
		cJSON_AddStringToObject(o, "region", q->region);
		cJSON_AddStringToObject(o, "gpu", q->gpu);
		add_str_or_null(o, "instance_type", q->instance_type);
		cJSON_AddNumberToObject(o, "max_gpus", q->max_gpus);
		cJSON_AddNumberToObject(o, "offerings", (double)price_quota_offerings(cat, q));
		cJSON_AddItemToArray(arr, o);
	}
	return finish(root);
}

char *price_quota_report_to_json(const struct price_quota_report *rep)
{
	cJSON *root = cJSON_CreateObject();

	cJSON_AddStringToObject(root, "schema", "gpuplan.quota_update/1");
	cJSON_AddNumberToObject(root, "rows_read", (double)rep->rows_read);
	cJSON_AddNumberToObject(root, "added", (double)rep->added);
	cJSON_AddNumberToObject(root, "changed", (double)rep->changed);
	cJSON_AddNumberToObject(root, "removed", (double)rep->removed);
	cJSON_AddNumberToObject(root, "unchanged", (double)rep->unchanged);
	cJSON_AddNumberToObject(root, "not_stored", (double)rep->not_stored);
	cJSON_AddNumberToObject(root, "unmatched", (double)rep->unmatched);
	cJSON_AddNumberToObject(root, "quotas_after", (double)rep->quotas_after);
	cJSON_AddBoolToObject(root, "written", rep->written);
	cJSON_AddStringToObject(root, "table", rep->table_path);
	add_changes(root, rep->changes, rep->n_changes, 1);
	return finish(root);
}
