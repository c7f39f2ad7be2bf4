/*
 * plan_published.c - the fastest published training runs of a model on a
 * GPU (data/published.csv), so that an answer can say where its predicted
 * speed stands against what any run has shown.  It reads the table and
 * finds a row; the figures and their sources are the file's
 * (data/SOURCES.md dates them).  It calls down only: pricing's CSV table
 * loader (price_csv_table_load) and GPU names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_published.h"
#include "price_csv.h"

enum { C_MODEL, C_GPU, C_TOKENS, C_RUN, C_SOURCE, C_N };

static const char *const cols[C_N] = { "model", "gpu", "tokens_per_s_per_gpu", "run", "source" };

/* Copies column c of row into dst[size]: a name (name 1) or printable
 * text, never empty.  Returns 0, or -1 after one message. */
static int cell_text(struct price_errs *e, const struct price_csv_row *row, const int *col,
		     int c, int name, char *dst, size_t size)
{
	const char *s = price_csv_get(row, col[c]);
	size_t len = strlen(s), bad;
	char what[48];

	if (!*s) {
		price_err(e, row->line, col[c] + 1, "%s: expected a value, found an empty cell",
			  cols[c]);
		return -1;
	}
	if (len >= size) {
		price_err(e, row->line, col[c] + 1, "%s: expected at most %zu characters, found %zu",
			  cols[c], size - 1, len);
		return -1;
	}
	if (name ? !gp_name_is_safe(s, len, &bad) : !gp_text_is_printable(s, len, &bad)) {
		price_err(e, row->line, col[c] + 1, "%s: expected %s, found %s", cols[c],
			  name ? "a name (letters, digits and '" GP_NAME_PUNCT "')" : "printable text",
			  gp_char_describe(what, sizeof(what), s, len, bad));
		return -1;
	}
	memcpy(dst, s, len + 1);
	return 0;
}

/* Reads one data row into dst (struct plan_published); ctx is the
 * catalog that names the GPUs, or NULL.  Returns 0, or -1 after one
 * message. */
static int read_row(struct price_errs *e, const struct price_csv *csv,
		    const struct price_csv_row *row, const int *col, void *dst, const void *ctx)
{
	const struct price_catalog *cat = ctx;
	const char *s = price_csv_get(row, col[C_TOKENS]);
	struct plan_published *p = dst;
	const struct price_gpu *g;

	(void)csv;
	if (cell_text(e, row, col, C_MODEL, 1, p->model, sizeof(p->model)) ||
	    cell_text(e, row, col, C_GPU, 1, p->gpu, sizeof(p->gpu)))
		return -1;
	g = cat ? price_gpu_find(cat, p->gpu) : NULL;
	if (cat && !g) {
		price_err(e, row->line, col[C_GPU] + 1, "gpu: expected a GPU of gpus.csv, found '%s'",
			  p->gpu);
		return -1;
	}
	if (g)
		gp_strlcpy(p->gpu, g->name, sizeof(p->gpu));
	/* a speed of 1e9 tokens/s on one GPU is far past any run */
	if (unit_parse_double(s, &p->tokens_per_s_per_gpu) != RC_OK ||
	    !(p->tokens_per_s_per_gpu > 0) || p->tokens_per_s_per_gpu > 1e9) {
		char found[64];

		price_err(e, row->line, col[C_TOKENS] + 1, "tokens_per_s_per_gpu: expected a number "
			  "above 0 and at most 1e9, found '%s'", gp_term_escape(found, sizeof(found), s));
		return -1;
	}
	return cell_text(e, row, col, C_RUN, 0, p->run, sizeof(p->run)) ||
	       cell_text(e, row, col, C_SOURCE, 0, p->source, sizeof(p->source)) ? -1 : 0;
}

enum rc plan_published_load(const char *path, const struct price_catalog *cat,
			    struct plan_published_table *out)
{
	/* every column is this table's, and the first bad row is the one
	 * line said: published.csv is short and written by hand */
	static const struct price_csv_table table = {
		.cols = cols, .n_cols = C_N, .closed = 1, .first_only = 1,
		.row_size = sizeof(struct plan_published), .read_row = read_row,
	};
	void *rows;
	size_t n;
	enum rc rc;

	rc = price_csv_table_load(path, &table, cat, &rows, &n);
	if (rc == RC_OK) {
		out->rows = rows;
		out->n = n;
	}
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
