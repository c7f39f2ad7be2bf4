/*
 * price_fetch_rows.c - the bottom of `prices fetch`: which instance types
 * and regions a fetch keeps, and the rows it collects, shared by the
 * providers' parsers and price_fetch.c.  Calls only common/.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "price_fetch_rows.h"

const struct price_machine *price_fetch_machine(const struct price_fetch_ctx *ctx,
						const char *instance_type)
{
	for (size_t i = 0; i < ctx->n_machines; i++)
		if (gp_streq_nocase(ctx->machines[i].instance_type, instance_type))
			return &ctx->machines[i];
	return NULL;
}

int price_fetch_region_wanted(const struct price_fetch_ctx *ctx, const char *region)
{
	if (!ctx->n_regions)
		return 1;
	for (size_t i = 0; i < ctx->n_regions; i++)
		if (gp_streq_nocase(ctx->regions[i], region))
			return 1;
	return 0;
}

struct price_fetched *price_fetch_row(struct price_fetch_ctx *ctx, const struct price_machine *m,
				      const char *region)
{
	struct price_fetch_report *rep = ctx->rep;
	struct price_fetched *r;

	for (size_t i = 0; i < rep->n_rows; i++) {
		r = &rep->rows[i];
		if (strcmp(r->instance_type, m->instance_type) == 0 && strcmp(r->region, region) == 0)
			return r;
	}
	if (rep->n_rows == ctx->cap_rows) {
		ctx->cap_rows = ctx->cap_rows ? 2 * ctx->cap_rows : 32;
		rep->rows = xrealloc(rep->rows, ctx->cap_rows * sizeof(*rep->rows));
	}
	r = &rep->rows[rep->n_rows++];
	memset(r, 0, sizeof(*r));
	gp_strlcpy(r->instance_type, m->instance_type, sizeof(r->instance_type));
	gp_strlcpy(r->gpu, m->gpu, sizeof(r->gpu));
	r->gpus_per_node = m->gpus_per_node;
	gp_strlcpy(r->region, region, sizeof(r->region));
	r->on_demand_usd_per_hour = r->spot_usd_per_hour = -1;
	r->reserved_usd_per_hour[0] = r->reserved_usd_per_hour[1] = -1;
	gp_strlcpy(r->price_date, ctx->today, sizeof(r->price_date));
	return r;
}

void price_fetch_skip(struct price_fetch_ctx *ctx, const char *fmt, ...)
{
	struct price_fetch_report *rep = ctx->rep;
	char why[192];
	size_t len = strlen(rep->skipped_why);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (strstr(rep->skipped_why, why))
		return;
	rep->skipped++;
	if (len + strlen(why) + 3 < sizeof(rep->skipped_why))
		snprintf(rep->skipped_why + len, sizeof(rep->skipped_why) - len, "%s%s",
			 len ? "; " : "", why);
}

