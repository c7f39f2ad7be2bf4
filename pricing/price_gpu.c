/*
 * price_gpu.c - the GPU catalog (gpus.csv): load and validate it, and say
 * whether a GPU has the figures planning needs.  Finding one by the name a
 * user typed is price_find.c's.
 *
 * Figures are converted to SI at load: GB -> bytes (1e9), TB/s and
 * TFLOP/s -> bytes/s and FLOP/s, bidirectional link GB/s -> one-direction
 * bytes/s.  It does not read prices; see price_table.c.
 *
 * It calls price_csv.c, price_csv_table.c (its error lines), price_find.c
 * and common/.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_internal.h"

double price_bidir_gb_to_bytes_per_s(double gb_per_s_bidir)
{
	return gb_per_s_bidir / 2 * 1e9;
}

double price_gbps_to_bytes_per_s(double gbps)
{
	return gbps * 1e9 / 8;
}

int price_gpu_eligible(const struct price_gpu *g, char *why, size_t size)
{
	const char *missing = NULL;

	if (!(g->bf16_flops_per_s > 0))
		missing = "bf16_dense_tflops";
	else if (!(g->memory_bytes > 0))
		missing = "memory_gb";
	else if (!(g->hbm_bytes_per_s > 0))
		missing = "hbm_tb_per_s";
	if (!missing)
		return 1;
	if (why && size)
		snprintf(why, size, "%s: gpus.csv has no %s figure, so it cannot be planned for",
			 g->name, missing);
	return 0;
}

/* ---- loading gpus.csv ---------------------------------------------------- */

struct gpu_cols {
	int name, aliases, memory, hbm, bf16, fp8, mxfp8, nvfp4, tf32, fp32, link, link_bw, nvlink, p2p,
	    domain, tdp;
};

/* Reads an optional non-negative number; "" is 0.  Returns 0 or -1. */
static int cell_number(struct price_errs *e, const struct price_csv *csv,
		       const struct price_csv_row *row, int col, double *out)
{
	const char *s = price_csv_get(row, col);
	double v;

	*out = 0;
	if (col < 0 || !*s)
		return 0;
	if (unit_parse_double(s, &v) != RC_OK || v < 0) {
		price_err(e, row->line, col + 1, "%s: expected a non-negative number or an empty cell, found '%s'",
			  csv->header.field[col], s);
		return -1;
	}
	*out = v;
	return 0;
}

