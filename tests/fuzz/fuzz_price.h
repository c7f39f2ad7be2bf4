/*
 * fuzz_price.h - what the price-table fuzz targets share: a temporary
 * file to write inputs to (removed at exit), and the shipped catalog for
 * GPU names, from data/ under the working directory (`make fuzz` runs
 * from the repository root) or $GPUPLAN_SHARE_DIR, never the user's table
 * of this machine.
 *
 * Static functions only; each target includes it once, after fuzz.h.
 */
#ifndef GPUPLAN_FUZZ_PRICE_H
#define GPUPLAN_FUZZ_PRICE_H

#include "price_internal.h"

static char fuzz_tmp_path[64];

static void fuzz_remove_tmp(void)
{
	unlink(fuzz_tmp_path);
}

/* Makes fuzz_tmp_path and loads the shipped catalog into cat; aborts with
 * a message naming target when it cannot. */
static void fuzz_price_setup(const char *target, struct price_catalog *cat)
{
	struct price_opts o;
	const char *share = getenv("GPUPLAN_SHARE_DIR");
	int fd;

	snprintf(fuzz_tmp_path, sizeof(fuzz_tmp_path), "/tmp/gpuplan-fuzz-XXXXXX");
	fd = mkstemp(fuzz_tmp_path);
	if (fd < 0)
		abort();
	close(fd);
	atexit(fuzz_remove_tmp);
	price_opts_init(&o);
	o.data_dir = share && *share ? share : "data";
	o.user_dir = "/nonexistent/gpuplan-fuzz";
	if (price_catalog_load(cat, &o) != RC_OK) {
		fprintf(stderr, "%s: cannot load %s/gpus.csv and prices.csv; "
			"run from the repository root or set GPUPLAN_SHARE_DIR\n", target, o.data_dir);
		abort();
	}
}

#endif
