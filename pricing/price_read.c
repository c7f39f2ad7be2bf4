/*
 * price_read.c - read and validate the rows of a price file (gpuplan's
 * own columns, or a SkyPilot catalog's) and of a quota file, and the keys
 * rows are merged and checked for repeats by.  Every bad cell is reported
 * as one "file:line:col: column: expected X, found Y" line.
 *
 * It reads rows an earlier price_csv_load() or price_csv_parse() made; it
 * does not open the tables (price_table.c, price_quota.c), merge them
 * (price_update.c, price_quota_update.c) or store them (price_store.c).
 * It calls price_csv.c, price_csv_table.c (its error lines), price_gpu.c,
 * price_find.c and common/.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_internal.h"

int price_offer_key_cmp(const struct price_offering *a, const struct price_offering *b)
{
	int c = strcmp(a->provider, b->provider);

	if (!c)
		c = strcmp(a->instance_type, b->instance_type);
	if (!c)
		c = strcmp(a->region, b->region);
	return c;
}

/* strcmp, ASCII case-insensitive. */
static int cmp_nocase(const char *a, const char *b)
{
	for (;; a++, b++) {
		int x = tolower((unsigned char)*a), y = tolower((unsigned char)*b);

		if (x != y || !x)
			return (x > y) - (x < y);
	}
}

int price_quota_key_cmp(const struct price_quota *a, const struct price_quota *b)
{
	int c = cmp_nocase(a->provider, b->provider);

	if (!c)
		c = cmp_nocase(a->region, b->region);
	if (!c)
		c = cmp_nocase(a->gpu, b->gpu);
	if (!c)
		c = cmp_nocase(a->instance_type, b->instance_type);
	return c;
}
void price_rows_release(struct price_rows *r)
{
	if (!r)
		return;
	free(r->rows);
	memset(r, 0, sizeof(*r));
}

/* ---- cell readers -------------------------------------------------------- */

struct reader {
	struct price_errs e;
	const struct price_csv *csv;
	const struct price_csv_row *row;
	enum price_read_mode mode;
};

static const char *colname(const struct reader *r, int col)
{
	return r->csv->header.field[col];
}

/* A text cell into dst[size]: printable UTF-8 (gp_text_is_printable),
 * and with name a name (gp_name_is_safe): provider, instance type,
 * region.  Returns 0, or -1 after one message. */
static int rd_text(struct reader *r, int col, int required, int name, char *dst, size_t size)
{
	const char *s = price_csv_get(r->row, col);
	size_t len = strlen(s), at;
	char what[48];

	if (required && !*s) {
		price_err(&r->e, r->row->line, col + 1, "%s: expected a value, found an empty cell",
			  colname(r, col));
		return -1;
	}
	if (name ? !gp_name_is_safe(s, len, &at) : !gp_text_is_printable(s, len, &at)) {
		price_err(&r->e, r->row->line, col + 1, "%s: expected %s, found %s at byte %zu",
			  colname(r, col), name ? "a name of letters, digits and '" GP_NAME_PUNCT "'"
			  : "printable text", gp_char_describe(what, sizeof(what), s, len, at), at + 1);
		return -1;
	}
	if (gp_strlcpy(dst, s, size) != 0) {
		price_err(&r->e, r->row->line, col + 1, "%s: expected at most %zu characters, found %zu",
			  colname(r, col), size - 1, len);
		return -1;
	}
	return 0;
}

/* The catalog_version cell into dst[size], as rd_text reads printable
 * text.  A table gpuplan stored (PRICE_READ_TABLE) may hold a version
 * an older gpuplan took raw from an update file's name (a tab, ESC,
 * U+202E): that one is read escaped, with a warning, so the table stays
 * readable and the next update stores it escaped. */
static int rd_version(struct reader *r, int col, char *dst, size_t size)
{
	const char *s = price_csv_get(r->row, col);
	size_t at;

	if (r->mode != PRICE_READ_TABLE || gp_text_is_printable(s, strlen(s), &at))
		return rd_text(r, col, 0, 0, dst, size);
	gp_term_escape(dst, size, s);
	gp_warn("%s:%d:%d: %s: read as '%s' (it held a character that is not printable; "
		"the next update stores it so)", r->e.path, r->row->line, col + 1, colname(r, col),
		dst);
	return 0;
}

/* A price in USD per hour: empty (not offered, -1) or a number > 0 and
 * at most PRICE_USD_PER_HOUR_MAX.  With zero_empty a 0 reads as not
 * offered (SkyPilot writes 0.00 for "none"). */
