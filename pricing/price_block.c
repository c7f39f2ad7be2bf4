/*
 * price_block.c - the reservations of blocks.csv: products that sell an
 * offering's instances as a cluster for a fixed term at their own rate
 * (AWS EC2 Capacity Blocks for ML, GCP calendar-mode future reservations),
 * and products known to sell them whose price no source read gives (a row
 * with an empty rate); which row sells an offering, the term a job pays
 * for, and how many nodes one unit holds.
 *
 * It does not price a plan (the planner does) nor chain reservations.
 *
 * It calls price_csv.c, price_csv_table.c, price_cost.c's cell readers and
 * common/.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_internal.h"

/* ---- blocks.csv ------------------------------------------------------------ */

enum { B_PROVIDER, B_PREFIX, B_REGION, B_RATE, B_MIN_NODES, B_MAX_NODES, B_MIN_DAYS,
       B_MAX_DAYS, B_STEP, B_LONG_STEP, B_LONG_FROM, B_DATE, B_SOURCE, B_N };

const char *price_block_product(const struct price_block *b)
{
	return b && b->product[0] ? b->product : "capacity block";
}

const char *price_block_kind(const struct price_block *b)
{
	return b && b->kind[0] ? b->kind : "capacity-block";
}

/* A whole count in [lo, hi] from a required number cell. */
static int need_whole(struct price_errs *e, const struct price_csv *csv,
		      const struct price_csv_row *row, int col, int lo, int hi, int required,
		      int *out)
{
	double v;

	*out = 0;
	if (price_cell_number(e, csv, row, col, lo, hi, required, &v))
		return -1;
	if (v != floor(v)) {
		price_err(e, row->line, col + 1, "%s: expected a whole number, found '%s'",
			  csv->header.field[col], price_csv_get(row, col));
		return -1;
	}
	*out = (int)v;
	return 0;
}

/* The optional columns, after B_N in col[]. */
enum { B_PRODUCT = B_N, B_PAYMENT, B_KIND };

static const char *const block_cols[B_N] = { "provider", "instance_prefix", "region",
					     "usd_per_hour", "min_nodes", "max_nodes",
					     "min_days", "max_days", "step_days",
					     "long_step_days", "long_from_days", "price_date",
					     "source" };
static const char *const block_opt[] = { "product", "payment", "kind" };

/* Reads one row of blocks.csv into dst (struct price_block). */
static int read_block(struct price_errs *e, const struct price_csv *csv,
		      const struct price_csv_row *row, const int *col, void *dst,
		      const void *ctx)
{
	struct price_block *b = dst;
	long days;
	int bad = 0, priced;

	(void)ctx;
	bad |= price_cell_text(e, csv, row, col[B_PROVIDER], b->provider, sizeof(b->provider), 1);
	bad |= price_cell_text(e, csv, row, col[B_PREFIX], b->instance_prefix,
			       sizeof(b->instance_prefix), 1);
	bad |= price_cell_text(e, csv, row, col[B_REGION], b->region, sizeof(b->region), 1);
	/* An empty rate is a product whose price no source read gives:
	 * its other figures are optional then, and it is never planned
	 * (price_block_find_unpriced). */
	priced = price_csv_get(row, col[B_RATE])[0] != '\0';
	bad |= price_cell_number(e, csv, row, col[B_RATE], 0.0001, PRICE_USD_PER_HOUR_MAX, 0,
				 &b->usd_per_hour);
	bad |= need_whole(e, csv, row, col[B_MIN_NODES], 1, PRICE_MAX_NODES_MAX, priced,
			  &b->min_nodes);
	bad |= need_whole(e, csv, row, col[B_MAX_NODES], 1, PRICE_MAX_NODES_MAX, priced,
			  &b->max_nodes);
	/* Terms of up to ten years: longer is a commitment, not a block. */
	bad |= need_whole(e, csv, row, col[B_MIN_DAYS], 1, 3650, priced, &b->min_days);
	bad |= need_whole(e, csv, row, col[B_MAX_DAYS], 1, 3650, priced, &b->max_days);
	bad |= need_whole(e, csv, row, col[B_STEP], 1, 3650, priced, &b->step_days);
	bad |= need_whole(e, csv, row, col[B_LONG_STEP], 1, 3650, 0, &b->long_step_days);
	bad |= need_whole(e, csv, row, col[B_LONG_FROM], 1, 3650, 0, &b->long_from_days);
	bad |= price_cell_text(e, csv, row, col[B_DATE], b->price_date, sizeof(b->price_date),
			       priced);
	if (!bad && b->price_date[0] && unit_parse_date(b->price_date, &days) != RC_OK) {
		price_err(e, row->line, col[B_DATE] + 1,
			  "price_date: expected a date YYYY-MM-DD, found '%s'", b->price_date);
		bad = 1;
	}
	bad |= price_cell_text(e, csv, row, col[B_SOURCE], b->source, sizeof(b->source), 1);
	if (col[B_PRODUCT] >= 0)
		bad |= price_cell_text(e, csv, row, col[B_PRODUCT], b->product, sizeof(b->product),
				       !priced);
	else if (!priced) {
		price_err(e, row->line, col[B_RATE] + 1,
			  "usd_per_hour: expected a rate, or a product column naming the "
			  "product it leaves unpriced, found neither");
		bad = 1;
	}
	if (col[B_KIND] >= 0 &&
	    !price_cell_text(e, csv, row, col[B_KIND], b->kind, sizeof(b->kind), 0) &&
	    strspn(b->kind, "abcdefghijklmnopqrstuvwxyz-") != strlen(b->kind)) {
		price_err(e, row->line, col[B_KIND] + 1,
			  "kind: expected lower-case letters and '-', found '%s'", b->kind);
		bad = 1;
	}
	b->payment = PRICE_PAYMENT_UPFRONT;
	if (col[B_PAYMENT] >= 0) {
		const char *pay = price_csv_get(row, col[B_PAYMENT]);

		if (strcmp(pay, "monthly") == 0) {
			b->payment = PRICE_PAYMENT_MONTHLY;
		} else if (pay[0] && strcmp(pay, "upfront") != 0) {
			price_err(e, row->line, col[B_PAYMENT] + 1,
				  "payment: expected 'upfront' or 'monthly', found '%s'", pay);
			bad = 1;
		}
	}
	if (bad)
		return -1;
	if (b->min_nodes > b->max_nodes) {
		price_err(e, row->line, col[B_MIN_NODES] + 1,
			  "min_nodes: expected at most max_nodes (%d), found %d", b->max_nodes,
			  b->min_nodes);
		return -1;
	}
	if (b->min_days > b->max_days) {
		price_err(e, row->line, col[B_MIN_DAYS] + 1,
			  "min_days: expected at most max_days (%d), found %d", b->max_days,
			  b->min_days);
		return -1;
	}
	if ((b->long_step_days > 0) != (b->long_from_days > 0)) {
		price_err(e, row->line, col[B_LONG_STEP] + 1,
			  "long_step_days: expected it and long_from_days both or neither, "
			  "found %d and %d", b->long_step_days, b->long_from_days);
		return -1;
	}
	return 0;
}

