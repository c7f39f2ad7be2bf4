/*
 * price_internal.h - what the pricing module's files share and nothing
 * outside pricing/ may use: the cell readers of the cost tables, the
 * parsed form of one input row, the table reader for both column sets
 * (gpuplan's own and SkyPilot's), the quota reader, the writer, and the
 * store that keeps a user's table and its history.  The error counter
 * that keeps bad-input reports to one line each is price_csv.h's.
 */
#ifndef GPUPLAN_PRICE_INTERNAL_H
#define GPUPLAN_PRICE_INTERNAL_H

#include <stddef.h>

#include "price.h"
#include "price_csv.h"

/* Reads the nvlink_domain cell at col of row (gpus.csv's and prices.csv's
 * alike): a whole number of GPUs from 0 to PRICE_MAX_NVLINK_DOMAIN, "" or
 * an absent column (col < 0) being 0 (not stated).  Returns 0, or -1
 * after one message; *out is 0 then. */
int price_cell_nvlink_domain(struct price_errs *e, const struct price_csv_row *row, int col,
			     int *out);

/* ---- cells of the cost tables (price_cost.c) ------------------------------- */

/* Copies the cell at col into dst[size]; an empty cell is an error when
 * required.  Returns 0, or -1 after one message. */
int price_cell_text(struct price_errs *e, const struct price_csv *csv,
		    const struct price_csv_row *row, int col, char *dst, size_t size,
		    int required);
/* A number in [lo, hi] into *out; an empty cell is 0 when optional.
 * Returns 0, or -1 after one message. */
int price_cell_number(struct price_errs *e, const struct price_csv *csv,
		      const struct price_csv_row *row, int col, double lo, double hi,
		      int required, double *out);
/* Looks up every name of need[] among the header's columns into col[];
 * reports the missing ones (price_csv_table.c).  Returns the count
 * missing. */
int price_cell_cols(struct price_errs *e, const struct price_csv *csv,
		    const char *const *need, int *col, size_t n);
/* Bounds out by o's quota, then rounds it down to whole units of o's
 * node_multiple (price_offering_node_limit's last step). */
void price_limit_apply_quota(const struct price_offering *o, struct price_node_limit *out);

/* Calls fn for each ';'-separated, blank-trimmed alias of g (price_find.c).
 * Stops and returns 1 when fn does. */
int price_gpu_each_alias(const struct price_gpu *g,
			 int (*fn)(const char *s, size_t n, void *ctx), void *ctx);

/* ---- rows of a price file (price_read.c) -------------------------------- */

/* One offering read from an input file, with where it came from. */
struct price_row {
	struct price_offering o;
	int line;
	int gpu_by_alias;      /* the GPU cell named an alias, not a canonical name */
	char zone[PRICE_NAME_MAX]; /* SkyPilot AvailabilityZone; "" otherwise */
};

/* Which optional gpuplan columns the file had: an absent column leaves the
 * stored value alone when merging, a present one replaces it. */
struct price_cols_present {
	int spot, inter_node, max_nodes, version, price_date, nvlink_domain;
};

struct price_rows {
	struct price_row *rows;
	size_t n;
	struct price_cols_present has;
};

/* What price_rows_read reads: a stored table (gpuplan's columns; a price
 * on every row), an update (also SkyPilot's columns), or the shipped
 * table, where a row may have neither price when it is sold only as a
 * capacity block (price_data_check makes sure blocks.csv sells it). */
enum price_read_mode {
	PRICE_READ_TABLE = 0,
	PRICE_READ_UPDATE = 1,
	PRICE_READ_SHIPPED = 2,
};

/* Reads the data rows of csv into out.  The format is chosen by header
 * names: SkyPilot's when there is an InstanceType column (allowed only in
 * PRICE_READ_UPDATE; provider then names the cloud and is required), else
 * gpuplan's (provider optional; when given, every row must match it).
 * GPU names are resolved through gpus[0..n_gpus).  Every bad cell is
 * reported; returns RC_OK, RC_INPUT or RC_USAGE (no provider for a SkyPilot
 * file).  Availability zones of one region are folded into one row keeping
 * the lowest prices.  rep (may be NULL) counts what was skipped. */
enum rc price_rows_read(const struct price_csv *csv, const struct price_gpu *gpus,
			size_t n_gpus, const char *provider, enum price_read_mode mode,
			struct price_rows *out, struct price_update_report *rep);
void price_rows_release(struct price_rows *r);

/* Orders offerings by (provider, instance_type, region). */
int price_offer_key_cmp(const struct price_offering *a, const struct price_offering *b);

/* ---- price tables (price_table.c) ---------------------------------------- */

/* Loads a gpuplan-format price table from path into a new array. */
enum rc price_table_read(const char *path, const struct price_gpu *gpus, size_t n_gpus,
			 struct price_offering **out, size_t *n);

/* Loads the user's prices.csv at path into a new array (*out, *n), each
 * row with .user set.  A file whose first line is PRICE_USER_MARKER holds
 * the user's rows and may have none; a file without it is a full copy an
 * older gpuplan wrote (*legacy = 1), read as it always was.  Messages name
 * the file's own lines.  An absent file is an empty table.  Returns RC_OK,
 * RC_INPUT (bad rows, or a format newer than 2) or RC_ERR. */
enum rc price_user_table_read(const char *path, const struct price_gpu *gpus, size_t n_gpus,
			      struct price_offering **out, size_t *n, int *legacy);

