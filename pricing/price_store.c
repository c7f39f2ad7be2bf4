/*
 * price_store.c - the user's stored tables (prices.csv, quotas.csv) and
 * their histories: where they live, the lock, the crash-safe write, the
 * history of every change and reading it back.  price_update.c merges
 * prices into the store and price_quota_update.c merges quotas; both
 * call down into it, and it calls neither (nor any reader of rows): it
 * calls only price_csv.c (to read a history) and common/.
 *
 * Crash safety: a table is written to a temporary file in the same
 * directory, fsynced and renamed over <name>.csv (then the directory is
 * fsynced), so a reader sees the old table or the new one, never a mix.
 * The history lines of an update are first written to
 * <name>.history.pending together with a hash of the new table and the
 * history's length; once the rename is done they are appended to
 * <name>.history.csv.  If the process dies in between, the next update
 * (or `prices history`) appends them when the table on disk has that
 * hash, and drops them when it does not (the rename never happened);
 * lines a crash left appended before the pending file was removed are
 * first cut off at that length, so each lands once.  A lock on
 * <name>.lock serialises read-merge-write, so concurrent updates all land.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "price_internal.h"

/* The history's columns: prices' rows are keyed by (provider,
 * instance_type, region), quotas' by (provider, region, gpu,
 * instance_type). */
static const char *const history_cols[2][8] = {
	{ "timestamp", "provider", "instance_type", "region", "field", "old", "new", NULL },
	{ "timestamp", "provider", "region", "gpu", "instance_type", "field", "old", "new" },
};

void price_opts_init(struct price_opts *o)
{
	o->data_dir = "data";
	o->user_dir = NULL;
}

enum rc price_user_dir(const struct price_opts *o, char *buf, size_t size)
{
	const char *env;
	int n;

	if (o && o->user_dir && *o->user_dir)
		n = snprintf(buf, size, "%s", o->user_dir);
	else if ((env = getenv("GPUPLAN_DATA_DIR")) && *env)
		n = snprintf(buf, size, "%s", env);
	else if ((env = getenv("XDG_DATA_HOME")) && *env)
		n = snprintf(buf, size, "%s/gpuplan", env);
	else if ((env = getenv("HOME")) && *env)
		n = snprintf(buf, size, "%s/.local/share/gpuplan", env);
	else {
		gp_error("cannot find the user's data directory: set GPUPLAN_DATA_DIR, XDG_DATA_HOME or HOME");
		return RC_ERR;
	}
	if (n < 0 || (size_t)n >= size) {
		gp_error("user data directory path is longer than %zu bytes", size - 1);
		return RC_ERR;
	}
	return RC_OK;
}

enum rc price_store_init(struct price_store *s, const struct price_opts *o, const char *name,
			 int gpu_key)
{
	enum rc rc = price_user_dir(o, s->dir, sizeof(s->dir));

	if (rc != RC_OK)
		return rc;
	snprintf(s->table, sizeof(s->table), "%s/%s.csv", s->dir, name);
	snprintf(s->history, sizeof(s->history), "%s/%s.history.csv", s->dir, name);
	snprintf(s->pending, sizeof(s->pending), "%s/%s.history.pending", s->dir, name);
	snprintf(s->lock, sizeof(s->lock), "%s/%s.lock", s->dir, name);
	snprintf(s->tmp_prefix, sizeof(s->tmp_prefix), ".%s.csv.tmp.", name);
	s->gpu_key = gpu_key;
	return RC_OK;
}

/* ---- small file helpers ------------------------------------------------- */

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int price_file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Writes all of S; a failure is said through SAY (gp_error, or gp_warn
 * where the update has already taken effect). */
static enum rc write_all(int fd, const char *path, const char *s, size_t n,
			 void (*say)(const char *, ...))
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			say("%s: write failed: %s", path, strerror(errno));
			return RC_ERR;
		}
		s += w;
		n -= (size_t)w;
	}
	return RC_OK;
}

