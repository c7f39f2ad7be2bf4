/*
 * price_fetch_azure_json.c - Azure's Retail Prices API
 * (prices.azure.com/api/retail/prices), one page of JSON at a time:
 * {"BillingCurrency": "USD", "Items": [...], "NextPageLink": "...",
 * "Count": N}.  An item is one meter of one SKU in one region
 * (currencyCode, retailPrice, unitPrice, armRegionName, armSkuName,
 * skuName, productName, meterName, meterId, serviceName, type,
 * reservationTerm, unitOfMeasure, effectiveStartDate, ...).
 *
 * Of the "Virtual Machines" items of the instance types the table knows:
 * type Consumption is the on-demand price, or the spot price when the
 * meterName ends in "Spot" ("Low Priority" meters and Windows products are
 * passed over); type Reservation with reservationTerm "1 Year" or
 * "3 Years" is the price of the whole term, which gpuplan divides by the
 * hours of the term (8,760 or 26,280) to show it per hour.  Azure states
 * when each price took effect (effectiveStartDate), not when it was last
 * confirmed, so rows are dated with the day of the fetch and the source
 * names the meter and its effective date.
 *
 * It calls price_fetch_rows.c only.  It does not fetch (price_fetch.c
 * does) nor merge (price_update does).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "price_fetch_rows.h"

static const char *str(const cJSON *item, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, key);

	return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && gp_streq_nocase(s + n - t, tail);
}

static int contains_nocase(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (; *s; s++)
		if (strncasecmp(s, word, n) == 0)
			return 1;
	return 0;
}

/* Appends s to the growing buffer *b (length *len, capacity *cap),
 * percent-encoding every byte but RFC 3986's unreserved ones. */
static void append_escaped(char **b, size_t *len, size_t *cap, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (*len + 4 >= *cap) {
			*cap = *cap * 2 + 64;
			*b = xrealloc(*b, *cap);
		}
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~') {
			(*b)[(*len)++] = (char)c;
		} else {
			(*b)[(*len)++] = '%';
			(*b)[(*len)++] = hex[c >> 4];
			(*b)[(*len)++] = hex[c & 15];
		}
	}
	(*b)[*len] = '\0';
}

char *price_fetch_azure_query(const struct price_fetch_ctx *ctx)
{
	size_t len = 0, cap = 256;
	char *q = xmalloc(cap), part[2 * PRICE_NAME_MAX];

	len = (size_t)snprintf(q, cap, "/api/retail/prices?api-version=2023-01-01-preview&$filter=");
	append_escaped(&q, &len, &cap, "serviceName eq 'Virtual Machines' and (");
	for (size_t i = 0; i < ctx->n_machines; i++) {
		snprintf(part, sizeof(part), "%sarmSkuName eq '%s'", i ? " or " : "",
			 ctx->machines[i].instance_type);
		append_escaped(&q, &len, &cap, part);
	}
	append_escaped(&q, &len, &cap, ")");
	if (ctx->n_regions) {
		append_escaped(&q, &len, &cap, " and (");
		for (size_t i = 0; i < ctx->n_regions; i++) {
			snprintf(part, sizeof(part), "%sarmRegionName eq '%s'", i ? " or " : "",
				 ctx->regions[i]);
			append_escaped(&q, &len, &cap, part);
		}
		append_escaped(&q, &len, &cap, ")");
	}
	return q;
}

