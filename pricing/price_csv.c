/*
 * price_csv.c - the only file that includes <csv.h>.  Turns a CSV byte
 * buffer into rows of NUL-terminated fields with the physical line each
 * row starts on.  Line numbers are counted from the row terminators libcsv
 * reports (CSV_REPALL_NL makes it report every CR and LF, so blank lines
 * and CRLF pairs are seen) plus the newlines inside quoted fields.  A
 * stream (price_csv_stream_*) hands each row over as it completes instead,
 * for files too large to hold (AWS's offer files).
 *
 * It calls only libcsv and common/.
 */
#include "price_csv.h"

#include <csv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reader {
	const char *path;
	struct price_csv *out;
	struct price_csv_row cur;  /* row being assembled */
	size_t cap_fields;
	size_t cap_rows;
	int line;                  /* line the current row starts on */
	int newlines_in_row;       /* newlines inside quoted fields */
	int last_term_cr;          /* previous row ended with CR */
	int have_header;
	int failed;
};

static void row_release(struct price_csv_row *row)
{
	for (int i = 0; i < row->n; i++)
		free(row->field[i]);
	free(row->field);
	memset(row, 0, sizeof(*row));
}

static void on_field(void *data, size_t len, void *r_)
{
	struct reader *r = r_;
	const char *s = data ? data : "";

	if (r->failed)
		return;
	/* A quoted field keeps its line ends verbatim: LF, CRLF or a lone CR
	 * each end one physical line. */
	for (size_t i = 0; i < len; i++)
		if (s[i] == '\n' || (s[i] == '\r' && (i + 1 == len || s[i + 1] != '\n')))
			r->newlines_in_row++;
	if (len > PRICE_CSV_MAX_FIELD) {
		gp_error("%s:%d:%d: expected a field of at most %d bytes, found %zu bytes",
			 r->path, r->line, r->cur.n + 1, PRICE_CSV_MAX_FIELD, len);
		r->failed = 1;
		return;
	}
	if (r->cur.n >= PRICE_CSV_MAX_FIELDS) {
		gp_error("%s:%d:%d: expected at most %d fields in a row, found more",
			 r->path, r->line, r->cur.n + 1, PRICE_CSV_MAX_FIELDS);
		r->failed = 1;
		return;
	}
	/* A NUL would end the field in memory and silently keep its head
	 * ("p5.48x\0large" stored as "p5.48x"). */
	if (memchr(s, '\0', len)) {
		gp_error("%s:%d:%d: %s: expected text, found a NUL byte", r->path, r->line,
			 r->cur.n + 1, r->have_header && r->cur.n < r->out->header.n
			 ? r->out->header.field[r->cur.n] : "cell");
		r->failed = 1;
		return;
	}
	if ((size_t)r->cur.n == r->cap_fields) {
		r->cap_fields = r->cap_fields ? 2 * r->cap_fields : 16;
		r->cur.field = xrealloc(r->cur.field,
					r->cap_fields * sizeof(*r->cur.field));
	}
	r->cur.field[r->cur.n++] = xstrndup(s, len);
}

/* A row is blank when it has no fields, or one empty field. */
static int row_is_blank(const struct price_csv_row *row)
{
	return row->n == 0 || (row->n == 1 && row->field[0][0] == '\0');
}

/* Counts the lines a row ended with term spanned. */
static void next_line(struct reader *r, int term, int crlf_tail)
{
	/* The LF of a CRLF pair arrives as an empty record of its own. */
	if (!crlf_tail)
		r->line += 1 + r->newlines_in_row;
	r->newlines_in_row = 0;
	r->last_term_cr = term == '\r';
}

static void on_row(int term, void *r_)
{
	struct reader *r = r_;
	struct price_csv *out = r->out;
	int crlf_tail = term == '\n' && r->last_term_cr && r->cur.n == 0;

	if (r->failed)
		return;
	if (!row_is_blank(&r->cur)) {
		r->cur.line = r->line;
		if (!r->have_header) {
			out->header = r->cur;
			r->have_header = 1;
		} else {
			if (out->n_rows == r->cap_rows) {
				r->cap_rows = r->cap_rows ? 2 * r->cap_rows : 64;
				out->rows = xrealloc(out->rows,
						     r->cap_rows * sizeof(*out->rows));
			}
			out->rows[out->n_rows++] = r->cur;
		}
		memset(&r->cur, 0, sizeof(r->cur));
		r->cap_fields = 0;
	} else {
		row_release(&r->cur);
		r->cap_fields = 0;
	}
	next_line(r, term, crlf_tail);
}

/* Reports a libcsv syntax error at byte pos of buf as path:line:column,
 * both counted from the bytes themselves (LF, CRLF and a lone CR each end a
 * line; counting starts after a byte-order mark at from), so the position
 * is exact whatever the chunk size was. */
