/*
 * cli_gpu.c - the one way every command resolves a --gpu name: canonical
 * name or alias, case-insensitive (price_gpu_find), and for an unknown name
 * one error line with the closest catalog name as a hint; and the same for
 * a --provider or --region filter against the offerings.
 */
#include <string.h>

#include "cli.h"
#include "price.h"

const struct price_gpu *cli_gpu_find(const struct price_catalog *cat, const char *flag,
				     const char *name)
{
	const struct price_gpu *g = price_gpu_find(cat, name);
	char near[PRICE_NAME_MAX];

	if (g)
		return g;
	gp_error("%s: expected a GPU name or alias from %s, found '%s'", flag,
		 cat->gpus_path ? cat->gpus_path : "gpus.csv", name);
	if (price_gpu_suggest(cat->gpus, cat->n_gpus, name, near, sizeof(near)) == 0)
		gp_hint("did you mean '%s'? ('gpuplan gpus' lists every name)", near);
	else
		gp_hint("run 'gpuplan gpus' for the list");
	return NULL;
}

enum rc cli_offering_field(const struct price_catalog *cat, const char *flag, const char *value,
			   int region)
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
	gp_error("%s: expected a %s of the price table, found '%s'", flag,
		 region ? "region" : "provider", value);
	if (best <= gp_suggest_limit(value))
		gp_hint("did you mean '%s'? ('gpuplan prices list' shows every offering)", near);
	else
		gp_hint("run 'gpuplan prices list' for the offerings");
	return RC_USAGE;
}
