/*
 * price_fetch_gcp_json.c - the Compute Engine SKUs of Google's Cloud
 * Billing Catalog API (v1/services/6F81-5844-456A/skus), one page of JSON
 * at a time: {"skus": [...], "nextPageToken": "..."}.  A SKU (skuId,
 * description, category {resourceGroup, usageType}, serviceRegions,
 * pricingInfo[].pricingExpression {usageUnit, tieredRates[].unitPrice
 * {units, nanos}}) prices one part of a machine: its GPUs, its vCPUs or
 * its memory, on demand (usageType OnDemand) or spot (Preemptible).
 *
 * The catalog prices no machine type whole: an accelerator-optimized
 * machine is billed as its GPUs, vCPUs and memory, so a node's price is
 * gpus x the GPU SKU + vcpus x the core SKU + memory GiB x the RAM SKU,
 * with the counts of data/machines.csv and the SKU descriptions named
 * there ("Nvidia H100 80GB GPU", "A3 Instance Core", "A3 Instance Ram"),
 * which the catalog writes "<name> running in <place>" on demand and
 * "Spot Preemptible <name> running in ..." or "<name> attached to Spot
 * Preemptible VMs running in ..." for spot (a SKU so worded is spot even
 * where its usageType says OnDemand, as the A4 B200 GPU's does).  Bundled
 * Local SSD is left
 * out.  Committed-use SKUs are passed over.  Rows are dated with the day
 * of the fetch (a SKU's effectiveTime is when its price began).
 *
 * It calls price_fetch_rows.c only.  It does not fetch (price_fetch.c
 * does) nor merge (price_update does).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_fetch_rows.h"

enum gcp_part { PART_GPU, PART_CORE, PART_RAM, PART_N };

/* The price of one part of one machine in one region. */
struct part_price {
	size_t machine;
	int part;                      /* enum gcp_part */
	int spot;
	char region[PRICE_NAME_MAX];
	double usd;                    /* per GPU-hour, vCPU-hour or GiB-hour */
	char sku[24];
};

struct price_fetch_gcp {
	struct price_fetch_ctx *ctx;
	struct part_price *parts;
	size_t n, cap;
};

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

/* 1 when description d names SKU name for on demand (spot 0) or spot
 * (1), as the catalog words it; see the file's comment. */
static int names(const char *d, const char *name, int spot)
{
	static const char spot_pre[] = "Spot Preemptible ";
	static const char spot_mid[] = " attached to Spot Preemptible VMs";
	static const char tail[] = " running in ";
	size_t n = strlen(name);

	if (!*name)
		return 0;
	if (spot && strncmp(d, spot_pre, sizeof(spot_pre) - 1) == 0)
		d += sizeof(spot_pre) - 1;
	else if (spot && (strncmp(d, name, n) != 0 ||
			  strncmp(d + n, spot_mid, sizeof(spot_mid) - 1) != 0))
		return 0;
	if (strncmp(d, name, n) != 0)
		return 0;
	d += n;
	if (spot && strncmp(d, spot_mid, sizeof(spot_mid) - 1) == 0)
		d += sizeof(spot_mid) - 1;
	return strncmp(d, tail, sizeof(tail) - 1) == 0;
}

/* 1 when description d is worded as a spot SKU's: "Spot Preemptible ..."
 * or "... attached to Spot Preemptible VMs running in ...". */
static int spot_worded(const char *d)
{
	return strncmp(d, "Spot Preemptible ", 17) == 0 ||
	       strstr(d, " attached to Spot Preemptible VMs running in ") != NULL;
}

/* The SKU's hourly unit price (the first tier), in *usd; its usage unit
 * in unit[size].  Returns 0, or -1 when the SKU has no such price. */
