/*
 * price_quota_update.c - merge a quota file into the user's quotas.csv:
 * every row is validated first (price_read.c), merged by its key
 * (provider, region, gpu, instance_type; an empty max_gpus removes the
 * stored quota), and each change recorded, through the store that keeps
 * prices too (price_store.c: the same lock, atomic write and crash-safe
 * history).  The catalog (price_catalog.c) resolves GPU names and says
 * which quotas bound no offering.
 *
 * It sits above the catalog: it calls price_catalog.c, price_quota.c,
 * price_read.c, price_store.c, price_csv.c and common/; nothing in
 * pricing/ calls it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_internal.h"

void price_quota_report_release(struct price_quota_report *rep)
{
	if (!rep)
		return;
	free(rep->changes);
	rep->changes = NULL;
	rep->n_changes = 0;
}

/* The user's quotas.csv text: the header, then one line per quota. */
static char *quota_table_format(const struct price_quota *q, size_t n, size_t *len)
{
	struct price_line b = { NULL, 0, 0 };

	price_csv_append(&b, "provider", 0);
	price_csv_append(&b, "region", 0);
	price_csv_append(&b, "gpu", 0);
	price_csv_append(&b, "instance_type", 0);
	price_csv_append(&b, "max_gpus", 1);
	for (size_t i = 0; i < n; i++) {
		char num[16];

		snprintf(num, sizeof(num), "%d", q[i].max_gpus);
		price_csv_append(&b, q[i].provider, 0);
		price_csv_append(&b, q[i].region, 0);
		price_csv_append(&b, q[i].gpu, 0);
		price_csv_append(&b, q[i].instance_type, 0);
		price_csv_append(&b, num, 1);
	}
	*len = b.len;
	return b.s;
}

struct quota_merge {
	struct price_quota *q;
	size_t n, cap;
	struct price_quota_report *rep;
	size_t cap_changes;
	/* The stored quotas q[0..n_stored), by key: each row is found in
	 * O(log n), and a removed one is marked, then dropped at the end,
	 * so a merge takes O((n + rows) log n), not O(n * rows).  Rows the
	 * file adds need no index: the file's keys are unique. */
	size_t *order, n_stored;
	unsigned char *removed;
};

static const struct price_quota *qsort_base;

static int order_cmp(const void *a, const void *b)
{
	return price_quota_key_cmp(&qsort_base[*(const size_t *)a], &qsort_base[*(const size_t *)b]);
}

static void quota_index(struct quota_merge *m)
{
	m->n_stored = m->n;
	m->order = xcalloc(m->n ? m->n : 1, sizeof(*m->order));
	m->removed = xcalloc(m->n ? m->n : 1, 1);
	for (size_t i = 0; i < m->n; i++)
		m->order[i] = i;
	qsort_base = m->q;
	qsort(m->order, m->n, sizeof(*m->order), order_cmp);
}