static int same_block(const void *a_, const void *b_)
{
	const struct price_block *a = a_, *b = b_;

	return gp_streq_nocase(a->provider, b->provider) &&
	       strcmp(a->instance_prefix, b->instance_prefix) == 0 &&
	       strcmp(a->region, b->region) == 0;
}

static void block_key(const void *row, char *buf, size_t size)
{
	const struct price_block *b = row;

	snprintf(buf, size, "%s %s %s", b->provider, b->instance_prefix, b->region);
}

/* blocks.csv as price_csv_table_load reads it. */
static const struct price_csv_table block_table = {
	.cols = block_cols, .n_cols = B_N,
	.opt = block_opt, .n_opt = GP_ARRAY_LEN(block_opt),
	.row_size = sizeof(struct price_block), .read_row = read_block,
	.same_key = same_block, .key_str = block_key,
	.key_names = "(provider, instance_prefix, region)", .key_col = B_PREFIX,
};

enum rc price_blocks_load(const char *path, struct price_blocks *out)
{
	void *rows = NULL;
	enum rc rc;

	memset(out, 0, sizeof(*out));
	rc = price_csv_table_load(path, &block_table, NULL, &rows, &out->n);
	out->rows = rows;
	return rc;
}

void price_blocks_release(struct price_blocks *t)
{
	if (!t)
		return;
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const struct price_block *price_block_match(const struct price_blocks *t,
					    const struct price_offering *o)
{
	const struct price_block *best = NULL;

	if (!t || o->owned)
		return NULL;
	for (size_t i = 0; i < t->n; i++) {
		const struct price_block *b = &t->rows[i];
		size_t n = strlen(b->instance_prefix);

		if (!gp_streq_nocase(b->provider, o->provider) || strcmp(b->region, o->region) != 0 ||
		    strncmp(o->instance_type, b->instance_prefix, n) != 0)
			continue;
		if (!best || n > strlen(best->instance_prefix))
			best = b;
	}
	return best;
}

const struct price_block *price_block_find(const struct price_blocks *t,
					   const struct price_offering *o)
{
	const struct price_block *b = price_block_match(t, o);

	return b && b->usd_per_hour > 0 ? b : NULL;
}

const struct price_block *price_block_find_unpriced(const struct price_blocks *t,
						    const struct price_offering *o)
{
	const struct price_block *b = price_block_match(t, o);

	return b && !(b->usd_per_hour > 0) ? b : NULL;
}

double price_block_billed_s(const struct price_block *b, double run_s)
{
	/* A hair over a whole day is still that day, as plan_billed_s. */
	double days = ceil(run_s / 86400.0 - 1e-9);

	if (days < b->min_days)
		days = b->min_days;
	days = ceil(days / b->step_days) * b->step_days;
	if (b->long_step_days > 0 && days > b->long_from_days)
		days = ceil(days / b->long_step_days) * b->long_step_days;
	if (days > b->max_days)
		return -1;
	return days * 86400.0;
}

void price_block_node_limit(const struct price_offering *o, const struct price_block *b,
			    struct price_node_limit *out)
{
	memset(out, 0, sizeof(*out));
	out->nodes = 1;
	if (!(o->inter_node_bytes_per_s > 0)) {
		out->why = PRICE_LIMIT_NETWORK;
	} else {
		out->nodes = b->max_nodes;
		out->why = PRICE_LIMIT_BLOCK;
	}
	price_limit_apply_quota(o, out);
}
