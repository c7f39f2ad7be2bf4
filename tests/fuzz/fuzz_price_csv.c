/*
 * fuzz_price_csv.c - libFuzzer target for the CSV reader: any input either
 * parses or is rejected with a message; the result is the same whatever
 * the chunk size the bytes are fed in.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "price_csv.h"
#include "fuzz.h"

static int same(const struct price_csv *a, const struct price_csv *b)
{
	if (a->n_rows != b->n_rows || a->header.n != b->header.n)
		return 0;
	for (size_t r = 0; r < a->n_rows; r++) {
		if (a->rows[r].n != b->rows[r].n || a->rows[r].line != b->rows[r].line)
			return 0;
		for (int f = 0; f < a->rows[r].n; f++)
			if (strcmp(a->rows[r].field[f], b->rows[r].field[f]))
				return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct price_csv whole, bytewise;
	enum rc a, b;

	gp_log_quiet(1);
	a = price_csv_parse("fuzz.csv", (const char *)data, size, 0, &whole);
	b = price_csv_parse("fuzz.csv", (const char *)data, size, 1 + size % 7, &bytewise);
	if (a != b || (a == RC_OK && !same(&whole, &bytewise)))
		abort();
	/* cells have no writer of their own: the tables' writers are judged
	 * by fuzz_price_table and fuzz_user_prices */
	fuzz_count("price_csv", a == RC_OK ? FUZZ_ACCEPTED : FUZZ_REFUSED);
	price_csv_release(&whole);
	price_csv_release(&bytewise);
	return 0;
}
