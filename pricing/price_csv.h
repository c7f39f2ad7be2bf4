/*
 * price_csv.h - read a whole CSV file into memory with libcsv, keeping the
 * physical line of every row so that every error can name file:line:column.
 *
 * Handles quoted fields (commas, quotes and newlines inside), CRLF and lone
 * CR line ends, a UTF-8 byte-order mark, blank lines (skipped) and a last
 * line with no newline.  It does not interpret fields: callers look columns
 * up by header name and convert values themselves.
 *
 * Positions in messages: a syntax error (a stray or missing quote) names
 * the physical line and the byte column where it was found; an error about
 * a cell names the line its row starts on and the field number (1-based),
 * which callers also use so that "file:line:col" means the same thing.
 */
#ifndef GPUPLAN_PRICE_CSV_H
#define GPUPLAN_PRICE_CSV_H

#include <stddef.h>

#include "common.h"

#define PRICE_CSV_MAX_FIELD 4096   /* bytes in one field */
#define PRICE_CSV_MAX_FIELDS 256   /* fields in one row */

struct price_csv_row {
	int line;         /* physical line (1-based) where the row starts */
	int n;            /* number of fields */
	char **field;     /* NUL-terminated copies, field[0..n-1] */
};

struct price_csv {
	char *path;                 /* as given, for messages */
	struct price_csv_row header;
	struct price_csv_row *rows; /* data rows, header excluded */
	size_t n_rows;
};

/* Parses the bytes buf[0..len) (the contents of the file named path) into
 * out, feeding libcsv chunk bytes at a time (chunk 0 means all at once; the
 * result must not depend on it).  The first non-blank row is the header.
 * Returns RC_OK, or RC_INPUT after printing one "error: path:line:col: ..."
 * line (malformed quoting, over-long field, too many fields, empty file,
 * header only is NOT an error here).  On failure out is left zeroed.
 * The caller releases out with price_csv_release(). */
enum rc price_csv_parse(const char *path, const char *buf, size_t len,
			size_t chunk, struct price_csv *out);

/* Reads the file at path and parses it as price_csv_parse() does.
 * Returns RC_ERR when the file cannot be read (message printed). */
enum rc price_csv_load(const char *path, struct price_csv *out);

/* Returns the 0-based index of the header column named name (ASCII
 * case-insensitive, surrounding blanks ignored), or -1. */
int price_csv_col(const struct price_csv *csv, const char *name);

/* The first header column at or after `from` that price_csv_col() does
 * not find as one of names[0..n), or finds at another column (a name
 * repeated); -1 when there is none.  Then why[size] says what is wrong
 * with it: "found 'spot_usd_per_hr' (did you mean 'spot_usd_per_hour'?)",
 * "found 'region' again (column 5)".  A column a reader would pass over
 * unread is a mistake to report, not to ignore. */
int price_csv_unknown_col(const struct price_csv *csv, const char *const *names, size_t n,
			  int from, char *why, size_t size);

/* Returns row's field at column col, or "" when col < 0 or the row is
 * shorter. Never NULL. */
const char *price_csv_get(const struct price_csv_row *row, int col);

/* Frees what csv holds; csv may be NULL. */
void price_csv_release(struct price_csv *csv);

/* ---- a CSV read as it arrives ------------------------------------------ */

/* Hands every non-blank row (the first too: the caller decides which is
 * its header) to on_row as soon as it is complete, so that a file of any
 * size is read in the memory of one row.  The row and its fields are valid
 * only during the call.  on_row returns 0 to go on, non-zero to stop: the
 * feed then returns RC_INPUT (on_row printed why).  The same limits and
 * messages as price_csv_parse, positions counted across chunks. */
struct price_csv_stream;
struct price_csv_stream *price_csv_stream_new(const char *path,
					      int (*on_row)(const struct price_csv_row *row,
							    void *ctx),
					      void *ctx);
/* Feeds buf[0..len).  Returns RC_OK or RC_INPUT (message printed; every
 * later feed returns RC_INPUT too). */
enum rc price_csv_stream_feed(struct price_csv_stream *s, const char *buf, size_t len);
/* Ends the input (the last row may have no line end).  Returns RC_OK, or
 * RC_INPUT when a quoted field was left open or an earlier feed failed. */
enum rc price_csv_stream_finish(struct price_csv_stream *s);
/* Frees s; s may be NULL. */
void price_csv_stream_free(struct price_csv_stream *s);

/* ---- a table read whole (price_csv_table.c) ------------------------------ */

/* At most this many error lines are printed for one file; the rest are
 * counted in one closing line. */
#define PRICE_MAX_ERRORS 20

/* The bad-input reports of one file, one line each. */
struct price_errs {
	const char *path;
	int n;
};

/* Prints "error: path:line:col: <msg>" unless PRICE_MAX_ERRORS lines were
 * already printed, and counts the error. */
void price_err(struct price_errs *e, int line, int col, const char *fmt, ...)
	GP_PRINTF(4, 5);
/* Prints how many errors were not shown, if any. */
void price_errs_finish(const struct price_errs *e);

/* How price_csv_table_load() reads one CSV file into an array of rows, a
 * row of the file a row of the array: the columns by header name, each
 * row by the caller's reader, one row per key.  Plain data, filled by the
 * table's loader (blocks.csv's, capacity.csv's, published.csv's). */
struct price_csv_table {
	const char *const *cols;    /* the columns every file has */
	size_t n_cols;
	const char *const *opt;     /* columns a file may have; NULL: none */
	size_t n_opt;
	/* 0: other columns are passed over, and every missing one of cols is
	 * reported ("path:line:col: expected a column named 'X', found none",
	 * col one past the header's last; an empty file "path:1:1: expected
	 * a header row, found an empty file").  1: the file has these columns
	 * and no other, and the first missing one ("path:line: expected a
	 * column 'X', found none") or other one ("path:line:col: expected the
	 * columns a, b and c, found 'd'") is refused. */
	int closed;
	/* 0: every bad row is reported (up to PRICE_MAX_ERRORS lines, then a
	 * count); 1: reading stops at the first bad row. */
	int first_only;
	size_t row_size;            /* bytes of one row of the array */
	/* Reads row into dst (row_size bytes, zeroed); col[] holds the
	 * columns of cols[] then of opt[] (-1: absent).  Returns 0, or -1
	 * after reporting why through e; the row is not kept then. */
	int (*read_row)(struct price_errs *e, const struct price_csv *csv,
			const struct price_csv_row *row, const int *col, void *dst,
			const void *ctx);
	/* One row per key: whether rows a and b have the same key (NULL: a
	 * key may repeat); a row that repeats an earlier one's is refused
	 * with "expected one row per KEY_NAMES, found KEY again", KEY the
	 * row's key as key_str writes it, at column col[key_col]. */
	int (*same_key)(const void *a, const void *b);
	void (*key_str)(const void *row, char *buf, size_t size);
	const char *key_names;      /* "(provider, instance_prefix)" */
	int key_col;
};

/* Reads the CSV file at path as t says, passing ctx to t->read_row.
 * Returns RC_OK with the rows in *rows (xcalloc'd, at least one row's
 * bytes even when there are none; the caller frees it with free()) and
 * their count in *n; RC_INPUT after one line per problem (see t's
 * closed and first_only), or as price_csv_load() when the file cannot be
 * read or parsed (RC_INPUT, RC_ERR; message printed).  *rows and *n are
 * untouched on failure. */
enum rc price_csv_table_load(const char *path, const struct price_csv_table *t,
			     const void *ctx, void **rows, size_t *n);

#endif