static int rd_price(struct reader *r, int col, int zero_empty, double *out)
{
	const char *s = price_csv_get(r->row, col);
	char e[96];
	double v;

	*out = -1;
	if (col < 0 || !*s)
		return 0;
	if (unit_parse_double(s, &v) != RC_OK) {
		price_err(&r->e, r->row->line, col + 1, "%s: expected a price in USD per hour, found '%s'",
			  colname(r, col), gp_term_escape(e, sizeof(e), s));
		return -1;
	}
	if (v < 0 || (v == 0 && !zero_empty) || v > PRICE_USD_PER_HOUR_MAX) {
		price_err(&r->e, r->row->line, col + 1,
			  "%s: expected a price > 0 and at most %g (an empty cell when not offered), found '%s'",
			  colname(r, col), PRICE_USD_PER_HOUR_MAX, s);
		return -1;
	}
	*out = v > 0 ? v : -1;
	return 0;
}

/* A number from 0 to max, or an empty cell (0). */
static int rd_nonneg(struct reader *r, int col, double max, double *out)
{
	const char *s = price_csv_get(r->row, col);
	char e[96];
	double v;

	*out = 0;
	if (col < 0 || !*s)
		return 0;
	if (unit_parse_double(s, &v) != RC_OK || v < 0 || v > max) {
		price_err(&r->e, r->row->line, col + 1,
			  "%s: expected a number from 0 to %g or an empty cell, found '%s'",
			  colname(r, col), max, gp_term_escape(e, sizeof(e), s));
		return -1;
	}
	*out = v;
	return 0;
}

/* A date cell: empty (not stated) or "YYYY-MM-DD", into dst[PRICE_DATE_MAX]. */
static int rd_date(struct reader *r, int col, char *dst)
{
	const char *s = price_csv_get(r->row, col);
	char e[96];
	long days;

	dst[0] = '\0';
	if (col < 0 || !*s)
		return 0;
	if (unit_parse_date(s, &days) != RC_OK) {
		price_err(&r->e, r->row->line, col + 1,
			  "%s: expected a date YYYY-MM-DD or an empty cell, found '%s'",
			  colname(r, col), gp_term_escape(e, sizeof(e), s));
		return -1;
	}
	/* A price is quoted today or earlier; a day ahead allows for time
	 * zones.  An update refuses a later date; a stored table stays
	 * readable, its row read as dated nowhere (age unknown), with a
	 * warning: a clock set back must not make a price look fresh. */
	{
		long today;
		char t[16];

		if (unit_today(&today) == RC_OK && days > today + UNIT_DATE_AHEAD_DAYS_MAX) {
			unit_fmt_date(t, sizeof(t), today + UNIT_DATE_AHEAD_DAYS_MAX);
			if (r->mode == PRICE_READ_UPDATE) {
				price_err(&r->e, r->row->line, col + 1,
					  "%s: expected a date no later than %s (a price is quoted "
					  "today or before), found '%s'", colname(r, col), t, s);
				return -1;
			}
			gp_warn("%s:%d:%d: %s: '%s' is later than %s: read as no date stated "
				"(its age unknown)", r->e.path, r->row->line, col + 1, colname(r, col),
				s, t);
			return 0;
		}
	}
	gp_strlcpy(dst, s, PRICE_DATE_MAX);
	return 0;
}

static int rd_int(struct reader *r, int col, int min, int max, int allow_empty, int *out)
{
	const char *s = price_csv_get(r->row, col);
	int v;

	*out = 0;
	if (allow_empty && !*s)
		return 0;
	if (unit_parse_int(s, &v) != RC_OK || v < min || v > max) {
		char e[96];

		price_err(&r->e, r->row->line, col + 1, "%s: expected an integer from %d to %d, found '%s'",
			  colname(r, col), min, max, *s ? gp_term_escape(e, sizeof(e), s) : "an empty cell");
		return -1;
	}
	*out = v;
	return 0;
}

/* A name cell of a quota row (provider, region, instance type): a name
 * as rd_text reads one, or "*" for any. */
static int rd_name(struct reader *r, int col, int required, char *dst, size_t size)
{
	if (strcmp(price_csv_get(r->row, col), "*") == 0)
		return gp_strlcpy(dst, "*", size);
	return rd_text(r, col, required, 1, dst, size);
}

