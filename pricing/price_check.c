/*
 * price_check.c - the shipped tables agree with each other: price rows
 * name GPUs gpus.csv has and machines rather than GPUs, each commitment's
 * on-demand base is the price row's, every capacity and block row sells
 * something, and a price row without an on-demand or spot price is sold as
 * a capacity block.  A contradiction between two shipped files is a wrong
 * answer waiting for the planner, so `make test` runs this on data/.
 *
 * It does not check a figure against the outside world (the sources in
 * data/SOURCES.md do that), nor the user's tables.
 *
 * It calls price_table.c, price_cost.c, price_gpu.c, price_find.c and
 * common/; nothing in pricing/ calls it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "price_internal.h"

static char *join(const char *dir, const char *file)
{
	size_t n = strlen(dir) + strlen(file) + 2;
	char *p = xmalloc(n);

	snprintf(p, n, "%s/%s", dir, file);
	return p;
}

static int there(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Price rows: a GPU of gpus.csv, and an instance type that is no GPU's
 * name or alias (SkyPilot's GCP catalogs list GPUs as rows of their own). */
static size_t check_prices(const char *path, const struct price_gpu *gpus, size_t n_gpus,
			   const struct price_offering *offers, size_t n)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		const struct price_offering *o = &offers[i];

		if (!price_gpu_lookup(gpus, n_gpus, o->gpu, NULL)) {
			gp_error("%s: %s %s %s: expected a GPU of gpus.csv, found '%s'", path,
				 o->provider, o->instance_type, o->region, o->gpu);
			bad++;
		}
		if (price_gpu_lookup(gpus, n_gpus, o->instance_type, NULL)) {
			gp_error("%s: %s %s %s: expected a machine's price, found a row named after "
				 "a GPU (a part price, not a node's)", path, o->provider,
				 o->instance_type, o->region);
			bad++;
		}
	}
	return bad;
}

static const struct price_offering *find_offer(const struct price_offering *offers, size_t n,
					       const char *provider, const char *instance,
					       const char *region)
{
	for (size_t i = 0; i < n; i++)
		if (gp_streq_nocase(offers[i].provider, provider) &&
		    strcmp(offers[i].instance_type, instance) == 0 &&
		    strcmp(offers[i].region, region) == 0)
			return &offers[i];
	return NULL;
}

/* Each commitment's base: stated, an offering of the table, and that
 * offering's on-demand price within the tolerance. */
static size_t check_commitments(const char *path, const char *prices_path,
				const struct price_commitments *t,
				const struct price_offering *offers, size_t n)
{
	size_t bad = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct price_commitment *c = &t->rows[i];
		const struct price_offering *o;
		double rel;

		if (!c->base_instance_type[0] || !c->base_region[0] || !(c->base_usd_per_hour > 0)) {
			gp_error("%s: %s %s %d y: expected the on-demand base of its discount "
				 "(base_instance_type, base_region, base_usd_per_hour), found none",
				 path, c->provider, c->instance_prefix, c->term_months / 12);
			bad++;
			continue;
		}
		if (strncmp(c->base_instance_type, c->instance_prefix, strlen(c->instance_prefix))) {
			gp_error("%s: %s %s %d y: expected a base instance its prefix covers, found %s",
				 path, c->provider, c->instance_prefix, c->term_months / 12,
				 c->base_instance_type);
			bad++;
			continue;
		}
		o = find_offer(offers, n, c->provider, c->base_instance_type, c->base_region);
		if (!o || !(o->on_demand_usd_per_hour > 0)) {
			gp_error("%s: %s %s %d y: expected an on-demand price of %s in %s in %s, "
				 "found %s", path, c->provider, c->instance_prefix, c->term_months / 12,
				 c->base_instance_type, c->base_region, prices_path,
				 o ? "no on-demand price" : "no row");
			bad++;
			continue;
		}
		rel = fabs(o->on_demand_usd_per_hour / c->base_usd_per_hour - 1);
		if (rel > PRICE_CHECK_BASE_TOLERANCE) {
			gp_error("%s: %s %s %d y: expected %s's on-demand price of %s %s (%g USD/h) "
				 "within %.0f%% of the discount's base %g USD/h (%s), found %+.1f%%",
				 path, c->provider, c->instance_prefix, c->term_months / 12, prices_path,
				 c->base_instance_type, c->base_region, o->on_demand_usd_per_hour,
				 100 * PRICE_CHECK_BASE_TOLERANCE, c->base_usd_per_hour, c->price_date,
				 100 * (o->on_demand_usd_per_hour / c->base_usd_per_hour - 1));
			bad++;
		}
	}
	return bad;
}

