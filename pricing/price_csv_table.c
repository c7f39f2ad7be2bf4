/*
 * price_csv_table.c - one table read whole from a CSV file into an array
 * of rows: the file read, its columns found by header name, each row read
 * by the table's own reader, a row repeating an earlier row's key refused,
 * every problem reported as "path:line:col: what" (price_err, at most
 * PRICE_MAX_ERRORS lines a file), the file released.  blocks.csv's,
 * capacity.csv's, commitments.csv's and published.csv's loaders are
 * tables of it (struct price_csv_table).
 *
 * It does not read a cell: what a cell may hold is its table's reader's
 * (price_cost.c's cell readers serve the cost tables).
 *
 * It calls price_csv.c and common/.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_internal.h"

void price_err(struct price_errs *e, int line, int col, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (e->n++ >= PRICE_MAX_ERRORS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gp_error("%s:%d:%d: %s", e->path, line, col, msg);
}

void price_errs_finish(const struct price_errs *e)
{
	if (e->n > PRICE_MAX_ERRORS)
		gp_error("%s: %d more errors not shown", e->path, e->n - PRICE_MAX_ERRORS);
}

int price_cell_cols(struct price_errs *e, const struct price_csv *csv,
		    const char *const *need, int *col, size_t n)
{
	int missing = 0;

	if (csv->header.n == 0) {
		price_err(e, 1, 1, "expected a header row, found an empty file");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		col[i] = price_csv_col(csv, need[i]);
		if (col[i] < 0) {
			price_err(e, csv->header.line, csv->header.n + 1,
				  "expected a column named '%s', found none", need[i]);
			missing++;
		}
	}
	return missing;
}

/* A closed table's header: the first missing column, or a column that is
 * none of t's, refused in one line.  Returns 0, or -1 after it. */
static int closed_cols(struct price_errs *e, const struct price_csv *csv,
		       const struct price_csv_table *t, int *col)
{
	const char *names[PRICE_CSV_MAX_FIELDS];
	size_t n = t->n_cols + t->n_opt, len = 0;
	char list[1024], why[160];
	int c;

	if (csv->header.n == 0) {
		price_err(e, 1, 1, "expected a header row, found an empty file");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		names[i] = i < t->n_cols ? t->cols[i] : t->opt[i - t->n_cols];
		col[i] = price_csv_col(csv, names[i]);
		if (col[i] < 0 && i < t->n_cols) {
			/* the header's line alone: the column is nowhere in it */
			gp_error("%s:%d: expected a column '%s', found none", e->path,
				 csv->header.line, names[i]);
			e->n++;
			return -1;
		}
	}
	c = price_csv_unknown_col(csv, names, n, 0, why, sizeof(why));
	if (c < 0)
		return 0;
	list[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					i == 0 ? "" : i + 1 == n ? " and " : ", ", names[i]);
	price_err(e, csv->header.line, c + 1, "expected the columns %s, %s", list, why);
	return -1;
}

/* An open table's header: every missing column of t->cols reported, the
 * optional ones looked up.  Returns 0, or -1 after the reports. */
static int open_cols(struct price_errs *e, const struct price_csv *csv,
		     const struct price_csv_table *t, int *col)
{
	if (price_cell_cols(e, csv, t->cols, col, t->n_cols))
		return -1;
	for (size_t i = 0; i < t->n_opt; i++)
		col[t->n_cols + i] = price_csv_col(csv, t->opt[i]);
	return 0;
}

/* Whether dst, read from row, repeats the key of one of rows[0..k):
 * 1 after saying so, else 0. */
static int repeats_key(struct price_errs *e, const struct price_csv_table *t,
		       const struct price_csv_row *row, const int *col, const char *rows,
		       size_t k, const void *dst)
{
	char key[512];

	if (!t->same_key)
		return 0;
	for (size_t j = 0; j < k; j++)
		if (t->same_key(rows + j * t->row_size, dst)) {
			t->key_str(dst, key, sizeof(key));
			price_err(e, row->line, col[t->key_col] + 1,
				  "expected one row per %s, found %s again", t->key_names, key);
			return 1;
		}
	return 0;
}

enum rc price_csv_table_load(const char *path, const struct price_csv_table *t,
			     const void *ctx, void **rows, size_t *n)
{
	struct price_errs e = { path, 0 };
	struct price_csv csv;
	int col[PRICE_CSV_MAX_FIELDS];
	char *out;
	size_t k = 0;
	enum rc rc;

	assert(t->n_cols + t->n_opt <= GP_ARRAY_LEN(col) && t->row_size > 0);
	rc = price_csv_load(path, &csv);
	if (rc != RC_OK)
		return rc;
	if (t->closed ? closed_cols(&e, &csv, t, col) : open_cols(&e, &csv, t, col)) {
		price_csv_release(&csv);
		return RC_INPUT;
	}
	out = xcalloc(csv.n_rows ? csv.n_rows : 1, t->row_size);
	for (size_t i = 0; i < csv.n_rows && !(t->first_only && e.n); i++) {
		const struct price_csv_row *row = &csv.rows[i];
		char *dst = out + k * t->row_size;
		int reported = e.n;

		memset(dst, 0, t->row_size);
		if (t->read_row(&e, &csv, row, col, dst, ctx)) {
			/* a row refused unsaid would shrink the table unseen */
			assert(e.n > reported);
			continue;
		}
		if (!repeats_key(&e, t, row, col, out, k, dst))
			k++;
	}
	price_errs_finish(&e);
	price_csv_release(&csv);
	if (e.n) {
		free(out);
		return RC_INPUT;
	}
	*rows = out;
	*n = k;
	return RC_OK;
}
