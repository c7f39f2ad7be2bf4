/*
 * fuzz_price_table.c - libFuzzer target for the price and catalog loaders
 * end to end, past the CSV reader: the bytes are read as a price table
 * (gpuplan's columns, or a SkyPilot catalog's for a cloud named "fuzz"),
 * and, written to a temporary file, as gpus.csv, commitments.csv and
 * hardware.csv.  Any input is loaded or rejected with a message; a table
 * that loads writes back (price_table_format) as a table that loads to
 * the same offerings and writes the same bytes again.
 *
 * GPU names resolve through the shipped catalog: data/ under the working
 * directory (`make fuzz` runs from the repository root), or
 * $GPUPLAN_SHARE_DIR.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "fuzz_price.h"

static struct price_catalog cat;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_args(argc, argv, "tests/fuzz/price_table.dict");
	gp_log_quiet(1);
	fuzz_price_setup("fuzz_price_table", &cat);
	return 0;
}

/* Loads the table in buf[0..len) as price_table_read() would (skypilot_ok
 * lets a SkyPilot catalog in), into a new array *out of *n offerings. */
static enum rc load(const char *buf, size_t len, int skypilot_ok,
		    struct price_offering **out, size_t *n)
{
	struct price_csv csv;
	struct price_rows rows;
	enum rc rc;

	*out = NULL;
	*n = 0;
	rc = price_csv_parse("fuzz.csv", buf, len, 0, &csv);
	if (rc != RC_OK)
		return rc;
	rc = price_rows_read(&csv, cat.gpus, cat.n_gpus, skypilot_ok ? "fuzz" : NULL,
			     skypilot_ok ? PRICE_READ_UPDATE : PRICE_READ_TABLE, &rows, NULL);
	price_csv_release(&csv);
	if (rc != RC_OK)
		return rc;
	*out = calloc(rows.n ? rows.n : 1, sizeof(**out));
	for (size_t i = 0; i < rows.n; i++)
		(*out)[i] = rows.rows[i].o;
	*n = rows.n;
	price_rows_release(&rows);
	return RC_OK;
}

static void round_trip(const unsigned char *data, size_t size)
{
	struct price_offering *a, *b;
	size_t na, nb, la, lb;
	char *ta, *tb;

	if (load((const char *)data, size, 1, &a, &na) != RC_OK) {
		fuzz_count("price_table", FUZZ_REFUSED);
		return;
	}
	if (na == 0) {
		/* a catalog whose rows were all skipped (CPU instances, unknown
		 * GPUs) merges nothing; a table needs rows */
		fuzz_count("price_table", FUZZ_ACCEPTED);
		free(a);
		return;
	}
	ta = price_table_format(a, na, &la);
	if (load(ta, la, 0, &b, &nb) != RC_OK || nb != na)
		abort();
	for (size_t i = 0; i < na; i++)
		if (price_offer_key_cmp(&a[i], &b[i]) != 0 ||
		    a[i].gpus_per_node != b[i].gpus_per_node ||
		    a[i].on_demand_usd_per_hour != b[i].on_demand_usd_per_hour ||
		    a[i].spot_usd_per_hour != b[i].spot_usd_per_hour)
			abort();
	tb = price_table_format(b, nb, &lb);
	if (la != lb || memcmp(ta, tb, la) != 0)
		abort();
	fuzz_count("price_table", FUZZ_ROUND_TRIPPED);
	free(ta);
	free(tb);
	free(a);
	free(b);
}

static void other_loaders(const unsigned char *data, size_t size)
{
	FILE *f = fopen(fuzz_tmp_path, "wb");
	struct price_gpu *gpus;
	size_t n;
	struct price_commitments c;
	struct price_hardware_table h;

	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	if (price_gpus_load(fuzz_tmp_path, &gpus, &n) == RC_OK)
		free(gpus);
	if (price_commitments_load(fuzz_tmp_path, &cat, &c) == RC_OK)
		price_commitments_release(&c);
	if (price_hardware_load(fuzz_tmp_path, &cat, &h) == RC_OK)
		price_hardware_release(&h);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	round_trip(data, size);
	other_loaders(data, size);
	return 0;
}
