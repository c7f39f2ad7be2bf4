/*
 * price_table.c - one price table: the prices of an offering, reading the
 * shipped prices.csv and the user's (its rows read by price_read.c),
 * laying the user's rows over the shipped ones, and writing a table
 * (gpuplan's columns; the user's file keeps only the rows of theirs).
 *
 * It does not load the catalog (price_catalog.c), merge an update
 * (price_update.c) or store the user's file (price_store.c); it knows
 * nothing of quotas.  It calls price_read.c, price_csv.c, price_store.c
 * (the CSV field writer) and common/.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "price_internal.h"

double price_offering_usd_per_hour(const struct price_offering *o, int spot)
{
	double p = spot ? o->spot_usd_per_hour : o->on_demand_usd_per_hour;

	return p >= 0 ? p : -1;
}

long price_date_age_days(const char *d, long today)
{
	long days;

	if (!d || unit_parse_date(d, &days) != RC_OK)
		return PRICE_AGE_UNKNOWN;
	return today - days;
}

double price_offering_usd_per_gpu_hour(const struct price_offering *o, int spot)
{
	double p = price_offering_usd_per_hour(o, spot);

	if (p < 0 || o->gpus_per_node <= 0)
		return -1;
	return p / o->gpus_per_node;
}

void price_num_format(char *buf, size_t size, double v, int empty_zero)
{
	if (v < 0 || (empty_zero && v == 0) || !isfinite(v)) {
		snprintf(buf, size, "%s", "");
		return;
	}
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* Reads the rows of csv (gpuplan's columns only) into a new array,
 * marking each .user when user (the user's table; else the shipped one),
 * and releases csv. */
static enum rc csv_offers(struct price_csv *csv, const struct price_gpu *gpus, size_t n_gpus,
			  int user, struct price_offering **out, size_t *n)
{
	struct price_rows rows;
	struct price_update_report rep;
	enum rc rc;

	memset(&rep, 0, sizeof(rep));
	rc = price_rows_read(csv, gpus, n_gpus, NULL, user ? PRICE_READ_TABLE : PRICE_READ_SHIPPED,
			     &rows, &rep);
	price_csv_release(csv);
	if (rc != RC_OK)
		return rc;
	*out = xcalloc(rows.n ? rows.n : 1, sizeof(**out));
	for (size_t i = 0; i < rows.n; i++) {
		(*out)[i] = rows.rows[i].o;
		(*out)[i].user = user;
	}
	*n = rows.n;
	price_rows_release(&rows);
	return RC_OK;
}

enum rc price_table_read(const char *path, const struct price_gpu *gpus, size_t n_gpus,
			 struct price_offering **out, size_t *n)
{
	struct price_csv csv;
	enum rc rc;

	*out = NULL;
	*n = 0;
	rc = price_csv_load(path, &csv);
	if (rc != RC_OK)
		return rc;
	return csv_offers(&csv, gpus, n_gpus, 0, out, n);
}

enum rc price_user_table_read(const char *path, const struct price_gpu *gpus, size_t n_gpus,
			      struct price_offering **out, size_t *n, int *legacy)
{
	static const char prefix[] = "# gpuplan-user-prices/";
	const size_t plen = sizeof(prefix) - 1;
	struct price_csv csv;
	struct stat st;
	char *buf;
	size_t len, off = 0, eol;
	enum rc rc;

	*out = NULL;
	*n = 0;
	*legacy = 0;
	if (stat(path, &st) != 0 && errno == ENOENT)
		return RC_OK;
	rc = gp_read_file(path, &buf, &len);
	if (rc != RC_OK)
		return rc;
	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		off = 3;
	if (len - off < plen || memcmp(buf + off, prefix, plen) != 0) {
		/* Format 1: the whole table, as gpuplan before format 2 wrote it. */
		*legacy = 1;
		rc = price_csv_parse(path, buf, len, 0, &csv);
		free(buf);
		if (rc != RC_OK)
			return rc;
		return csv_offers(&csv, gpus, n_gpus, 1, out, n);
	}
	eol = off + plen + strcspn(buf + off + plen, "\r\n");
	{
		const char *v = buf + off + plen, *end = v + strspn(v, "0123456789");

		if (end == v || strtol(v, NULL, 10) != 2 ||
		    (end < buf + eol && *end != ' ' && *end != '\t')) {
			gp_error("%s:1:%zu: expected format 2 after '%s' (the user's rows), found '%.*s'",
				 path, plen + 1, prefix, (int)(buf + eol - v), v);
			gp_hint("a newer gpuplan wrote it; use that one, or move the file away");
			free(buf);
			return RC_INPUT;
		}
	}
	/* Parsing from the marker's line end leaves line 1 blank, so that
	 * messages name the file's own lines. */
	rc = price_csv_parse(path, buf + eol, len - eol, 0, &csv);
	free(buf);
	if (rc != RC_OK)
		return rc;
	if (csv.n_rows == 0) {
		/* No rows of the user's (all of them equal the shipped ones). */
		price_csv_release(&csv);
		*out = xcalloc(1, sizeof(**out));
		return RC_OK;
	}
	return csv_offers(&csv, gpus, n_gpus, 1, out, n);
}

static int ptr_key_cmp(const void *a, const void *b)
{
	return price_offer_key_cmp(*(const struct price_offering *const *)a,
				   *(const struct price_offering *const *)b);
}

