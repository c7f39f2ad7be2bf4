/*
 * price_catalog.c - the catalog every command reads: the GPUs, the
 * shipped prices overlaid with the user's rows when they have any, how
 * each offering is sold (capacity.csv), its host (hosts.csv) and its
 * tightest quota (the user's quotas.csv), with a digest of the files it
 * came from; and queries over it (filter and sort offerings).
 *
 * It composes the price table and the quota table, which know nothing of
 * each other: it calls price_table.c, price_quota.c, price_read.c,
 * price_cost.c, price_gpu.c, price_find.c, price_store.c and common/.
 * Within pricing/ only the merge of a quota file (price_quota_update.c)
 * calls it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "price_internal.h"

/* ---- the catalog ---------------------------------------------------------- */

static char *join(const char *dir, const char *file)
{
	size_t n = strlen(dir) + strlen(file) + 2;
	char *p = xmalloc(n);

	snprintf(p, n, "%s/%s", dir, file);
	return p;
}

/* Whether the user's table at path is there to read: 1 a file, 0 none
 * (no such file or directory yet), -1 after one message when it cannot be
 * told (a directory that cannot be searched, a path through a file, not a
 * regular file): reading on without the user's rows would price with
 * the shipped ones as if they were the user's choice. */
static int user_table_exists(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		gp_error("%s: cannot read the user's prices: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		gp_error("%s: expected the user's prices in a regular file, found %s", path,
			 S_ISDIR(st.st_mode) ? "a directory" : "a special file");
		return -1;
	}
	return 1;
}

/* Hashes the files the catalog was read from (they are small).  The
 * quotas are preceded by a tag, so that they cannot pass for a user's
 * prices.csv; without quotas the digest is what it was before them. */
static enum rc catalog_digest(struct price_catalog *cat)
{
	static const char tag[] = "quotas.csv";
	const char *paths[] = { cat->gpus_path, cat->prices_path, cat->capacity_path,
				cat->user_prices_path, cat->quotas_path, cat->hosts_path };
	uint64_t h = GP_FNV1A64_INIT;

	for (size_t i = 0; i < GP_ARRAY_LEN(paths); i++) {
		char *data;
		size_t len;
		enum rc rc;

		if (!paths[i])
			continue;
		rc = gp_read_file(paths[i], &data, &len);
		if (rc != RC_OK)
			return rc;
		if (paths[i] == cat->quotas_path)
			h = gp_fnv1a64(tag, sizeof(tag) - 1, h);
		h = gp_fnv1a64(data, len, h);
		free(data);
	}
	snprintf(cat->digest, sizeof(cat->digest), "fnv1a64:%016llx", (unsigned long long)h);
	return RC_OK;
}

enum rc price_catalog_load(struct price_catalog *cat, const struct price_opts *o)
{
	struct price_opts def;
	char udir[1024];
	char *user_prices = NULL, *quotas = NULL;
	struct price_offering *shipped = NULL, *user = NULL;
	struct price_capacities caps = { NULL, 0 };
	struct price_hosts hosts = { NULL, 0 };
	size_t n_shipped = 0, n_user = 0;
	enum rc rc;

	memset(cat, 0, sizeof(*cat));
	if (!o) {
		price_opts_init(&def);
		o = &def;
	}
	cat->gpus_path = join(o->data_dir ? o->data_dir : "data", "gpus.csv");
	rc = price_gpus_load(cat->gpus_path, &cat->gpus, &cat->n_gpus);
	if (rc != RC_OK)
		goto fail;
	cat->prices_path = join(o->data_dir ? o->data_dir : "data", "prices.csv");
	rc = price_table_read(cat->prices_path, cat->gpus, cat->n_gpus, &shipped, &n_shipped);
	if (rc != RC_OK)
		goto fail;
	if (price_user_dir(o, udir, sizeof(udir)) == RC_OK) {
		int there;

		user_prices = join(udir, "prices.csv");
		there = user_table_exists(user_prices);
		if (there < 0) {
			rc = RC_ERR;
			goto fail;
		}
		if (there) {
			rc = price_user_table_read(user_prices, cat->gpus, cat->n_gpus, &user, &n_user,
						   &cat->user_legacy);
			if (rc != RC_OK)
				goto fail;
			cat->user_prices_path = user_prices;
			cat->user_table = 1;
			user_prices = NULL;
		}
		free(user_prices);
		user_prices = NULL;
		quotas = join(udir, "quotas.csv");
		if (price_file_exists(quotas)) {
			rc = price_quota_table_read(quotas, cat->gpus, cat->n_gpus, &cat->quotas,
						    &cat->n_quotas);
			if (rc != RC_OK)
				goto fail;
			cat->quotas_path = quotas;
			quotas = NULL;
		}
		free(quotas);
		quotas = NULL;
	}
	cat->offers = price_table_overlay(shipped, n_shipped, user, n_user, &cat->n_offers);
	cat->n_user_offers = n_user;
	/* How each offering is sold; without the file every offering is
	 * one node (price_offering_node_limit). */
	cat->capacity_path = join(o->data_dir ? o->data_dir : "data", "capacity.csv");
	if (price_file_exists(cat->capacity_path)) {
		rc = price_capacities_load(cat->capacity_path, &caps);
		if (rc != RC_OK)
			goto fail;
	} else {
		free(cat->capacity_path);
		cat->capacity_path = NULL;
	}
	/* The hosts of rented instances, which offload needs; without the
	 * file no offering states one. */
	cat->hosts_path = join(o->data_dir ? o->data_dir : "data", "hosts.csv");
	if (price_file_exists(cat->hosts_path)) {
		rc = price_hosts_load(cat->hosts_path, &hosts);
		if (rc != RC_OK) {
			price_capacities_release(&caps);
			goto fail;
		}
	} else {
		free(cat->hosts_path);
		cat->hosts_path = NULL;
	}
	for (size_t i = 0; i < cat->n_offers; i++) {
		const struct price_host *h = price_host_find(&hosts, &cat->offers[i]);

		price_offering_set_capacity(&cat->offers[i],
					    price_capacity_find(&caps, &cat->offers[i]));
		cat->offers[i].quota = price_quota_for(cat, &cat->offers[i]);
		if (h)
			cat->offers[i].host = *h;
	}
	price_capacities_release(&caps);
	price_hosts_release(&hosts);
	rc = catalog_digest(cat);
	if (rc != RC_OK)
		goto fail;
	free(shipped);
	free(user);
	return RC_OK;
fail:
	free(user_prices);
	free(quotas);
	free(shipped);
	free(user);
	price_catalog_release(cat);
	return rc;
}