static enum rc fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0 || fsync(fd) != 0) {
		gp_error("%s: cannot sync directory: %s", dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return RC_ERR;
	}
	close(fd);
	return RC_OK;
}

/* Reads a whole file into a new NUL-terminated buffer; NULL when absent. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n;

	*len = 0;
	if (!f)
		return NULL;
	do {
		if (cap - *len < 4096) {
			cap = cap ? 2 * cap : 65536;
			buf = xrealloc(buf, cap + 1);
		}
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
	} while (n > 0);
	fclose(f);
	buf[*len] = '\0';
	return buf;
}

/* FNV-1a, 64 bit: identifies the table a pending history belongs to. */
static uint64_t fnv1a64(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* GPUPLAN_FAULT=<point> makes the write stop at that point with RC_ERR;
 * GPUPLAN_FAULT=<point>:kill kills the process there, as a crash would;
 * GPUPLAN_FAULT=step:N[:kill] does the same at the N-th point reached,
 * whatever its name, so a test can walk through all of them in order.
 * Tests use it to show that an interrupted update leaves the stored table
 * intact and the history consistent. */
static int fault(const char *point)
{
	static long steps;
	const char *f = getenv("GPUPLAN_FAULT"), *rest;
	size_t n = strlen(point);
	char *end;

	if (!f)
		return 0;
	steps++;
	if (strncmp(f, "step:", 5) == 0) {
		if (strtol(f + 5, &end, 10) != steps || (*end != '\0' && *end != ':'))
			return 0;
		rest = end;
	} else {
		if (strncmp(f, point, n) != 0 || (f[n] != '\0' && f[n] != ':'))
			return 0;
		rest = f + n;
	}
	if (strcmp(rest, ":kill") == 0) {
		gp_info("GPUPLAN_FAULT: killed at %s", point);
		raise(SIGKILL);
	}
	gp_error("update stopped by GPUPLAN_FAULT=%s", f);
	return 1;
}

/* ---- history ------------------------------------------------------------- */

/* The history's header line, its columns joined by commas. */
static void history_header(const struct price_store *p, char *buf, size_t size)
{
	const char *const *cols = history_cols[p->gpu_key];
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < 8 && cols[i]; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? "," : "", cols[i]);
	snprintf(buf + len, size - len, "\n");
}

/* The length of fd's first size bytes up to and with their last '\n' (0
 * when none): what is beyond is a line an interrupted append cut short. */
static off_t whole_lines(int fd, off_t size)
{
	char buf[4096];
	off_t end = size;

	while (end > 0) {
		off_t from = end > (off_t)sizeof(buf) ? end - (off_t)sizeof(buf) : 0;
		ssize_t n = pread(fd, buf, (size_t)(end - from), from);

		if (n != end - from)
			return size; /* unreadable: leave the file as it is */
		for (ssize_t i = n - 1; i >= 0; i--)
			if (buf[i] == '\n')
				return from + i + 1;
		end = from;
	}
	return 0;
}

/* Every caller appends after the table is in place: what fails here is
 * a warning (the update took effect; the pending file keeps the lines). */
static enum rc history_append(const struct price_store *p, const char *lines, size_t len)
{
	struct stat st;
	char header[128];
	off_t keep;
	int fd, have;
	enum rc rc = RC_OK;