/* Lays user[0..n_user) over shipped[0..n_shipped) into a new array of *n
 * offerings: the shipped rows in their order, each replaced by the user's
 * row of the same (provider, instance_type, region), then the user's rows
 * of other keys in their order.  The caller frees the array. */
struct price_offering *price_table_overlay(const struct price_offering *shipped, size_t n_shipped,
					   const struct price_offering *user, size_t n_user,
					   size_t *n);

/* Marks .user on every offering of table[0..n) that differs from the row
 * of its key in shipped[0..n_shipped) (as the written CSV lines compare),
 * or whose key shipped lacks, and clears it on the others.  Returns how
 * many it marked. */
size_t price_table_mark_user(struct price_offering *table, size_t n,
			     const struct price_offering *shipped, size_t n_shipped);

/* Formats the offerings of table[0..n) with .user set as the user's
 * prices.csv: the line PRICE_USER_MARKER, then as price_table_format. */
char *price_user_table_format(const struct price_offering *table, size_t n, size_t *len);

/* A growing NUL-terminated text buffer for CSV output. */
struct price_line {
	char *s;
	size_t len, cap;
};

/* Appends field s to line as one CSV field (quoted when it holds a comma,
 * a quote, a line end or surrounding blanks), followed by ',' or, when
 * last, '\n' (price_store.c, which writes the histories with it). */
void price_csv_append(struct price_line *line, const char *s, int last);

/* Formats offers as a gpuplan prices.csv (header, one row per offering,
 * LF line ends) into a new NUL-terminated buffer; *len gets its length. */
char *price_table_format(const struct price_offering *offers, size_t n, size_t *len);

/* Shortest "%.Ng" text of v that reads back as v; "" when v < 0 (a price
 * not offered) and when empty_zero and v == 0. */
void price_num_format(char *buf, size_t size, double v, int empty_zero);

/* ---- quotas (price_read.c reads rows, price_quota.c the user's table;
 * price_quota_update.c merges and writes it) ----------------------------- */

/* One quota read from a file, with where it came from. */
struct price_quota_row {
	struct price_quota q;
	int line;
	int remove;            /* max_gpus was empty: remove the stored quota */
};

/* Orders quotas by (provider, region, gpu, instance_type), ASCII case-
 * insensitive: the key updates merge by. */
int price_quota_key_cmp(const struct price_quota *a, const struct price_quota *b);

/* Reads the data rows of csv as quotas into a new array (*out, *n; the
 * caller frees it), resolving GPU names through gpus[0..n_gpus).  With
 * allow_remove an empty max_gpus cell reads as a removal, else it is an
 * error.  Every bad cell is reported, and a key the file repeats; returns
 * RC_OK or RC_INPUT. */
enum rc price_quota_rows_read(const struct price_csv *csv, const struct price_gpu *gpus,
			      size_t n_gpus, int allow_remove, struct price_quota_row **out,
			      size_t *n);

/* Loads the user's quotas.csv at path into a new array (*out, *n; an
 * absent file is an empty one).  Returns RC_OK, RC_INPUT or RC_ERR. */
enum rc price_quota_table_read(const char *path, const struct price_gpu *gpus, size_t n_gpus,
			       struct price_quota **out, size_t *n);

/* ---- the user's stored tables (price_store.c) --------------------------- */

/* Where one of the user's tables lives: <dir>/<name>.csv, its history
 * <name>.history.csv, the history of an update under way
 * <name>.history.pending, the lock <name>.lock and temporary tables
 * .<name>.csv.tmp.<pid>. */
struct price_store {
	char dir[1024];
	char table[1100];
	char history[1100];
	char pending[1100];
	char lock[1100];
	char tmp_prefix[80];
	int gpu_key;         /* 1: rows are keyed by GPU too (quotas) */
};

/* 1 when path names a regular file, else 0 (absent, unreadable or not a
 * regular file). */
int price_file_exists(const char *path);

/* Fills s for the table name ("prices", "quotas") in the user's
 * directory of o.  Returns RC_OK or RC_ERR (no directory). */
enum rc price_store_init(struct price_store *s, const struct price_opts *o, const char *name,
			 int gpu_key);

/* Creates the directory, takes the lock (waiting for it) and finishes
 * what an interrupted update left.  Returns RC_OK with *lock set, for
 * price_store_unlock(), or RC_ERR with *lock = -1. */
enum rc price_store_lock(const struct price_store *s, int *lock);
/* Drops a lock price_store_lock() took; lock < 0 is ignored. */
void price_store_unlock(int lock);

/* With the lock held, replaces s's table by table[0..tlen) atomically and
 * appends changes[0..n) to its history stamped stamp, crash-safely (see
 * price_store.c).  Returns RC_OK or RC_ERR. */
enum rc price_store_commit(const struct price_store *s, const char *table, size_t tlen,
			   const struct price_change *changes, size_t n, const char *stamp);

/* Appends a zeroed change (old_num, new_num NAN) with these fields to the
 * growing array *v of *n entries and *cap capacity; returns it. */
struct price_change *price_change_push(struct price_change **v, size_t *n, size_t *cap,
				       enum price_change_kind kind, const char *provider,
				       const char *instance_type, const char *region,
				       const char *gpu, const char *field);

/* Reads the file an update merges, as price_csv_load(); a missing or
 * unreadable file is the caller's bad input: RC_INPUT, not RC_ERR. */
enum rc price_update_file_load(const char *file, struct price_csv *csv);

/* The current UTC time as an ISO 8601 stamp and a date. */
void price_utc_now(char *stamp, size_t n1, char *date, size_t n2);

#endif