void price_catalog_release(struct price_catalog *cat)
{
	if (!cat)
		return;
	free(cat->gpus);
	free(cat->offers);
	free(cat->gpus_path);
	free(cat->prices_path);
	free(cat->capacity_path);
	free(cat->hosts_path);
	free(cat->user_prices_path);
	free(cat->quotas);
	free(cat->quotas_path);
	memset(cat, 0, sizeof(*cat));
}

int price_offering_eligible(const struct price_catalog *cat,
			    const struct price_offering *o, char *why, size_t size)
{
	const struct price_gpu *g = price_gpu_find(cat, o->gpu);

	if (!g) {
		if (why && size)
			snprintf(why, size, "%s %s: GPU '%s' is not in gpus.csv", o->provider,
				 o->instance_type, o->gpu);
		return 0;
	}
	return price_gpu_eligible(g, why, size);
}

/* ---- queries -------------------------------------------------------------- */

void price_query_init(struct price_query *q)
{
	memset(q, 0, sizeof(*q));
	q->sort = PRICE_SORT_USD_PER_GPU_HOUR;
}

enum rc price_sort_parse(const char *s, enum price_sort *out)
{
	static const struct {
		const char *name;
		enum price_sort sort;
	} names[] = {
		{ "usd_per_gpu_hour", PRICE_SORT_USD_PER_GPU_HOUR },
		{ "usd_per_hour", PRICE_SORT_USD_PER_HOUR },
		{ "gpu", PRICE_SORT_GPU },
		{ "provider", PRICE_SORT_PROVIDER },
	};

	for (size_t i = 0; s && i < GP_ARRAY_LEN(names); i++)
		if (strcmp(s, names[i].name) == 0) {
			*out = names[i].sort;
			return RC_OK;
		}
	return RC_USAGE;
}

struct sort_item {
	size_t i;
	const struct price_offering *o;
	double per_gpu, per_node;
	enum price_sort sort;
};

/* Not-offered (< 0) prices sort after every real one. */
static int price_cmp(double a, double b)
{
	if (a < 0 || b < 0)
		return (a < 0) - (b < 0);
	return (a > b) - (a < b);
}

static int item_cmp(const void *a_, const void *b_)
{
	const struct sort_item *a = a_, *b = b_;
	int c = 0;

	switch (a->sort) {
	case PRICE_SORT_USD_PER_GPU_HOUR:
		c = price_cmp(a->per_gpu, b->per_gpu);
		break;
	case PRICE_SORT_USD_PER_HOUR:
		c = price_cmp(a->per_node, b->per_node);
		break;
	case PRICE_SORT_GPU:
		c = strcmp(a->o->gpu, b->o->gpu);
		if (!c)
			c = price_cmp(a->per_gpu, b->per_gpu);
		break;
	case PRICE_SORT_PROVIDER:
		c = strcmp(a->o->provider, b->o->provider);
		if (!c)
			c = price_cmp(a->per_gpu, b->per_gpu);
		break;
	}
	if (!c)
		c = price_offer_key_cmp(a->o, b->o);
	return c;
}

static int contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++) {
		size_t i = 0;

		while (i < n && hay[i] &&
		       tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return 1;
	}
	return n == 0;
}

enum rc price_catalog_query(const struct price_catalog *cat, const struct price_query *q,
			    size_t **idx, size_t *n)
{
	const struct price_gpu *g = NULL;
	struct sort_item *items;
	size_t k = 0;

	*idx = NULL;
	*n = 0;
	if (q->gpu && *q->gpu) {
		g = price_gpu_find(cat, q->gpu);
		if (!g)
			return RC_USAGE;
	}
	items = xcalloc(cat->n_offers ? cat->n_offers : 1, sizeof(*items));
	for (size_t i = 0; i < cat->n_offers; i++) {
		const struct price_offering *o = &cat->offers[i];

		if (g && strcmp(o->gpu, g->name) != 0)
			continue;
		if (q->provider && *q->provider && !gp_streq_nocase(o->provider, q->provider))
			continue;
		if (q->region && *q->region && !contains_nocase(o->region, q->region))
			continue;
		if (q->spot && o->spot_usd_per_hour < 0)
			continue;
		if (q->mine && !o->user)
			continue;
		items[k].i = i;
		items[k].o = o;
		items[k].per_gpu = price_offering_usd_per_gpu_hour(o, q->spot);
		items[k].per_node = price_offering_usd_per_hour(o, q->spot);
		items[k].sort = q->sort;
		k++;
	}
	qsort(items, k, sizeof(*items), item_cmp);
	*idx = xcalloc(k ? k : 1, sizeof(**idx));
	for (size_t i = 0; i < k; i++)
		(*idx)[i] = items[i].i;
	*n = k;
	free(items);
	return RC_OK;
}
