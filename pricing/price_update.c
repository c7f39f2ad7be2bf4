/*
 * price_update.c - merge a new price file into the user's table: every
 * row of the file is validated first (price_read.c), then laid over the
 * table every command reads (the shipped prices.csv overlaid with the
 * user's rows, price_table.c), and each change is recorded.  What is
 * stored is only the user's rows, the merged rows that differ from the
 * shipped table, so that rows a newer shipped table changes or adds show
 * through.  The lock, the crash-safe write and the history are the
 * store's (price_store.c).
 *
 * It calls price_store.c, price_table.c, price_read.c, price_gpu.c and
 * price_csv.c; nothing in pricing/ calls it.  It does not parse or
 * validate rows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_internal.h"

void price_update_opts_init(struct price_update_opts *u)
{
	memset(u, 0, sizeof(*u));
}

void price_update_report_release(struct price_update_report *rep)
{
	if (!rep)
		return;
	free(rep->changes);
	rep->changes = NULL;
	rep->n_changes = 0;
}

/* ---- merging --------------------------------------------------------------- */

struct merge {
	struct price_offering *offers;
	size_t n, cap;
	size_t *order;           /* base indices sorted by key, for lookup */
	size_t n_order;
	struct price_update_report *rep;
	size_t cap_changes;
};

static const struct price_offering *bsearch_key;
static const struct price_offering *bsearch_base;

static int order_cmp(const void *a, const void *b)
{
	return price_offer_key_cmp(&bsearch_base[*(const size_t *)a],
				   &bsearch_base[*(const size_t *)b]);
}

static int key_cmp(const void *key, const void *elem)
{
	(void)key;
	return price_offer_key_cmp(bsearch_key, &bsearch_base[*(const size_t *)elem]);
}

static long find(struct merge *m, const struct price_offering *o)
{
	size_t *hit;

	bsearch_key = o;
	bsearch_base = m->offers;
	hit = bsearch(o, m->order, m->n_order, sizeof(*m->order), key_cmp);
	return hit ? (long)*hit : -1;
}

static struct price_change *change_add(struct merge *m, enum price_change_kind kind,
				       const struct price_offering *o, const char *field)
{
	return price_change_push(&m->rep->changes, &m->rep->n_changes, &m->cap_changes, kind,
				 o->provider, o->instance_type, o->region, "", field);
}

static int num_change(struct merge *m, struct price_offering *dst, const char *field,
			double *slot, double v)
{
	struct price_change *c;

	if (*slot == v || (*slot < 0 && v < 0))
		return 0;
	c = change_add(m, PRICE_CHANGE_CHANGED, dst, field);
	price_num_format(c->old_value, sizeof(c->old_value), *slot, 0);
	price_num_format(c->new_value, sizeof(c->new_value), v, 0);
	c->old_num = *slot >= 0 ? *slot : NAN;
	c->new_num = v >= 0 ? v : NAN;
	*slot = v;
	return 1;
}

static int text_change(struct merge *m, struct price_offering *dst, const char *field,
		       char *slot, size_t size, const char *v)
{
	struct price_change *c;

	if (strcmp(slot, v) == 0)
		return 0;
	c = change_add(m, PRICE_CHANGE_CHANGED, dst, field);
	gp_strlcpy(c->old_value, slot, sizeof(c->old_value));
	gp_strlcpy(c->new_value, v, sizeof(c->new_value));
	gp_strlcpy(slot, v, size);
	return 1;
}

static void gbps_text(char *buf, size_t size, double bytes_per_s)
{
	if (bytes_per_s > 0)
		snprintf(buf, size, "%.10g", bytes_per_s * 8 / 1e9);
	else
		buf[0] = '\0';
}

static void int_text(char *buf, size_t size, int v)
{
	if (v > 0)
		snprintf(buf, size, "%d", v);
	else
		buf[0] = '\0';
}

/* A count cell of a stored row (max_nodes, nvlink_domain): a stated
 * value (> 0) replaces *stored and records the change; 0, not stated,
 * keeps it.  Returns 1 when it changed. */