int price_cell_nvlink_domain(struct price_errs *e, const struct price_csv_row *row, int col,
			     int *out)
{
	const char *s = price_csv_get(row, col);
	char esc[96];
	double v;

	*out = 0;
	if (col < 0 || !*s)
		return 0;
	if (unit_parse_double(s, &v) != RC_OK || v < 0 || v > PRICE_MAX_NVLINK_DOMAIN ||
	    v != floor(v)) {
		price_err(e, row->line, col + 1,
			  "nvlink_domain: expected a whole number of GPUs from 0 to %d or an empty cell, found '%s'",
			  PRICE_MAX_NVLINK_DOMAIN, gp_term_escape(esc, sizeof(esc), s));
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int cell_flag(struct price_errs *e, const struct price_csv *csv,
		     const struct price_csv_row *row, int col, int *out)
{
	const char *s = price_csv_get(row, col);

	*out = 0;
	if (col < 0 || !*s || strcmp(s, "0") == 0 || gp_streq_nocase(s, "no"))
		return 0;
	if (strcmp(s, "1") == 0 || gp_streq_nocase(s, "yes")) {
		*out = 1;
		return 0;
	}
	price_err(e, row->line, col + 1, "%s: expected 1, 0, yes, no or an empty cell, found '%s'",
		  csv->header.field[col], s);
	return -1;
}

static int cell_text(struct price_errs *e, const struct price_csv *csv,
		     const struct price_csv_row *row, int col, char *dst, size_t size)
{
	const char *s = price_csv_get(row, col);

	if (gp_strlcpy(dst, s, size) != 0) {
		price_err(e, row->line, col + 1, "%s: expected at most %zu characters, found %zu",
			  csv->header.field[col], size - 1, strlen(s));
		return -1;
	}
	return 0;
}

struct dup_ctx {
	const struct price_gpu *gpus;
	size_t n;          /* GPUs before the one being checked */
	const char *clash; /* set to the GPU name an alias collides with */
};

static int alias_taken(const char *s, size_t len, void *ctx)
{
	struct dup_ctx *d = ctx;
	char name[PRICE_NAME_MAX];
	const struct price_gpu *g;

	snprintf(name, sizeof(name), "%.*s", (int)len, s);
	g = price_gpu_lookup(d->gpus, d->n, name, NULL);
	if (g) {
		d->clash = g->name;
		return 1;
	}
	return 0;
}

static int gpu_row(struct price_errs *e, const struct price_csv *csv, const struct gpu_cols *c,
		   const struct price_csv_row *row, struct price_gpu *g)
{
	int bad = 0;
	double v;

	memset(g, 0, sizeof(*g));
	bad |= cell_text(e, csv, row, c->name, g->name, sizeof(g->name));
	if (!bad && !g->name[0]) {
		price_err(e, row->line, c->name + 1, "name: expected a GPU name, found an empty cell");
		bad = 1;
	}
	if (c->aliases >= 0)
		bad |= cell_text(e, csv, row, c->aliases, g->aliases, sizeof(g->aliases));
	bad |= cell_number(e, csv, row, c->memory, &v);
	g->memory_bytes = v * 1e9;
	bad |= cell_number(e, csv, row, c->hbm, &v);
	g->hbm_bytes_per_s = v * 1e12;
	bad |= cell_number(e, csv, row, c->bf16, &v);
	g->bf16_flops_per_s = v * 1e12;
	bad |= cell_number(e, csv, row, c->fp8, &v);
	g->fp8_flops_per_s = v * 1e12;
	bad |= cell_number(e, csv, row, c->mxfp8, &v);
	g->mxfp8_flops_per_s = v * 1e12;
	bad |= cell_number(e, csv, row, c->nvfp4, &v);
	g->nvfp4_flops_per_s = v * 1e12;
	bad |= cell_number(e, csv, row, c->tf32, &v);
	g->tf32_flops_per_s = v * 1e12;
	bad |= cell_number(e, csv, row, c->fp32, &v);
	g->fp32_flops_per_s = v * 1e12;
	if (c->link >= 0)
		bad |= cell_text(e, csv, row, c->link, g->intra_link, sizeof(g->intra_link));
	bad |= cell_number(e, csv, row, c->link_bw, &v);
	g->intra_bytes_per_s = price_bidir_gb_to_bytes_per_s(v);
	bad |= cell_flag(e, csv, row, c->nvlink, &g->nvlink);
	bad |= cell_flag(e, csv, row, c->p2p, &g->p2p);
	bad |= price_cell_nvlink_domain(e, row, c->domain, &g->nvlink_domain);
	bad |= cell_number(e, csv, row, c->tdp, &g->tdp_w);
	return bad ? -1 : 0;
}

static int col_any(const struct price_csv *csv, const char *a, const char *b)
{
	int c = price_csv_col(csv, a);

	return c >= 0 || !b ? c : price_csv_col(csv, b);
}

enum rc price_gpus_load(const char *path, struct price_gpu **out, size_t *n)
{
	struct price_csv csv;
	struct price_errs e = { path, 0 };
	struct gpu_cols c;
	struct price_gpu *gpus;
	size_t k = 0;
	enum rc rc;

	*out = NULL;
	*n = 0;
	rc = price_csv_load(path, &csv);
	if (rc != RC_OK)
		return rc;
	c.name = col_any(&csv, "name", "gpu");
	c.aliases = price_csv_col(&csv, "aliases");
	c.memory = price_csv_col(&csv, "memory_gb");
	c.hbm = col_any(&csv, "hbm_tb_per_s", "mem_bw_tbs");
	c.bf16 = price_csv_col(&csv, "bf16_dense_tflops");
	c.fp8 = price_csv_col(&csv, "fp8_dense_tflops");
	c.mxfp8 = price_csv_col(&csv, "mxfp8_dense_tflops");
	c.nvfp4 = price_csv_col(&csv, "nvfp4_dense_tflops");
	c.domain = price_csv_col(&csv, "nvlink_domain");
	c.tf32 = col_any(&csv, "tf32_dense_tflops", "tf32_tflops");
	c.fp32 = price_csv_col(&csv, "fp32_tflops");
	c.link = price_csv_col(&csv, "intra_node_link");
	c.link_bw = col_any(&csv, "intra_node_gb_per_s_bidir", "intra_node_gbs_per_gpu_bidir");
	c.nvlink = price_csv_col(&csv, "nvlink");
	c.p2p = price_csv_col(&csv, "p2p");
	c.tdp = price_csv_col(&csv, "tdp_w");
	if (csv.header.n == 0) {
		price_err(&e, 1, 1, "expected a header row naming the GPU columns, found an empty file");
	} else {
		static const char *const need[] = { "name", "memory_gb", "bf16_dense_tflops" };
		const int have[] = { c.name, c.memory, c.bf16 };

		for (size_t i = 0; i < GP_ARRAY_LEN(need); i++)
			if (have[i] < 0)
				price_err(&e, csv.header.line, csv.header.n + 1,
					  "expected a column named '%s', found none", need[i]);
	}
	if (e.n) {
		price_csv_release(&csv);
		return RC_INPUT;
	}
	gpus = xcalloc(csv.n_rows ? csv.n_rows : 1, sizeof(*gpus));
	for (size_t i = 0; i < csv.n_rows; i++) {
		struct dup_ctx d = { gpus, k, NULL };

		if (gpu_row(&e, &csv, &c, &csv.rows[i], &gpus[k]) != 0)
			continue;
		if (price_gpu_lookup(gpus, k, gpus[k].name, NULL) ||
		    price_gpu_each_alias(&gpus[k], alias_taken, &d)) {
			price_err(&e, csv.rows[i].line, c.name + 1,
				  "expected GPU names and aliases to be unique, found '%s' again (also %s)",
				  gpus[k].name, d.clash ? d.clash : "an earlier row");
			continue;
		}
		k++;
	}
	price_errs_finish(&e);
	price_csv_release(&csv);
	if (e.n) {
		free(gpus);
		return RC_INPUT;
	}
	*out = gpus;
	*n = k;
	return RC_OK;
}

int price_gpu_has_bf16(const struct price_gpu *g)
{
	return strncmp(g->name, "V100", 4) != 0;
}

int price_gpu_is_amd(const struct price_gpu *g)
{
	return strncmp(g->name, "MI", 2) == 0;
}
