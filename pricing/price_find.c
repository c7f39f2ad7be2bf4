/*
 * price_find.c - the one place a name a user typed is found in the
 * catalog: a GPU by canonical name or alias, an offering's provider or
 * region; ASCII case-insensitive, '_' and ' ' read as '-' in GPU names.
 * An unknown name gets the closest known one (edit distance, common.c's
 * gp_edit_distance) as a "did you mean" hint: price_gpu_suggest() for the
 * caller's own message, or price_gpu_resolve() and price_offering_resolve(),
 * which print it.
 *
 * It calls only common/.
 */
#include <stdio.h>
#include <string.h>

#include "price_internal.h"

static int name_match(const char *a, size_t alen, const char *b)
{
	size_t i;

	for (i = 0; i < alen && b[i]; i++)
		if (gp_fold_name(a[i]) != gp_fold_name(b[i]))
			return 0;
	return i == alen && b[i] == '\0';
}

int price_gpu_each_alias(const struct price_gpu *g,
			 int (*fn)(const char *s, size_t n, void *ctx), void *ctx)
{
	const char *p = g->aliases;

	while (*p) {
		const char *end = strchr(p, ';');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *s = p;
		size_t m = n;

		while (m && (*s == ' ' || *s == '\t')) {
			s++;
			m--;
		}
		while (m && (s[m - 1] == ' ' || s[m - 1] == '\t'))
			m--;
		if (m && fn(s, m, ctx))
			return 1;
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

static int alias_is(const char *s, size_t n, void *ctx)
{
	return name_match(s, n, ctx);
}

const struct price_gpu *price_gpu_lookup(const struct price_gpu *gpus, size_t n,
					 const char *name, int *by_alias)
{
	if (by_alias)
		*by_alias = 0;
	if (!name || !*name)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (name_match(gpus[i].name, strlen(gpus[i].name), name))
			return &gpus[i];
	for (size_t i = 0; i < n; i++)
		if (price_gpu_each_alias(&gpus[i], alias_is, (void *)name)) {
			if (by_alias)
				*by_alias = 1;
			return &gpus[i];
		}
	return NULL;
}

const struct price_gpu *price_gpu_find(const struct price_catalog *cat, const char *name)
{
	return price_gpu_lookup(cat->gpus, cat->n_gpus, name, NULL);
}

struct suggest_ctx {
	const char *name;
	size_t best;
	char *buf;
	size_t size;
};

static void suggest_try(struct suggest_ctx *c, const char *s, size_t n)
{
	size_t d = gp_edit_distance(c->name, strlen(c->name), s, n, gp_fold_name);

	if (d < c->best) {
		c->best = d;
		snprintf(c->buf, c->size, "%.*s", (int)n, s);
	}
}

static int suggest_alias(const char *s, size_t n, void *ctx)
{
	suggest_try(ctx, s, n);
	return 0;
}

int price_gpu_suggest(const struct price_gpu *gpus, size_t n, const char *name,
		      char *buf, size_t size)
{
	struct suggest_ctx c = { name, (size_t)-1, buf, size };
	size_t limit = gp_suggest_limit(name);

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		suggest_try(&c, gpus[i].name, strlen(gpus[i].name));
		price_gpu_each_alias(&gpus[i], suggest_alias, &c);
	}
	if (c.best > limit) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

const struct price_gpu *price_gpu_resolve(const struct price_catalog *cat, const char *what,
					  const char *name)
{
	const struct price_gpu *g = price_gpu_find(cat, name);
	char near[PRICE_NAME_MAX];

	if (g)
		return g;
	gp_error("%s: expected a GPU name or alias from %s, found '%s'", what,
		 cat->gpus_path ? cat->gpus_path : "gpus.csv", name);
	if (price_gpu_suggest(cat->gpus, cat->n_gpus, name, near, sizeof(near)) == 0)
		gp_hint("did you mean '%s'? ('gpuplan gpus' lists every name)", near);
	else
		gp_hint("run 'gpuplan gpus' for the list");
	return NULL;
}

enum rc price_offering_resolve(const struct price_catalog *cat, const char *what,
			       const char *value, int region)
{
	char near[PRICE_NAME_MAX] = "";
	size_t best = (size_t)-1;

	if (!value || !value[0])
		return RC_OK;
	for (size_t i = 0; i < cat->n_offers; i++) {
		const char *v = region ? cat->offers[i].region : cat->offers[i].provider;
		size_t d;

		if (gp_streq_nocase(v, value))
			return RC_OK;
		d = gp_edit_distance(value, strlen(value), v, strlen(v), gp_fold_name);
		if (d < best) {
			best = d;
			gp_strlcpy(near, v, sizeof(near));
		}
	}
	gp_error("%s: expected a %s of the price table, found '%s'", what,
		 region ? "region" : "provider", value);
	if (best <= gp_suggest_limit(value))
		gp_hint("did you mean '%s'? ('gpuplan prices list' shows every offering)", near);
	else
		gp_hint("run 'gpuplan prices list' for the offerings");
	return RC_USAGE;
}