/* A GPU cell: a name or alias of gpus[0..n_gpus), whose canonical name
 * goes to dst[PRICE_NAME_MAX]; *by_alias (may be NULL) says whether it
 * was an alias.  A cell that is no name is reported as rd_text reports
 * it; an unknown name with the nearest one. */
static int rd_gpu(struct reader *r, int col, const struct price_gpu *gpus, size_t n_gpus,
		  char *dst, int *by_alias)
{
	const char *gname = price_csv_get(r->row, col);
	const struct price_gpu *g;
	char hint[PRICE_NAME_MAX];

	if (!gp_name_is_safe(gname, strlen(gname), NULL))
		return rd_text(r, col, 1, 1, dst, PRICE_NAME_MAX);
	g = price_gpu_lookup(gpus, n_gpus, gname, by_alias);
	if (g) {
		gp_strlcpy(dst, g->name, PRICE_NAME_MAX);
		return 0;
	}
	if (!*gname)
		price_err(&r->e, r->row->line, col + 1,
			  "gpu: expected a GPU name from gpus.csv, found an empty cell");
	else if (price_gpu_suggest(gpus, n_gpus, gname, hint, sizeof(hint)) == 0)
		price_err(&r->e, r->row->line, col + 1,
			  "gpu: expected a GPU name or alias from gpus.csv, found '%s' (did you mean '%s'?)",
			  gname, hint);
	else
		price_err(&r->e, r->row->line, col + 1,
			  "gpu: expected a GPU name or alias from gpus.csv, found '%s'", gname);
	return -1;
}

/* 0 when the row has as many cells as the header, else -1 after one
 * message: a short row would read its missing cells as empty (a spot
 * price cleared), a long one would lose its extra cells. */
static int row_cells(struct reader *r)
{
	int n = r->row->n, want = r->csv->header.n;

	if (n == want)
		return 0;
	price_err(&r->e, r->row->line, (n < want ? n : want) + 1,
		  "expected %d cells as in the header (line %d), found %d", want,
		  r->csv->header.line, n);
	return -1;
}

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* Reports a missing column at the header.  Returns -1. */
static int no_column(struct reader *r, const char *name, const char *alt)
{
	if (alt)
		price_err(&r->e, r->csv->header.line, r->csv->header.n + 1,
			  "expected a column named '%s' (or '%s'), found none", name, alt);
	else
		price_err(&r->e, r->csv->header.line, r->csv->header.n + 1,
			  "expected a column named '%s', found none", name);
	return -1;
}

static int col2(const struct price_csv *csv, const char *a, const char *b)
{
	int c = price_csv_col(csv, a);

	return c >= 0 ? c : price_csv_col(csv, b);
}

static void push(struct price_rows *out, size_t *cap, const struct price_row *row)
{
	if (out->n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		out->rows = xrealloc(out->rows, *cap * sizeof(*out->rows));
	}
	out->rows[out->n++] = *row;
}

/* ---- gpuplan columns ----------------------------------------------------- */

/* Every column read_gpuplan knows.  One it does not know is an error, not
 * a column to pass over: 'spot_usd_per_hr' would otherwise leave every
 * spot price as it was and report the rows unchanged. */
static const char *const gpuplan_columns[] = {
	"provider", "instance_type", "gpu", "gpus_per_node", "gpus_per_instance", "region",
	"on_demand_usd_per_hour", "spot_usd_per_hour", "inter_node_gbps", "max_nodes",
	"catalog_version", "catalog_version_or_date", "price_date", "nvlink_domain",
};

static int unknown_columns(struct reader *r)
{
	char why[256];
	int bad = 0;

	for (int c = 0; (c = price_csv_unknown_col(r->csv, gpuplan_columns,
						   GP_ARRAY_LEN(gpuplan_columns), c, why,
						   sizeof(why))) >= 0; c++) {
		price_err(&r->e, r->csv->header.line, c + 1,
			  "expected each of gpuplan's price columns (provider, instance_type, gpu, gpus_per_node, region, on_demand_usd_per_hour, spot_usd_per_hour, inter_node_gbps, max_nodes, catalog_version, price_date, nvlink_domain) once, %s",
			  why);
		bad = -1;
	}
	return bad;
}