static int unit_price(const cJSON *sku, double *usd, char *unit, size_t size)
{
	const cJSON *info = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sku, "pricingInfo"), 0);
	const cJSON *expr = cJSON_GetObjectItemCaseSensitive(info, "pricingExpression");
	const cJSON *tier = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(expr, "tieredRates"), 0);
	const cJSON *price = cJSON_GetObjectItemCaseSensitive(tier, "unitPrice");
	const cJSON *units = cJSON_GetObjectItemCaseSensitive(price, "units");
	const cJSON *nanos = cJSON_GetObjectItemCaseSensitive(price, "nanos");
	double u = 0;

	if (!price || !cJSON_IsNumber(nanos) ||
	    !(cJSON_IsString(units) || cJSON_IsNumber(units) || !units))
		return -1;
	if (cJSON_IsString(units) && unit_parse_double(units->valuestring, &u) != RC_OK)
		return -1;
	if (cJSON_IsNumber(units))
		u = units->valuedouble;
	*usd = u + nanos->valuedouble / 1e9;
	gp_strlcpy(unit, str(expr, "usageUnit"), size);
	return *usd >= 0 ? 0 : -1;
}

static void push(struct price_fetch_gcp *g, const struct part_price *p)
{
	for (size_t i = 0; i < g->n; i++) {
		struct part_price *q = &g->parts[i];

		if (q->machine == p->machine && q->part == p->part && q->spot == p->spot &&
		    strcmp(q->region, p->region) == 0) {
			if (p->usd < q->usd)
				*q = *p;
			return;
		}
	}
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 64;
		g->parts = xrealloc(g->parts, g->cap * sizeof(*g->parts));
	}
	g->parts[g->n++] = *p;
}

/* One SKU: 0 kept or passed over, -1 after one message. */
static int sku(struct price_fetch_gcp *g, const cJSON *s, size_t k)
{
	static const char *const want_unit[PART_N] = { "h", "h", "GiBy.h" };
	struct price_fetch_ctx *ctx = g->ctx;
	const cJSON *cat = cJSON_GetObjectItemCaseSensitive(s, "category");
	const char *usage = str(cat, "usageType"), *d = str(s, "description");
	const cJSON *regions = cJSON_GetObjectItemCaseSensitive(s, "serviceRegions"), *r;
	int spot;

	ctx->rep->items++;
	if (!cJSON_IsObject(s)) {
		gp_error("%s: .skus[%zu]: expected an object, found something else", ctx->what, k);
		return -1;
	}
	/* A spot SKU is worded so even where the catalog tags it OnDemand (its
	 * A4 B200 GPU SKU: "Spot Preemptible A4 Nvidia B200 (1 gpu slice)
	 * running in Americas", usageType OnDemand). */
	if (strcmp(usage, "OnDemand") == 0)
		spot = spot_worded(d);
	else if (strcmp(usage, "Preemptible") == 0)
		spot = 1;
	else
		return 0;
	for (size_t i = 0; i < ctx->n_machines; i++) {
		const struct price_machine *m = &ctx->machines[i];
		const char *const sku_names[PART_N] = { m->sku_gpu, m->sku_core, m->sku_ram };

		for (int part = 0; part < PART_N; part++) {
			struct part_price p;
			char unit[16];
			const char *id = str(s, "skuId");

			if (!names(d, sku_names[part], spot))
				continue;
			memset(&p, 0, sizeof(p));
			if (unit_price(s, &p.usd, unit, sizeof(unit)) != 0 ||
			    p.usd > PRICE_USD_PER_HOUR_MAX) {
				gp_error("%s: .skus[%zu].pricingInfo: expected a unit price {units, nanos} in USD, found none",
					 ctx->what, k);
				return -1;
			}
			if (strcmp(unit, want_unit[part]) != 0) {
				gp_error("%s: .skus[%zu].pricingInfo[0].pricingExpression.usageUnit: expected '%s' for '%s', found another unit",
					 ctx->what, k, want_unit[part], sku_names[part]);
				return -1;
			}
			if (!cJSON_IsArray(regions)) {
				gp_error("%s: .skus[%zu].serviceRegions: expected an array of regions, found %s",
					 ctx->what, k, regions ? "something else" : "none");
				return -1;
			}
			p.machine = i;
			p.part = part;
			p.spot = spot;
			gp_strlcpy(p.sku, gp_name_is_safe(id, strlen(id), NULL) ? id : "?",
				   sizeof(p.sku));
			cJSON_ArrayForEach(r, regions) {
				const char *name = cJSON_IsString(r) ? r->valuestring : "";

				if (!*name || !gp_name_is_safe(name, strlen(name), NULL) ||
				    strlen(name) >= PRICE_NAME_MAX ||
				    !price_fetch_region_wanted(ctx, name))
					continue;
				gp_strlcpy(p.region, name, sizeof(p.region));
				push(g, &p);
			}
		}
	}
	return 0;
}