static int count_change(struct merge *m, struct price_offering *o, const char *field,
			int *stored, int value)
{
	char a[PRICE_VALUE_MAX], b[PRICE_VALUE_MAX];

	if (value <= 0 || value == *stored)
		return 0;
	int_text(a, sizeof(a), *stored);
	int_text(b, sizeof(b), value);
	text_change(m, o, field, a, sizeof(a), b);
	*stored = value;
	return 1;
}

/* Merges one incoming row.  Returns 1 when it added or changed a row. */
static int merge_row(struct merge *m, const struct price_row *row,
		     const struct price_cols_present *has, const char *version,
		     const char *date)
{
	const struct price_offering *in = &row->o;
	long at = find(m, in);
	struct price_offering *o;
	int changed = 0, priced = 0;
	char a[PRICE_VALUE_MAX], b[PRICE_VALUE_MAX];

	if (at < 0) {
		struct price_change *c;
		char od[64], sp[64], desc[256];

		if (m->n == m->cap) {
			m->cap = m->cap ? 2 * m->cap : 64;
			m->offers = xrealloc(m->offers, m->cap * sizeof(*m->offers));
		}
		o = &m->offers[m->n++];
		*o = *in;
		if (!has->version || !o->version[0])
			gp_strlcpy(o->version, version, sizeof(o->version));
		if (!has->price_date || !o->price_date[0])
			gp_strlcpy(o->price_date, date, sizeof(o->price_date));
		c = change_add(m, PRICE_CHANGE_ADDED, o, "row");
		price_num_format(od, sizeof(od), o->on_demand_usd_per_hour, 0);
		price_num_format(sp, sizeof(sp), o->spot_usd_per_hour, 0);
		snprintf(desc, sizeof(desc), "%dx %s on_demand=%s spot=%s",
			 o->gpus_per_node, o->gpu, od[0] ? od : "-", sp[0] ? sp : "-");
		gp_strlcpy(c->new_value, desc, sizeof(c->new_value));
		c->new_num = o->on_demand_usd_per_hour >= 0 ? o->on_demand_usd_per_hour : NAN;
		m->rep->added++;
		return 1;
	}
	o = &m->offers[at];
	/* An alias ("A100-80GB") may stand for several form factors; the
	 * stored row already says which one this instance has. */
	if (!row->gpu_by_alias)
		changed |= text_change(m, o, "gpu", o->gpu, sizeof(o->gpu), in->gpu);
	int_text(a, sizeof(a), o->gpus_per_node);
	int_text(b, sizeof(b), in->gpus_per_node);
	if (strcmp(a, b) != 0) {
		changed |= text_change(m, o, "gpus_per_node", a, sizeof(a), b);
		o->gpus_per_node = in->gpus_per_node;
	}
	priced |= num_change(m, o, "on_demand_usd_per_hour", &o->on_demand_usd_per_hour,
			     in->on_demand_usd_per_hour);
	if (has->spot)
		priced |= num_change(m, o, "spot_usd_per_hour", &o->spot_usd_per_hour,
				     in->spot_usd_per_hour);
	changed |= priced;
	/* An empty network, availability, NVLink domain or version cell means
	 * "not stated" and keeps what is stored; an empty price means "not
	 * offered". */
	if (has->inter_node && in->inter_node_bytes_per_s > 0) {
		gbps_text(a, sizeof(a), o->inter_node_bytes_per_s);
		gbps_text(b, sizeof(b), in->inter_node_bytes_per_s);
		if (strcmp(a, b) != 0) {
			changed |= text_change(m, o, "inter_node_gbps", a, sizeof(a), b);
			o->inter_node_bytes_per_s = in->inter_node_bytes_per_s;
		}
	}
	if (has->max_nodes)
		changed |= count_change(m, o, "max_nodes", &o->max_nodes, in->max_nodes);
	if (has->nvlink_domain)
		changed |= count_change(m, o, "nvlink_domain", &o->nvlink_domain, in->nvlink_domain);
	if (has->version && in->version[0])
		changed |= text_change(m, o, "catalog_version", o->version, sizeof(o->version),
				       in->version);
	else if (priced)
		changed |= text_change(m, o, "catalog_version", o->version, sizeof(o->version),
				       version);
	/* A stated date replaces the stored one; a price the file states
	 * without a date is dated by the update, as its catalog_version is. */
	if (has->price_date && in->price_date[0])
		changed |= text_change(m, o, "price_date", o->price_date, sizeof(o->price_date),
				       in->price_date);
	else if (priced)
		changed |= text_change(m, o, "price_date", o->price_date, sizeof(o->price_date),
				       date);
	if (changed)
		m->rep->changed++;
	else
		m->rep->unchanged++;
	return changed;
}