static void syntax_error(const char *path, const char *buf, size_t from, size_t pos, int err)
{
	int line = 1;
	size_t start = from;

	for (size_t i = from; i < pos; i++)
		if (buf[i] == '\n' || (buf[i] == '\r' && buf[i + 1] != '\n')) {
			line++;
			start = i + 1;
		}
	if (err != CSV_EPARSE)
		gp_error("%s:%d:%zu: %s", path, line, pos - start + 1, csv_strerror(err));
	else if (buf[pos] == '"')
		gp_error("%s:%d:%zu: expected no quote inside an unquoted field (quote the whole field and double the quotes in it), found '\"'",
			 path, line, pos - start + 1);
	else
		gp_error("%s:%d:%zu: expected ',' or a line end after a closing quote, found '%c'",
			 path, line, pos - start + 1,
			 (unsigned char)buf[pos] >= 32 && (unsigned char)buf[pos] < 127 ? buf[pos] : '?');
}

enum rc price_csv_parse(const char *path, const char *buf, size_t len,
			size_t chunk, struct price_csv *out)
{
	struct csv_parser p;
	struct reader r;
	size_t off = 0, bom;

	memset(out, 0, sizeof(*out));
	memset(&r, 0, sizeof(r));
	r.path = path;
	r.out = out;
	r.line = 1;
	out->path = xstrdup(path);

	if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_REPALL_NL) != 0) {
		gp_error("%s: cannot initialise the CSV parser", path);
		price_csv_release(out);
		return RC_ERR;
	}
	/* A UTF-8 byte-order mark (common from spreadsheets) is not data. */
	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		off = 3;
	bom = off;
	if (chunk == 0)
		chunk = len ? len : 1;
	while (off < len && !r.failed) {
		size_t n = len - off < chunk ? len - off : chunk;
		size_t done = csv_parse(&p, buf + off, n, on_field, on_row, &r);

		if (done != n && !r.failed) {
			syntax_error(path, buf, bom, off + done, csv_error(&p));
			r.failed = 1;
		}
		off += n;
	}
	if (!r.failed && csv_fini(&p, on_field, on_row, &r) != 0) {
		gp_error("%s:%d:%d: expected a closing quote for the quoted field that starts on this row, found the end of the file",
			 path, r.line, r.cur.n + 1);
		r.failed = 1;
	}
	csv_free(&p);
	row_release(&r.cur);
	if (r.failed) {
		price_csv_release(out);
		return RC_INPUT;
	}
	return RC_OK;
}

enum rc price_csv_load(const char *path, struct price_csv *out)
{
	char *buf;
	size_t len;
	enum rc rc;

	memset(out, 0, sizeof(*out));
	rc = gp_read_file(path, &buf, &len);
	if (rc != RC_OK)
		return rc;
	rc = price_csv_parse(path, buf, len, 0, out);
	free(buf);
	return rc;
}

static int name_eq(const char *field, const char *name)
{
	size_t n;

	while (*field == ' ' || *field == '\t')
		field++;
	n = strlen(field);
	while (n && (field[n - 1] == ' ' || field[n - 1] == '\t'))
		n--;
	if (strlen(name) != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char a = field[i], b = name[i];

		if (a >= 'A' && a <= 'Z')
			a = (char)(a - 'A' + 'a');
		if (b >= 'A' && b <= 'Z')
			b = (char)(b - 'A' + 'a');
		if (a != b)
			return 0;
	}
	return 1;
}

int price_csv_col(const struct price_csv *csv, const char *name)
{
	for (int i = 0; i < csv->header.n; i++)
		if (name_eq(csv->header.field[i], name))
			return i;
	return -1;
}

int price_csv_unknown_col(const struct price_csv *csv, const char *const *names, size_t n,
			  int from, char *why, size_t size)
{
	for (int c = from < 0 ? 0 : from; c < csv->header.n; c++) {
		const char *name = csv->header.field[c], *near = NULL;
		size_t best = (size_t)-1;
		int known = 0;

		for (size_t k = 0; k < n; k++) {
			int at = price_csv_col(csv, names[k]);
			size_t d = gp_edit_distance(name, strlen(name), names[k], strlen(names[k]),
						    gp_fold_name);

			if (at == c)
				known = 1;
			else if (at >= 0 && d == 0) {
				snprintf(why, size, "found '%s' again (column %d)", name, at + 1);
				return c;
			}
			if (d < best) {
				best = d;
				near = names[k];
			}
		}
		if (known)
			continue;
		if (near && best <= gp_suggest_limit(name))
			snprintf(why, size, "found '%s' (did you mean '%s'?)", name, near);
		else
			snprintf(why, size, "found '%s'", name);
		return c;
	}
	return -1;
}

const char *price_csv_get(const struct price_csv_row *row, int col)
{
	if (col < 0 || col >= row->n)
		return "";
	return row->field[col];
}