static void read_gpuplan(struct reader *r, const struct price_gpu *gpus, size_t n_gpus,
			 const char *provider, struct price_rows *out)
{
	const struct price_csv *csv = r->csv;
	int c_prov = price_csv_col(csv, "provider");
	int c_inst = price_csv_col(csv, "instance_type");
	int c_gpu = price_csv_col(csv, "gpu");
	int c_count = col2(csv, "gpus_per_node", "gpus_per_instance");
	int c_region = price_csv_col(csv, "region");
	int c_od = price_csv_col(csv, "on_demand_usd_per_hour");
	int c_spot = price_csv_col(csv, "spot_usd_per_hour");
	int c_net = price_csv_col(csv, "inter_node_gbps");
	int c_max = price_csv_col(csv, "max_nodes");
	int c_ver = col2(csv, "catalog_version", "catalog_version_or_date");
	int c_date = price_csv_col(csv, "price_date");
	int c_dom = price_csv_col(csv, "nvlink_domain");
	size_t cap = 0;
	int bad = 0;

	if (c_prov < 0 && !provider)
		bad |= no_column(r, "provider", NULL);
	if (c_inst < 0)
		bad |= no_column(r, "instance_type", NULL);
	if (c_gpu < 0)
		bad |= no_column(r, "gpu", NULL);
	if (c_count < 0)
		bad |= no_column(r, "gpus_per_node", "gpus_per_instance");
	if (c_region < 0)
		bad |= no_column(r, "region", NULL);
	if (c_od < 0 && c_spot < 0)
		bad |= no_column(r, "on_demand_usd_per_hour", "spot_usd_per_hour");
	bad |= unknown_columns(r);
	if (bad)
		return;
	out->has.spot = c_spot >= 0;
	out->has.inter_node = c_net >= 0;
	out->has.max_nodes = c_max >= 0;
	out->has.version = c_ver >= 0;
	out->has.price_date = c_date >= 0;
	out->has.nvlink_domain = c_dom >= 0;

	for (size_t i = 0; i < csv->n_rows; i++) {
		struct price_row row;
		struct price_offering *o = &row.o;
		double gbps;
		int errs = r->e.n;

		memset(&row, 0, sizeof(row));
		r->row = &csv->rows[i];
		row.line = r->row->line;
		if (row_cells(r) != 0)
			continue;
		if (c_prov >= 0) {
			rd_text(r, c_prov, 1, 1, o->provider, sizeof(o->provider));
			lower(o->provider);
			if (provider && o->provider[0] && !gp_streq_nocase(o->provider, provider))
				price_err(&r->e, row.line, c_prov + 1,
					  "provider: expected '%s' (from --provider), found '%s'",
					  provider, o->provider);
		} else {
			gp_strlcpy(o->provider, provider, sizeof(o->provider));
			lower(o->provider);
		}
		rd_text(r, c_inst, 1, 1, o->instance_type, sizeof(o->instance_type));
		rd_gpu(r, c_gpu, gpus, n_gpus, o->gpu, &row.gpu_by_alias);
		rd_int(r, c_count, 1, PRICE_GPUS_PER_NODE_MAX, 0, &o->gpus_per_node);
		rd_text(r, c_region, 1, 1, o->region, sizeof(o->region));
		rd_price(r, c_od, 0, &o->on_demand_usd_per_hour);
		rd_price(r, c_spot, 0, &o->spot_usd_per_hour);
		if (r->e.n == errs && o->on_demand_usd_per_hour < 0 && o->spot_usd_per_hour < 0 &&
		    r->mode != PRICE_READ_SHIPPED)
			price_err(&r->e, row.line, (c_od >= 0 ? c_od : c_spot) + 1,
				  "expected a price in on_demand_usd_per_hour or spot_usd_per_hour, found both empty");
		rd_nonneg(r, c_net, PRICE_GBPS_MAX, &gbps);
		o->inter_node_bytes_per_s = price_gbps_to_bytes_per_s(gbps);
		if (c_max >= 0)
			rd_int(r, c_max, 0, PRICE_MAX_NODES_MAX, 1, &o->max_nodes);
		if (c_ver >= 0)
			rd_version(r, c_ver, o->version, sizeof(o->version));
		rd_date(r, c_date, o->price_date);
		price_cell_nvlink_domain(&r->e, r->row, c_dom, &o->nvlink_domain);
		if (r->e.n == errs)
			push(out, &cap, &row);
	}
}

/* ---- SkyPilot catalog columns ------------------------------------------- */

static void note_unknown(struct price_update_report *rep, const char *name)
{
	char *list = rep->unknown_gpus;
	size_t len = strlen(list), n = strlen(name);
	const char *p = list;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
			return;
		p += n;
	}
	if (len + n + 3 >= sizeof(rep->unknown_gpus))
		return;
	snprintf(list + len, sizeof(rep->unknown_gpus) - len, "%s%s", len ? ", " : "", name);
}

