/*
 * cli_gpu.c - the one way every command resolves a --gpu name: canonical
 * name or alias, case-insensitive (price_gpu_find), and for an unknown name
 * one error line with the closest catalog name as a hint.
 */
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
