/*
 * price_cost.c - what a GPU-hour costs beyond the on-demand and spot
 * columns of the price table: 1- and 3-year commitment discounts
 * (commitments.csv), how much of an offering can be bought as one unit and
 * how it is billed (capacity.csv; the reservations of blocks.csv are
 * price_block.c's), machines a user can buy (hardware.csv)
 * and the cost per hour of owning one (amortised purchase plus power with
 * the facility's PUE), and the offering that stands for hardware the user
 * already owns.
 *
 * It does not decide how much of a commitment's term a job pays for, nor
 * whether an owned hour is charged its purchase share: the planner and the
 * CLI do, and say so in their output.
 *
 * It calls price_csv.c, price_csv_table.c, price_gpu.c, price_find.c and
 * common/.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_internal.h"

const char *price_purchase_str(enum price_purchase p)
{
	switch (p) {
	case PRICE_PURCHASE_ON_DEMAND: return "on-demand";
	case PRICE_PURCHASE_SPOT: return "spot";
	case PRICE_PURCHASE_RESERVED_1Y: return "reserved-1y";
	case PRICE_PURCHASE_RESERVED_3Y: return "reserved-3y";
	case PRICE_PURCHASE_OWNED: return "owned";
	case PRICE_PURCHASE_BLOCK: return "capacity-block";
	}
	return "on-demand";
}

int price_purchase_term_months(enum price_purchase p)
{
	return p == PRICE_PURCHASE_RESERVED_1Y ? 12 : p == PRICE_PURCHASE_RESERVED_3Y ? 36 : 0;
}

/* ---- cells ---------------------------------------------------------------- */

int price_cell_text(struct price_errs *e, const struct price_csv *csv,
		    const struct price_csv_row *row, int col, char *dst, size_t size,
		    int required)
{
	const char *s = price_csv_get(row, col);

	if (gp_strlcpy(dst, s, size) != 0) {
		price_err(e, row->line, col + 1, "%s: expected at most %zu characters, found %zu",
			  csv->header.field[col], size - 1, strlen(s));
		return -1;
	}
	if (required && !*s) {
		price_err(e, row->line, col + 1, "%s: expected a value, found an empty cell",
			  csv->header.field[col]);
		return -1;
	}
	return 0;
}