/* A host row of a SkyPilot catalog: an instance type without an
 * accelerator, priced alone. */
struct host_row {
	const char *instance, *region, *zone;
	double price, spot;          /* < 0: not a number or not offered */
};

/* The host rows of csv into a new array (*n); c_zone may be -1. */
static struct host_row *host_rows(const struct price_csv *csv, int c_inst, int c_acc,
				  int c_region, int c_zone, int c_price, int c_spot, size_t *n)
{
	struct host_row *h = xcalloc(csv->n_rows ? csv->n_rows : 1, sizeof(*h));
	size_t k = 0;

	for (size_t i = 0; i < csv->n_rows; i++) {
		const struct price_csv_row *row = &csv->rows[i];
		double v;

		if (row->n != csv->header.n || !*price_csv_get(row, c_inst) ||
		    *price_csv_get(row, c_acc))
			continue;
		h[k].instance = price_csv_get(row, c_inst);
		h[k].region = price_csv_get(row, c_region);
		h[k].zone = c_zone >= 0 ? price_csv_get(row, c_zone) : "";
		h[k].price = unit_parse_double(price_csv_get(row, c_price), &v) == RC_OK ? v : -1;
		h[k].spot = c_spot >= 0 && unit_parse_double(price_csv_get(row, c_spot), &v) == RC_OK
				    ? v : -1;
		k++;
	}
	*n = k;
	return h;
}

/* Whether hosts list instance at all (then its GPU rows are GPU parts),
 * and in *host the row of its region and zone (zone "" any), or NULL. */
static int host_of(const struct host_row *hosts, size_t n, const char *instance,
		   const char *region, const char *zone, const struct host_row **host)
{
	int listed = 0;

	*host = NULL;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(hosts[i].instance, instance) != 0)
			continue;
		listed = 1;
		if (strcmp(hosts[i].region, region) == 0 &&
		    (!*zone || !*hosts[i].zone || strcmp(hosts[i].zone, zone) == 0) && !*host)
			*host = &hosts[i];
	}
	return listed;
}

static void note_no_host(struct price_update_report *rep, const char *instance,
			 const char *region)
{
	char item[PRICE_NAME_MAX * 2 + 2];
	size_t len = strlen(rep->no_host);

	snprintf(item, sizeof(item), "%s %s", instance, region);
	if (strstr(rep->no_host, item) || len + strlen(item) + 3 >= sizeof(rep->no_host))
		return;
	snprintf(rep->no_host + len, sizeof(rep->no_host) - len, "%s%s", len ? ", " : "", item);
}

static void read_skypilot(struct reader *r, const struct price_gpu *gpus, size_t n_gpus,
			  const char *provider, struct price_rows *out,
			  struct price_update_report *rep)
{
	const struct price_csv *csv = r->csv;
	int c_inst = price_csv_col(csv, "InstanceType");
	int c_acc = price_csv_col(csv, "AcceleratorName");
	int c_count = price_csv_col(csv, "AcceleratorCount");
	int c_region = price_csv_col(csv, "Region");
	int c_zone = price_csv_col(csv, "AvailabilityZone");
	int c_price = price_csv_col(csv, "Price");
	int c_spot = price_csv_col(csv, "SpotPrice");
	struct host_row *hosts;
	size_t cap = 0, n_hosts = 0;
	int bad = 0;

	if (c_inst < 0)
		bad |= no_column(r, "InstanceType", NULL);
	if (c_acc < 0)
		bad |= no_column(r, "AcceleratorName", NULL);
	if (c_count < 0)
		bad |= no_column(r, "AcceleratorCount", NULL);
	if (c_region < 0)
		bad |= no_column(r, "Region", NULL);
	if (c_price < 0)
		bad |= no_column(r, "Price", NULL);
	if (bad)
		return;
	out->has.spot = c_spot >= 0;
	hosts = host_rows(csv, c_inst, c_acc, c_region, c_zone, c_price, c_spot, &n_hosts);

