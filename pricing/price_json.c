/*
 * price_json.c - the pricing module's --json output: the GPU catalog, a
 * selection of offerings, the change history and an update's report, each
 * as a versioned JSON document ("schema": "gpuplan.<what>/1").  Keys come
 * in a fixed order and numbers in cJSON's fixed format, so the same inputs
 * give byte-identical output.  Figures are in the catalog's units (GB,
 * TB/s, TFLOP/s, Gbit/s, USD per hour); a figure the catalog lacks is null.
 *
 * The only pricing file that includes cJSON; it reads nothing from disk.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "price.h"

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
		add_num_or_null(o, "tf32_dense_tflops", tidy(g->tf32_flops_per_s / 1e12),
				g->tf32_flops_per_s > 0);
		add_num_or_null(o, "fp32_tflops", tidy(g->fp32_flops_per_s / 1e12), g->fp32_flops_per_s > 0);
		cJSON_AddStringToObject(o, "intra_node_link", g->intra_link);
		add_num_or_null(o, "intra_node_gb_per_s_bidir", tidy(g->intra_bytes_per_s * 2 / 1e9),
				g->intra_bytes_per_s > 0);
		cJSON_AddBoolToObject(o, "nvlink", g->nvlink);
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
			   size_t n, int spot)
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
		cJSON_AddStringToObject(o, "catalog_version", of->version);
		cJSON_AddBoolToObject(o, "mine", of->user);
		cJSON_AddItemToArray(arr, o);
	}
	return finish(root);
}

char *price_history_to_json(const struct price_history *h)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *arr;

	cJSON_AddStringToObject(root, "schema", "gpuplan.price_history/1");
	arr = cJSON_AddArrayToObject(root, "changes");
	for (size_t i = 0; i < h->n; i++) {
		const struct price_history_entry *e = &h->entries[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "timestamp", e->timestamp);
		cJSON_AddStringToObject(o, "provider", e->provider);
		cJSON_AddStringToObject(o, "instance_type", e->instance_type);
		cJSON_AddStringToObject(o, "region", e->region);
		cJSON_AddStringToObject(o, "field", e->field);
		cJSON_AddStringToObject(o, "old", e->old_value);
		cJSON_AddStringToObject(o, "new", e->new_value);
		cJSON_AddItemToArray(arr, o);
	}
	return finish(root);
}

char *price_update_report_to_json(const struct price_update_report *rep)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *skipped, *arr;

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
	cJSON_AddNumberToObject(skipped, "no_price", (double)rep->skipped_no_price);
	cJSON_AddNumberToObject(skipped, "fractional_gpus", (double)rep->skipped_fractional);
	cJSON_AddNumberToObject(root, "zone_rows_folded", (double)rep->az_rows);
	cJSON_AddNumberToObject(root, "regions_with_several_zones", (double)rep->az_regions);
	cJSON_AddNumberToObject(root, "offerings_after", (double)rep->offers_after);
	cJSON_AddNumberToObject(root, "user_rows", (double)rep->user_rows);
	cJSON_AddBoolToObject(root, "legacy_copy", rep->legacy_copy);
	cJSON_AddBoolToObject(root, "written", rep->written);
	cJSON_AddStringToObject(root, "table", rep->table_path);
	arr = cJSON_AddArrayToObject(root, "changes");
	for (size_t i = 0; i < rep->n_changes; i++) {
		const struct price_change *c = &rep->changes[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "kind", c->kind == PRICE_CHANGE_ADDED ? "added" : "changed");
		cJSON_AddStringToObject(o, "provider", c->provider);
		cJSON_AddStringToObject(o, "instance_type", c->instance_type);
		cJSON_AddStringToObject(o, "region", c->region);
		cJSON_AddStringToObject(o, "field", c->field);
		cJSON_AddStringToObject(o, "old", c->old_value);
		cJSON_AddStringToObject(o, "new", c->new_value);
		cJSON_AddItemToArray(arr, o);
	}
	return finish(root);
}