/* One item of a page: 0 kept or passed over, -1 after one message. */
static int item(struct price_fetch_ctx *ctx, const cJSON *it, size_t k)
{
	const char *sku = str(it, "armSkuName"), *region = str(it, "armRegionName");
	const char *type = str(it, "type"), *meter = str(it, "meterName");
	const cJSON *price = cJSON_GetObjectItemCaseSensitive(it, "retailPrice");
	const struct price_machine *m;
	struct price_fetched *r;
	double usd, *slot;
	int is_od = 0;

	ctx->rep->items++;
	if (!cJSON_IsObject(it)) {
		gp_error("%s: .Items[%zu]: expected an object, found something else", ctx->what, k);
		return -1;
	}
	if (strcmp(str(it, "serviceName"), "Virtual Machines") != 0 ||
	    !gp_streq_nocase(str(it, "currencyCode"), "USD") ||
	    contains_nocase(str(it, "productName"), "Windows") ||
	    contains_nocase(meter, "Low Priority"))
		return 0;
	m = price_fetch_machine(ctx, sku);
	if (!m || !price_fetch_region_wanted(ctx, region))
		return 0;
	if (!*region || !gp_name_is_safe(region, strlen(region), NULL) ||
	    strlen(region) >= PRICE_NAME_MAX) {
		gp_error("%s: .Items[%zu].armRegionName: expected a region name, found something else",
			 ctx->what, k);
		return -1;
	}
	if (!cJSON_IsNumber(price) || price->valuedouble < 0) {
		gp_error("%s: .Items[%zu].retailPrice: expected a price in USD, found %s", ctx->what,
			 k, price ? "something else" : "none");
		return -1;
	}
	usd = price->valuedouble;
	if (usd == 0)
		return 0;
	r = price_fetch_row(ctx, m, region);
	if (strcmp(type, "Consumption") == 0) {
		is_od = !ends_with(meter, "Spot");
		slot = is_od ? &r->on_demand_usd_per_hour : &r->spot_usd_per_hour;
	} else if (strcmp(type, "Reservation") == 0) {
		const char *term = str(it, "reservationTerm");
		double hours;

		if (strcmp(term, "1 Year") == 0) {
			slot = &r->reserved_usd_per_hour[0];
			hours = PRICE_HOURS_PER_YEAR;
		} else if (strcmp(term, "3 Years") == 0) {
			slot = &r->reserved_usd_per_hour[1];
			hours = 3 * PRICE_HOURS_PER_YEAR;
		} else {
			return 0;
		}
		usd /= hours;
	} else {
		return 0;
	}
	if (usd > PRICE_USD_PER_HOUR_MAX) {
		gp_error("%s: .Items[%zu].retailPrice: expected at most %g USD per hour, found %g",
			 ctx->what, k, PRICE_USD_PER_HOUR_MAX, usd);
		return -1;
	}
	if (*slot >= 0 && *slot <= usd)
		return 0;
	*slot = usd;
	if (is_od || !r->source[0]) {
		const char *id = str(it, "meterId"), *from = str(it, "effectiveStartDate");
		char d[11];

		gp_strlcpy(d, from, sizeof(d));
		if (!gp_name_is_safe(id, strlen(id), NULL))
			id = "?";
		snprintf(r->source, sizeof(r->source), "Azure Retail Prices meter %.40s from %s", id,
			 gp_name_is_safe(d, strlen(d), NULL) ? d : "?");
	}
	return 0;
}

enum rc price_fetch_azure_page(struct price_fetch_ctx *ctx, const char *json, size_t len,
			       char **next)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
	const cJSON *items, *link, *it;
	size_t k = 0;
	enum rc rc = RC_OK;

	*next = NULL;
	if (!root) {
		gp_error("%s: expected a Retail Prices page (JSON), found malformed JSON at byte %zu of %zu",
			 ctx->what, end ? (size_t)(end - json) + 1 : (size_t)0, len);
		return RC_INPUT;
	}
	items = cJSON_GetObjectItemCaseSensitive(root, "Items");
	if (!cJSON_IsArray(items)) {
		gp_error("%s: .Items: expected the page's array of prices, found %s", ctx->what,
			 items ? "something else" : "none");
		cJSON_Delete(root);
		return RC_INPUT;
	}
	cJSON_ArrayForEach(it, items) {
		if (item(ctx, it, k++) != 0) {
			rc = RC_INPUT;
			break;
		}
	}
	link = cJSON_GetObjectItemCaseSensitive(root, "NextPageLink");
	if (rc == RC_OK && cJSON_IsString(link) && link->valuestring && *link->valuestring)
		*next = xstrdup(link->valuestring);
	cJSON_Delete(root);
	return rc;
}