	for (size_t i = 0; i < csv->n_rows; i++) {
		struct price_row row;
		struct price_offering *o = &row.o;
		const struct price_gpu *g;
		const struct host_row *host;
		const char *acc, *count_s;
		double count;
		int errs = r->e.n;

		memset(&row, 0, sizeof(row));
		r->row = &csv->rows[i];
		row.line = r->row->line;
		if (row_cells(r) != 0)
			continue;
		acc = price_csv_get(r->row, c_acc);
		if (!*acc) {
			rep->skipped_no_gpu++;
			continue;
		}
		if (!*price_csv_get(r->row, c_inst)) {
			rep->skipped_no_instance++;
			continue;
		}
		count_s = price_csv_get(r->row, c_count);
		if (!gp_name_is_safe(acc, strlen(acc), NULL)) {
			/* checked before the name is looked up, or noted as unknown */
			rd_text(r, c_acc, 1, 1, row.zone, sizeof(row.zone));
			continue;
		}
		if (unit_parse_double(count_s, &count) != RC_OK || !(count > 0) ||
		    count > PRICE_GPUS_PER_NODE_MAX) {
			char e[96];

			price_err(&r->e, row.line, c_count + 1,
				  "AcceleratorCount: expected a GPU count > 0 and at most %d, found '%s'",
				  PRICE_GPUS_PER_NODE_MAX,
				  *count_s ? gp_term_escape(e, sizeof(e), count_s) : "an empty cell");
			continue;
		}
		if (count != floor(count)) {
			rep->skipped_fractional++;
			continue;
		}
		g = price_gpu_lookup(gpus, n_gpus, acc, &row.gpu_by_alias);
		if (!g) {
			rep->skipped_unknown_gpu++;
			note_unknown(rep, acc);
			continue;
		}
		gp_strlcpy(o->provider, provider, sizeof(o->provider));
		lower(o->provider);
		gp_strlcpy(o->gpu, g->name, sizeof(o->gpu));
		o->gpus_per_node = (int)count;
		rd_text(r, c_inst, 1, 1, o->instance_type, sizeof(o->instance_type));
		rd_text(r, c_region, 1, 1, o->region, sizeof(o->region));
		if (c_zone >= 0)
			rd_text(r, c_zone, 0, 1, row.zone, sizeof(row.zone));
		rd_price(r, c_price, 1, &o->on_demand_usd_per_hour);
		rd_price(r, c_spot, 1, &o->spot_usd_per_hour);
		if (r->e.n != errs)
			continue;
		if (o->on_demand_usd_per_hour < 0 && o->spot_usd_per_hour < 0) {
			rep->skipped_no_price++;
			continue;
		}
		if (host_of(hosts, n_hosts, o->instance_type, o->region, row.zone, &host)) {
			/* The catalog prices this machine's host apart: the GPU
			 * row is a part price.  A node is host + GPUs, and without
			 * a priced host there is no node's price to store. */
			if (!host || !(host->price > 0)) {
				rep->skipped_no_host++;
				note_no_host(rep, o->instance_type, o->region);
				continue;
			}
			if (o->on_demand_usd_per_hour >= 0)
				o->on_demand_usd_per_hour += host->price;
			o->spot_usd_per_hour = o->spot_usd_per_hour >= 0 && host->spot > 0
						       ? o->spot_usd_per_hour + host->spot : -1;
			rep->completed_with_host++;
		}
		push(out, &cap, &row);
	}
	free(hosts);
}

/* ---- duplicates and availability zones ---------------------------------- */

static int row_key_cmp(const void *a_, const void *b_)
{
	const struct price_row *a = a_, *b = b_;
	int c = price_offer_key_cmp(&a->o, &b->o);

	return c ? c : (a->line > b->line) - (a->line < b->line);
}

static int line_cmp(const void *a_, const void *b_)
{
	const struct price_row *a = a_, *b = b_;

	return (a->line > b->line) - (a->line < b->line);
}

