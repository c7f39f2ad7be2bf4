/*
 * price_fetch_lambda_json.c - Lambda's Cloud API instance types
 * (GET /api/v1/instance-types), one response of JSON:
 *
 *   {"data": {"gpu_8x_h100_sxm5": {"instance_type": {"name": ...,
 *     "description": ..., "gpu_description": ..., "price_cents_per_hour":
 *     2392, "specs": {"vcpus": ..., "memory_gib": ..., "storage_gib": ...,
 *     "gpus": 8}}, "regions_with_capacity_available": [{"name": ...,
 *     "description": ...}]}, ...}}
 *
 * or, when the request fails, {"error": {"code": ..., "message": ...}}.
 * Lambda prices an instance type the same in every region and sells no
 * spot, so each type the table knows becomes one on-demand row of region
 * "all", as the table records Lambda's; a type with no capacity now is
 * priced all the same (a listing is not capacity either way).  Rows are
 * dated with the day of the fetch.
 *
 * It calls price_fetch_rows.c only.  It does not fetch (price_fetch.c
 * does) nor merge (price_update does).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "price_fetch_rows.h"

/* Lambda's region name for its one price of a type. */
#define LAMBDA_REGION "all"

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

/* One entry of .data: 0 kept or passed over, -1 after one message. */
static int entry(struct price_fetch_ctx *ctx, const cJSON *e)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(e, "instance_type");
	const cJSON *cents = cJSON_GetObjectItemCaseSensitive(it, "price_cents_per_hour");
	const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(it, "specs"), "gpus");
	const char *key = e->string ? e->string : "";
	const char *name = str(it, "name");
	const struct price_machine *m;
	struct price_fetched *r;
	double usd;

	ctx->rep->items++;
	if (!cJSON_IsObject(it)) {
		gp_error("%s: .data[\"%.64s\"].instance_type: expected an object, found %s",
			 ctx->what, gp_name_is_safe(key, strlen(key), NULL) ? key : "?",
			 it ? "something else" : "none");
		return -1;
	}
	if (!*name)
		name = key;
	m = price_fetch_machine(ctx, name);
	if (!m || !price_fetch_region_wanted(ctx, LAMBDA_REGION))
		return 0;
	if (!cJSON_IsNumber(cents) || cents->valuedouble <= 0 || !isfinite(cents->valuedouble)) {
		gp_error("%s: .data[\"%s\"].instance_type.price_cents_per_hour: expected a price in US cents, found %s",
			 ctx->what, m->instance_type, cents ? "something else" : "none");
		return -1;
	}
	usd = cents->valuedouble / 100;
	if (usd > PRICE_USD_PER_HOUR_MAX) {
		gp_error("%s: .data[\"%s\"].instance_type.price_cents_per_hour: expected at most %g USD per hour, found %g",
			 ctx->what, m->instance_type, PRICE_USD_PER_HOUR_MAX, usd);
		return -1;
	}
	if (cJSON_IsNumber(gpus) && gpus->valuedouble != m->gpus_per_node) {
		price_fetch_skip(ctx, "%s: the API says %g GPUs, the table %d", m->instance_type,
				 gpus->valuedouble, m->gpus_per_node);
		return 0;
	}
	r = price_fetch_row(ctx, m, LAMBDA_REGION);
	r->on_demand_usd_per_hour = usd;
	snprintf(r->source, sizeof(r->source), "Lambda Cloud API instance-types %s %.0f cents/h",
		 m->instance_type, cents->valuedouble);
	return 0;
}

enum rc price_fetch_lambda_page(struct price_fetch_ctx *ctx, const char *json, size_t len)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
	const cJSON *data, *err, *e;
	enum rc rc = RC_OK;

	if (!root) {
		gp_error("%s: expected Lambda's instance types (JSON), found malformed JSON at byte %zu of %zu",
			 ctx->what, end ? (size_t)(end - json) + 1 : (size_t)0, len);
		return RC_INPUT;
	}
	err = cJSON_GetObjectItemCaseSensitive(root, "error");
	data = cJSON_GetObjectItemCaseSensitive(root, "data");
	if (cJSON_IsObject(err) && !data) {
		const char *code = str(err, "code");

		gp_error("%s: expected instance types, found an error response (code '%.64s')",
			 ctx->what, gp_name_is_safe(code, strlen(code), NULL) ? code : "?");
		cJSON_Delete(root);
		return RC_INPUT;
	}
	if (!cJSON_IsObject(data)) {
		gp_error("%s: .data: expected the object of instance types, found %s", ctx->what,
			 data ? "something else" : "none");
		cJSON_Delete(root);
		return RC_INPUT;
	}
	cJSON_ArrayForEach(e, data) {
		if (entry(ctx, e) != 0) {
			rc = RC_INPUT;
			break;
		}
	}
	cJSON_Delete(root);
	return rc;
}