/* A new array of pointers to t[0..n), sorted by key, for find_key(). */
static const struct price_offering **by_key(const struct price_offering *t, size_t n)
{
	const struct price_offering **p = xcalloc(n ? n : 1, sizeof(*p));

	for (size_t i = 0; i < n; i++)
		p[i] = &t[i];
	if (n)
		qsort(p, n, sizeof(*p), ptr_key_cmp);
	return p;
}

static const struct price_offering *find_key(const struct price_offering **sorted, size_t n,
					     const struct price_offering *o)
{
	const struct price_offering *const *hit;

	if (n == 0)
		return NULL;
	hit = bsearch(&o, sorted, n, sizeof(*sorted), ptr_key_cmp);
	return hit ? *hit : NULL;
}

struct price_offering *price_table_overlay(const struct price_offering *shipped, size_t n_shipped,
					   const struct price_offering *user, size_t n_user,
					   size_t *n)
{
	const struct price_offering **sorted = by_key(user, n_user);
	struct price_offering *t = xcalloc(n_shipped + n_user ? n_shipped + n_user : 1, sizeof(*t));
	char *used = xcalloc(n_user ? n_user : 1, 1);
	size_t k = 0;

	for (size_t i = 0; i < n_shipped; i++) {
		const struct price_offering *u = find_key(sorted, n_user, &shipped[i]);

		if (u) {
			used[u - user] = 1;
			t[k++] = *u;
		} else {
			t[k] = shipped[i];
			t[k++].user = 0;
		}
	}
	for (size_t j = 0; j < n_user; j++)
		if (!used[j])
			t[k++] = user[j];
	*n = k;
	free(used);
	free(sorted);
	return t;
}

/* ---- writing -------------------------------------------------------------- */

/* Appends offering o to b as one line of a gpuplan prices.csv. */
static void row_append(struct price_line *b, const struct price_offering *o)
{
	char num[64];

	price_csv_append(b, o->provider, 0);
	price_csv_append(b, o->instance_type, 0);
	price_csv_append(b, o->gpu, 0);
	snprintf(num, sizeof(num), "%d", o->gpus_per_node);
	price_csv_append(b, num, 0);
	price_csv_append(b, o->region, 0);
	price_num_format(num, sizeof(num), o->on_demand_usd_per_hour, 0);
	price_csv_append(b, num, 0);
	price_num_format(num, sizeof(num), o->spot_usd_per_hour, 0);
	price_csv_append(b, num, 0);
	if (o->inter_node_bytes_per_s > 0)
		snprintf(num, sizeof(num), "%.10g", o->inter_node_bytes_per_s * 8 / 1e9);
	else
		num[0] = '\0';
	price_csv_append(b, num, 0);
	if (o->max_nodes > 0)
		snprintf(num, sizeof(num), "%d", o->max_nodes);
	else
		num[0] = '\0';
	price_csv_append(b, num, 0);
	price_csv_append(b, o->version, 0);
	price_csv_append(b, o->price_date, 0);
	if (o->nvlink_domain > 0)
		snprintf(num, sizeof(num), "%d", o->nvlink_domain);
	else
		num[0] = '\0';
	price_csv_append(b, num, 1);
}

/* The table's text: first_line (may be NULL) and a newline, the header,
 * then every offering, or with only_user those with .user set. */
static char *table_text(const char *first_line, const struct price_offering *offers, size_t n,
			int only_user, size_t *len)
{
	static const char header[] =
		"provider,instance_type,gpu,gpus_per_node,region,on_demand_usd_per_hour,"
		"spot_usd_per_hour,inter_node_gbps,max_nodes,catalog_version,price_date,nvlink_domain\n";
	size_t first = first_line ? strlen(first_line) + 1 : 0;
	struct price_line b = { NULL, 0, 0 };

	b.cap = first + sizeof(header) + 128 * n;
	b.s = xmalloc(b.cap);
	if (first_line) {
		memcpy(b.s, first_line, first - 1);
		b.s[first - 1] = '\n';
	}
	memcpy(b.s + first, header, sizeof(header));
	b.len = first + sizeof(header) - 1;
	for (size_t i = 0; i < n; i++)
		if (!only_user || offers[i].user)
			row_append(&b, &offers[i]);
	*len = b.len;
	return b.s;
}

char *price_table_format(const struct price_offering *offers, size_t n, size_t *len)
{
	return table_text(NULL, offers, n, 0, len);
}

char *price_user_table_format(const struct price_offering *table, size_t n, size_t *len)
{
	return table_text(PRICE_USER_MARKER, table, n, 1, len);
}

size_t price_table_mark_user(struct price_offering *table, size_t n,
			     const struct price_offering *shipped, size_t n_shipped)
{
	const struct price_offering **sorted = by_key(shipped, n_shipped);
	struct price_line a = { NULL, 0, 0 }, b = { NULL, 0, 0 };
	size_t marked = 0;

	for (size_t i = 0; i < n; i++) {
		const struct price_offering *s = find_key(sorted, n_shipped, &table[i]);

		table[i].user = 1;
		if (s) {
			/* Compared as written, so that what is stored and read
			 * back is the same table. */
			a.len = b.len = 0;
			row_append(&a, &table[i]);
			row_append(&b, s);
			table[i].user = a.len != b.len || memcmp(a.s, b.s, a.len) != 0;
		}
		marked += (size_t)table[i].user;
	}
	free(a.s);
	free(b.s);
	free(sorted);
	return marked;
}