void price_csv_release(struct price_csv *csv)
{
	if (!csv)
		return;
	row_release(&csv->header);
	for (size_t i = 0; i < csv->n_rows; i++)
		row_release(&csv->rows[i]);
	free(csv->rows);
	free(csv->path);
	memset(csv, 0, sizeof(*csv));
}

/* ---- a CSV read as it arrives ------------------------------------------- */

struct price_csv_stream {
	struct csv_parser p;
	struct reader r;
	struct price_csv header_only;  /* r.out: holds no rows; names fields in messages */
	int (*on_row)(const struct price_csv_row *row, void *ctx);
	void *ctx;
	size_t fed;                    /* bytes fed so far, for messages */
	int bom_checked;               /* 1: past where a byte-order mark can be */
	int bom_matched;               /* its bytes seen so far */
};

/* libcsv's row callback for a stream: the row goes to the caller, then is
 * freed, so only one row is ever held. */
static void on_row_stream(int term, void *s_)
{
	struct price_csv_stream *s = s_;
	struct reader *r = &s->r;
	int crlf_tail = term == '\n' && r->last_term_cr && r->cur.n == 0;

	if (!r->failed && !row_is_blank(&r->cur)) {
		r->cur.line = r->line;
		if (s->on_row(&r->cur, s->ctx) != 0)
			r->failed = 1;
	}
	row_release(&r->cur);
	r->cap_fields = 0;
	next_line(r, term, crlf_tail);
}

static void on_field_stream(void *data, size_t len, void *s_)
{
	struct price_csv_stream *s = s_;

	on_field(data, len, &s->r);
}

struct price_csv_stream *price_csv_stream_new(const char *path,
					      int (*row_fn)(const struct price_csv_row *row,
							    void *ctx),
					      void *ctx)
{
	struct price_csv_stream *s = xcalloc(1, sizeof(*s));

	if (csv_init(&s->p, CSV_STRICT | CSV_STRICT_FINI | CSV_REPALL_NL) != 0) {
		gp_error("%s: cannot initialise the CSV parser", path);
		free(s);
		return NULL;
	}
	s->r.path = path;
	s->r.out = &s->header_only;
	s->r.line = 1;
	s->on_row = row_fn;
	s->ctx = ctx;
	return s;
}

enum rc price_csv_stream_feed(struct price_csv_stream *s, const char *buf, size_t len)
{
	size_t done;

	if (s->r.failed)
		return RC_INPUT;
	/* A byte-order mark is not data; it can only open the stream, and may
	 * arrive a byte at a time. */
	while (!s->bom_checked && len) {
		if ((unsigned char)*buf == (unsigned char)"\xEF\xBB\xBF"[s->bom_matched]) {
			buf++;
			len--;
			s->fed++;
			s->bom_checked = ++s->bom_matched == 3;
			continue;
		}
		/* Not a mark after all: what looked like its start is data. */
		s->bom_checked = 1;
		if (s->bom_matched &&
		    csv_parse(&s->p, "\xEF\xBB\xBF", (size_t)s->bom_matched, on_field_stream,
			      on_row_stream, s) != (size_t)s->bom_matched && !s->r.failed) {
			gp_error("%s:1:1: %s", s->r.path, csv_strerror(csv_error(&s->p)));
			s->r.failed = 1;
		}
	}
	if (s->r.failed)
		return RC_INPUT;
	done = csv_parse(&s->p, buf, len, on_field_stream, on_row_stream, s);
	if (done != len && !s->r.failed) {
		gp_error("%s:%d: %s (byte %zu of the stream)", s->r.path, s->r.line,
			 csv_error(&s->p) == CSV_EPARSE
			 ? "expected ',' or a line end after a closing quote, or no quote inside an unquoted field"
			 : csv_strerror(csv_error(&s->p)), s->fed + done + 1);
		s->r.failed = 1;
	}
	s->fed += len;
	return s->r.failed ? RC_INPUT : RC_OK;
}

enum rc price_csv_stream_finish(struct price_csv_stream *s)
{
	if (s->r.failed)
		return RC_INPUT;
	/* A stream of a mark's first bytes only: they were data. */
	if (!s->bom_checked && s->bom_matched) {
		s->bom_checked = 1;
		csv_parse(&s->p, "\xEF\xBB\xBF", (size_t)s->bom_matched, on_field_stream,
			  on_row_stream, s);
	}
	if (csv_fini(&s->p, on_field_stream, on_row_stream, s) != 0) {
		gp_error("%s:%d:%d: expected a closing quote for the quoted field that starts on this row, found the end of the input",
			 s->r.path, s->r.line, s->r.cur.n + 1);
		s->r.failed = 1;
	}
	return s->r.failed ? RC_INPUT : RC_OK;
}

void price_csv_stream_free(struct price_csv_stream *s)
{
	if (!s)
		return;
	csv_free(&s->p);
	row_release(&s->r.cur);
	free(s);
}