static size_t check_capacities(const char *path, const struct price_capacities *t,
			       const struct price_offering *offers, size_t n)
{
	size_t bad = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct price_capacity *c = &t->rows[i];
		size_t len = strlen(c->instance_prefix);
		int sold = 0;

		for (size_t j = 0; j < n && !sold; j++)
			sold = gp_streq_nocase(offers[j].provider, c->provider) &&
			       (strcmp(c->instance_prefix, "*") == 0 ||
				strncmp(offers[j].instance_type, c->instance_prefix, len) == 0);
		if (!sold) {
			gp_error("%s: %s %s: expected a row that bounds an offering of prices.csv, "
				 "found none it matches", path, c->provider, c->instance_prefix);
			bad++;
		}
	}
	return bad;
}

/* A row with neither price is rented only as a capacity block (AWS's
 * P6e UltraServers); without a block that sells it, it would be listed
 * and never offered. */
static size_t check_unpriced(const char *path, const char *blocks_path,
			     const struct price_blocks *t, const struct price_offering *offers,
			     size_t n)
{
	size_t bad = 0;

	for (size_t j = 0; j < n; j++)
		if (offers[j].on_demand_usd_per_hour < 0 && offers[j].spot_usd_per_hour < 0 &&
		    !price_block_find(t, &offers[j])) {
			gp_error("%s: %s %s %s: expected an on-demand or spot price, or a block of "
				 "%s that sells it, found none", path, offers[j].provider,
				 offers[j].instance_type, offers[j].region, blocks_path);
			bad++;
		}
	return bad;
}

static size_t check_blocks(const char *path, const struct price_blocks *t,
			   const struct price_offering *offers, size_t n)
{
	size_t bad = 0;

	for (size_t i = 0; i < t->n; i++) {
		int sold = 0;

		for (size_t j = 0; j < n && !sold; j++)
			sold = price_block_match(t, &offers[j]) == &t->rows[i];
		if (!sold) {
			gp_error("%s: %s %s %s: expected a block that sells an offering of prices.csv, "
				 "found none it matches", path, t->rows[i].provider,
				 t->rows[i].instance_prefix, t->rows[i].region);
			bad++;
		}
	}
	return bad;
}

enum rc price_data_check(const char *data_dir, size_t *problems)
{
	char *gpus_path = join(data_dir, "gpus.csv"), *prices_path = join(data_dir, "prices.csv");
	char *commit_path = join(data_dir, "commitments.csv");
	char *cap_path = join(data_dir, "capacity.csv"), *block_path = join(data_dir, "blocks.csv");
	struct price_catalog cat;
	struct price_commitments commits = { NULL, 0 };
	struct price_capacities caps = { NULL, 0 };
	struct price_blocks blocks = { NULL, 0 };
	struct price_offering *offers = NULL;
	size_t n = 0, bad = 0;
	enum rc rc;

	memset(&cat, 0, sizeof(cat));
	if (problems)
		*problems = 0;
	rc = price_gpus_load(gpus_path, &cat.gpus, &cat.n_gpus);
	if (rc == RC_OK)
		rc = price_table_read(prices_path, cat.gpus, cat.n_gpus, &offers, &n);
	if (rc != RC_OK)
		goto out;
	cat.offers = offers;
	cat.n_offers = n;
	cat.gpus_path = gpus_path;
	bad += check_prices(prices_path, cat.gpus, cat.n_gpus, offers, n);
	if (there(commit_path)) {
		rc = price_commitments_load(commit_path, &cat, &commits);
		if (rc != RC_OK)
			goto out;
		bad += check_commitments(commit_path, prices_path, &commits, offers, n);
	}
	if (there(cap_path)) {
		rc = price_capacities_load(cap_path, &caps);
		if (rc != RC_OK)
			goto out;
		bad += check_capacities(cap_path, &caps, offers, n);
	}
	if (there(block_path)) {
		rc = price_blocks_load(block_path, &blocks);
		if (rc != RC_OK)
			goto out;
		bad += check_blocks(block_path, &blocks, offers, n);
	}
	bad += check_unpriced(prices_path, block_path, &blocks, offers, n);
	rc = bad ? RC_INPUT : RC_OK;
	if (problems)
		*problems = bad;
out:
	price_blocks_release(&blocks);
	price_capacities_release(&caps);
	price_commitments_release(&commits);
	free(offers);
	free(cat.gpus);
	free(gpus_path);
	free(prices_path);
	free(commit_path);
	free(cap_path);
	free(block_path);
	return rc;
}