/* A number in [lo, hi]; an empty cell is 0 when optional. */
int price_cell_number(struct price_errs *e, const struct price_csv *csv,
		      const struct price_csv_row *row, int col, double lo, double hi,
		      int required, double *out)
{
	const char *s = price_csv_get(row, col);
	double v;

	*out = 0;
	if (!*s && !required)
		return 0;
	if (unit_parse_double(s, &v) != RC_OK || v < lo || v > hi) {
		price_err(e, row->line, col + 1, "%s: expected a number from %g to %g, found '%s'",
			  csv->header.field[col], lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* The canonical name of the GPU a cell names, through gpus.csv aliases. */
static int need_gpu(struct price_errs *e, const struct price_csv *csv,
		    const struct price_csv_row *row, int col, const struct price_catalog *cat,
		    char *dst, size_t size)
{
	const char *s = price_csv_get(row, col);
	const struct price_gpu *g = price_gpu_find(cat, s);

	if (!g) {
		price_err(e, row->line, col + 1, "%s: expected a GPU of %s, found '%s'",
			  csv->header.field[col], cat->gpus_path ? cat->gpus_path : "gpus.csv", s);
		return -1;
	}
	gp_strlcpy(dst, g->name, size);
	return 0;
}

/* ---- host columns (hardware.csv, hosts.csv) ------------------------------- */

/* The host figures' columns, in struct price_host's order: memory in GB,
 * physical cores, PCIe per GPU and NVMe per node in GB/s one direction. */
static const char *const host_cols[4] = { "host_memory_gb", "host_cpu_cores",
					  "host_pcie_gb_per_s", "host_nvme_gb_per_s" };

/* Finds the host columns of csv (absent: -1 each, when optional). */
static void find_host_cols(const struct price_csv *csv, int *col)
{
	for (int i = 0; i < 4; i++)
		col[i] = price_csv_col(csv, host_cols[i]);
}

/* Reads the host cells of row (empty: 0, not stated) into h. */
static int need_host(struct price_errs *e, const struct price_csv *csv,
		     const struct price_csv_row *row, const int *col, struct price_host *h)
{
	double v[4] = { 0, 0, 0, 0 };
	int bad = 0;

	if (col[0] >= 0)
		bad |= price_cell_number(e, csv, row, col[0], 0.001, 1e9, 0, &v[0]);
	if (col[1] >= 0) {
		bad |= price_cell_number(e, csv, row, col[1], 1, PRICE_HOST_MAX_CORES, 0, &v[1]);
		if (!bad && v[1] != floor(v[1])) {
			price_err(e, row->line, col[1] + 1, "%s: expected a whole number, found '%s'",
				  host_cols[1], price_csv_get(row, col[1]));
			bad = 1;
		}
	}
	for (int i = 2; i < 4; i++)
		if (col[i] >= 0)
			bad |= price_cell_number(e, csv, row, col[i], 0.001, 1e5, 0, &v[i]);
	h->memory_bytes = v[0] * 1e9;
	h->cpu_cores = v[1];
	h->pcie_bytes_per_s = v[2] * 1e9;
	h->nvme_bytes_per_s = v[3] * 1e9;
	return bad;
}

enum { O_PROVIDER, O_TYPE, O_SOURCE, O_N };

enum rc price_hosts_load(const char *path, struct price_hosts *out)
{
	static const char *const need[O_N] = { "provider", "instance_type", "source" };
	struct price_errs e = { path, 0 };
	struct price_csv csv;
	int col[O_N], hcol[4];
	size_t k = 0;
	enum rc rc;

	memset(out, 0, sizeof(*out));
	rc = price_csv_load(path, &csv);
	if (rc != RC_OK)
		return rc;
	if (price_cell_cols(&e, &csv, need, col, O_N) || price_cell_cols(&e, &csv, host_cols, hcol, 4)) {
		price_csv_release(&csv);
		return RC_INPUT;
	}
	out->rows = xcalloc(csv.n_rows ? csv.n_rows : 1, sizeof(*out->rows));
	for (size_t i = 0; i < csv.n_rows; i++) {
		const struct price_csv_row *row = &csv.rows[i];
		struct price_host_row *h = &out->rows[k];
		int bad = 0;

		bad |= price_cell_text(&e, &csv, row, col[O_PROVIDER], h->provider, sizeof(h->provider), 1);
		bad |= price_cell_text(&e, &csv, row, col[O_TYPE], h->instance_type,
				       sizeof(h->instance_type), 1);
		bad |= price_cell_text(&e, &csv, row, col[O_SOURCE], h->source, sizeof(h->source), 1);
		bad |= need_host(&e, &csv, row, hcol, &h->host);
		for (size_t j = 0; j < k && !bad; j++)
			if (gp_streq_nocase(out->rows[j].provider, h->provider) &&
			    strcmp(out->rows[j].instance_type, h->instance_type) == 0) {
				price_err(&e, row->line, col[O_TYPE] + 1,
					  "expected one row per (provider, instance_type), found %s %s again",
					  h->provider, h->instance_type);
				bad = 1;
			}
		if (!bad)
			k++;
	}
	price_errs_finish(&e);
	price_csv_release(&csv);
	if (e.n) {
		price_hosts_release(out);
		return RC_INPUT;
	}
	out->n = k;
	return RC_OK;
}

void price_hosts_release(struct price_hosts *t)
{
	if (!t)
		return;
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const struct price_host *price_host_find(const struct price_hosts *t,
					 const struct price_offering *o)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (gp_streq_nocase(t->rows[i].provider, o->provider) &&
		    strcmp(t->rows[i].instance_type, o->instance_type) == 0)
			return &t->rows[i].host;
	return NULL;
}

/* ---- commitments.csv ------------------------------------------------------- */

enum { C_PROVIDER, C_PREFIX, C_GPU, C_TERM, C_DISCOUNT, C_DATE, C_SOURCE, C_N };

static const char *const commitment_cols[C_N] = { "provider", "instance_prefix", "gpu",
						   "term_years", "discount_pct", "price_date",
						   "source" };
static const char *const commitment_opt[] = { "base_instance_type", "base_region",
					      "base_usd_per_hour" };

/* The optional columns, after C_N in col[]. */
enum { C_BASE_INST = C_N, C_BASE_REGION, C_BASE_USD };

/* Reads one row of commitments.csv into dst (struct price_commitment);
 * ctx is the catalog that names the GPUs. */
static int read_commitment(struct price_errs *e, const struct price_csv *csv,
			   const struct price_csv_row *row, const int *col, void *dst,
			   const void *ctx)
{
	struct price_commitment *c = dst;
	double years, pct;
	int bad = 0;

	bad |= price_cell_text(e, csv, row, col[C_PROVIDER], c->provider, sizeof(c->provider), 1);
	bad |= price_cell_text(e, csv, row, col[C_PREFIX], c->instance_prefix,
			       sizeof(c->instance_prefix), 0);
	bad |= need_gpu(e, csv, row, col[C_GPU], ctx, c->gpu, sizeof(c->gpu));
	bad |= price_cell_number(e, csv, row, col[C_TERM], 1, 3, 1, &years);
	if (!bad && years != 1 && years != 3) {
		price_err(e, row->line, col[C_TERM] + 1, "term_years: expected 1 or 3, found '%s'",
			  price_csv_get(row, col[C_TERM]));
		bad = 1;
	}
	/* A discount of 0 or 100% is a typo, not a commitment. */
	bad |= price_cell_number(e, csv, row, col[C_DISCOUNT], 0.01, 99.99, 1, &pct);
	bad |= price_cell_text(e, csv, row, col[C_DATE], c->price_date, sizeof(c->price_date), 1);
	bad |= price_cell_text(e, csv, row, col[C_SOURCE], c->source, sizeof(c->source), 1);
	if (col[C_BASE_INST] >= 0)
		bad |= price_cell_text(e, csv, row, col[C_BASE_INST], c->base_instance_type,
				       sizeof(c->base_instance_type), 0);
	if (col[C_BASE_REGION] >= 0)
		bad |= price_cell_text(e, csv, row, col[C_BASE_REGION], c->base_region,
				       sizeof(c->base_region), 0);
	if (col[C_BASE_USD] >= 0)
		bad |= price_cell_number(e, csv, row, col[C_BASE_USD], 0.0001, PRICE_USD_PER_HOUR_MAX,
					 0, &c->base_usd_per_hour);
	if (bad)
		return -1;
	c->term_months = (int)years * 12;
	c->discount = pct / 100.0;
	return 0;
}

static int same_commitment(const void *a_, const void *b_)
{
	const struct price_commitment *a = a_, *b = b_;

	return gp_streq_nocase(a->provider, b->provider) &&
	       strcmp(a->instance_prefix, b->instance_prefix) == 0 &&
	       strcmp(a->gpu, b->gpu) == 0 && a->term_months == b->term_months;
}

static void commitment_key(const void *row, char *buf, size_t size)
{
	const struct price_commitment *c = row;

	snprintf(buf, size, "%s %s %s %d y", c->provider, c->instance_prefix, c->gpu,
		 c->term_months / 12);
}

/* commitments.csv as price_csv_table_load reads it. */
static const struct price_csv_table commitment_table = {
	.cols = commitment_cols, .n_cols = C_N,
	.opt = commitment_opt, .n_opt = GP_ARRAY_LEN(commitment_opt),
	.row_size = sizeof(struct price_commitment), .read_row = read_commitment,
	.same_key = same_commitment, .key_str = commitment_key,
	.key_names = "(provider, instance_prefix, gpu, term)", .key_col = C_PREFIX,
};

enum rc price_commitments_load(const char *path, const struct price_catalog *cat,
			       struct price_commitments *out)
{
	void *rows = NULL;
	enum rc rc;

	memset(out, 0, sizeof(*out));
	rc = price_csv_table_load(path, &commitment_table, cat, &rows, &out->n);
	out->rows = rows;
	return rc;
}

void price_commitments_release(struct price_commitments *t)
{
	if (!t)
		return;
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const struct price_commitment *price_commitment_find(const struct price_commitments *t,
						     const struct price_offering *o,
						     int term_months)
{
	const struct price_commitment *best = NULL;

	if (!t || o->owned || !(o->on_demand_usd_per_hour >= 0))
		return NULL;
	/* The longest matching prefix is the most specific row. */
	for (size_t i = 0; i < t->n; i++) {
		const struct price_commitment *c = &t->rows[i];
		size_t n = strlen(c->instance_prefix);

		if (c->term_months != term_months || !gp_streq_nocase(c->provider, o->provider) ||
		    strcmp(c->gpu, o->gpu) != 0 || strncmp(o->instance_type, c->instance_prefix, n))
			continue;
		if (!best || n > strlen(best->instance_prefix))
			best = c;
	}
	return best;
}

/* ---- capacity.csv ---------------------------------------------------------- */

enum { K_PROVIDER, K_PREFIX, K_MAX, K_SPOT_MAX, K_INCREMENT, K_MIN_BILL, K_PROVISION,
       K_SOURCE, K_N };

/* A whole count in [0, hi] from a number cell (empty: 0, not stated). */
static int need_count(struct price_errs *e, const struct price_csv *csv,
		      const struct price_csv_row *row, int col, int hi, int *out)
{
	double v;

	*out = 0;
	if (price_cell_number(e, csv, row, col, 1, hi, 0, &v))
		return -1;
	if (v != floor(v)) {
		price_err(e, row->line, col + 1, "%s: expected a whole number, found '%s'",
			  csv->header.field[col], price_csv_get(row, col));
		return -1;
	}
	*out = (int)v;
	return 0;
}

static const char *const capacity_cols[K_N] = { "provider", "instance_prefix", "max_nodes",
						 "spot_max_nodes", "billing_increment_s",
						 "min_billing_s", "provision_s", "source" };
static const char *const capacity_opt[] = { "node_multiple", "policy_max_nodes" };

/* The optional columns, after K_N in col[]. */
enum { K_MULT = K_N, K_POLICY };

/* Reads one row of capacity.csv into dst (struct price_capacity). */
static int read_capacity(struct price_errs *e, const struct price_csv *csv,
			 const struct price_csv_row *row, const int *col, void *dst,
			 const void *ctx)
{
	struct price_capacity *c = dst;
	int bad = 0;

	(void)ctx;
	bad |= price_cell_text(e, csv, row, col[K_PROVIDER], c->provider, sizeof(c->provider), 1);
	bad |= price_cell_text(e, csv, row, col[K_PREFIX], c->instance_prefix,
			       sizeof(c->instance_prefix), 1);
	bad |= need_count(e, csv, row, col[K_MAX], 1000000, &c->max_nodes);
	bad |= need_count(e, csv, row, col[K_SPOT_MAX], 1000000, &c->spot_max_nodes);
	if (col[K_MULT] >= 0)
		bad |= need_count(e, csv, row, col[K_MULT], 1000000, &c->node_multiple);
	if (col[K_POLICY] >= 0)
		bad |= need_count(e, csv, row, col[K_POLICY], 1000000, &c->policy_max_nodes);
	/* Billing and provisioning: at most a year, the longest
	 * term anyone sells by the increment. */
	bad |= price_cell_number(e, csv, row, col[K_INCREMENT], 1, PRICE_HOURS_PER_YEAR * 3600, 0,
				 &c->billing_increment_s);
	bad |= price_cell_number(e, csv, row, col[K_MIN_BILL], 1, PRICE_HOURS_PER_YEAR * 3600, 0,
				 &c->min_billing_s);
	bad |= price_cell_number(e, csv, row, col[K_PROVISION], 1, PRICE_HOURS_PER_YEAR * 3600, 0,
				 &c->provision_s);
	bad |= price_cell_text(e, csv, row, col[K_SOURCE], c->source, sizeof(c->source), 1);
	if (bad)
		return -1;
	/* A policy stands in for a bound the provider does not state;
	 * both at once would leave a reader unsure which is whose. */
	if (c->max_nodes > 0 && c->policy_max_nodes > 0) {
		price_err(e, row->line, col[K_POLICY] + 1,
			  "policy_max_nodes: expected it empty where max_nodes (%d) is stated, "
			  "found %d", c->max_nodes, c->policy_max_nodes);
		return -1;
	}
	if (c->max_nodes > 0 && c->spot_max_nodes > c->max_nodes) {
		price_err(e, row->line, col[K_SPOT_MAX] + 1,
			  "spot_max_nodes: expected at most max_nodes (%d), found %d",
			  c->max_nodes, c->spot_max_nodes);
		return -1;
	}
	/* A bound between two whole units would be rounded down
	 * unseen: say so here instead. */
	if (c->node_multiple > 1 && (c->max_nodes % c->node_multiple ||
				     c->spot_max_nodes % c->node_multiple ||
				     c->policy_max_nodes % c->node_multiple)) {
		int which = c->max_nodes % c->node_multiple ? 0
			    : c->spot_max_nodes % c->node_multiple ? 1 : 2;
		static const char *const names[] = { "max_nodes", "spot_max_nodes",
						     "policy_max_nodes" };
		int v[] = { c->max_nodes, c->spot_max_nodes, c->policy_max_nodes };

		price_err(e, row->line, col[which == 0 ? K_MAX : which == 1 ? K_SPOT_MAX : K_POLICY] + 1,
			  "%s: expected a whole multiple of node_multiple (%d), found %d",
			  names[which], c->node_multiple, v[which]);
		return -1;
	}
	return 0;
}

static int same_capacity(const void *a_, const void *b_)
{
	const struct price_capacity *a = a_, *b = b_;

	return gp_streq_nocase(a->provider, b->provider) &&
	       strcmp(a->instance_prefix, b->instance_prefix) == 0;
}

static void capacity_key(const void *row, char *buf, size_t size)
{
	const struct price_capacity *c = row;

	snprintf(buf, size, "%s %s", c->provider, c->instance_prefix);
}

/* capacity.csv as price_csv_table_load reads it. */
static const struct price_csv_table capacity_table = {
	.cols = capacity_cols, .n_cols = K_N,
	.opt = capacity_opt, .n_opt = GP_ARRAY_LEN(capacity_opt),
	.row_size = sizeof(struct price_capacity), .read_row = read_capacity,
	.same_key = same_capacity, .key_str = capacity_key,
	.key_names = "(provider, instance_prefix)", .key_col = K_PREFIX,
};

enum rc price_capacities_load(const char *path, struct price_capacities *out)
{
	void *rows = NULL;
	enum rc rc;

	memset(out, 0, sizeof(*out));
	rc = price_csv_table_load(path, &capacity_table, NULL, &rows, &out->n);
	out->rows = rows;
	return rc;
}

void price_capacities_release(struct price_capacities *t)
{
	if (!t)
		return;
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const struct price_capacity *price_capacity_find(const struct price_capacities *t,
						 const struct price_offering *o)
{
	const struct price_capacity *best = NULL, *any = NULL;

	for (size_t i = 0; t && i < t->n; i++) {
		const struct price_capacity *c = &t->rows[i];
		size_t n = strlen(c->instance_prefix);

		if (!gp_streq_nocase(c->provider, o->provider))
			continue;
		if (strcmp(c->instance_prefix, "*") == 0)
			any = c;
		else if (strncmp(o->instance_type, c->instance_prefix, n) == 0 &&
			 (!best || n > strlen(best->instance_prefix)))
			best = c;
	}
	return best ? best : any;
}

void price_offering_set_capacity(struct price_offering *o, const struct price_capacity *c)
{
	o->capacity_nodes = c ? c->max_nodes : 0;
	o->spot_capacity_nodes = c ? c->spot_max_nodes : 0;
	o->policy_nodes = c ? c->policy_max_nodes : 0;
	o->node_multiple = c ? c->node_multiple : 0;
	o->billing_increment_s = c ? c->billing_increment_s : 0;
	o->min_billing_s = c ? c->min_billing_s : 0;
	o->provision_s = c ? c->provision_s : 0;
	gp_strlcpy(o->capacity_source, c ? c->source : "", sizeof(o->capacity_source));
}

const char *price_limit_str(enum price_limit l)
{
	switch (l) {
	case PRICE_LIMIT_NONE: return "none";
	case PRICE_LIMIT_NETWORK: return "no cluster network";
	case PRICE_LIMIT_UNSTATED: return "capacity not stated";
	case PRICE_LIMIT_CAPACITY: return "capacity";
	case PRICE_LIMIT_POLICY: return "policy";
	case PRICE_LIMIT_SPOT: return "spot capacity";
	case PRICE_LIMIT_QUOTA: return "quota";
	case PRICE_LIMIT_BLOCK: return "product size";
	}
	return "none";
}

/* The bound of the offering's own figures (price_offering_node_limit). */
static void own_limit(const struct price_offering *o, int spot, struct price_node_limit *out)
{
	int cap = o->max_nodes > 0 ? o->max_nodes : o->capacity_nodes;

	memset(out, 0, sizeof(*out));
	out->nodes = 1;
	if (!(o->inter_node_bytes_per_s > 0)) {
		out->why = PRICE_LIMIT_NETWORK;
		return;
	}
	if (cap > 0) {
		out->nodes = cap;
		out->why = PRICE_LIMIT_CAPACITY;
	} else if (o->quota && o->gpus_per_node >= 1) {
		/* The provider states no bound: the user's quota is it, above
		 * gpuplan's policy or below (price_limit_apply_quota keeps it). */
		out->nodes = o->quota->max_gpus / o->gpus_per_node;
		out->why = PRICE_LIMIT_QUOTA;
		out->quota_gpus = o->quota->max_gpus;
	} else if (o->policy_nodes > 0) {
		out->nodes = o->policy_nodes;
		out->why = PRICE_LIMIT_POLICY;
	} else {
		out->why = PRICE_LIMIT_UNSTATED;
		return;
	}
	if (spot && !o->owned) {
		int s = o->spot_capacity_nodes > 0 ? o->spot_capacity_nodes : 1;

		if (s < out->nodes) {
			out->nodes = s;
			out->why = o->spot_capacity_nodes > 0 ? PRICE_LIMIT_SPOT : PRICE_LIMIT_UNSTATED;
		}
	}
}

/* The quota bounds whatever the offering's own figures allowed; then the
 * count is rounded down to whole units of the offering's node_multiple
 * (an UltraServer of 18 nodes is rented whole or not at all; a plan may
 * run on fewer of its nodes, price_node_limit_billed). */
void price_limit_apply_quota(const struct price_offering *o, struct price_node_limit *out)
{
	int q;

	out->multiple = o->node_multiple > 1 ? o->node_multiple : 1;
	if (o->quota && o->gpus_per_node >= 1) {
		q = o->quota->max_gpus / o->gpus_per_node;
		if (q < out->nodes) {
			out->nodes = q;
			out->why = PRICE_LIMIT_QUOTA;
			out->quota_gpus = o->quota->max_gpus;
		}
	}
	out->nodes -= out->nodes % out->multiple;
}

int price_node_limit_billed(const struct price_node_limit *l, int nodes)
{
	int m = l->multiple > 1 ? l->multiple : 1;

	return (nodes + m - 1) / m * m;
}

int price_nvlink_domain(const struct price_offering *o, const struct price_gpu *g)
{
	int d = o->nvlink_domain > 0 ? o->nvlink_domain : g ? g->nvlink_domain : 0;

	return d > o->gpus_per_node ? d : o->gpus_per_node;
}

void price_offering_node_limit(const struct price_offering *o, int spot,
			       struct price_node_limit *out)
{
	own_limit(o, spot, out);
	price_limit_apply_quota(o, out);
}

/* ---- hardware.csv ---------------------------------------------------------- */

enum { H_NAME, H_DESC, H_GPU, H_GPUS, H_PRICE, H_SCOPE, H_HOST, H_NIC, H_DATE, H_VENDOR,
       H_SOURCE, H_N };

enum rc price_hardware_load(const char *path, const struct price_catalog *cat,
			    struct price_hardware_table *out)
{
	static const char *const need[H_N] = { "name", "description", "gpu", "gpus", "price_usd",
					       "price_scope", "host_power_w", "nic_gbps",
					       "price_date", "vendor", "source" };
	struct price_errs e = { path, 0 };
	struct price_csv csv;
	int col[H_N], hcol[4];
	size_t k = 0;
	enum rc rc;

	memset(out, 0, sizeof(*out));
	rc = price_csv_load(path, &csv);
	if (rc != RC_OK)
		return rc;
	if (price_cell_cols(&e, &csv, need, col, H_N)) {
		price_csv_release(&csv);
		return RC_INPUT;
	}
	find_host_cols(&csv, hcol);
	out->rows = xcalloc(csv.n_rows ? csv.n_rows : 1, sizeof(*out->rows));
	for (size_t i = 0; i < csv.n_rows; i++) {
		const struct price_csv_row *row = &csv.rows[i];
		struct price_hardware *h = &out->rows[k];
		const char *scope = price_csv_get(row, col[H_SCOPE]);
		double gpus, nic;
		int bad = 0;

		bad |= price_cell_text(&e, &csv, row, col[H_NAME], h->name, sizeof(h->name), 1);
		bad |= price_cell_text(&e, &csv, row, col[H_DESC], h->description, sizeof(h->description), 1);
		bad |= need_gpu(&e, &csv, row, col[H_GPU], cat, h->gpu, sizeof(h->gpu));
		bad |= price_cell_number(&e, &csv, row, col[H_GPUS], 1, 64, 1, &gpus);
		if (!bad && gpus != floor(gpus)) {
			price_err(&e, row->line, col[H_GPUS] + 1, "gpus: expected a whole number, found '%s'",
				  price_csv_get(row, col[H_GPUS]));
			bad = 1;
		}
		bad |= price_cell_number(&e, &csv, row, col[H_PRICE], 1, 1e9, 1, &h->price_usd);
		if (strcmp(scope, "server") == 0) {
			h->cards_only = 0;
		} else if (strcmp(scope, "cards") == 0) {
			h->cards_only = 1;
		} else {
			price_err(&e, row->line, col[H_SCOPE] + 1,
				  "price_scope: expected server or cards, found '%s'", scope);
			bad = 1;
		}
		bad |= price_cell_number(&e, &csv, row, col[H_HOST], 0, 1e6, 1, &h->host_power_w);
		bad |= price_cell_number(&e, &csv, row, col[H_NIC], 0, 1e6, 0, &nic);
		bad |= price_cell_text(&e, &csv, row, col[H_DATE], h->price_date, sizeof(h->price_date), 1);
		bad |= price_cell_text(&e, &csv, row, col[H_VENDOR], h->vendor, sizeof(h->vendor), 1);
		bad |= price_cell_text(&e, &csv, row, col[H_SOURCE], h->source, sizeof(h->source), 1);
		bad |= need_host(&e, &csv, row, hcol, &h->host);
		if (bad)
			continue;
		h->gpus = (int)gpus;
		h->inter_node_bytes_per_s = price_gbps_to_bytes_per_s(nic);
		for (size_t j = 0; j < k; j++)
			if (strcmp(out->rows[j].name, h->name) == 0) {
				price_err(&e, row->line, col[H_NAME] + 1,
					  "name: expected unique machine names, found '%s' again", h->name);
				bad = 1;
				break;
			}
		if (!bad)
			k++;
	}
	price_errs_finish(&e);
	price_csv_release(&csv);
	if (e.n) {
		price_hardware_release(out);
		return RC_INPUT;
	}
	out->n = k;
	return RC_OK;
}

void price_hardware_release(struct price_hardware_table *t)
{
	if (!t)
		return;
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const struct price_hardware *price_hardware_for_gpu(const struct price_hardware_table *t,
						    const char *gpu)
{
	const struct price_hardware *best = NULL;

	for (size_t i = 0; t && i < t->n; i++) {
		const struct price_hardware *h = &t->rows[i];

		if (strcmp(h->gpu, gpu) != 0)
			continue;
		if (!best || h->price_usd / h->gpus < best->price_usd / best->gpus)
			best = h;
	}
	return best;
}

/* ---- owning ---------------------------------------------------------------- */

void price_owned_opts_init(struct price_owned_opts *o)
{
	o->amortisation_years = PRICE_DEFAULT_AMORTISATION_YEARS;
	o->usd_per_kwh = PRICE_DEFAULT_USD_PER_KWH;
	o->pue = PRICE_DEFAULT_PUE;
	o->utilisation = PRICE_DEFAULT_UTILISATION;
}

enum rc price_owned_opts_check(const struct price_owned_opts *o, char *why, size_t size)
{
	if (!(o->amortisation_years > 0) || !isfinite(o->amortisation_years))
		snprintf(why, size, "amortisation: expected a period > 0, found %g years",
			 o->amortisation_years);
	else if (!(o->usd_per_kwh >= 0) || !isfinite(o->usd_per_kwh))
		snprintf(why, size, "usd-per-kwh: expected a price >= 0, found %g", o->usd_per_kwh);
	else if (!(o->pue >= 1) || !isfinite(o->pue))
		snprintf(why, size, "pue: expected a ratio >= 1, found %g", o->pue);
	else if (!(o->utilisation > 0 && o->utilisation <= 1))
		snprintf(why, size, "utilisation: expected a fraction in (0, 1], found %g",
			 o->utilisation);
	else
		return RC_OK;
	return RC_USAGE;
}

int price_owned_cost(const struct price_hardware *h, const struct price_gpu *g,
		     const struct price_owned_opts *o, struct price_owned_cost *out)
{
	memset(out, 0, sizeof(*out));
	if (!(g->tdp_w > 0))
		return -1;
	/* Board power at full load times the count, plus the host (CPUs,
	 * memory, NICs, fans) as hardware.csv states it. */
	out->power_w = g->tdp_w * h->gpus + h->host_power_w;
	/* Straight-line amortisation over the hours the machine is busy: an
	 * idle hour still ages it, so the purchase is spread over
	 * life x utilisation hours, not the whole life. */
	out->capex_usd_per_hour = h->price_usd /
				  (o->amortisation_years * PRICE_HOURS_PER_YEAR * o->utilisation);
	/* The facility draws PUE times the IT load (cooling, conversion). */
	out->power_usd_per_hour = out->power_w / 1000.0 * o->pue * o->usd_per_kwh;
	out->usd_per_hour = out->capex_usd_per_hour + out->power_usd_per_hour;
	out->capex_usd_per_gpu_hour = out->capex_usd_per_hour / h->gpus;
	out->power_usd_per_gpu_hour = out->power_usd_per_hour / h->gpus;
	out->usd_per_gpu_hour = out->usd_per_hour / h->gpus;
	return 0;
}

void price_catalog_add_owned(struct price_catalog *cat, const struct price_hardware *h,
			     int nodes, double usd_per_node_hour)
{
	struct price_offering *o;

	cat->offers = xrealloc(cat->offers, (cat->n_offers + 1) * sizeof(*cat->offers));
	o = &cat->offers[cat->n_offers++];
	memset(o, 0, sizeof(*o));
	gp_strlcpy(o->provider, "owned", sizeof(o->provider));
	gp_strlcpy(o->instance_type, h->name, sizeof(o->instance_type));
	gp_strlcpy(o->gpu, h->gpu, sizeof(o->gpu));
	gp_strlcpy(o->region, "local", sizeof(o->region));
	gp_strlcpy(o->version, h->price_date, sizeof(o->version));
	o->gpus_per_node = h->gpus;
	o->on_demand_usd_per_hour = usd_per_node_hour;
	o->spot_usd_per_hour = -1;
	o->inter_node_bytes_per_s = h->inter_node_bytes_per_s;
	o->max_nodes = nodes;
	o->owned = 1;
	o->host = h->host;
}
