/*
 * plan_published.c - the fastest published training runs of a model on a
 * GPU (data/published.csv), so that an answer can say where its predicted
 * speed stands against what any run has shown.  It reads the table and
 * finds a row; the figures and their sources are the file's
 * (data/SOURCES.md dates them).  It calls down only: pricing's CSV reader
 * and GPU names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_published.h"
#include "price_csv.h"

enum { C_MODEL, C_GPU, C_TOKENS, C_RUN, C_SOURCE, C_N };

static const char *const cols[C_N] = { "model", "gpu", "tokens_per_s_per_gpu", "run", "source" };

struct reader {
	const struct price_csv *csv;
	const struct price_csv_row *row;
	const int *col;
};

/* Copies column c of the row into dst[size]: a name (name 1) or printable
 * text, never empty.  Returns 0, or -1 after one message. */
static int cell_text(const struct reader *r, int c, int name, char *dst, size_t size)
{
	const char *s = price_csv_get(r->row, r->col[c]);
	size_t len = strlen(s), bad;
	char what[48];

	if (!*s) {
		gp_error("%s:%d:%d: %s: expected a value, found an empty cell", r->csv->path,
			 r->row->line, r->col[c] + 1, cols[c]);
		return -1;
	}
	if (len >= size) {
		gp_error("%s:%d:%d: %s: expected at most %zu characters, found %zu", r->csv->path,
			 r->row->line, r->col[c] + 1, cols[c], size - 1, len);
		return -1;
	}
	if (name ? !gp_name_is_safe(s, len, &bad) : !gp_text_is_printable(s, len, &bad)) {
		gp_error("%s:%d:%d: %s: expected %s, found %s", r->csv->path, r->row->line,
			 r->col[c] + 1, cols[c], name ? "a name (letters, digits and '" GP_NAME_PUNCT "')"
						      : "printable text",
			 gp_char_describe(what, sizeof(what), s, len, bad));
		return -1;
	}
	memcpy(dst, s, len + 1);
	return 0;
}

/* Reads one data row into p.  Returns 0, or -1 after one message. */
static int read_row(const struct reader *r, const struct price_catalog *cat,
		    struct plan_published *p)
{
	const char *s = price_csv_get(r->row, r->col[C_TOKENS]);
	const struct price_gpu *g;

	if (cell_text(r, C_MODEL, 1, p->model, sizeof(p->model)) ||
	    cell_text(r, C_GPU, 1, p->gpu, sizeof(p->gpu)))
		return -1;
	g = cat ? price_gpu_find(cat, p->gpu) : NULL;
	if (cat && !g) {
		gp_error("%s:%d:%d: gpu: expected a GPU of gpus.csv, found '%s'", r->csv->path,
			 r->row->line, r->col[C_GPU] + 1, p->gpu);
		return -1;
	}
	if (g)
		gp_strlcpy(p->gpu, g->name, sizeof(p->gpu));
	/* a speed of 1e9 tokens/s on one GPU is far past any run */
	if (unit_parse_double(s, &p->tokens_per_s_per_gpu) != RC_OK ||
	    !(p->tokens_per_s_per_gpu > 0) || p->tokens_per_s_per_gpu > 1e9) {
		char found[64];

		gp_error("%s:%d:%d: tokens_per_s_per_gpu: expected a number above 0 and at most "
			 "1e9, found '%s'", r->csv->path, r->row->line, r->col[C_TOKENS] + 1,
			 gp_term_escape(found, sizeof(found), s));
		return -1;
	}
	return cell_text(r, C_RUN, 0, p->run, sizeof(p->run)) ||
	       cell_text(r, C_SOURCE, 0, p->source, sizeof(p->source)) ? -1 : 0;
}

enum rc plan_published_load(const char *path, const struct price_catalog *cat,
			    struct plan_published_table *out)
{
	struct price_csv csv;
	struct plan_published *rows = NULL;
	int col[C_N], c;
	char why[160];
	enum rc rc;

	rc = price_csv_load(path, &csv);
	if (rc != RC_OK)
		return rc;
	rc = RC_INPUT;
	for (int i = 0; i < C_N; i++)
		if ((col[i] = price_csv_col(&csv, cols[i])) < 0) {
			gp_error("%s:%d: expected a column '%s', found none", path, csv.header.line,
				 cols[i]);
			goto fail;
		}
	c = price_csv_unknown_col(&csv, cols, C_N, 0, why, sizeof(why));
	if (c >= 0) {
		gp_error("%s:%d:%d: expected the columns %s, %s, %s, %s and %s, %s", path,
			 csv.header.line, c + 1, cols[0], cols[1], cols[2], cols[3], cols[4], why);
		goto fail;
	}
	rows = xcalloc(csv.n_rows ? csv.n_rows : 1, sizeof(*rows));
	for (size_t i = 0; i < csv.n_rows; i++) {
		struct reader r = { &csv, &csv.rows[i], col };

		if (read_row(&r, cat, &rows[i]))
			goto fail;
	}
	out->rows = rows;
	out->n = csv.n_rows;
	price_csv_release(&csv);
	return RC_OK;
fail:
	free(rows);
	price_csv_release(&csv);
	return rc;
}

void plan_published_release(struct plan_published_table *t)
{
	if (!t)
		return;
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const struct plan_published *plan_published_best(const struct plan_published_table *t,
						 const char *model, const char *gpu)
{
	const struct plan_published *best = NULL;

	for (size_t i = 0; t && i < t->n; i++) {
		const struct plan_published *p = &t->rows[i];

		if (!strcmp(p->model, model) && !strcmp(p->gpu, gpu) &&
		    (!best || p->tokens_per_s_per_gpu > best->tokens_per_s_per_gpu))
			best = p;
	}
	return best;
}