/* The band of plausible prices per GPU-hour for a GPU: a tenth of the
 * cheapest and ten times the dearest the shipped table quotes for it
 * (on demand or spot), or PRICE_GPU_HOUR_USD_MIN..MAX for a GPU it does
 * not price.  data/SOURCES.md gives the reasoning. */
static void gpu_hour_band(const char *gpu, const struct price_offering *base, size_t n_base,
			  double *lo, double *hi)
{
	double min = -1, max = -1;

	for (size_t i = 0; i < n_base; i++) {
		const struct price_offering *b = &base[i];
		double p[2] = { b->on_demand_usd_per_hour, b->spot_usd_per_hour };

		if (strcmp(b->gpu, gpu) != 0 || b->gpus_per_node <= 0)
			continue;
		for (int k = 0; k < 2; k++) {
			double g = p[k] / b->gpus_per_node;

			if (p[k] <= 0)
				continue;
			if (min < 0 || g < min)
				min = g;
			if (g > max)
				max = g;
		}
	}
	*lo = min > 0 ? min / PRICE_GPU_HOUR_BAND_FACTOR : PRICE_GPU_HOUR_USD_MIN;
	*hi = max > 0 ? max * PRICE_GPU_HOUR_BAND_FACTOR : PRICE_GPU_HOUR_USD_MAX;
}

/* Refuses each row of rows whose price per GPU-hour lies outside its
 * GPU's band (gpu_hour_band): one line per row; RC_INPUT when any. */
