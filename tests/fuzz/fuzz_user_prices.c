/*
 * fuzz_user_prices.c - libFuzzer target for the reader of the user's
 * prices.csv (price_user_table_read) and the overlay on the shipped table.
 * The bytes are read twice from a temporary file: as they are (a file with
 * the PRICE_USER_MARKER line, a legacy full copy, a marker naming another
 * version, or anything else), and after the marker line, so every mutated
 * table also reaches the format-2 path.  Any input is loaded or rejected
 * with a message.  A file that loads is laid over the shipped table and
 * written back as `gpuplan prices update` writes it (the rows that differ
 * from the shipped ones, after the marker); that file must load as format
 * 2 with exactly those rows and overlay to the same table.
 *
 * The shipped table (its first SHIPPED_ROWS rows) comes from data/ under
 * the working directory (`make fuzz` runs from the repository root), or
 * $GPUPLAN_SHARE_DIR.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "fuzz_price.h"

/* The first SHIPPED_ROWS rows of the shipped table stand for it: marking
 * the user's rows writes every row twice, so the time per input grows with
 * the table while what is reached does not. */
#define SHIPPED_ROWS 16

static struct price_catalog cat;
static size_t n_shipped;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_args(argc, argv, "tests/fuzz/user_prices.dict");
	gp_log_quiet(1);
	fuzz_price_setup("fuzz_user_prices", &cat);
	n_shipped = cat.n_offers < SHIPPED_ROWS ? cat.n_offers : SHIPPED_ROWS;
	return 0;
}

/* Writes head (may be NULL) then data[0..size) to the temporary file. */
static void write_tmp(const char *head, const void *data, size_t size)
{
	FILE *f = fopen(fuzz_tmp_path, "wb");

	if (!f)
		abort();
	if (head && fputs(head, f) == EOF)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	if (fclose(f) != 0)
		abort();
}

/* Reads the temporary file as the user's table; when it loads, lays it
 * over the shipped table, writes the user's file back from that, reads it
 * and checks the second overlay against the first: the same keys in the
 * same order, the same rows marked as the user's, and those written the
 * same bytes (rows not marked are, as written, the shipped ones). */
static void read_and_rewrite(void)
{
	struct price_offering *user, *user2, *t, *t2;
	size_t n, n2, nt, nt2, lu, lu2, marked, marked2;
	char *u, *u2;
	int legacy;

	if (price_user_table_read(fuzz_tmp_path, cat.gpus, cat.n_gpus, &user, &n, &legacy) != RC_OK) {
		fuzz_count("user_prices", FUZZ_REFUSED);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (!user[i].user)
			abort();
	t = price_table_overlay(cat.offers, n_shipped, user, n, &nt);
	marked = price_table_mark_user(t, nt, cat.offers, n_shipped);
	u = price_user_table_format(t, nt, &lu);
	if (lu < sizeof(PRICE_USER_MARKER) ||
	    memcmp(u, PRICE_USER_MARKER "\n", sizeof(PRICE_USER_MARKER)) != 0)
		abort();
	write_tmp(NULL, u, lu);
	if (price_user_table_read(fuzz_tmp_path, cat.gpus, cat.n_gpus, &user2, &n2, &legacy) != RC_OK ||
	    legacy || n2 != marked)
		abort();
	t2 = price_table_overlay(cat.offers, n_shipped, user2, n2, &nt2);
	marked2 = price_table_mark_user(t2, nt2, cat.offers, n_shipped);
	if (nt2 != nt || marked2 != marked)
		abort();
	for (size_t i = 0; i < nt; i++)
		if (price_offer_key_cmp(&t[i], &t2[i]) != 0 || t[i].user != t2[i].user)
			abort();
	u2 = price_user_table_format(t2, nt2, &lu2);
	if (lu2 != lu || memcmp(u, u2, lu) != 0)
		abort();
	fuzz_count("user_prices", FUZZ_ROUND_TRIPPED);
	free(u);
	free(u2);
	free(t);
	free(t2);
	free(user);
	free(user2);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	write_tmp(NULL, data, size);
	read_and_rewrite();
	write_tmp(PRICE_USER_MARKER "\n", data, size);
	read_and_rewrite();
	return 0;
}