	if (len == 0)
		return RC_OK;
	fd = open(p->history, O_RDWR | O_APPEND | O_CREAT, 0644);
	if (fd < 0) {
		gp_warn("%s: cannot open: %s", p->history, strerror(errno));
		return RC_ERR;
	}
	/* A line an earlier append left cut short would swallow the first
	 * of these (or, with an open quote, all of them): drop it first. */
	have = fstat(fd, &st) == 0;
	if (have && st.st_size > 0 && (keep = whole_lines(fd, st.st_size)) < st.st_size) {
		gp_warn("%s: dropped a last line cut short (%lld bytes) by an interrupted update",
			p->history, (long long)(st.st_size - keep));
		if (ftruncate(fd, keep) != 0) {
			gp_warn("%s: cannot truncate: %s", p->history, strerror(errno));
			close(fd);
			return RC_ERR;
		}
		st.st_size = keep;
	}
	history_header(p, header, sizeof(header));
	if (have && st.st_size == 0)
		rc = write_all(fd, p->history, header, strlen(header), gp_warn);
	if (rc == RC_OK)
		rc = write_all(fd, p->history, lines, len, gp_warn);
	if (rc == RC_OK && fsync(fd) != 0) {
		gp_warn("%s: fsync failed: %s", p->history, strerror(errno));
		rc = RC_ERR;
	}
	/* A write cut short (a full disk) leaves no torn line: the history
	 * goes back to its whole lines, and the pending file keeps these. */
	if (rc != RC_OK && have && ftruncate(fd, st.st_size) != 0)
		gp_warn("%s: cannot truncate: %s", p->history, strerror(errno));
	close(fd);
	return rc;
}

/* Finishes what an interrupted update left: a pending history is appended
 * when the table on disk is the one it describes, else dropped; temporary
 * tables are removed.  Call with the lock held. */
static enum rc recover(const struct price_store *p)
{
	size_t plen, tlen;
	char *pending = slurp(p->pending, &plen);
	char *table, *nl;
	unsigned long long want;
	long long hist_bytes = -1;
	struct stat st;
	DIR *d;
	struct dirent *de;
	enum rc rc = RC_OK;