static enum rc check_bands(const char *file, const struct price_rows *rows,
			   const struct price_offering *base, size_t n_base)
{
	int bad = 0;

	for (size_t i = 0; i < rows->n; i++) {
		const struct price_offering *o = &rows->rows[i].o;
		const char *col[2] = { "on_demand_usd_per_hour", "spot_usd_per_hour" };
		double p[2] = { o->on_demand_usd_per_hour, o->spot_usd_per_hour }, lo, hi;

		if (o->gpus_per_node <= 0)
			continue;
		gpu_hour_band(o->gpu, base, n_base, &lo, &hi);
		for (int k = 0; k < 2; k++) {
			double g = p[k] / o->gpus_per_node;

			if (p[k] <= 0 || (g >= lo && g <= hi))
				continue;
			if (bad++ < PRICE_MAX_ERRORS)
				gp_error("%s:%d: %s: expected $%.3g to $%.3g per GPU-hour for %s (a "
					 "tenth of the shipped table's cheapest to ten times its "
					 "dearest), found $%.3g (%g for %d GPUs)", file,
					 rows->rows[i].line, col[k], lo, hi, o->gpu, g, p[k],
					 o->gpus_per_node);
		}
	}
	return bad ? RC_INPUT : RC_OK;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

enum rc price_update(const char *file, const struct price_opts *o,
		     const struct price_update_opts *u, struct price_update_report *rep)
{
	struct price_opts def;
	struct price_update_opts udef;
	struct price_store p;
	struct price_gpu *gpus = NULL;
	size_t n_gpus = 0;
	struct price_csv csv;
	struct price_rows rows;
	struct merge m;
	struct price_offering *base = NULL, *mine = NULL;
	size_t n_base = 0, n_mine = 0;
	char *shipped = NULL, *table = NULL;
	char stamp[32], date[16], version[PRICE_NAME_MAX * 2];
	size_t tlen;
	int lock = -1;
	enum rc rc;

	memset(rep, 0, sizeof(*rep));
	memset(&m, 0, sizeof(m));
	memset(&rows, 0, sizeof(rows));
	if (!o) {
		price_opts_init(&def);
		o = &def;
	}
	if (!u) {
		price_update_opts_init(&udef);
		u = &udef;
	}
	rc = price_store_init(&p, o, "prices", 0);
	if (rc != RC_OK)
		return rc;
	gp_strlcpy(rep->table_path, p.table, sizeof(rep->table_path));
	gp_strlcpy(rep->history_path, p.history, sizeof(rep->history_path));
	shipped = xmalloc(strlen(o->data_dir ? o->data_dir : "data") + 16);
	sprintf(shipped, "%s/gpus.csv", o->data_dir ? o->data_dir : "data");
	rc = price_gpus_load(shipped, &gpus, &n_gpus);
	if (rc != RC_OK)
		goto out;

	/* Validate the whole file before touching anything. */
	rc = price_update_file_load(file, &csv);
	if (rc != RC_OK)
		goto out;
	rc = price_rows_read(&csv, gpus, n_gpus, u->provider, PRICE_READ_UPDATE, &rows, rep);
	price_csv_release(&csv);
	if (rc != RC_OK)
		goto out;

	if (!u->dry_run) {
		rc = price_store_lock(&p, &lock);
		if (rc != RC_OK)
			goto out;
	}
	sprintf(shipped, "%s/prices.csv", o->data_dir ? o->data_dir : "data");
	rc = price_table_read(shipped, gpus, n_gpus, &base, &n_base);
	if (rc != RC_OK)
		goto out;
	rc = check_bands(file, &rows, base, n_base);
	if (rc != RC_OK)
		goto out;
	rc = price_user_table_read(p.table, gpus, n_gpus, &mine, &n_mine, &rep->legacy_copy);
	if (rc != RC_OK)
		goto out;
	m.offers = price_table_overlay(base, n_base, mine, n_mine, &m.n);
	m.cap = m.n;
	m.rep = rep;
	m.order = xcalloc(m.n ? m.n : 1, sizeof(*m.order));
	for (size_t i = 0; i < m.n; i++)
		m.order[i] = i;
	m.n_order = m.n;
	bsearch_base = m.offers;
	qsort(m.order, m.n, sizeof(*m.order), order_cmp);

	price_utc_now(stamp, sizeof(stamp), date, sizeof(date));
	{
		/* The date an update records follows $GPUPLAN_NOW, as the ages
		 * answers print do. */
		long today;

		rc = unit_today(&today);
		if (rc != RC_OK)
			goto out;
		unit_fmt_date(date, sizeof(date), today);
	}
	{
		/* The file's name is the environment's, not the user's text:
		 * stored escaped (a tab, ESC, U+202E or a Latin-1 byte as \xNN
		 * or \uNNNN) and cut between characters, so the stored
		 * catalog_version is always printable UTF-8 that fits. */
		char esc[PRICE_NAME_MAX * 2 - 26];

		gp_term_escape(esc, sizeof(esc), base_name(file));
		snprintf(version, sizeof(version), "%s%s %s", rep->skypilot ? "skypilot " : "",
			 esc, date);
	}
	for (size_t i = 0; i < rows.n; i++)
		merge_row(&m, &rows.rows[i], &rows.has, version, date);
	rep->offers_after = m.n;
	if (m.n > PRICE_MAX_OFFERINGS) {
		gp_error("%s: expected a price table of at most %d offerings, found %zu after the "
			 "merge (keep the rows of the GPU instances you plan with)", file,
			 PRICE_MAX_OFFERINGS, m.n);
		rc = RC_INPUT;
		goto out;
	}
	rep->user_rows = price_table_mark_user(m.offers, m.n, base, n_base);
	if (u->dry_run || rep->n_changes == 0)
		goto out;

	table = price_user_table_format(m.offers, m.n, &tlen);
	rc = price_store_commit(&p, table, tlen, rep->changes, rep->n_changes, stamp);
	if (rc == RC_OK)
		rep->written = 1;
out:
	price_store_unlock(lock);
	free(table);
	free(m.offers);
	free(m.order);
	free(base);
	free(mine);
	price_rows_release(&rows);
	free(gpus);
	free(shipped);
	if (rc != RC_OK)
		price_update_report_release(rep);
	return rc;
}