static double min_price(double a, double b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

/* Sorts rows by key, reports duplicate keys (same zone, or no zone), folds
 * the zones of one region into its first row with the lowest prices, then
 * restores file order. */
static void fold_keys(struct reader *r, struct price_rows *rows, struct price_update_report *rep)
{
	size_t w = 0;

	if (rows->n == 0)
		return; /* rows is NULL then, which qsort may not be given */
	qsort(rows->rows, rows->n, sizeof(*rows->rows), row_key_cmp);
	for (size_t i = 0; i < rows->n;) {
		size_t j = i + 1;
		struct price_row *first = &rows->rows[i];

		while (j < rows->n && price_offer_key_cmp(&rows->rows[j].o, &first->o) == 0)
			j++;
		for (size_t k = i + 1; k < j; k++) {
			struct price_row *x = &rows->rows[k];

			for (size_t m = i; m < k; m++)
				if (strcmp(rows->rows[m].zone, x->zone) == 0) {
					price_err(&r->e, x->line, 1,
						  "expected one row per (provider, instance_type, region%s), found (%s, %s, %s%s%s) again (first at line %d)",
						  x->zone[0] ? ", zone" : "", x->o.provider,
						  x->o.instance_type, x->o.region,
						  x->zone[0] ? ", " : "", x->zone, rows->rows[m].line);
					break;
				}
			first->o.on_demand_usd_per_hour =
				min_price(first->o.on_demand_usd_per_hour, x->o.on_demand_usd_per_hour);
			first->o.spot_usd_per_hour =
				min_price(first->o.spot_usd_per_hour, x->o.spot_usd_per_hour);
		}
		if (j - i > 1 && rep) {
			rep->az_rows += j - i;
			rep->az_regions++;
		}
		rows->rows[w++] = *first;
		i = j;
	}
	rows->n = w;
	qsort(rows->rows, rows->n, sizeof(*rows->rows), line_cmp);
}

enum rc price_rows_read(const struct price_csv *csv, const struct price_gpu *gpus,
			size_t n_gpus, const char *provider, enum price_read_mode mode,
			struct price_rows *out, struct price_update_report *rep)
{
	struct price_update_report scratch;
	struct reader r;
	int skypilot;

	memset(out, 0, sizeof(*out));
	memset(&r, 0, sizeof(r));
	if (!rep) {
		memset(&scratch, 0, sizeof(scratch));
		rep = &scratch;
	}
	r.e.path = csv->path;
	r.csv = csv;
	r.mode = mode;
	if (csv->header.n == 0) {
		price_err(&r.e, 1, 1, "expected a header row naming the price columns, found an empty file");
		return RC_INPUT;
	}
	skypilot = price_csv_col(csv, "InstanceType") >= 0;
	rep->skypilot = skypilot;
	rep->rows_read = csv->n_rows;
	if (skypilot && mode != PRICE_READ_UPDATE) {
		price_err(&r.e, csv->header.line, 1,
			  "expected gpuplan's columns (provider, instance_type, gpu, ...), found SkyPilot's (InstanceType, ...); import it with 'gpuplan prices update FILE --provider P'");
		return RC_INPUT;
	}
	if (provider && *provider && !gp_name_is_safe(provider, strlen(provider), NULL)) {
		char e[96];

		gp_error("--provider: expected a name of letters, digits and '%s', found '%s'",
			 GP_NAME_PUNCT, gp_term_escape(e, sizeof(e), provider));
		price_errs_finish(&r.e);
		return RC_USAGE;
	}
	if (skypilot && (!provider || !*provider)) {
		gp_error("--provider: expected the cloud SkyPilot catalog %s is for (aws, gcp, azure, lambda, runpod, vast, ...), found none",
			 csv->path);
		return RC_USAGE;
	}
	if (csv->n_rows == 0) {
		price_err(&r.e, csv->header.line + 1, 1, "expected data rows after the header, found none");
		return RC_INPUT;
	}
	if (skypilot)
		read_skypilot(&r, gpus, n_gpus, provider, out, rep);
	else
		read_gpuplan(&r, gpus, n_gpus, provider, out);
	if (!r.e.n)
		fold_keys(&r, out, rep);
	price_errs_finish(&r.e);
	if (r.e.n) {
		price_rows_release(out);
		return RC_INPUT;
	}
	rep->offers_in_file = out->n;
	return RC_OK;
}

/* ---- quota rows ------------------------------------------------------------ */

static const char *const quota_columns[] = {
	"provider", "region", "gpu", "max_gpus", "instance_type",
};

/* 1 when a header column of csv is a misspelling of name (then the
 * unknown-column message names it, and saying it is missing repeats it). */
static int header_near(const struct price_csv *csv, const char *name)
{
	for (int c = 0; c < csv->header.n; c++) {
		const char *f = csv->header.field[c];

		if (gp_edit_distance(f, strlen(f), name, strlen(name), gp_fold_name) <=
		    gp_suggest_limit(f))
			return 1;
	}
	return 0;
}

static int quota_row_cmp(const void *a_, const void *b_)
{
	const struct price_quota_row *a = a_, *b = b_;
	int c = price_quota_key_cmp(&a->q, &b->q);

	return c ? c : (a->line > b->line) - (a->line < b->line);
}

/* Reports every row whose key an earlier row of rows[0..n) has. */
static void quota_dups(struct reader *r, const struct price_quota_row *rows, size_t n)
{
	struct price_quota_row *sorted;

	if (n < 2)
		return;
	sorted = xcalloc(n, sizeof(*sorted));
	memcpy(sorted, rows, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), quota_row_cmp);
	for (size_t i = 1, first = 0; i < n; i++) {
		const struct price_quota *q = &sorted[i].q;

		if (price_quota_key_cmp(&sorted[first].q, q) != 0) {
			first = i;
			continue;
		}
		price_err(&r->e, sorted[i].line, 1,
			  "expected one row per (provider, region, gpu, instance_type), found (%s, %s, %s, %s) again (first at line %d)",
			  q->provider, q->region, q->gpu, q->instance_type[0] ? q->instance_type : "*",
			  sorted[first].line);
	}
	free(sorted);
}