static long quota_find(const struct quota_merge *m, const struct price_quota *key)
{
	size_t lo = 0, hi = m->n_stored;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = price_quota_key_cmp(&m->q[m->order[mid]], key);

		if (c == 0)
			return m->removed[m->order[mid]] ? -1 : (long)m->order[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Drops the quotas marked removed, keeping the order of the rest. */
static void quota_compact(struct quota_merge *m)
{
	size_t k = 0;

	for (size_t i = 0; i < m->n; i++)
		if (i >= m->n_stored || !m->removed[i])
			m->q[k++] = m->q[i];
	m->n = k;
}

static struct price_change *quota_change(struct quota_merge *m, enum price_change_kind kind,
					 const struct price_quota *q, int old_n, int new_n)
{
	struct price_change *c = price_change_push(&m->rep->changes, &m->rep->n_changes,
						   &m->cap_changes, kind, q->provider,
						   q->instance_type, q->region, q->gpu, "max_gpus");

	if (old_n >= 0) {
		snprintf(c->old_value, sizeof(c->old_value), "%d", old_n);
		c->old_num = old_n;
	}
	if (new_n >= 0) {
		snprintf(c->new_value, sizeof(c->new_value), "%d", new_n);
		c->new_num = new_n;
	}
	return c;
}

/* Merges one row of file; see price_quota_update. */
static void quota_merge_row(struct quota_merge *m, const struct price_quota_row *row,
			    const char *file)
{
	long at = quota_find(m, &row->q);

	if (row->remove) {
		if (at < 0) {
			gp_warn("%s:%d: no stored quota (%s, %s, %s, %s) to remove", file, row->line,
				row->q.provider, row->q.region, row->q.gpu,
				row->q.instance_type[0] ? row->q.instance_type : "*");
			m->rep->not_stored++;
			return;
		}
		quota_change(m, PRICE_CHANGE_REMOVED, &m->q[at], m->q[at].max_gpus, -1);
		m->removed[at] = 1;
		m->rep->removed++;
		return;
	}
	if (at < 0) {
		if (m->n == m->cap) {
			m->cap = m->cap ? 2 * m->cap : 16;
			m->q = xrealloc(m->q, m->cap * sizeof(*m->q));
		}
		m->q[m->n++] = row->q;
		quota_change(m, PRICE_CHANGE_ADDED, &row->q, -1, row->q.max_gpus);
		m->rep->added++;
		return;
	}
	if (m->q[at].max_gpus == row->q.max_gpus) {
		m->rep->unchanged++;
		return;
	}
	quota_change(m, PRICE_CHANGE_CHANGED, &row->q, m->q[at].max_gpus, row->q.max_gpus);
	m->q[at] = row->q;
	m->rep->changed++;
}

enum rc price_quota_update(const char *file, const struct price_opts *o,
			   const struct price_update_opts *u, struct price_quota_report *rep)
{
	struct price_store p;
	struct price_catalog cat;
	struct price_csv csv;
	struct price_quota_row *rows = NULL;
	struct quota_merge m;
	char stamp[32], date[16];
	char *table = NULL;
	size_t n_rows = 0, tlen;
	int lock = -1, dry_run = u && u->dry_run;
	enum rc rc;

	memset(rep, 0, sizeof(*rep));
	memset(&m, 0, sizeof(m));
	rc = price_store_init(&p, o, "quotas", 1);
	if (rc != RC_OK)
		return rc;
	gp_strlcpy(rep->table_path, p.table, sizeof(rep->table_path));
	gp_strlcpy(rep->history_path, p.history, sizeof(rep->history_path));
	/* The GPU catalog resolves names; the offerings say which rows bound
	 * nothing. */
	rc = price_catalog_load(&cat, o);
	if (rc != RC_OK)
		return rc;

	/* Validate the whole file before touching anything. */
	rc = price_update_file_load(file, &csv);
	if (rc != RC_OK)
		goto out;
	rep->rows_read = csv.n_rows;
	if (csv.n_rows > PRICE_QUOTA_MAX_ROWS) {
		gp_error("%s: expected at most %d quota rows, found %zu", file, PRICE_QUOTA_MAX_ROWS,
			 csv.n_rows);
		price_csv_release(&csv);
		rc = RC_INPUT;
		goto out;
	}
	rc = price_quota_rows_read(&csv, cat.gpus, cat.n_gpus, 1, &rows, &n_rows);
	price_csv_release(&csv);
	if (rc != RC_OK)
		goto out;

	if (!dry_run) {
		rc = price_store_lock(&p, &lock);
		if (rc != RC_OK)
			goto out;
	}
	rc = price_quota_table_read(p.table, cat.gpus, cat.n_gpus, &m.q, &m.n);
	if (rc != RC_OK)
		goto out;
	m.cap = m.n;
	m.rep = rep;
	quota_index(&m);
	for (size_t i = 0; i < n_rows; i++) {
		quota_merge_row(&m, &rows[i], file);
		if (!rows[i].remove && price_quota_offerings(&cat, &rows[i].q) == 0) {
			if (rep->unmatched < PRICE_MAX_ERRORS)
				gp_warn("%s:%d: no offering in the price table matches (%s, %s, %s, %s); the quota is kept",
					file, rows[i].line, rows[i].q.provider, rows[i].q.region,
					rows[i].q.gpu,
					rows[i].q.instance_type[0] ? rows[i].q.instance_type : "*");
			rep->unmatched++;
		}
	}
	if (rep->unmatched > PRICE_MAX_ERRORS)
		gp_warn("%s: %zu more rows match no offering; each quota is kept", file,
			rep->unmatched - PRICE_MAX_ERRORS);
	quota_compact(&m);
	rep->quotas_after = m.n;
	if (m.n > PRICE_QUOTA_MAX_ROWS) {
		gp_error("%s: expected at most %d quota rows, found %zu after the merge", file,
			 PRICE_QUOTA_MAX_ROWS, m.n);
		rc = RC_INPUT;
		goto out;
	}
	if (dry_run || rep->n_changes == 0)
		goto out;

	price_utc_now(stamp, sizeof(stamp), date, sizeof(date));
	table = quota_table_format(m.q, m.n, &tlen);
	rc = price_store_commit(&p, table, tlen, rep->changes, rep->n_changes, stamp);
	if (rc == RC_OK)
		rep->written = 1;
out:
	price_store_unlock(lock);
	free(table);
	free(m.q);
	free(m.order);
	free(m.removed);
	free(rows);
	price_catalog_release(&cat);
	if (rc != RC_OK)
		price_quota_report_release(rep);
	return rc;
}