struct price_fetch_gcp *price_fetch_gcp_new(struct price_fetch_ctx *ctx)
{
	struct price_fetch_gcp *g = xcalloc(1, sizeof(*g));

	g->ctx = ctx;
	return g;
}

enum rc price_fetch_gcp_page(struct price_fetch_gcp *g, const char *json, size_t len,
			     char **next_token)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
	const cJSON *skus, *s, *tok;
	size_t k = 0;
	enum rc rc = RC_OK;

	*next_token = NULL;
	if (!root) {
		gp_error("%s: expected a Cloud Billing Catalog page (JSON), found malformed JSON at byte %zu of %zu",
			 g->ctx->what, end ? (size_t)(end - json) + 1 : (size_t)0, len);
		return RC_INPUT;
	}
	skus = cJSON_GetObjectItemCaseSensitive(root, "skus");
	if (!cJSON_IsArray(skus)) {
		gp_error("%s: .skus: expected the page's array of SKUs, found %s", g->ctx->what,
			 skus ? "something else" : "none");
		cJSON_Delete(root);
		return RC_INPUT;
	}
	cJSON_ArrayForEach(s, skus) {
		if (sku(g, s, k++) != 0) {
			rc = RC_INPUT;
			break;
		}
	}
	tok = cJSON_GetObjectItemCaseSensitive(root, "nextPageToken");
	if (rc == RC_OK && cJSON_IsString(tok) && tok->valuestring && *tok->valuestring)
		*next_token = xstrdup(tok->valuestring);
	cJSON_Delete(root);
	return rc;
}

static const struct part_price *find(const struct price_fetch_gcp *g, size_t machine, int part,
				     int spot, const char *region)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->parts[i].machine == machine && g->parts[i].part == part &&
		    g->parts[i].spot == spot && strcmp(g->parts[i].region, region) == 0)
			return &g->parts[i];
	return NULL;
}

void price_fetch_gcp_finish(struct price_fetch_gcp *g)
{
	struct price_fetch_ctx *ctx = g->ctx;

	for (size_t i = 0; i < g->n; i++) {
		const struct part_price *gpu = &g->parts[i], *core, *ram;
		const struct price_machine *m = &ctx->machines[gpu->machine];
		struct price_fetched *r;
		double usd;

		if (gpu->part != PART_GPU)
			continue;
		if (m->vcpus <= 0 || m->memory_gib <= 0) {
			price_fetch_skip(ctx, "%s: machines.csv states no %s", m->instance_type,
					 m->vcpus <= 0 ? "vcpus" : "memory_gib");
			continue;
		}
		core = find(g, gpu->machine, PART_CORE, gpu->spot, gpu->region);
		ram = find(g, gpu->machine, PART_RAM, gpu->spot, gpu->region);
		if (!core || !ram) {
			price_fetch_skip(ctx, "%s %s: no '%s' SKU%s", m->instance_type, gpu->region,
					 !core ? m->sku_core : m->sku_ram, gpu->spot ? " (spot)" : "");
			continue;
		}
		/* Google bills these machine types by their parts (the file's
		 * comment): the node is the sum. */
		usd = m->gpus_per_node * gpu->usd + m->vcpus * core->usd + m->memory_gib * ram->usd;
		/* To a millionth of a dollar: the sum's binary noise
		 * (96.52960000000002) is not a price. */
		usd = round(usd * 1e6) / 1e6;
		r = price_fetch_row(ctx, m, gpu->region);
		if (gpu->spot)
			r->spot_usd_per_hour = usd;
		else
			r->on_demand_usd_per_hour = usd;
		if (!gpu->spot || !r->source[0]) {
			char src[256];

			snprintf(src, sizeof(src), "GCP Billing Catalog SKUs %.16s x%d + %.16s x%g + %.16s x%g%s",
				 gpu->sku, m->gpus_per_node, core->sku, m->vcpus, ram->sku,
				 m->memory_gib, gpu->spot ? " (spot)" : "");
			gp_strlcpy(r->source, src, sizeof(r->source));
		}
	}
}

void price_fetch_gcp_free(struct price_fetch_gcp *g)
{
	if (!g)
		return;
	free(g->parts);
	free(g);
}