enum rc price_quota_rows_read(const struct price_csv *csv, const struct price_gpu *gpus,
			      size_t n_gpus, int allow_remove, struct price_quota_row **out,
			      size_t *n)
{
	struct reader r;
	struct price_quota_row *rows;
	int c_prov = price_csv_col(csv, "provider");
	int c_region = price_csv_col(csv, "region");
	int c_gpu = price_csv_col(csv, "gpu");
	int c_max = price_csv_col(csv, "max_gpus");
	int c_inst = price_csv_col(csv, "instance_type");
	char why[256];
	size_t k = 0;
	int bad = 0;

	*out = NULL;
	*n = 0;
	memset(&r, 0, sizeof(r));
	r.e.path = csv->path;
	r.csv = csv;
	if (csv->header.n == 0) {
		price_err(&r.e, 1, 1, "expected a header row naming the quota columns, found an empty file");
		return RC_INPUT;
	}
	if (c_prov < 0 && !header_near(csv, "provider"))
		bad |= no_column(&r, "provider", NULL);
	if (c_region < 0 && !header_near(csv, "region"))
		bad |= no_column(&r, "region", NULL);
	if (c_gpu < 0 && !header_near(csv, "gpu"))
		bad |= no_column(&r, "gpu", NULL);
	if (c_max < 0 && !header_near(csv, "max_gpus"))
		bad |= no_column(&r, "max_gpus", NULL);
	for (int c = 0; (c = price_csv_unknown_col(csv, quota_columns, GP_ARRAY_LEN(quota_columns),
						   c, why, sizeof(why))) >= 0; c++) {
		price_err(&r.e, csv->header.line, c + 1,
			  "expected each of gpuplan's quota columns (provider, region, gpu, max_gpus, instance_type) once, %s",
			  why);
		bad = -1;
	}
	if (!bad && allow_remove && csv->n_rows == 0)
		price_err(&r.e, csv->header.line + 1, 1, "expected data rows after the header, found none");
	if (bad || r.e.n) {
		price_errs_finish(&r.e);
		return RC_INPUT;
	}
	rows = xcalloc(csv->n_rows ? csv->n_rows : 1, sizeof(*rows));
	for (size_t i = 0; i < csv->n_rows; i++) {
		struct price_quota_row *row = &rows[k];
		struct price_quota *q = &row->q;
		int errs = r.e.n;

		memset(row, 0, sizeof(*row));
		r.row = &csv->rows[i];
		row->line = r.row->line;
		rd_name(&r, c_prov, 1, q->provider, sizeof(q->provider));
		lower(q->provider);
		if (!*price_csv_get(r.row, c_region))
			price_err(&r.e, row->line, c_region + 1,
				  "region: expected a region or '*' (any region), found an empty cell");
		else
			rd_name(&r, c_region, 1, q->region, sizeof(q->region));
		rd_gpu(&r, c_gpu, gpus, n_gpus, q->gpu, NULL);
		if (c_inst >= 0 && rd_name(&r, c_inst, 0, q->instance_type,
					   sizeof(q->instance_type)) == 0 &&
		    strcmp(q->instance_type, "*") == 0)
			q->instance_type[0] = '\0';
		if (allow_remove && !*price_csv_get(r.row, c_max))
			row->remove = 1;
		else
			rd_int(&r, c_max, 0, PRICE_QUOTA_MAX_GPUS, 0, &q->max_gpus);
		if (r.e.n == errs)
			k++;
	}
	if (!r.e.n)
		quota_dups(&r, rows, k);
	price_errs_finish(&r.e);
	if (r.e.n) {
		free(rows);
		return RC_INPUT;
	}
	*out = rows;
	*n = k;
	return RC_OK;
}