	if (pending) {
		table = slurp(p->table, &tlen);
		nl = strchr(pending, '\n');
		if (table && nl &&
		    sscanf(pending, "table_fnv1a64=%llx history_bytes=%lld", &want, &hist_bytes) >= 1 &&
		    want == (unsigned long long)fnv1a64(table, tlen)) {
			/* Lines a crash left appended (whole or in part) before the
			 * pending file was removed are cut off first, so that they
			 * land exactly once. */
			if (hist_bytes >= 0 && stat(p->history, &st) == 0 && st.st_size > hist_bytes &&
			    truncate(p->history, (off_t)hist_bytes) != 0) {
				gp_error("%s: cannot truncate: %s", p->history, strerror(errno));
				rc = RC_ERR;
			}
			if (rc == RC_OK &&
			    history_append(p, nl + 1, plen - (size_t)(nl + 1 - pending)) != RC_OK) {
				gp_error("%s: the last update's history cannot be appended; it stays in %s",
					 p->history, p->pending);
				rc = RC_ERR;
			}
			if (rc == RC_OK && fault("recover_after_history"))
				rc = RC_ERR;
		}
		free(table);
		free(pending);
		if (rc == RC_OK && unlink(p->pending) != 0) {
			gp_error("%s: cannot remove: %s", p->pending, strerror(errno));
			rc = RC_ERR;
		}
	}
	d = opendir(p->dir);
	if (d) {
		while ((de = readdir(d)) != NULL) {
			char path[1400];

			if (strncmp(de->d_name, p->tmp_prefix, strlen(p->tmp_prefix)) != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", p->dir, de->d_name);
			unlink(path);
		}
		closedir(d);
	}
	return rc;
}

static int lock_take(const struct price_store *p)
{
	int fd = open(p->lock, O_RDWR | O_CREAT, 0644);

	if (fd < 0) {
		gp_error("%s: cannot open lock file: %s", p->lock, strerror(errno));
		return -1;
	}
	while (flock(fd, LOCK_EX) != 0) {
		if (errno == EINTR)
			continue;
		gp_error("%s: cannot lock: %s", p->lock, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

void price_store_unlock(int lock)
{
	if (lock >= 0) {
		flock(lock, LOCK_UN);
		close(lock);
	}
}

enum rc price_store_lock(const struct price_store *s, int *lock)
{
	enum rc rc = gp_mkdir_p(s->dir);

	*lock = -1;
	if (rc != RC_OK)
		return rc;
	*lock = lock_take(s);
	if (*lock < 0 || fault("after_lock"))
		rc = RC_ERR;
	if (rc == RC_OK)
		rc = recover(s);
	if (rc != RC_OK) {
		price_store_unlock(*lock);
		*lock = -1;
	}
	return rc;
}

struct price_change *price_change_push(struct price_change **v, size_t *n, size_t *cap,
				       enum price_change_kind kind, const char *provider,
				       const char *instance_type, const char *region,
				       const char *gpu, const char *field)
{
	struct price_change *c;

	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	c = &(*v)[(*n)++];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	gp_strlcpy(c->provider, provider, sizeof(c->provider));
	gp_strlcpy(c->instance_type, instance_type, sizeof(c->instance_type));
	gp_strlcpy(c->region, region, sizeof(c->region));
	gp_strlcpy(c->gpu, gpu, sizeof(c->gpu));
	gp_strlcpy(c->field, field, sizeof(c->field));
	c->old_num = NAN;
	c->new_num = NAN;
	return c;
}

/* ---- writing ------------------------------------------------------------- */

/* Appends field s to line (quoted when it holds a comma, a quote, a line
 * end or surrounding blanks), then a comma, or a newline when last. */
void price_csv_append(struct price_line *line, const char *s, int last)
{
	size_t n = strlen(s);
	int quote = n && (strpbrk(s, ",\"\r\n") || s[0] == ' ' || s[n - 1] == ' ' ||
			  s[0] == '\t' || s[n - 1] == '\t');

	/* Worst case every byte is a quote: 2n + 2 quotes + separator + NUL. */
	if (line->len + 2 * n + 4 > line->cap) {
		while (line->len + 2 * n + 4 > line->cap)
			line->cap = line->cap ? 2 * line->cap : 4096;
		line->s = xrealloc(line->s, line->cap);
	}
	if (quote)
		line->s[line->len++] = '"';
	for (const char *p = s; *p; p++) {
		line->s[line->len++] = *p;
		if (quote && *p == '"')
			line->s[line->len++] = '"';
	}
	if (quote)
		line->s[line->len++] = '"';
	line->s[line->len++] = last ? '\n' : ',';
	line->s[line->len] = '\0';
}


void price_utc_now(char *stamp, size_t n1, char *date, size_t n2)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(stamp, n1, "%Y-%m-%dT%H:%M:%SZ", &tm);
	strftime(date, n2, "%Y-%m-%d", &tm);
}

/* The history lines of changes[0..n), one CSV line each, in the columns
 * of p's history. */
static char *history_lines(const struct price_store *p, const struct price_change *changes,
			   size_t n, const char *stamp, size_t *len)
{
	struct price_line l = { NULL, 0, 0 };

	for (size_t i = 0; i < n; i++) {
		const struct price_change *c = &changes[i];

		price_csv_append(&l, stamp, 0);
		price_csv_append(&l, c->provider, 0);
		if (p->gpu_key) {
			price_csv_append(&l, c->region, 0);
			price_csv_append(&l, c->gpu, 0);
			price_csv_append(&l, c->instance_type, 0);
		} else {
			price_csv_append(&l, c->instance_type, 0);
			price_csv_append(&l, c->region, 0);
		}
		price_csv_append(&l, c->field, 0);
		price_csv_append(&l, c->old_value, 0);
		price_csv_append(&l, c->new_value, 1);
	}
	*len = l.len;
	return l.s;
}

enum rc price_store_commit(const struct price_store *p, const char *table, size_t tlen,
			   const struct price_change *changes, size_t n, const char *stamp)
{
	char tmp[1200], tdir[1100], head[96];
	char *target, *slash;
	struct stat st;
	size_t hlen;
	char *hist = history_lines(p, changes, n, stamp, &hlen);
	int fd;
	enum rc rc;

	/* The history's length before this update's lines, so that a
	 * recovery can tell whether they were already appended. */
	snprintf(head, sizeof(head), "table_fnv1a64=%016llx history_bytes=%lld\n",
		 (unsigned long long)fnv1a64(table, tlen),
		 stat(p->history, &st) == 0 ? (long long)st.st_size : 0LL);
	fd = open(p->pending, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		gp_error("%s: cannot create: %s", p->pending, strerror(errno));
		free(hist);
		return RC_ERR;
	}
	rc = write_all(fd, p->pending, head, strlen(head), gp_error);
	if (rc == RC_OK && hlen)
		rc = write_all(fd, p->pending, hist, hlen, gp_error);
	if (rc == RC_OK && fsync(fd) != 0) {
		gp_error("%s: fsync failed: %s", p->pending, strerror(errno));
		rc = RC_ERR;
	}
	close(fd);
	if (rc == RC_OK && fault("after_pending"))
		rc = RC_ERR;
	if (rc != RC_OK)
		goto drop_pending;

	/* A symlinked table stays a link: its target is replaced, from a
	 * temporary file in the target's directory. */
	target = gp_path_resolve(p->table);
	slash = strrchr(target, '/');
	snprintf(tdir, sizeof(tdir), "%.*s", slash ? (int)(slash - target) : 1,
		 slash ? target : ".");
	if (slash == target)
		snprintf(tdir, sizeof(tdir), "/");
	snprintf(tmp, sizeof(tmp), "%s/%s%ld", tdir, p->tmp_prefix, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0) {
		gp_error("%s: cannot create: %s", tmp, strerror(errno));
		free(target);
		rc = RC_ERR;
		goto drop_pending;
	}
	rc = write_all(fd, tmp, table, tlen, gp_error);
	if (rc == RC_OK && fault("after_write"))
		rc = RC_ERR;
	if (rc == RC_OK && fsync(fd) != 0) {
		gp_error("%s: fsync failed: %s", tmp, strerror(errno));
		rc = RC_ERR;
	}
	close(fd);
	if (rc == RC_OK && (fault("after_fsync") || fault("before_rename")))
		rc = RC_ERR;
	if (rc == RC_OK && rename(tmp, target) != 0) {
		gp_error("%s: cannot rename to %s: %s", tmp, target, strerror(errno));
		rc = RC_ERR;
	}
	free(target);
	if (rc != RC_OK) {
		unlink(tmp);
		goto drop_pending;
	}
	/* From here the new table is in place: the update took effect, and
	 * what fails after it (the history, a disk full) is a warning, not
	 * the update's failure.  The pending history stays until it is
	 * appended, so a crash or a full disk cannot lose it: the next
	 * command that reads the table appends it. */
	if (fault("after_rename"))
		goto in_place;
	if (fsync_dir(tdir) != RC_OK || history_append(p, hist, hlen) != RC_OK ||
	    fault("after_history"))
		goto in_place;
	if (unlink(p->pending) != 0) {
		gp_warn("%s: cannot remove: %s", p->pending, strerror(errno));
		goto in_place;
	}
	if (fault("after_pending_removed") || fsync_dir(p->dir) != RC_OK)
		goto in_place;
	rc = RC_OK;
	goto out;
in_place:
	gp_warn("the new table is in place (%s); its history is kept in %s until the next "
		"command appends it", p->table, p->pending);
	rc = RC_OK;
	goto out;
drop_pending:
	unlink(p->pending);
out:
	free(hist);
	return rc;
}

enum rc price_update_file_load(const char *file, struct price_csv *csv)
{
	char *buf;
	size_t len;
	enum rc rc;

	/* Parsed rows take many times the file's bytes, and every command
	 * reads the merged table: a catalog past this size is a mistake
	 * (a whole cloud's CPU instances) or an attack, not a price list.
	 * The cap holds for a pipe or a device as for a file. */
	memset(csv, 0, sizeof(*csv));
	rc = gp_read_file_max(file, PRICE_UPDATE_MAX_BYTES, &buf, &len);
	if (rc == RC_OK) {
		rc = price_csv_parse(file, buf, len, 0, csv);
		free(buf);
	}
	/* A missing or unreadable FILE is the caller's bad input. */
	return rc == RC_ERR ? RC_INPUT : rc;
}

/* ---- reading the history --------------------------------------------------- */

/* The field of e that holds the history column name, and its size. */
static char *entry_slot(struct price_history_entry *e, const char *name, size_t *size)
{
	struct {
		const char *name;
		char *dst;
		size_t size;
	} slots[] = {
		{ "timestamp", e->timestamp, sizeof(e->timestamp) },
		{ "provider", e->provider, sizeof(e->provider) },
		{ "instance_type", e->instance_type, sizeof(e->instance_type) },
		{ "region", e->region, sizeof(e->region) },
		{ "gpu", e->gpu, sizeof(e->gpu) },
		{ "field", e->field, sizeof(e->field) },
		{ "old", e->old_value, sizeof(e->old_value) },
		{ "new", e->new_value, sizeof(e->new_value) },
	};

	for (size_t i = 0; i < GP_ARRAY_LEN(slots); i++)
		if (strcmp(slots[i].name, name) == 0) {
			*size = slots[i].size;
			return slots[i].dst;
		}
	assert(0 && "history column without an entry field");
	*size = 0;
	return NULL;
}

/* Loads the history of the user's table name (keyed by GPU too when
 * gpu_key); see price_history_load. */
static enum rc history_load(const struct price_opts *o, const char *name, int gpu_key,
			    struct price_history *h)
{
	const char *const *names = history_cols[gpu_key];
	const int n_cols = gpu_key ? 8 : 7;
	struct price_store store, *p = &store;
	struct price_csv csv;
	int cols[8];
	int lock = -1;
	enum rc rc;

	memset(h, 0, sizeof(*h));
	rc = price_store_init(p, o, name, gpu_key);
	if (rc != RC_OK)
		return rc;
	if (exists(p->pending)) {
		lock = lock_take(p);
		if (lock < 0)
			return RC_ERR;
		rc = recover(p);
		price_store_unlock(lock);
		if (rc != RC_OK)
			return rc;
	}
	if (!exists(p->history))
		return RC_OK;
	{
		char *buf;
		size_t len, keep;

		rc = gp_read_file(p->history, &buf, &len);
		if (rc != RC_OK)
			return rc;
		/* An append cut short by a crash leaves a last line without its
		 * end: read the whole lines (the next update drops the rest). */
		keep = len;
		while (keep && buf[keep - 1] != '\n')
			keep--;
		if (keep < len)
			gp_warn("%s: skipped a last line cut short (%zu bytes) by an interrupted update",
				p->history, len - keep);
		rc = price_csv_parse(p->history, buf, keep, 0, &csv);
		free(buf);
		if (rc != RC_OK)
			return rc;
	}
	for (int i = 0; i < n_cols; i++) {
		cols[i] = price_csv_col(&csv, names[i]);
		if (cols[i] < 0) {
			gp_error("%s:%d:%d: expected a column named '%s', found none", p->history,
				 csv.header.line ? csv.header.line : 1, csv.header.n + 1, names[i]);
			price_csv_release(&csv);
			return RC_INPUT;
		}
	}
	h->entries = xcalloc(csv.n_rows ? csv.n_rows : 1, sizeof(*h->entries));
	for (size_t i = 0; i < csv.n_rows; i++) {
		struct price_history_entry *e = &h->entries[i];
		const struct price_csv_row *r = &csv.rows[i];

		for (int c = 0; c < n_cols; c++) {
			size_t size;
			char *dst = entry_slot(e, names[c], &size);

			gp_strlcpy(dst, price_csv_get(r, cols[c]), size);
		}
	}
	h->n = csv.n_rows;
	price_csv_release(&csv);
	return RC_OK;
}

enum rc price_history_load(const struct price_opts *o, struct price_history *h)
{
	return history_load(o, "prices", 0, h);
}

enum rc price_quota_history_load(const struct price_opts *o, struct price_history *h)
{
	return history_load(o, "quotas", 1, h);
}

void price_history_release(struct price_history *h)
{
	if (!h)
		return;
	free(h->entries);
	memset(h, 0, sizeof(*h));
}
