/*
 * price_quota.c - the user's GPU quotas as a table: which offerings a
 * quota bounds, the tightest quota of an offering, and reading the user's
 * quotas.csv (its rows read by price_read.c).
 *
 * It knows nothing of prices beyond the offering a quota is matched to:
 * the catalog (price_catalog.c) lays quotas over offerings, and the merge
 * of a quota file is price_quota_update.c's.  It calls price_read.c,
 * price_csv.c, price_store.c and common/.  It does not plan with quotas
 * (the planner reads cat->quotas).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_internal.h"


int price_quota_applies(const struct price_quota *q, const struct price_offering *o)
{
	return gp_streq_nocase(q->provider, o->provider) &&
	       (strcmp(q->region, "*") == 0 || gp_streq_nocase(q->region, o->region)) &&
	       gp_streq_nocase(q->gpu, o->gpu) &&
	       (!q->instance_type[0] || gp_streq_nocase(q->instance_type, o->instance_type));
}

const struct price_quota *price_quota_for(const struct price_catalog *cat,
					  const struct price_offering *o)
{
	const struct price_quota *best = NULL;

	for (size_t i = 0; i < cat->n_quotas; i++) {
		const struct price_quota *q = &cat->quotas[i];

		if (price_quota_applies(q, o) && (!best || q->max_gpus < best->max_gpus))
			best = q;
	}
	return best;
}

size_t price_quota_offerings(const struct price_catalog *cat, const struct price_quota *q)
{
	size_t n = 0;

	for (size_t i = 0; i < cat->n_offers; i++)
		n += (size_t)price_quota_applies(q, &cat->offers[i]);
	return n;
}

enum rc price_quota_table_read(const char *path, const struct price_gpu *gpus, size_t n_gpus,
			       struct price_quota **out, size_t *n)
{
	struct price_csv csv;
	struct price_quota_row *rows;
	size_t n_rows;
	enum rc rc;

	*out = NULL;
	*n = 0;
	if (!price_file_exists(path))
		return RC_OK;
	rc = price_csv_load(path, &csv);
	if (rc != RC_OK)
		return rc;
	rc = price_quota_rows_read(&csv, gpus, n_gpus, 0, &rows, &n_rows);
	price_csv_release(&csv);
	if (rc != RC_OK)
		return rc;
	*out = xcalloc(n_rows ? n_rows : 1, sizeof(**out));
	for (size_t i = 0; i < n_rows; i++)
		(*out)[i] = rows[i].q;
	*n = n_rows;
	free(rows);
	return RC_OK;
}
