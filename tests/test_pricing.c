/*
 * test_pricing.c - the pricing module: the CSV reader (every chunk size,
 * line numbers with CRLF, blank lines and quoted newlines), the GPU and
 * price catalogs shipped in data/, queries, updates (merge, SkyPilot
 * columns, zones, bad input leaving the table byte-for-byte unchanged,
 * injected faults, history recovery), the user's rows laid over the
 * shipped table (and an older full copy read as all the user's), the
 * user's GPU quotas (load, merge, bad rows, which offerings a quota
 * bounds), and the model presets table.
 */
#include "testutil.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "price.h"
#include "price_csv.h"
#include "sim.h"

/* ---- helpers ------------------------------------------------------------- */

static char *tmp_dir(void)
{
	char *d = xstrdup("/tmp/gpuplan-test-pricing-XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

static void write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void write_text(const char *dir, const char *name, const char *text)
{
	write_file(dir, name, text, strlen(text));
}

/* Returns the file's bytes (NUL-terminated), or NULL when it is absent. */
static char *read_all(const char *dir, const char *name, size_t *len)
{
	char path[512];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	*len = 0;
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = xmalloc((size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Asserts that dir/name holds exactly before[0..len). */
static void assert_file_is(const char *dir, const char *name, const char *before, size_t len)
{
	size_t n;
	char *now = read_all(dir, name, &n);

	assert_non_null(now);
	assert_int_equal(n, len);
	assert_memory_equal(now, before, len);
	free(now);
}

static int file_there(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

static void rm_rf(char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d)) != NULL) {
		char path[512];

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
	free(dir);
}

static void opts_for(struct price_opts *o, const char *user_dir)
{
	price_opts_init(o);
	o->data_dir = TEST_DATA_DIR;
	o->user_dir = user_dir;
}

/* Any two parses of the same bytes must agree row for row, field for field,
 * line for line. */
static void assert_csv_equal(const struct price_csv *a, const struct price_csv *b)
{
	assert_int_equal(a->header.n, b->header.n);
	assert_int_equal(a->header.line, b->header.line);
	assert_int_equal(a->n_rows, b->n_rows);
	for (size_t i = 0; i < a->n_rows; i++) {
		assert_int_equal(a->rows[i].line, b->rows[i].line);
		assert_int_equal(a->rows[i].n, b->rows[i].n);
		for (int j = 0; j < a->rows[i].n; j++)
			assert_string_equal(a->rows[i].field[j], b->rows[i].field[j]);
	}
}

/* ---- the CSV reader -------------------------------------------------------- */

static const char *const csv_inputs[] = {
	"a,b,c\n1,2,3\n4,5,6\n",
	"a,b\r\n1,2\r\n\r\n3,4\r\n",
	"\xEF\xBB\xBF" "a,b\n\"x, y\",2\n\"multi\nline\",3\n\n\n5,6",
	"a,b\r\n\"q\"\"uote\",\"cr\r\nlf\"\r\n7,8",
	"a\rb\r\rc\r",
};

static void test_price_csv_parse_every_chunk_size(void **state)
{
	(void)state;
	for (size_t k = 0; k < GP_ARRAY_LEN(csv_inputs); k++) {
		const char *in = csv_inputs[k];
		size_t len = strlen(in);
		struct price_csv whole;

		assert_int_equal(price_csv_parse("t.csv", in, len, 0, &whole), RC_OK);
		for (size_t chunk = 1; chunk <= len; chunk++) {
			struct price_csv part;

			assert_int_equal(price_csv_parse("t.csv", in, len, chunk, &part), RC_OK);
			assert_csv_equal(&whole, &part);
			price_csv_release(&part);
		}
		price_csv_release(&whole);
	}
}

static void test_price_csv_parse_line_numbers(void **state)
{
	/* Physical lines, counted by hand:
	 * 1 header (CRLF), 2 blank, 3 row "1", 4-5 row "2" (quoted LF), 6 blank
	 * (CRLF), 7-8 row "3" (quoted CRLF), 9 row "4" (no final newline). */
	const char *in = "h1,h2\r\n\r\n1,x\r\n2,\"a\nb\"\r\n\r\n3,\"c\r\nd\"\r\n4,y";
	struct price_csv csv;

	(void)state;
	for (size_t chunk = 0; chunk <= strlen(in); chunk++) {
		assert_int_equal(price_csv_parse("t.csv", in, strlen(in), chunk, &csv), RC_OK);
		assert_int_equal(csv.header.line, 1);
		assert_int_equal(csv.n_rows, 4);
		assert_int_equal(csv.rows[0].line, 3);
		assert_int_equal(csv.rows[1].line, 4);
		assert_string_equal(csv.rows[1].field[1], "a\nb");
		assert_int_equal(csv.rows[2].line, 7);
		assert_string_equal(csv.rows[2].field[1], "c\r\nd");
		assert_int_equal(csv.rows[3].line, 9);
		assert_string_equal(csv.rows[3].field[1], "y");
		price_csv_release(&csv);
	}
}

static void test_price_csv_parse_lone_cr_lines(void **state)
{
	/* Old Mac line ends: "a" line 1, "b" line 2, blank line 3, "c" line 4. */
	struct price_csv csv;

	(void)state;
	assert_int_equal(price_csv_parse("t.csv", "a\rb\r\rc\r", 7, 0, &csv), RC_OK);
	assert_int_equal(csv.n_rows, 2);
	assert_int_equal(csv.rows[0].line, 2);
	assert_int_equal(csv.rows[1].line, 4);
	price_csv_release(&csv);
}

static void test_price_csv_parse_bom_and_quoted_commas(void **state)
{
	const char *in = "\xEF\xBB\xBFprovider,region\nvast,\"Germany, DE, EU\"\n";
	struct price_csv csv;

	(void)state;
	assert_int_equal(price_csv_parse("t.csv", in, strlen(in), 0, &csv), RC_OK);
	assert_string_equal(csv.header.field[0], "provider");
	assert_int_equal(price_csv_col(&csv, "PROVIDER"), 0);
	assert_string_equal(price_csv_get(&csv.rows[0], 1), "Germany, DE, EU");
	assert_string_equal(price_csv_get(&csv.rows[0], 7), "");
	price_csv_release(&csv);
}

static void test_price_csv_parse_rejects_bad_quotes(void **state)
{
	struct price_csv csv;
	const char *unterminated = "a,b\n1,\"open\n";
	const char *stray = "a,b\n1,x\"y\n";

	(void)state;
	for (size_t chunk = 0; chunk <= strlen(unterminated); chunk++)
		assert_int_equal(price_csv_parse("t.csv", unterminated, strlen(unterminated),
						 chunk, &csv), RC_INPUT);
	assert_int_equal(csv.n_rows, 0);
	for (size_t chunk = 0; chunk <= strlen(stray); chunk++)
		assert_int_equal(price_csv_parse("t.csv", stray, strlen(stray), chunk, &csv), RC_INPUT);
}

static void test_price_csv_parse_rejects_long_field(void **state)
{
	size_t len = PRICE_CSV_MAX_FIELD + 100;
	char *in = xmalloc(len + 16);
	struct price_csv csv;

	(void)state;
	memcpy(in, "a\n", 2);
	memset(in + 2, 'x', len);
	memcpy(in + 2 + len, "\n", 2);
	assert_int_equal(price_csv_parse("t.csv", in, strlen(in), 0, &csv), RC_INPUT);
	free(in);
}

/* Header columns a reader does not know, one after another: a misspelt
 * one with the nearest name, one far from every name, a repeated one. */
static void test_price_csv_unknown_columns(void **state)
{
	static const char *const names[] = { "provider", "region", "gpu" };
	const char *in = "Provider, regoin ,x,gpu,provider\n";
	struct price_csv csv;
	char why[128];
	int c;

	(void)state;
	assert_int_equal(price_csv_parse("t.csv", in, strlen(in), 0, &csv), RC_OK);
	c = price_csv_unknown_col(&csv, names, 3, 0, why, sizeof(why));
	assert_int_equal(c, 1);
	assert_string_equal(why, "found 'regoin' (did you mean 'region'?)");
	c = price_csv_unknown_col(&csv, names, 3, c + 1, why, sizeof(why));
	assert_int_equal(c, 2);
	assert_string_equal(why, "found 'x'");
	c = price_csv_unknown_col(&csv, names, 3, c + 1, why, sizeof(why));
	assert_int_equal(c, 4);
	assert_string_equal(why, "found 'provider' again (column 1)");
	assert_int_equal(price_csv_unknown_col(&csv, names, 3, c + 1, why, sizeof(why)), -1);
	price_csv_release(&csv);
}

/* ---- a table read whole (price_csv_table_load) ------------------------------ */

/* A row of the test table: columns key and val ("ok"), note optional. */
struct kv_row {
	char key[16];
	int note_col;
};

static const char *const kv_cols[] = { "key", "val" };
static const char *const kv_opt[] = { "note" };
static const int kv_ctx = 7;

static int read_kv(struct price_errs *e, const struct price_csv *csv,
		   const struct price_csv_row *row, const int *col, void *dst, const void *ctx)
{
	struct kv_row *r = dst;

	(void)csv;
	assert_ptr_equal(ctx, &kv_ctx);
	/* the row comes zeroed, whatever a refused row left in it */
	assert_int_equal(r->key[0], 0);
	r->note_col = col[2];
	snprintf(r->key, sizeof(r->key), "%s", price_csv_get(row, col[0]));
	if (strcmp(price_csv_get(row, col[1]), "ok") != 0) {
		price_err(e, row->line, col[1] + 1, "val: expected ok, found '%s'",
			  price_csv_get(row, col[1]));
		return -1;
	}
	return 0;
}

static int same_kv(const void *a, const void *b)
{
	return strcmp(((const struct kv_row *)a)->key, ((const struct kv_row *)b)->key) == 0;
}

static void kv_key(const void *row, char *buf, size_t size)
{
	snprintf(buf, size, "%s", ((const struct kv_row *)row)->key);
}

/* Loads text as dir/t.csv through t: the return code, stderr into *err
 * (caller frees), *rows and *n as the loader left them. */
static enum rc kv_load(const char *dir, const char *text, const struct price_csv_table *t,
		       char **err, struct kv_row **rows, size_t *n)
{
	char path[512];
	struct test_stderr cap;
	void *out = rows ? *rows : NULL;
	enum rc rc;

	write_text(dir, "t.csv", text);
	snprintf(path, sizeof(path), "%s/t.csv", dir);
	test_stderr_begin(&cap);
	rc = price_csv_table_load(path, t, &kv_ctx, &out, n);
	*err = test_stderr_end(&cap);
	if (rows)
		*rows = out;
	return rc;
}

/* An open table: columns by name in any order, others passed over, an
 * optional one found or not; every missing column, every bad row and
 * every repeated key reported on its own line "path:line:col: what", at
 * most PRICE_MAX_ERRORS of them, then their count; the outputs untouched
 * on failure. */
static void test_price_csv_table_load_open(void **state)
{
	struct price_csv_table t = {
		.cols = kv_cols, .n_cols = 2, .opt = kv_opt, .n_opt = 1,
		.row_size = sizeof(struct kv_row), .read_row = read_kv,
		.same_key = same_kv, .key_str = kv_key, .key_names = "(key)", .key_col = 0,
	};
	struct kv_row *rows = NULL, sentinel;
	char *dir = tmp_dir(), *err, want[2048], path[512], text[4096];
	struct test_stderr cap;
	void *out = &sentinel;
	size_t n = 0, len;

	(void)state;
	snprintf(path, sizeof(path), "%s/t.csv", dir);
	assert_int_equal(kv_load(dir, "x,val,key\n1,ok,a\n2,ok,b\n", &t, &err, &rows, &n), RC_OK);
	assert_string_equal(err, "");
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].key, "a");
	assert_string_equal(rows[1].key, "b");
	assert_int_equal(rows[1].note_col, -1);
	free(rows);
	free(err);
	assert_int_equal(kv_load(dir, "note,key,val\n,a,ok\n", &t, &err, &rows, &n), RC_OK);
	assert_int_equal(rows[0].note_col, 0);
	free(rows);
	free(err);
	/* a header alone: no rows, and still an array to free */
	rows = NULL;
	assert_int_equal(kv_load(dir, "key,val\n", &t, &err, &rows, &n), RC_OK);
	assert_int_equal(n, 0);
	assert_non_null(rows);
	free(rows);
	free(err);

	/* failures leave the outputs as they were */
	rows = &sentinel;
	n = 99;
	assert_int_equal(kv_load(dir, "", &t, &err, &rows, &n), RC_INPUT);
	snprintf(want, sizeof(want), "error: %s:1:1: expected a header row, found an empty file\n",
		 path);
	assert_string_equal(err, want);
	assert_ptr_equal(rows, &sentinel);
	assert_int_equal(n, 99);
	free(err);
	assert_int_equal(kv_load(dir, "a,b,c\n", &t, &err, &rows, &n), RC_INPUT);
	snprintf(want, sizeof(want),
		 "error: %s:1:4: expected a column named 'key', found none\n"
		 "error: %s:1:4: expected a column named 'val', found none\n", path, path);
	assert_string_equal(err, want);
	free(err);
	/* every bad row and every repeated key, the first of a key kept */
	assert_int_equal(kv_load(dir, "key,val\na,ok\nb,no\na,ok\nc,ok\nc,ok\n", &t, &err, &rows, &n),
			 RC_INPUT);
	snprintf(want, sizeof(want),
		 "error: %s:3:2: val: expected ok, found 'no'\n"
		 "error: %s:4:1: expected one row per (key), found a again\n"
		 "error: %s:6:1: expected one row per (key), found c again\n", path, path, path);
	assert_string_equal(err, want);
	assert_ptr_equal(rows, &sentinel);
	assert_int_equal(n, 99);
	free(err);
	/* PRICE_MAX_ERRORS lines, then how many more */
	len = (size_t)snprintf(text, sizeof(text), "key,val\n");
	for (int i = 0; i < PRICE_MAX_ERRORS + 3; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "k%d,no\n", i);
	assert_int_equal(kv_load(dir, text, &t, &err, &rows, &n), RC_INPUT);
	len = 0;
	for (int i = 0; i < PRICE_MAX_ERRORS; i++)
		len += (size_t)snprintf(want + len, sizeof(want) - len,
					"error: %s:%d:2: val: expected ok, found 'no'\n", path, i + 2);
	snprintf(want + len, sizeof(want) - len, "error: %s: 3 more errors not shown\n", path);
	assert_string_equal(err, want);
	free(err);
	/* a file that is not there: price_csv_load's words */
	snprintf(path, sizeof(path), "%s/none.csv", dir);
	test_stderr_begin(&cap);
	assert_int_equal(price_csv_table_load(path, &t, &kv_ctx, &out, &n), RC_INPUT);
	err = test_stderr_end(&cap);
	snprintf(want, sizeof(want), "error: %s: cannot open: No such file or directory\n", path);
	assert_string_equal(err, want);
	assert_ptr_equal(out, &sentinel);
	free(err);
	rm_rf(dir);
}

/* A closed table that stops at its first bad row: the first missing
 * column, or any column not its own, refused in one line; of two bad rows
 * only the first said; a key may repeat where same_key is NULL. */
static void test_price_csv_table_load_closed(void **state)
{
	struct price_csv_table t = {
		.cols = kv_cols, .n_cols = 2, .opt = kv_opt, .n_opt = 1, .closed = 1,
		.first_only = 1, .row_size = sizeof(struct kv_row), .read_row = read_kv,
	};
	struct kv_row *rows = NULL;
	char *dir = tmp_dir(), *err, want[1024], path[512];
	size_t n = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/t.csv", dir);
	assert_int_equal(kv_load(dir, "val,key\nok,a\nok,a\n", &t, &err, &rows, &n), RC_OK);
	assert_int_equal(n, 2);
	free(rows);
	free(err);
	assert_int_equal(kv_load(dir, "", &t, &err, &rows, &n), RC_INPUT);
	snprintf(want, sizeof(want), "error: %s:1:1: expected a header row, found an empty file\n",
		 path);
	assert_string_equal(err, want);
	free(err);
	assert_int_equal(kv_load(dir, "note,x\n", &t, &err, &rows, &n), RC_INPUT);
	snprintf(want, sizeof(want), "error: %s:1: expected a column 'key', found none\n", path);
	assert_string_equal(err, want);
	free(err);
	assert_int_equal(kv_load(dir, "key,val,nte\n", &t, &err, &rows, &n), RC_INPUT);
	snprintf(want, sizeof(want), "error: %s:1:3: expected the columns key, val and note, "
		 "found 'nte' (did you mean 'note'?)\n", path);
	assert_string_equal(err, want);
	free(err);
	assert_int_equal(kv_load(dir, "key,val\na,no\nb,no\n", &t, &err, &rows, &n), RC_INPUT);
	snprintf(want, sizeof(want), "error: %s:2:2: val: expected ok, found 'no'\n", path);
	assert_string_equal(err, want);
	free(err);
	rm_rf(dir);
}

/* The loaders folded onto price_csv_table_load keep their keys and
 * words: a repeated key of blocks.csv, capacity.csv and commitments.csv,
 * the provider's case aside. */
static void test_price_cost_tables_repeated_key(void **state)
{
	static const char *const block_head =
		"provider,instance_prefix,region,usd_per_hour,min_nodes,max_nodes,min_days,"
		"max_days,step_days,long_step_days,long_from_days,price_date,source\n";
	char *dir = tmp_dir(), path[512], text[1024], want[1024], *err;
	struct test_stderr cap;
	struct price_blocks b;
	struct price_capacities c;
	struct price_commitments m;
	struct price_catalog cat;
	struct price_opts o;

	(void)state;
	snprintf(path, sizeof(path), "%s/t.csv", dir);
	snprintf(text, sizeof(text), "%saws,p5.,us-east-1,39.33,1,64,1,182,1,7,14,2024-12-31,x\n"
		 "AWS,p5.,us-east-1,30,1,64,1,182,1,7,14,2024-12-31,y\n", block_head);
	write_text(dir, "t.csv", text);
	test_stderr_begin(&cap);
	assert_int_equal(price_blocks_load(path, &b), RC_INPUT);
	err = test_stderr_end(&cap);
	snprintf(want, sizeof(want), "error: %s:3:2: expected one row per (provider, "
		 "instance_prefix, region), found AWS p5. us-east-1 again\n", path);
	assert_string_equal(err, want);
	assert_null(b.rows);
	assert_int_equal(b.n, 0);
	free(err);

	write_text(dir, "t.csv", "provider,instance_prefix,max_nodes,spot_max_nodes,"
		   "billing_increment_s,min_billing_s,provision_s,source\n"
		   "aws,g6,1,,,,,s\naws,G6,2,,,,,s\nAws,g6,2,,,,,s\n");
	test_stderr_begin(&cap);
	assert_int_equal(price_capacities_load(path, &c), RC_INPUT);
	err = test_stderr_end(&cap);
	snprintf(want, sizeof(want), "error: %s:4:2: expected one row per (provider, "
		 "instance_prefix), found Aws g6 again\n", path);
	assert_string_equal(err, want);
	assert_null(c.rows);
	free(err);

	opts_for(&o, dir);
	o.data_dir = TEST_DATA_DIR;
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	write_text(dir, "t.csv", "provider,instance_prefix,gpu,term_years,discount_pct,price_date,"
		   "source\naws,p4d.,A100-SXM4-40GB,1,40,2022-02-26,x\n"
		   "aws,p4d.,A100-SXM4-40GB,3,40,2022-02-26,x\n"
		   "aws,p4d.,a100-sxm4-40gb,1,41,2022-02-26,y\n");
	test_stderr_begin(&cap);
	assert_int_equal(price_commitments_load(path, &cat, &m), RC_INPUT);
	err = test_stderr_end(&cap);
	snprintf(want, sizeof(want), "error: %s:4:2: expected one row per (provider, "
		 "instance_prefix, gpu, term), found aws p4d. A100-SXM4-40GB 1 y again\n", path);
	assert_string_equal(err, want);
	assert_null(m.rows);
	free(err);
	price_catalog_release(&cat);
	rm_rf(dir);
}

/* ---- the GPU catalog -------------------------------------------------------- */

static void test_price_gpus_load_shipped(void **state)
{
	struct price_gpu *gpus;
	const struct price_gpu *g;
	size_t n;

	(void)state;
	assert_int_equal(price_gpus_load(TEST_DATA_DIR "/gpus.csv", &gpus, &n), RC_OK);
	assert_true(n >= 16);
	g = price_gpu_lookup(gpus, n, "H100-SXM5-80GB", NULL);
	assert_non_null(g);
	/* NVIDIA H100 SXM5: 80 GB, 3.35 TB/s, 989.4 dense bf16 TFLOP/s, NVLink 4
	 * at 900 GB/s both directions = 450e9 bytes/s one way. */
	assert_near(g->memory_bytes, 80e9, 1e-12);
	assert_near(g->hbm_bytes_per_s, 3.35e12, 1e-12);
	assert_near(g->bf16_flops_per_s, 989.4e12, 1e-12);
	assert_near(g->intra_bytes_per_s, 450e9, 1e-12);
	assert_int_equal(g->nvlink, 1);
	assert_near(g->tdp_w, 700, 1e-12);
	/* Hopper has no microscaling tensor cores; an HGX board is one node,
	 * so its NVLink domain is the node's (empty). */
	assert_true(g->mxfp8_flops_per_s == 0 && g->nvfp4_flops_per_s == 0);
	assert_int_equal(g->nvlink_domain, 0);
	/* RTX 4090: P2P disabled in the stock driver. */
	g = price_gpu_lookup(gpus, n, "RTX4090", NULL);
	assert_non_null(g);
	assert_int_equal(g->p2p, 0);
	assert_near(g->intra_bytes_per_s, 32e9, 1e-12); /* PCIe Gen4 x16: 64 GB/s / 2 */
	free(gpus);
}

/* The Blackwell figures of data/SOURCES.md, dense: MXFP8 at the FP8 rate
 * (CUTLASS's tcgen05 table: kind::mxf8f6f4 = kind::f8f6f4), NVFP4 from
 * NVIDIA's sparse | dense pairs (HGX B200 144 | 72 and HGX B300 144 | 108
 * PFLOPS over 8 GPUs, GB200 NVL72 1,440 | 720 and GB300 NVL72 1,440 |
 * 1,080 over 72), the other peaks sparse / 2; 72 GPUs per NVLink domain
 * in an NVL72 rack, an HGX board's the node (0). */
static void test_price_gpus_load_shipped_blackwell(void **state)
{
	static const struct {
		const char *name;  /* or an alias */
		double mem_gb, hbm_tb_s, bf16, fp8, mxfp8, nvfp4, tf32, tdp_w;
		int domain;
	} want[] = {
		{ "B200", 180, 8.0, 2250, 4500, 4500, 9000, 1100, 1000, 0 },
		{ "B300", 288, 7.7, 2250, 4500, 4500, 13500, 1125, 1100, 0 },
		{ "GB200", 186, 8.0, 2500, 5000, 5000, 10000, 1250, 1200, 72 },
		{ "gb300-nvl72", 279, 8.0, 2500, 5000, 5000, 15000, 1250, 1400, 72 },
	};
	struct price_gpu *gpus;
	size_t n;

	(void)state;
	assert_int_equal(price_gpus_load(TEST_DATA_DIR "/gpus.csv", &gpus, &n), RC_OK);
	for (size_t i = 0; i < GP_ARRAY_LEN(want); i++) {
		const struct price_gpu *g = price_gpu_lookup(gpus, n, want[i].name, NULL);

		assert_non_null(g);
		/* B300 and GB300 are plannable (every figure planning needs) */
		assert_true(price_gpu_eligible(g, NULL, 0));
		assert_near(g->memory_bytes, want[i].mem_gb * 1e9, 1e-12);
		assert_near(g->hbm_bytes_per_s, want[i].hbm_tb_s * 1e12, 1e-12);
		assert_near(g->bf16_flops_per_s, want[i].bf16 * 1e12, 1e-12);
		assert_near(g->fp8_flops_per_s, want[i].fp8 * 1e12, 1e-12);
		assert_near(g->mxfp8_flops_per_s, want[i].mxfp8 * 1e12, 1e-12);
		assert_near(g->nvfp4_flops_per_s, want[i].nvfp4 * 1e12, 1e-12);
		assert_near(g->tf32_flops_per_s, want[i].tf32 * 1e12, 1e-12);
		assert_near(g->tdp_w, want[i].tdp_w, 1e-12);
		assert_near(g->intra_bytes_per_s, 900e9, 1e-12); /* NVLink 5: 1.8 TB/s both ways */
		assert_int_equal(g->nvlink_domain, want[i].domain);
	}
	assert_string_equal(price_gpu_lookup(gpus, n, "gb300-nvl72", NULL)->name, "GB300");
	free(gpus);
}

static void test_price_gpu_lookup_aliases(void **state)
{
	struct price_gpu *gpus;
	const struct price_gpu *g;
	size_t n;
	int alias;

	(void)state;
	assert_int_equal(price_gpus_load(TEST_DATA_DIR "/gpus.csv", &gpus, &n), RC_OK);
	g = price_gpu_lookup(gpus, n, "h100", &alias);
	assert_non_null(g);
	assert_string_equal(g->name, "H100-SXM5-80GB");
	assert_int_equal(alias, 1);
	g = price_gpu_lookup(gpus, n, "h100-sxm5-80gb", &alias);
	assert_string_equal(g->name, "H100-SXM5-80GB");
	assert_int_equal(alias, 0);
	assert_string_equal(price_gpu_lookup(gpus, n, "A100-80GB", NULL)->name, "A100-SXM4-80GB");
	assert_string_equal(price_gpu_lookup(gpus, n, "A100", NULL)->name, "A100-SXM4-40GB");
	assert_string_equal(price_gpu_lookup(gpus, n, "H100-MEGA", NULL)->name, "H100-SXM5-80GB");
	assert_string_equal(price_gpu_lookup(gpus, n, "rtx_4090", NULL)->name, "RTX4090");
	assert_string_equal(price_gpu_lookup(gpus, n, "V100", NULL)->name, "V100-SXM2-16GB");
	assert_string_equal(price_gpu_lookup(gpus, n, "A10G", NULL)->name, "A10G");
	assert_string_equal(price_gpu_lookup(gpus, n, "L40S", NULL)->name, "L40S");
	assert_string_equal(price_gpu_lookup(gpus, n, "MI300X", NULL)->name, "MI300X");
	assert_null(price_gpu_lookup(gpus, n, "T4", NULL));
	assert_null(price_gpu_lookup(gpus, n, "", NULL));
	free(gpus);
}

static void test_price_gpu_suggest_close_names(void **state)
{
	struct price_gpu *gpus;
	size_t n;
	char buf[PRICE_NAME_MAX];

	(void)state;
	assert_int_equal(price_gpus_load(TEST_DATA_DIR "/gpus.csv", &gpus, &n), RC_OK);
	assert_int_equal(price_gpu_suggest(gpus, n, "H10O", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "H100");
	assert_int_equal(price_gpu_suggest(gpus, n, "A100-80G", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "A100-80GB");
	assert_int_equal(price_gpu_suggest(gpus, n, "Trainium2-chip", buf, sizeof(buf)), -1);
	assert_string_equal(buf, "");
	free(gpus);
}

static void test_price_gpu_eligible_needs_bf16(void **state)
{
	struct price_gpu *gpus;
	size_t n;
	char why[256];

	(void)state;
	assert_int_equal(price_gpus_load(TEST_DATA_DIR "/gpus.csv", &gpus, &n), RC_OK);
	assert_true(price_gpu_eligible(price_gpu_lookup(gpus, n, "H100", NULL), why, sizeof(why)));
	assert_false(price_gpu_eligible(price_gpu_lookup(gpus, n, "A10G", NULL), why, sizeof(why)));
	assert_non_null(strstr(why, "A10G"));
	assert_non_null(strstr(why, "bf16_dense_tflops"));
	free(gpus);
}

static void test_price_gpus_load_rejects_bad_cells(void **state)
{
	char *dir = tmp_dir();
	char path[512];
	struct price_gpu *gpus = NULL;
	size_t n = 7;

	(void)state;
	write_text(dir, "g.csv", "name,memory_gb,bf16_dense_tflops,nvlink\nX,80,-1,1\nY,80,100,maybe\n");
	snprintf(path, sizeof(path), "%s/g.csv", dir);
	assert_int_equal(price_gpus_load(path, &gpus, &n), RC_INPUT);
	assert_null(gpus);
	assert_int_equal(n, 0);
	write_text(dir, "g.csv", "name,aliases,memory_gb,bf16_dense_tflops\nX,x1,80,100\nY,X1,80,100\n");
	assert_int_equal(price_gpus_load(path, &gpus, &n), RC_INPUT);
	/* the optional columns: numbers >= 0; a domain a whole count of
	 * GPUs up to PRICE_MAX_NVLINK_DOMAIN */
	{
		static const char *const bad[] = {
			"mxfp8_dense_tflops\nX,80,100,-5\n", "nvfp4_dense_tflops\nX,80,100,lots\n",
			"nvlink_domain\nX,80,100,-1\n",    "nvlink_domain\nX,80,100,2.5\n",
			"nvlink_domain\nX,80,100,65537\n", "nvlink_domain\nX,80,100,seventy\n",
		};
		char text[256];

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(text, sizeof(text), "name,memory_gb,bf16_dense_tflops,%s", bad[i]);
			write_text(dir, "g.csv", text);
			gpus = NULL;
			assert_int_equal(price_gpus_load(path, &gpus, &n), RC_INPUT);
			assert_null(gpus);
		}
		write_text(dir, "g.csv", "name,memory_gb,bf16_dense_tflops,nvlink_domain\n"
			   "X,80,100,65536\nY,80,100,\nZ,80,100,72.0\n");
		assert_int_equal(price_gpus_load(path, &gpus, &n), RC_OK);
		assert_int_equal(n, 3);
		assert_int_equal(gpus[0].nvlink_domain, 65536);
		assert_int_equal(gpus[1].nvlink_domain, 0);
		assert_int_equal(gpus[2].nvlink_domain, 72);
		free(gpus);
	}
	rm_rf(dir);
}

/* price_nvlink_domain, the one rule: the offering's figure, else the
 * GPU's, else the node; never fewer GPUs than one node holds. */
static void test_price_nvlink_domain(void **state)
{
	struct price_offering o;
	struct price_gpu g;

	(void)state;
	memset(&o, 0, sizeof(o));
	memset(&g, 0, sizeof(g));
	o.gpus_per_node = 4;
	/* nothing stated: the node */
	assert_int_equal(price_nvlink_domain(&o, &g), 4);
	assert_int_equal(price_nvlink_domain(&o, NULL), 4);
	/* the GPU's rack (GB200 NVL72) */
	g.nvlink_domain = 72;
	assert_int_equal(price_nvlink_domain(&o, &g), 72);
	/* the offering's own figure wins: AWS's 36-GPU UltraServer, or one
	 * tray sold alone */
	o.nvlink_domain = 36;
	assert_int_equal(price_nvlink_domain(&o, &g), 36);
	o.nvlink_domain = 4;
	assert_int_equal(price_nvlink_domain(&o, &g), 4);
	/* never below a node: a stated 2 on a 4-GPU node is the node */
	o.nvlink_domain = 2;
	assert_int_equal(price_nvlink_domain(&o, &g), 4);
	/* an 8-GPU node of a GPU whose domain is the node */
	o.nvlink_domain = 0;
	o.gpus_per_node = 8;
	g.nvlink_domain = 0;
	assert_int_equal(price_nvlink_domain(&o, &g), 8);
}

/* ---- capacity: how many nodes an offering sells as one ----------------------- */

/* Where the provider states no bound (AWS on demand), the bound is the
 * user's quota, above gpuplan's policy or below it; without one, the
 * policy, named as such (PRICE_LIMIT_POLICY), never as the provider's. */
static void test_price_offering_node_limit_policy(void **state)
{
	struct price_offering o;
	struct price_node_limit l;
	struct price_quota q;

	(void)state;
	memset(&o, 0, sizeof(o));
	memset(&q, 0, sizeof(q));
	o.gpus_per_node = 8;
	o.inter_node_bytes_per_s = 400e9;
	o.policy_nodes = 64;
	o.spot_capacity_nodes = 4;
	price_offering_node_limit(&o, 0, &l);
	assert_int_equal(l.nodes, 64);
	assert_int_equal(l.why, PRICE_LIMIT_POLICY);
	assert_string_equal(price_limit_str(l.why), "policy");
	/* spot: its own policy bound */
	price_offering_node_limit(&o, 1, &l);
	assert_int_equal(l.nodes, 4);
	assert_int_equal(l.why, PRICE_LIMIT_SPOT);
	/* a quota of 1056 GPUs replaces the policy, above it */
	q.max_gpus = 1056;
	o.quota = &q;
	price_offering_node_limit(&o, 0, &l);
	assert_int_equal(l.nodes, 132);
	assert_int_equal(l.why, PRICE_LIMIT_QUOTA);
	assert_int_equal(l.quota_gpus, 1056);
	/* and below it */
	q.max_gpus = 80;
	price_offering_node_limit(&o, 0, &l);
	assert_int_equal(l.nodes, 10);
	assert_int_equal(l.why, PRICE_LIMIT_QUOTA);
	/* a bound the provider states is kept over the policy, and a quota
	 * above it does not lift it */
	o.capacity_nodes = 18;
	q.max_gpus = 1056;
	price_offering_node_limit(&o, 0, &l);
	assert_int_equal(l.nodes, 18);
	assert_int_equal(l.why, PRICE_LIMIT_CAPACITY);
	/* neither a bound, a quota nor a policy: one node, unstated */
	o.capacity_nodes = 0;
	o.policy_nodes = 0;
	o.quota = NULL;
	price_offering_node_limit(&o, 0, &l);
	assert_int_equal(l.nodes, 1);
	assert_int_equal(l.why, PRICE_LIMIT_UNSTATED);
}

/* capacity.csv's policy column: read where max_nodes is empty, refused
 * beside a stated max_nodes; blocks.csv's product, kind and payment. */
static void test_price_capacity_policy_and_block_product(void **state)
{
	char *dir = tmp_dir();
	char path[512];
	struct price_capacities t;
	struct price_blocks b;
	static const char *const cap_head =
		"provider,instance_prefix,max_nodes,spot_max_nodes,billing_increment_s,"
		"min_billing_s,provision_s,source,node_multiple,policy_max_nodes\n";
	static const char *const blk_head =
		"provider,instance_prefix,region,usd_per_hour,min_nodes,max_nodes,min_days,"
		"max_days,step_days,long_step_days,long_from_days,price_date,source,product,kind,"
		"payment\n";
	char text[1024];

	(void)state;
	snprintf(path, sizeof(path), "%s/c.csv", dir);
	snprintf(text, sizeof(text), "%saws,*,,4,1,60,,aws-billing,,64\n", cap_head);
	write_text(dir, "c.csv", text);
	assert_int_equal(price_capacities_load(path, &t), RC_OK);
	assert_int_equal(t.rows[0].policy_max_nodes, 64);
	assert_int_equal(t.rows[0].max_nodes, 0);
	price_capacities_release(&t);
	gp_log_quiet(1);
	snprintf(text, sizeof(text), "%saws,p5.,64,4,1,60,,x,,64\n", cap_head);
	write_text(dir, "c.csv", text);
	assert_int_equal(price_capacities_load(path, &t), RC_INPUT);
	gp_log_quiet(0);

	snprintf(path, sizeof(path), "%s/b.csv", dir);
	snprintf(text, sizeof(text),
		 "%sgcp,a4-highgpu-8g,us-central1,90.22,1,80,1,90,1,,,2026-09-01,x,"
		 "GCP calendar-mode future reservation,calendar-reservation,monthly\n"
		 "aws,p5.48xlarge,us-east-1,41.528,1,64,1,182,1,7,14,2026-07-22,y,,,\n", blk_head);
	write_text(dir, "b.csv", text);
	assert_int_equal(price_blocks_load(path, &b), RC_OK);
	assert_int_equal(b.n, 2);
	assert_string_equal(price_block_product(&b.rows[0]), "GCP calendar-mode future reservation");
	assert_string_equal(price_block_kind(&b.rows[0]), "calendar-reservation");
	assert_int_equal(b.rows[0].payment, PRICE_PAYMENT_MONTHLY);
	/* empty cells: the defaults */
	assert_string_equal(price_block_product(&b.rows[1]), "capacity block");
	assert_string_equal(price_block_kind(&b.rows[1]), "capacity-block");
	assert_int_equal(b.rows[1].payment, PRICE_PAYMENT_UPFRONT);
	price_blocks_release(&b);
	gp_log_quiet(1);
	snprintf(text, sizeof(text),
		 "%saws,p5.48xlarge,us-east-1,41.528,1,64,1,182,1,7,14,2026-07-22,y,,,weekly\n",
		 blk_head);
	write_text(dir, "b.csv", text);
	assert_int_equal(price_blocks_load(path, &b), RC_INPUT);
	snprintf(text, sizeof(text),
		 "%saws,p5.48xlarge,us-east-1,41.528,1,64,1,182,1,7,14,2026-07-22,y,,Capacity Block,\n",
		 blk_head);
	write_text(dir, "b.csv", text);
	assert_int_equal(price_blocks_load(path, &b), RC_INPUT);
	gp_log_quiet(0);
	rm_rf(dir);
}


/* The rules of price_offering_node_limit, one by one: an empty figure
 * never lifts a bound. */
static void test_price_offering_node_limit_rules(void **state)
{
	struct price_offering o;
	struct price_node_limit l;

	(void)state;
	memset(&o, 0, sizeof(o));
	o.gpus_per_node = 8;
	o.capacity_nodes = 64;
	o.spot_capacity_nodes = 4;
	/* a 64-node capacity, but no network figure: one node */
	price_offering_node_limit(&o, 0, &l);
	assert_int_equal(l.nodes, 1);
	assert_int_equal(l.why, PRICE_LIMIT_NETWORK);
	/* a network: the capacity on demand, the spot bound on spot */
	o.inter_node_bytes_per_s = 400e9;
	price_offering_node_limit(&o, 0, &l);
	assert_int_equal(l.nodes, 64);
	assert_int_equal(l.why, PRICE_LIMIT_CAPACITY);
	price_offering_node_limit(&o, 1, &l);
	assert_int_equal(l.nodes, 4);
	assert_int_equal(l.why, PRICE_LIMIT_SPOT);
	/* no spot bound stated: spot is one node */
	o.spot_capacity_nodes = 0;
	price_offering_node_limit(&o, 1, &l);
	assert_int_equal(l.nodes, 1);
	assert_int_equal(l.why, PRICE_LIMIT_UNSTATED);
	/* the row's own max_nodes (a marketplace offer) wins over capacity.csv */
	o.max_nodes = 2;
	price_offering_node_limit(&o, 0, &l);
	assert_int_equal(l.nodes, 2);
	assert_int_equal(l.why, PRICE_LIMIT_CAPACITY);
	/* no capacity at all: one node */
	o.max_nodes = 0;
	o.capacity_nodes = 0;
	price_offering_node_limit(&o, 0, &l);
	assert_int_equal(l.nodes, 1);
	assert_int_equal(l.why, PRICE_LIMIT_UNSTATED);
	/* a quota of 20 GPUs: 2 whole nodes of 8 of the 64-node capacity, on
	 * demand; spot's 4-node bound is the tighter 2 too */
	{
		struct price_quota q;

		memset(&q, 0, sizeof(q));
		q.max_gpus = 20;
		o.capacity_nodes = 64;
		o.spot_capacity_nodes = 4;
		o.quota = &q;
		price_offering_node_limit(&o, 0, &l);
		assert_int_equal(l.nodes, 2);
		assert_int_equal(l.why, PRICE_LIMIT_QUOTA);
		assert_int_equal(l.quota_gpus, 20);
		price_offering_node_limit(&o, 1, &l);
		assert_int_equal(l.nodes, 2);
		assert_int_equal(l.why, PRICE_LIMIT_QUOTA);
		/* a quota above the capacity leaves the capacity binding */
		q.max_gpus = 4096;
		price_offering_node_limit(&o, 0, &l);
		assert_int_equal(l.nodes, 64);
		assert_int_equal(l.why, PRICE_LIMIT_CAPACITY);
		/* fewer GPUs than a node: not offered */
		q.max_gpus = 4;
		price_offering_node_limit(&o, 0, &l);
		assert_int_equal(l.nodes, 0);
		o.quota = NULL;
	}
	/* Sold in whole units (an 18-node UltraServer, capacity.csv's
	 * node_multiple): the bound is whole units, the bill rounds up. */
	{
		struct price_quota q;

		memset(&q, 0, sizeof(q));
		o.gpus_per_node = 4;
		o.capacity_nodes = 36;
		o.spot_capacity_nodes = 0;
		o.node_multiple = 18;
		price_offering_node_limit(&o, 0, &l);
		assert_int_equal(l.nodes, 36);
		assert_int_equal(l.multiple, 18);
		assert_int_equal(l.why, PRICE_LIMIT_CAPACITY);
		assert_int_equal(price_node_limit_billed(&l, 1), 18);
		assert_int_equal(price_node_limit_billed(&l, 16), 18);
		assert_int_equal(price_node_limit_billed(&l, 18), 18);
		assert_int_equal(price_node_limit_billed(&l, 19), 36);
		/* spot not stated: one node, less than a unit: not offered */
		price_offering_node_limit(&o, 1, &l);
		assert_int_equal(l.nodes, 0);
		/* a quota of 100 GPUs: 25 nodes, one whole unit of 18 */
		q.max_gpus = 100;
		o.quota = &q;
		price_offering_node_limit(&o, 0, &l);
		assert_int_equal(l.nodes, 18);
		assert_int_equal(l.why, PRICE_LIMIT_QUOTA);
		/* 40 GPUs: 10 nodes, not one unit */
		q.max_gpus = 40;
		price_offering_node_limit(&o, 0, &l);
		assert_int_equal(l.nodes, 0);
		o.quota = NULL;
		/* no network: one node, not a unit */
		o.inter_node_bytes_per_s = 0;
		price_offering_node_limit(&o, 0, &l);
		assert_int_equal(l.nodes, 0);
		assert_int_equal(l.why, PRICE_LIMIT_NETWORK);
		/* sold one by one: billed as run */
		o.node_multiple = 0;
		price_offering_node_limit(&o, 0, &l);
		assert_int_equal(l.multiple, 1);
		assert_int_equal(price_node_limit_billed(&l, 1), 1);
	}
}

static void test_price_capacities_load(void **state)
{
	char *dir = tmp_dir();
	char path[4096];
	struct price_capacities t;
	struct price_offering o;
	const struct price_capacity *c;
	static const char *head = "provider,instance_prefix,max_nodes,spot_max_nodes,"
				  "billing_increment_s,min_billing_s,provision_s,source\n";
	char text[1024];

	(void)state;
	snprintf(path, sizeof(path), "%s/capacity.csv", dir);
	snprintf(text, sizeof(text), "%saws,p5.,64,4,1,60,900,ec2-cb\naws,p5.48x,32,,1,60,,x\n"
		 "aws,*,,,1,60,,ec2\n", head);
	write_text(dir, "capacity.csv", text);
	assert_int_equal(price_capacities_load(path, &t), RC_OK);
	assert_int_equal(t.n, 3);
	memset(&o, 0, sizeof(o));
	snprintf(o.provider, sizeof(o.provider), "AWS");
	snprintf(o.instance_type, sizeof(o.instance_type), "p5.48xlarge");
	/* the longest prefix wins */
	c = price_capacity_find(&t, &o);
	assert_non_null(c);
	assert_int_equal(c->max_nodes, 32);
	assert_int_equal(c->spot_max_nodes, 0);
	/* "*" when no prefix matches */
	snprintf(o.instance_type, sizeof(o.instance_type), "g6.xlarge");
	c = price_capacity_find(&t, &o);
	assert_non_null(c);
	assert_string_equal(c->instance_prefix, "*");
	price_offering_set_capacity(&o, c);
	assert_int_equal(o.capacity_nodes, 0);
	assert_near(o.min_billing_s, 60, 1e-12);
	snprintf(o.provider, sizeof(o.provider), "gcp");
	assert_null(price_capacity_find(&t, &o));
	price_capacities_release(&t);

	/* bad cells: a fraction of a node, a spot bound above the capacity,
	 * a negative time, the same key twice; every one is reported */
	snprintf(text, sizeof(text), "%saws,p5.,6.5,,,,,s\naws,p4d,8,16,,,,s\n"
		 "aws,p6,8,,,,-1,s\naws,g6,1,,,,,s\naws,g6,2,,,,,s\n", head);
	write_text(dir, "capacity.csv", text);
	assert_int_equal(price_capacities_load(path, &t), RC_INPUT);
	assert_null(t.rows);

	/* node_multiple, optional: whole; the bounds whole units of it */
	snprintf(text, sizeof(text), "provider,instance_prefix,max_nodes,spot_max_nodes,"
		 "billing_increment_s,min_billing_s,provision_s,source,node_multiple\n"
		 "aws,p6e-gb200.,36,,1,60,,u,18\naws,*,,,1,60,,b,\n");
	write_text(dir, "capacity.csv", text);
	assert_int_equal(price_capacities_load(path, &t), RC_OK);
	assert_int_equal(t.rows[0].node_multiple, 18);
	assert_int_equal(t.rows[1].node_multiple, 0);
	snprintf(o.provider, sizeof(o.provider), "aws");
	snprintf(o.instance_type, sizeof(o.instance_type), "p6e-gb200.36xlarge");
	price_offering_set_capacity(&o, price_capacity_find(&t, &o));
	assert_int_equal(o.node_multiple, 18);
	price_capacities_release(&t);
	{
		static const char *const bad[] = {
			"aws,x,20,,,,,s,18\n", /* a bound between two units */
			"aws,x,36,4,,,,s,18\n",
			"aws,x,36,,,,,s,1.5\n",
			"aws,x,36,,,,,s,-18\n",
		};

		for (size_t i = 0; i < GP_ARRAY_LEN(bad); i++) {
			snprintf(text, sizeof(text), "provider,instance_prefix,max_nodes,"
				 "spot_max_nodes,billing_increment_s,min_billing_s,provision_s,"
				 "source,node_multiple\n%s", bad[i]);
			write_text(dir, "capacity.csv", text);
			assert_int_equal(price_capacities_load(path, &t), RC_INPUT);
		}
	}
	rm_rf(dir);
}

/* The shipped capacity.csv is read into every offering, and no offering
 * without a network figure can be clustered. */
static void test_price_catalog_load_capacity(void **state)
{
	char *dir = tmp_dir();
	struct price_opts o;
	struct price_catalog cat;
	size_t clustered = 0;

	(void)state;
	opts_for(&o, dir);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_non_null(cat.capacity_path);
	for (size_t i = 0; i < cat.n_offers; i++) {
		const struct price_offering *of = &cat.offers[i];
		struct price_node_limit l;

		price_offering_node_limit(of, 0, &l);
		if (!(of->inter_node_bytes_per_s > 0))
			assert_int_equal(l.nodes, 1);
		clustered += l.nodes > 1;
		/* single-GPU machines are single-node (their rows state no
		 * network) */
		if (of->gpus_per_node == 1)
			assert_int_equal(l.nodes, 1);
	}
	assert_true(clustered > 0);
	price_catalog_release(&cat);
	rm_rf(dir);
}

/* A typed GPU, provider or region: found as the catalog spells it or
 * not, case-insensitive; an unknown one refused (its message and hint
 * are the CLI tests'). */
static void test_price_resolve_typed_names(void **state)
{
	char *dir = tmp_dir();
	struct price_opts o;
	struct price_catalog cat;

	(void)state;
	opts_for(&o, dir);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	gp_log_quiet(1);
	assert_string_equal(price_gpu_resolve(&cat, "--gpu", "h100")->name, "H100-SXM5-80GB");
	assert_null(price_gpu_resolve(&cat, "--gpu", "h10"));
	assert_int_equal(price_offering_resolve(&cat, "--provider", "", 0), RC_OK);
	assert_int_equal(price_offering_resolve(&cat, "--provider", "AWS", 0), RC_OK);
	assert_int_equal(price_offering_resolve(&cat, "--provider", "lamda", 0), RC_USAGE);
	assert_int_equal(price_offering_resolve(&cat, "--region", "us-east-1", 1), RC_OK);
	assert_int_equal(price_offering_resolve(&cat, "--region", "aws", 1), RC_USAGE);
	gp_log_quiet(0);
	price_catalog_release(&cat);
	rm_rf(dir);
}

/* ---- the price catalog ------------------------------------------------------ */

static const struct price_offering *find_offer(const struct price_catalog *cat, const char *prov,
					       const char *inst, const char *region);

static void test_price_catalog_load_shipped(void **state)
{
	char *dir = tmp_dir();
	struct price_opts o;
	struct price_catalog cat;
	size_t aws = 0, gcp = 0, azure = 0, lambda = 0, runpod = 0, vast = 0, oracle = 0,
	       coreweave = 0, nebius = 0;
	const struct price_offering *of;

	(void)state;
	opts_for(&o, dir);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_int_equal(cat.user_table, 0);
	/* The reference table: 150 rows, aws 65, gcp 31, azure 15, vast 14,
	 * lambda 13, runpod 12, less three undated GCP rows (a3-ultragpu-8g
	 * in us-central1 and us-east4, a3-megagpu-8g in us-central1); and four GB200/GB300 racks' trays priced by
	 * their providers: aws 1 (sold only as capacity blocks), azure 1,
	 * oracle 2; p6-b300 in us-east-1, priced only as a capacity block;
	 * CoreWeave's HGX H100 and H200 nodes (coreweave.com/pricing); and
	 * Nebius's H200 node with its InfiniBand (data/SOURCES.md). */
	assert_int_equal(cat.n_offers, 155);
	for (size_t i = 0; i < cat.n_offers; i++) {
		const char *p = cat.offers[i].provider;

		assert_non_null(price_gpu_find(&cat, cat.offers[i].gpu));
		aws += strcmp(p, "aws") == 0;
		gcp += strcmp(p, "gcp") == 0;
		azure += strcmp(p, "azure") == 0;
		lambda += strcmp(p, "lambda") == 0;
		runpod += strcmp(p, "runpod") == 0;
		vast += strcmp(p, "vast") == 0;
		oracle += strcmp(p, "oracle") == 0;
		coreweave += strcmp(p, "coreweave") == 0;
		nebius += strcmp(p, "nebius") == 0;
	}
	assert_int_equal(aws, 67);
	assert_int_equal(gcp, 28);
	assert_int_equal(azure, 16);
	assert_int_equal(oracle, 2);
	assert_int_equal(lambda, 13);
	assert_int_equal(runpod, 12);
	assert_int_equal(vast, 14);
	assert_int_equal(coreweave, 2);
	assert_int_equal(nebius, 1);
	/* Nebius's H200 node: 8 x 3.50 USD a GPU-hour (its billing page,
	 * dated), 8 x 400 Gb/s NDR (its MLPerf Training system description) */
	of = find_offer(&cat, "nebius", "gpu-h200-sxm_8gpu-128vcpu-1600gb", "all");
	assert_non_null(of);
	assert_near(of->on_demand_usd_per_hour, 28.0, 1e-12);
	assert_true(of->spot_usd_per_hour < 0);
	assert_near(of->inter_node_bytes_per_s, 3200e9 / 8, 1);
	assert_string_equal(of->price_date, "2025-10-22");
	/* Azure's ND GB200 v6: 4 GPUs a VM, 4 x 400 Gb/s InfiniBand, one of
	 * 18 VMs of an NVL72 rack (Microsoft's ND GB200 v6 page); Oracle
	 * states no domain, so the GPU's 72 */
	of = find_offer(&cat, "azure", "Standard_ND128isr_NDR_GB200_v6", "westus3");
	assert_non_null(of);
	assert_near(of->on_demand_usd_per_hour, 108.16, 1e-12);
	assert_near(of->inter_node_bytes_per_s, 1600e9 / 8, 1e-12);
	assert_int_equal(of->nvlink_domain, 72);
	assert_string_equal(of->price_date, "2026-09-06");
	of = find_offer(&cat, "oracle", "BM.GPU.GB300.4", "all");
	assert_non_null(of);
	assert_near(price_offering_usd_per_gpu_hour(of, 0), 18, 1e-12);
	assert_int_equal(of->nvlink_domain, 0);
	assert_int_equal(price_nvlink_domain(of, price_gpu_find(&cat, of->gpu)), 72);
	/* AWS's P6e-GB200: no on-demand or spot price (capacity blocks only,
	 * blocks.csv), 4 x 400 Gb/s EFA, UltraServers of 18 nodes with one
	 * 72-GPU NVLink domain */
	of = find_offer(&cat, "aws", "p6e-gb200.36xlarge", "us-east-1-dfw-2a");
	assert_non_null(of);
	assert_true(of->on_demand_usd_per_hour < 0 && of->spot_usd_per_hour < 0);
	assert_near(of->inter_node_bytes_per_s, 1600e9 / 8, 1e-12);
	assert_int_equal(of->nvlink_domain, 72);
	assert_int_equal(of->node_multiple, 18);
	assert_int_equal(of->capacity_nodes, 18);
	/* an HGX board: the node */
	of = find_offer(&cat, "aws", "p5.48xlarge", "us-east-1");
	assert_int_equal(price_nvlink_domain(of, price_gpu_find(&cat, of->gpu)), 8);
	of = find_offer(&cat, "aws", "p5.4xlarge", "us-east-1");
	assert_int_equal(price_nvlink_domain(of, price_gpu_find(&cat, of->gpu)), 1);
	/* The digest identifies what was read: the same files, the same
	 * digest; a user table that differs, another one. */
	{
		struct price_catalog again;
		char path[1024];
		FILE *f;

		assert_int_equal(strncmp(cat.digest, "fnv1a64:", 8), 0);
		assert_int_equal(strlen(cat.digest), 8 + 16);
		assert_int_equal(price_catalog_load(&again, &o), RC_OK);
		assert_string_equal(again.digest, cat.digest);
		price_catalog_release(&again);
		snprintf(path, sizeof(path), "%s/prices.csv", dir);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs("provider,instance_type,gpu,gpus_per_node,region,on_demand_usd_per_hour\n"
		      "aws,p5.48xlarge,H100,8,us-east-1,50\n", f);
		fclose(f);
		assert_int_equal(price_catalog_load(&again, &o), RC_OK);
		assert_int_equal(again.user_table, 1);
		/* No marker line: a full copy an older gpuplan wrote, every
		 * row of it the user's; the shipped rows of other keys stay. */
		assert_int_equal(again.user_legacy, 1);
		assert_int_equal(again.n_user_offers, 1);
		assert_int_equal(again.n_offers, 155);
		assert_string_not_equal(again.digest, cat.digest);
		price_catalog_release(&again);
	}
	price_catalog_release(&cat);
	rm_rf(dir);
}

static void test_price_offering_units(void **state)
{
	struct price_offering o;

	(void)state;
	memset(&o, 0, sizeof(o));
	o.gpus_per_node = 8;
	o.on_demand_usd_per_hour = 55.04;
	o.spot_usd_per_hour = -1;
	/* AWS p5.48xlarge us-east-1: 55.04 / 8 = 6.88 USD per GPU-hour. */
	assert_near(price_offering_usd_per_gpu_hour(&o, 0), 6.88, 1e-12);
	assert_true(price_offering_usd_per_gpu_hour(&o, 1) < 0);
	assert_true(price_offering_usd_per_hour(&o, 1) < 0);
	/* EFA 3200 Gbit/s = 3200e9 / 8 = 400e9 bytes/s; NVLink 900 GB/s
	 * both ways = 450e9 bytes/s one way. */
	assert_near(price_gbps_to_bytes_per_s(3200), 400e9, 1e-12);
	assert_near(price_bidir_gb_to_bytes_per_s(900), 450e9, 1e-12);
}

static void test_price_catalog_query_sorts_and_filters(void **state)
{
	char *dir = tmp_dir();
	struct price_opts o;
	struct price_catalog cat;
	struct price_query q;
	size_t *idx, n;

	(void)state;
	opts_for(&o, dir);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	price_query_init(&q);
	q.gpu = "h100";
	assert_int_equal(price_catalog_query(&cat, &q, &idx, &n), RC_OK);
	assert_int_equal(n, 37);
	/* Cheapest H100 SXM GPU-hour in the table: vast 1x at 1.87. */
	assert_string_equal(cat.offers[idx[0]].provider, "vast");
	assert_near(price_offering_usd_per_gpu_hour(&cat.offers[idx[0]], 0), 1.87, 1e-12);
	for (size_t i = 1; i < n; i++) {
		double a = price_offering_usd_per_gpu_hour(&cat.offers[idx[i - 1]], 0);
		double b = price_offering_usd_per_gpu_hour(&cat.offers[idx[i]], 0);

		assert_true(b < 0 || (a >= 0 && a <= b));
	}
	free(idx);
	q.spot = 1;
	q.provider = "AWS";
	q.region = "us-east";
	assert_int_equal(price_catalog_query(&cat, &q, &idx, &n), RC_OK);
	/* AWS's dated H100 rows carry no spot price (the snapshot's undated
	 * spot figures were emptied when their on-demand prices were dated). */
	assert_int_equal(n, 0);
	free(idx);
	q.provider = "GCP";
	assert_int_equal(price_catalog_query(&cat, &q, &idx, &n), RC_OK);
	/* GCP's H100 spot rows in us-east4 and us-east5: a3-highgpu-8g in both,
	 * a3-megagpu-8g and a3-highgpu-1g in us-east4; the cheapest GPU-hour is
	 * a3-megagpu-8g us-east4's 23.27524 / 8. */
	assert_int_equal(n, 4);
	assert_string_equal(cat.offers[idx[0]].instance_type, "a3-megagpu-8g");
	assert_near(cat.offers[idx[0]].spot_usd_per_hour, 23.27524, 1e-12);
	free(idx);
	q.gpu = "no-such-gpu";
	assert_int_equal(price_catalog_query(&cat, &q, &idx, &n), RC_USAGE);
	assert_int_equal(price_sort_parse("usd_per_hour", &q.sort), RC_OK);
	assert_int_equal(q.sort, PRICE_SORT_USD_PER_HOUR);
	assert_int_equal(price_sort_parse("cheapest", &q.sort), RC_USAGE);
	price_catalog_release(&cat);
	rm_rf(dir);
}

static void test_price_offering_eligible_names_missing_figure(void **state)
{
	char *dir = tmp_dir();
	struct price_opts o;
	struct price_catalog cat;
	char why[256];
	int found = 0;

	(void)state;
	opts_for(&o, dir);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	for (size_t i = 0; i < cat.n_offers; i++)
		if (strcmp(cat.offers[i].gpu, "A10G") == 0) {
			assert_false(price_offering_eligible(&cat, &cat.offers[i], why, sizeof(why)));
			assert_non_null(strstr(why, "bf16_dense_tflops"));
			found = 1;
		}
	assert_true(found);
	price_catalog_release(&cat);
	rm_rf(dir);
}

/* ---- updates ------------------------------------------------------------------ */

#define HEADER "provider,instance_type,gpu,gpus_per_node,region,on_demand_usd_per_hour," \
	       "spot_usd_per_hour,inter_node_gbps,max_nodes,catalog_version\n"

static const struct price_offering *find_offer(const struct price_catalog *cat, const char *prov,
					       const char *inst, const char *region)
{
	for (size_t i = 0; i < cat->n_offers; i++)
		if (strcmp(cat->offers[i].provider, prov) == 0 &&
		    strcmp(cat->offers[i].instance_type, inst) == 0 &&
		    strcmp(cat->offers[i].region, region) == 0)
			return &cat->offers[i];
	return NULL;
}

static void test_price_update_merges_and_records_history(void **state)
{
	char *dir = tmp_dir();
	char file[512];
	struct price_opts o;
	struct price_update_opts u;
	struct price_update_report rep;
	struct price_catalog cat;
	struct price_history h;
	const struct price_offering *of;

	(void)state;
	opts_for(&o, dir);
	price_update_opts_init(&u);
	/* One changed price (55.04 -> 49.536 = -10%), one unchanged row, one new. */
	write_text(dir, "new.csv", HEADER
		   "aws,p5.48xlarge,H100-SXM5-80GB,8,us-east-1,49.536,,3200,,test-1\n"
		   "aws,p5.48xlarge,H100-SXM5-80GB,8,us-east-2,55.04,,3200,,AWS price list via instances.vantage.sh as transcribed 2026-01-21\n"
		   "acme,a8,H100,8,moon-1,20,,,4,test-1\n");
	snprintf(file, sizeof(file), "%s/new.csv", dir);
	assert_int_equal(price_update(file, &o, &u, &rep), RC_OK);
	assert_int_equal(rep.added, 1);
	assert_int_equal(rep.changed, 1);
	assert_int_equal(rep.unchanged, 1);
	assert_int_equal(rep.written, 1);
	assert_int_equal(rep.offers_after, 156);
	/* The user's table holds the changed and the added row, not the
	 * unchanged one nor the 148 shipped rows. */
	assert_int_equal(rep.user_rows, 2);
	/* Changes: on-demand price, catalog_version and price_date (the
	 * update's, the file stating none) of the changed row, the added row. */
	assert_int_equal(rep.n_changes, 4);
	assert_string_equal(rep.changes[0].field, "on_demand_usd_per_hour");
	assert_near(rep.changes[0].old_num, 55.04, 1e-12);
	assert_near(rep.changes[0].new_num, 49.536, 1e-12);
	assert_string_equal(rep.changes[2].field, "price_date");
	assert_string_equal(rep.changes[2].old_value, "2026-10-05");
	assert_string_equal(rep.changes[2].new_value, "2026-12-04");
	assert_int_equal(rep.changes[3].kind, PRICE_CHANGE_ADDED);
	price_update_report_release(&rep);

	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_int_equal(cat.user_table, 1);
	assert_int_equal(cat.user_legacy, 0);
	assert_int_equal(cat.n_offers, 156);
	assert_int_equal(cat.n_user_offers, 2);
	of = find_offer(&cat, "aws", "p5.48xlarge", "us-east-1");
	assert_non_null(of);
	assert_near(of->on_demand_usd_per_hour, 49.536, 1e-12);
	assert_string_equal(of->version, "test-1");
	assert_string_equal(of->price_date, "2026-12-04");
	of = find_offer(&cat, "acme", "a8", "moon-1");
	assert_non_null(of);
	assert_string_equal(of->price_date, "2026-12-04");
	assert_string_equal(of->gpu, "H100-SXM5-80GB");
	assert_int_equal(of->max_nodes, 4);
	price_catalog_release(&cat);

	assert_int_equal(price_history_load(&o, &h), RC_OK);
	assert_int_equal(h.n, 4);
	assert_string_equal(h.entries[0].old_value, "55.04");
	assert_string_equal(h.entries[0].new_value, "49.536");
	assert_string_equal(h.entries[3].field, "row");
	price_history_release(&h);

	/* The same file again changes nothing and writes nothing. */
	assert_int_equal(price_update(file, &o, &u, &rep), RC_OK);
	assert_int_equal(rep.changed, 0);
	assert_int_equal(rep.added, 0);
	assert_int_equal(rep.unchanged, 3);
	assert_int_equal(rep.written, 0);
	price_update_report_release(&rep);
	assert_int_equal(price_history_load(&o, &h), RC_OK);
	assert_int_equal(h.n, 4);
	price_history_release(&h);
	rm_rf(dir);
}

/* A catalog that prices hosts and GPUs apart (SkyPilot's GCP rows): the
 * host-only and GPU-only rows are skipped, a GPU row of a listed host is
 * completed with its host (host + GPUs), and one whose host row is zero
 * or missing in its region is skipped and named, never stored as a node's
 * price.  The fixture's figures are made up for the arithmetic. */
static void test_price_update_skypilot_part_prices(void **state)
{
	char *dir = tmp_dir();
	struct price_opts o;
	struct price_update_opts u;
	struct price_update_report rep;
	struct price_catalog cat;
	const struct price_offering *of;

	(void)state;
	opts_for(&o, dir);
	price_update_opts_init(&u);
	u.provider = "gcp";
	assert_int_equal(price_update("tests/fixtures/prices/skypilot_gcp_parts.csv", &o, &u, &rep),
			 RC_OK);
	assert_int_equal(rep.rows_read, 8);
	assert_int_equal(rep.skipped_no_gpu, 4);      /* a2, a4, a3 hosts and n1 */
	assert_int_equal(rep.skipped_no_instance, 1); /* T4 alone */
	assert_int_equal(rep.completed_with_host, 1); /* a2-highgpu-8g */
	assert_int_equal(rep.skipped_no_host, 2);
	assert_string_equal(rep.no_host, "a4-highgpu-8g us-central1, a3-highgpu-8g us-west4");
	assert_int_equal(rep.offers_in_file, 1);
	price_update_report_release(&rep);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	/* 5.91582 + 23.47126 = 29.38708 on demand, 2.958 + 11.4728 spot. */
	of = find_offer(&cat, "gcp", "a2-highgpu-8g", "us-central1");
	assert_non_null(of);
	assert_near(of->on_demand_usd_per_hour, 29.38708, 1e-12);
	assert_near(of->spot_usd_per_hour, 14.4308, 1e-12);
	/* The shipped a4 row is untouched by the zero host: spot only. */
	of = find_offer(&cat, "gcp", "a4-highgpu-8g", "us-central1");
	assert_non_null(of);
	assert_true(of->on_demand_usd_per_hour < 0);
	/* The shipped a3 us-west4 row is not replaced by the GPU part. */
	of = find_offer(&cat, "gcp", "a3-highgpu-8g", "us-west4");
	assert_non_null(of);
	assert_false(of->user);
	assert_near(of->on_demand_usd_per_hour, 99.64895, 1e-12);
	price_catalog_release(&cat);
	rm_rf(dir);
}

static void test_price_update_skypilot_folds_zones(void **state)
{
	char *dir = tmp_dir();
	struct price_opts o;
	struct price_update_opts u;
	struct price_update_report rep;
	struct price_catalog cat;
	const struct price_offering *of;

	(void)state;
	opts_for(&o, dir);
	price_update_opts_init(&u);
	assert_int_equal(price_update("tests/fixtures/prices/skypilot_aws.csv", &o, &u, &rep),
			 RC_USAGE);
	u.provider = "aws";
	assert_int_equal(price_update("tests/fixtures/prices/skypilot_aws.csv", &o, &u, &rep), RC_OK);
	assert_int_equal(rep.skypilot, 1);
	assert_int_equal(rep.rows_read, 6);
	assert_int_equal(rep.skipped_no_gpu, 1);      /* m5.large */
	assert_int_equal(rep.skipped_unknown_gpu, 1); /* T4 */
	assert_string_equal(rep.unknown_gpus, "T4");
	assert_int_equal(rep.az_rows, 3);             /* p5 in three us-east-1 zones */
	assert_int_equal(rep.az_regions, 1);
	assert_int_equal(rep.offers_in_file, 2);
	price_update_report_release(&rep);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	of = find_offer(&cat, "aws", "p5.48xlarge", "us-east-1");
	/* Lowest spot over zones az1 18.5, az4 16.5, az6 none = 16.5. */
	assert_near(of->spot_usd_per_hour, 16.5, 1e-12);
	assert_near(of->on_demand_usd_per_hour, 55.04, 1e-12);
	/* Columns a SkyPilot catalog lacks keep their stored values. */
	assert_near(of->inter_node_bytes_per_s, 400e9, 1e-12);
	of = find_offer(&cat, "aws", "p6-b200.48xlarge", "us-west-2");
	assert_near(of->spot_usd_per_hour, 20.5, 1e-12);
	price_catalog_release(&cat);
	rm_rf(dir);
}

static void test_price_update_alias_keeps_stored_gpu(void **state)
{
	char *dir = tmp_dir();
	char file[512];
	struct price_opts o;
	struct price_update_opts u;
	struct price_update_report rep;
	struct price_catalog cat;

	(void)state;
	opts_for(&o, dir);
	price_update_opts_init(&u);
	u.provider = "azure";
	/* SkyPilot calls the Azure NC A100 v4 GPU "A100-80GB", an alias of
	 * the SXM part; the stored row (PCIe, per Azure's docs) must stay. */
	write_text(dir, "az.csv", "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region\n"
		   "Standard_NC24ads_A100_v4,A100-80GB,1,3.5,,eastus\n");
	snprintf(file, sizeof(file), "%s/az.csv", dir);
	assert_int_equal(price_update(file, &o, &u, &rep), RC_OK);
	assert_int_equal(rep.changed, 1);
	price_update_report_release(&rep);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_string_equal(find_offer(&cat, "azure", "Standard_NC24ads_A100_v4", "eastus")->gpu,
			    "A100-PCIe-80GB");
	price_catalog_release(&cat);
	rm_rf(dir);
}

static void test_price_update_bad_input_leaves_table(void **state)
{
	static const char *const bad[] = {
		"missing_column.csv", "bad_price.csv", "negative_price.csv", "unknown_gpu.csv",
		"zero_gpus.csv", "duplicate_key.csv", "empty.csv", "header_only.csv",
		"truncated_quote.csv", "stray_quote.csv",
	};
	char *dir = tmp_dir();
	struct price_opts o;
	struct price_update_opts u;
	struct price_update_report rep;
	char *before, *hist_before;
	size_t blen, hb;

	(void)state;
	opts_for(&o, dir);
	price_update_opts_init(&u);
	assert_int_equal(price_update("tests/fixtures/prices/bom.csv", &o, &u, &rep), RC_OK);
	price_update_report_release(&rep);
	before = read_all(dir, "prices.csv", &blen);
	hist_before = read_all(dir, "prices.history.csv", &hb);
	assert_non_null(before);
	for (size_t i = 0; i < GP_ARRAY_LEN(bad); i++) {
		char file[256];

		snprintf(file, sizeof(file), "tests/fixtures/prices/%s", bad[i]);
		assert_int_equal(price_update(file, &o, &u, &rep), RC_INPUT);
		assert_file_is(dir, "prices.csv", before, blen);
		assert_file_is(dir, "prices.history.csv", hist_before, hb);
	}
	free(before);
	free(hist_before);
	rm_rf(dir);
}

/* nvlink_domain in a price file: stored and shown through the rule, a
 * change recorded, an empty cell or an absent column keeping what is
 * stored, a bad cell refusing the file and leaving the table alone. */
static void test_price_update_nvlink_domain(void **state)
{
	static const char head[] = "provider,instance_type,gpu,gpus_per_node,region,"
				   "on_demand_usd_per_hour,catalog_version,nvlink_domain\n";
	char *dir = tmp_dir();
	char file[4096], text[512], *before;
	size_t blen;
	struct price_opts o;
	struct price_update_opts u;
	struct price_update_report rep;
	struct price_catalog cat;
	const struct price_offering *of;

	(void)state;
	opts_for(&o, dir);
	price_update_opts_init(&u);
	snprintf(file, sizeof(file), "%s/in.csv", dir);
	/* a row that states 36 and one that states nothing (the GPU's 72) */
	snprintf(text, sizeof(text), "%sx,rack-36,GB200,4,r1,40,t1,36\nx,tray,GB200,4,r1,20,t1,\n",
		 head);
	write_text(dir, "in.csv", text);
	assert_int_equal(price_update(file, &o, &u, &rep), RC_OK);
	assert_int_equal(rep.added, 2);
	price_update_report_release(&rep);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	of = find_offer(&cat, "x", "rack-36", "r1");
	assert_non_null(of);
	assert_int_equal(of->nvlink_domain, 36);
	assert_int_equal(price_nvlink_domain(of, price_gpu_find(&cat, of->gpu)), 36);
	of = find_offer(&cat, "x", "tray", "r1");
	assert_int_equal(of->nvlink_domain, 0);
	assert_int_equal(price_nvlink_domain(of, price_gpu_find(&cat, of->gpu)), 72);
	price_catalog_release(&cat);
	/* 36 -> 72: one change of nvlink_domain; an empty cell keeps 72 */
	snprintf(text, sizeof(text), "%sx,rack-36,GB200,4,r1,40,t1,72\n", head);
	write_text(dir, "in.csv", text);
	assert_int_equal(price_update(file, &o, &u, &rep), RC_OK);
	assert_int_equal(rep.changed, 1);
	assert_int_equal(rep.n_changes, 1);
	assert_string_equal(rep.changes[0].field, "nvlink_domain");
	assert_string_equal(rep.changes[0].old_value, "36");
	assert_string_equal(rep.changes[0].new_value, "72");
	price_update_report_release(&rep);
	snprintf(text, sizeof(text), "%sx,rack-36,GB200,4,r1,40,t1,\n", head);
	write_text(dir, "in.csv", text);
	assert_int_equal(price_update(file, &o, &u, &rep), RC_OK);
	assert_int_equal(rep.unchanged, 1);
	price_update_report_release(&rep);
	/* bad cells: the whole file refused, the stored table byte for byte */
	before = read_all(dir, "prices.csv", &blen);
	assert_non_null(before);
	assert_non_null(strstr(before, "x,rack-36,GB200,4,r1,40,,,,t1,"));
	assert_non_null(strstr(strstr(before, "x,rack-36,"), ",72\n"));
	for (int i = 0; i < 4; i++) {
		static const char *const bad[] = { "-4", "4.5", "65537", "rack" };

		snprintf(text, sizeof(text), "%sx,tray,GB200,4,r1,21,t2,\nx,rack-36,GB200,4,r1,40,t2,%s\n",
			 head, bad[i]);
		write_text(dir, "in.csv", text);
		assert_int_equal(price_update(file, &o, &u, &rep), RC_INPUT);
		assert_file_is(dir, "prices.csv", before, blen);
	}
	free(before);
	rm_rf(dir);
}

static void test_price_update_accepts_bom_crlf_quotes_no_eol(void **state)
{
	static const char *const good[] = {
		"bom.csv", "crlf.csv", "quoted_commas.csv", "no_final_newline.csv",
	};
	char *dir = tmp_dir();
	struct price_opts o;
	struct price_update_opts u;
	struct price_update_report rep;
	struct price_catalog cat;

	(void)state;
	opts_for(&o, dir);
	price_update_opts_init(&u);
	for (size_t i = 0; i < GP_ARRAY_LEN(good); i++) {
		char file[256];

		snprintf(file, sizeof(file), "tests/fixtures/prices/%s", good[i]);
		assert_int_equal(price_update(file, &o, &u, &rep), RC_OK);
		assert_true(rep.changed + rep.added >= 1);
		price_update_report_release(&rep);
	}
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_near(find_offer(&cat, "aws", "p5.48xlarge", "us-east-1")->on_demand_usd_per_hour,
		    51.5, 1e-12);
	assert_near(find_offer(&cat, "aws", "p5.48xlarge", "us-east-2")->on_demand_usd_per_hour,
		    52.5, 1e-12);
	assert_near(find_offer(&cat, "vast", "1x-RTX_4090-32-65536", "Germany, DE, EU")
			    ->on_demand_usd_per_hour, 0.41, 1e-12);
	assert_string_equal(find_offer(&cat, "vast", "1x-RTX_4090-32-65536", "Germany, DE, EU")->version,
			    "snapshot, 2025");
	assert_string_equal(find_offer(&cat, "aws", "g6.48xlarge", "us-east-1")->version, "t-noeol");
	price_catalog_release(&cat);
	rm_rf(dir);
}

static void test_price_update_dry_run_writes_nothing(void **state)
{
	char *dir = tmp_dir();
	struct price_opts o;
	struct price_update_opts u;
	struct price_update_report rep;

	(void)state;
	opts_for(&o, dir);
	price_update_opts_init(&u);
	u.dry_run = 1;
	assert_int_equal(price_update("tests/fixtures/prices/crlf.csv", &o, &u, &rep), RC_OK);
	assert_int_equal(rep.written, 0);
	assert_true(rep.n_changes > 0);
	price_update_report_release(&rep);
	assert_false(file_there(dir, "prices.csv"));
	assert_false(file_there(dir, "prices.history.csv"));
	rm_rf(dir);
}

static void test_price_update_fault_keeps_old_table(void **state)
{
	static const char *const points[] = { "after_write", "after_fsync", "before_rename" };
	char *dir = tmp_dir();
	struct price_opts o;
	struct price_update_opts u;
	struct price_update_report rep;
	struct price_history h;
	char *before, *after;
	size_t blen, alen;

	(void)state;
	opts_for(&o, dir);
	price_update_opts_init(&u);
	assert_int_equal(price_update("tests/fixtures/prices/bom.csv", &o, &u, &rep), RC_OK);
	price_update_report_release(&rep);
	before = read_all(dir, "prices.csv", &blen);
	for (size_t i = 0; i < GP_ARRAY_LEN(points); i++) {
		setenv("GPUPLAN_FAULT", points[i], 1);
		assert_int_equal(price_update("tests/fixtures/prices/crlf.csv", &o, &u, &rep), RC_ERR);
		unsetenv("GPUPLAN_FAULT");
		after = read_all(dir, "prices.csv", &alen);
		assert_int_equal(alen, blen);
		assert_memory_equal(after, before, blen);
		free(after);
		assert_false(file_there(dir, "prices.history.pending"));
		/* History still holds only the first update's changes: bom.csv
		 * sets p5.48xlarge us-east-1's on-demand price (55.04 -> 51.5),
		 * its version and its price_date (its spot price, not offered,
		 * is the shipped row's). */
		assert_int_equal(price_history_load(&o, &h), RC_OK);
		assert_int_equal(h.n, 3);
		price_history_release(&h);
	}
	free(before);
	rm_rf(dir);
}

static void test_price_update_fault_after_rename_recovers_history(void **state)
{
	char *dir = tmp_dir();
	struct price_opts o;
	struct price_update_opts u;
	struct price_update_report rep;
	struct price_history h;
	char *after;
	size_t alen;

	(void)state;
	opts_for(&o, dir);
	price_update_opts_init(&u);
	setenv("GPUPLAN_FAULT", "after_rename", 1);
	/* The new table is in place: the update took effect and says so
	 * (RC_OK, a warning), its history pending, not yet appended. */
	assert_int_equal(price_update("tests/fixtures/prices/crlf.csv", &o, &u, &rep), RC_OK);
	assert_int_equal(rep.written, 1);
	price_update_report_release(&rep);
	unsetenv("GPUPLAN_FAULT");
	after = read_all(dir, "prices.csv", &alen);
	assert_non_null(strstr(after, "52.5"));
	free(after);
	assert_true(file_there(dir, "prices.history.pending"));
	assert_false(file_there(dir, "prices.history.csv"));
	/* Reading the history completes it: crlf.csv changes p5.48xlarge
	 * us-east-2's on-demand price and version (its spot, not offered, is
	 * the shipped row's), and p4d.24xlarge us-east-1's on-demand, spot
	 * (not offered -> 2.2) and version (its 400 Gbit/s is unchanged), each
	 * with its price_date: 7 lines. */
	assert_int_equal(price_history_load(&o, &h), RC_OK);
	assert_int_equal(h.n, 7);
	assert_string_equal(h.entries[0].field, "on_demand_usd_per_hour");
	assert_string_equal(h.entries[0].new_value, "52.5");
	price_history_release(&h);
	assert_false(file_there(dir, "prices.history.pending"));
	rm_rf(dir);
}

/* ---- the user's rows over the shipped table ------------------------------------- */

/* A new directory with data/gpus.csv and prices (the shipped prices.csv). */
static char *share_dir(const char *prices)
{
	char *d = tmp_dir();
	size_t len;
	char *g = read_all(TEST_DATA_DIR, "gpus.csv", &len);

	assert_non_null(g);
	write_file(d, "gpus.csv", g, len);
	free(g);
	write_text(d, "prices.csv", prices);
	return d;
}

#define SHIPPED_V1 HEADER \
	"aws,p5.48xlarge,H100-SXM5-80GB,8,us-east-1,55.04,,3200,,v1\n" \
	"aws,p5.48xlarge,H100-SXM5-80GB,8,us-east-2,55.04,,3200,,v1\n" \
	"lambda,gpu_8x_h100_sxm5,H100-SXM5-80GB,8,us-east-1,23.92,,,,v1\n"
/* A newer release: both p5 rows change, a gcp row is added. */
#define SHIPPED_V2 HEADER \
	"aws,p5.48xlarge,H100-SXM5-80GB,8,us-east-1,54,,3200,,v2\n" \
	"aws,p5.48xlarge,H100-SXM5-80GB,8,us-east-2,52,,3200,,v2\n" \
	"lambda,gpu_8x_h100_sxm5,H100-SXM5-80GB,8,us-east-1,23.92,,,,v1\n" \
	"gcp,a3-highgpu-8g,H100-SXM5-80GB,8,us-central1,88.25,,,,v2\n"
/* What the writer writes: gpuplan's columns with price_date and
 * nvlink_domain. */
#define STORED_HEADER "provider,instance_type,gpu,gpus_per_node,region,on_demand_usd_per_hour," \
		      "spot_usd_per_hour,inter_node_gbps,max_nodes,catalog_version,price_date," \
		      "nvlink_domain\n"
#define UPDATE_HEADER "provider,instance_type,gpu,gpus_per_node,region,on_demand_usd_per_hour,catalog_version\n"

static void test_price_update_newer_shipped_rows_show_through(void **state)
{
	char *share = share_dir(SHIPPED_V1), *user = tmp_dir();
	char file[512], *stored;
	size_t len, *idx, n;
	struct price_opts o;
	struct price_update_opts u;
	struct price_update_report rep;
	struct price_catalog cat;
	struct price_query q;
	const struct price_offering *of;

	(void)state;
	price_opts_init(&o);
	o.data_dir = share;
	o.user_dir = user;
	price_update_opts_init(&u);
	write_text(user, "mine.csv", UPDATE_HEADER "aws,p5.48xlarge,H100,8,us-east-1,50,u1\n");
	snprintf(file, sizeof(file), "%s/mine.csv", user);
	assert_int_equal(price_update(file, &o, &u, &rep), RC_OK);
	assert_int_equal(rep.changed, 1);
	assert_int_equal(rep.offers_after, 3);
	assert_int_equal(rep.user_rows, 1);
	price_update_report_release(&rep);
	/* Stored: the marker, the header and the one changed row (spot and
	 * network kept from the shipped row, the file lacking those columns). */
	stored = read_all(user, "prices.csv", &len);
	assert_string_equal(stored, PRICE_USER_MARKER "\n" STORED_HEADER
			    "aws,p5.48xlarge,H100-SXM5-80GB,8,us-east-1,50,,3200,,u1,2026-12-04,\n");
	free(stored);

	/* A newer gpuplan ships v2: its changed us-east-2 row and its new gcp
	 * row show through; the user's us-east-1 row still wins over v2's 54. */
	write_text(share, "prices.csv", SHIPPED_V2);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_int_equal(cat.n_offers, 4);
	assert_int_equal(cat.n_user_offers, 1);
	of = find_offer(&cat, "aws", "p5.48xlarge", "us-east-1");
	assert_near(of->on_demand_usd_per_hour, 50, 1e-12);
	assert_string_equal(of->version, "u1");
	assert_int_equal(of->user, 1);
	of = find_offer(&cat, "aws", "p5.48xlarge", "us-east-2");
	assert_near(of->on_demand_usd_per_hour, 52, 1e-12);
	assert_int_equal(of->user, 0);
	of = find_offer(&cat, "gcp", "a3-highgpu-8g", "us-central1");
	assert_non_null(of);
	assert_near(of->on_demand_usd_per_hour, 88.25, 1e-12);
	price_query_init(&q);
	q.mine = 1;
	assert_int_equal(price_catalog_query(&cat, &q, &idx, &n), RC_OK);
	assert_int_equal(n, 1);
	assert_string_equal(cat.offers[idx[0]].region, "us-east-1");
	free(idx);
	price_catalog_release(&cat);

	/* An update of another row keeps both of the user's rows and still
	 * lets v2's us-east-2 price through. */
	write_text(user, "mine.csv", UPDATE_HEADER "lambda,gpu_8x_h100_sxm5,H100,8,us-east-1,22,u2\n");
	assert_int_equal(price_update(file, &o, &u, &rep), RC_OK);
	assert_int_equal(rep.changed, 1);
	assert_int_equal(rep.user_rows, 2);
	price_update_report_release(&rep);
	stored = read_all(user, "prices.csv", &len);
	assert_string_equal(stored, PRICE_USER_MARKER "\n" STORED_HEADER
			    "aws,p5.48xlarge,H100-SXM5-80GB,8,us-east-1,50,,3200,,u1,2026-12-04,\n"
			    "lambda,gpu_8x_h100_sxm5,H100-SXM5-80GB,8,us-east-1,22,,,,u2,2026-12-04,\n");
	free(stored);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_near(find_offer(&cat, "aws", "p5.48xlarge", "us-east-2")->on_demand_usd_per_hour, 52,
		    1e-12);
	assert_near(find_offer(&cat, "aws", "p5.48xlarge", "us-east-1")->on_demand_usd_per_hour, 50,
		    1e-12);
	price_catalog_release(&cat);
	rm_rf(share);
	rm_rf(user);
}

static void test_price_catalog_load_legacy_full_copy(void **state)
{
	char *share = share_dir(SHIPPED_V1), *user = tmp_dir();
	char file[512], *stored;
	size_t len;
	struct price_opts o;
	struct price_update_opts u;
	struct price_update_report rep;
	struct price_catalog cat;
	const struct price_offering *of;

	(void)state;
	price_opts_init(&o);
	o.data_dir = share;
	o.user_dir = user;
	price_update_opts_init(&u);
	/* What an older gpuplan stored after the user set us-east-2 to 40:
	 * the whole table, no marker. */
	write_text(user, "prices.csv", HEADER
		   "aws,p5.48xlarge,H100-SXM5-80GB,8,us-east-1,55.04,,3200,,v1\n"
		   "aws,p5.48xlarge,H100-SXM5-80GB,8,us-east-2,40,,3200,,old\n"
		   "lambda,gpu_8x_h100_sxm5,H100-SXM5-80GB,8,us-east-1,23.92,,,,v1\n");
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_int_equal(cat.user_legacy, 1);
	assert_int_equal(cat.n_user_offers, 3);
	assert_int_equal(cat.n_offers, 3);
	assert_near(find_offer(&cat, "aws", "p5.48xlarge", "us-east-2")->on_demand_usd_per_hour, 40,
		    1e-12);
	price_catalog_release(&cat);

	/* Every row of the copy counts as the user's, as before: v2's 54 for
	 * us-east-1 stays hidden; the row v2 adds shows. */
	write_text(share, "prices.csv", SHIPPED_V2);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_int_equal(cat.n_offers, 4);
	assert_near(find_offer(&cat, "aws", "p5.48xlarge", "us-east-1")->on_demand_usd_per_hour,
		    55.04, 1e-12);
	assert_non_null(find_offer(&cat, "gcp", "a3-highgpu-8g", "us-central1"));
	price_catalog_release(&cat);

	/* The next update (under v1) rewrites it as the user's rows: the copy's
	 * rows equal to v1's go, the user's 40 and the new 22 stay. */
	write_text(share, "prices.csv", SHIPPED_V1);
	write_text(share, "mine.csv", UPDATE_HEADER "lambda,gpu_8x_h100_sxm5,H100,8,us-east-1,22,u2\n");
	snprintf(file, sizeof(file), "%s/mine.csv", share);
	assert_int_equal(price_update(file, &o, &u, &rep), RC_OK);
	assert_int_equal(rep.changed, 1);
	assert_int_equal(rep.user_rows, 2);
	assert_int_equal(rep.legacy_copy, 1);
	price_update_report_release(&rep);
	stored = read_all(user, "prices.csv", &len);
	assert_string_equal(stored, PRICE_USER_MARKER "\n" STORED_HEADER
			    "aws,p5.48xlarge,H100-SXM5-80GB,8,us-east-2,40,,3200,,old,,\n"
			    "lambda,gpu_8x_h100_sxm5,H100-SXM5-80GB,8,us-east-1,22,,,,u2,2026-12-04,\n");
	free(stored);
	/* From now on v2's us-east-1 price shows through. */
	write_text(share, "prices.csv", SHIPPED_V2);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_int_equal(cat.user_legacy, 0);
	of = find_offer(&cat, "aws", "p5.48xlarge", "us-east-1");
	assert_near(of->on_demand_usd_per_hour, 54, 1e-12);
	assert_near(find_offer(&cat, "aws", "p5.48xlarge", "us-east-2")->on_demand_usd_per_hour, 40,
		    1e-12);
	price_catalog_release(&cat);
	rm_rf(share);
	rm_rf(user);
}

/* price_date: optional (tables before it read as not stated), a date or
 * empty, and the age counted from today. */
static void test_price_date_column(void **state)
{
	char *share = share_dir(SHIPPED_V1), *user = tmp_dir();
	struct price_opts o;
	struct price_catalog cat;
	const struct price_offering *of;

	(void)state;
	price_opts_init(&o);
	o.data_dir = share;
	o.user_dir = user;
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_string_equal(cat.offers[0].price_date, "");
	assert_int_equal(price_date_age_days(cat.offers[0].price_date, 20791), PRICE_AGE_UNKNOWN);
	price_catalog_release(&cat);
	write_text(user, "prices.csv", PRICE_USER_MARKER "\n" STORED_HEADER
		   "aws,p5.48xlarge,H100,8,us-east-1,50,,,,u,2024-12-31,\n");
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	of = find_offer(&cat, "aws", "p5.48xlarge", "us-east-1");
	assert_non_null(of);
	assert_string_equal(of->price_date, "2024-12-31");
	assert_int_equal(price_date_age_days(of->price_date, 20791), 703);
	price_catalog_release(&cat);
	/* Not a date: one error, the table refused. */
	write_text(user, "prices.csv", PRICE_USER_MARKER "\n" STORED_HEADER
		   "aws,p5.48xlarge,H100,8,us-east-1,50,,,,u,31/12/2024,\n");
	assert_int_equal(price_catalog_load(&cat, &o), RC_INPUT);
	write_text(user, "prices.csv", PRICE_USER_MARKER "\n" STORED_HEADER
		   "aws,p5.48xlarge,H100,8,us-east-1,50,,,,u,2024-02-30,\n");
	assert_int_equal(price_catalog_load(&cat, &o), RC_INPUT);
	rm_rf(share);
	rm_rf(user);
}

/* ---- the shipped tables agree ---------------------------------------------- */

static void test_price_data_check_shipped(void **state)
{
	size_t problems = 99;

	(void)state;
	assert_int_equal(price_data_check(TEST_DATA_DIR, &problems), RC_OK);
	assert_int_equal(problems, 0);
}

#define COMMIT_HEADER "provider,instance_prefix,gpu,term_years,discount_pct,price_date,source," \
		      "base_instance_type,base_region,base_usd_per_hour\n"

/* Each kind of contradiction, one fixture each, counted. */
static void test_price_data_check_contradictions(void **state)
{
	static const char cap_header[] = "provider,instance_prefix,max_nodes,spot_max_nodes,"
					 "billing_increment_s,min_billing_s,provision_s,source\n";
	static const char block_header[] = "provider,instance_prefix,region,usd_per_hour,min_nodes,"
					   "max_nodes,min_days,max_days,step_days,long_step_days,"
					   "long_from_days,price_date,source\n";
	char *d = share_dir(HEADER
			    "gcp,a3-highgpu-8g,H100,8,us-central1,88.49,,1000,,v\n"
			    "aws,p4d.24xlarge,A100-SXM4-40GB,8,us-east-1,21.957642,,400,,v\n");
	size_t problems;

	(void)state;
	/* Agreeing tables: the GCP month figure 64597.70 / 730 h = 88.49. */
	write_text(d, "commitments.csv", COMMIT_HEADER
		   "gcp,a3-highgpu-,H100,1,30.63,2025-03-06,x,a3-highgpu-8g,us-central1,88.49\n");
	write_text(d, "capacity.csv", "provider,instance_prefix,max_nodes,spot_max_nodes,"
		   "billing_increment_s,min_billing_s,provision_s,source\naws,p4d.,64,4,1,60,,x\n");
	write_text(d, "blocks.csv", "provider,instance_prefix,region,usd_per_hour,min_nodes,"
		   "max_nodes,min_days,max_days,step_days,long_step_days,long_from_days,price_date,"
		   "source\naws,p4d.24xlarge,us-east-1,14.75,1,64,1,182,1,7,14,2024-12-31,x\n");
	assert_int_equal(price_data_check(d, &problems), RC_OK);
	/* The issue's contradiction: a3-highgpu-8g at 43.07 (the part price
	 * SkyPilot's sum gave) against the commitment's 88.49 base. */
	write_text(d, "prices.csv", HEADER
		   "gcp,a3-highgpu-8g,H100,8,us-central1,43.06615,,1000,,v\n"
		   "aws,p4d.24xlarge,A100-SXM4-40GB,8,us-east-1,21.957642,,400,,v\n");
	assert_int_equal(price_data_check(d, &problems), RC_INPUT);
	assert_int_equal(problems, 1);
	/* A commitment measured against a price 49% above today's (AWS P4 in
	 * 2022: 4.10 USD per GPU-hour, 32.80 a node), and one with no base. */
	write_text(d, "prices.csv", HEADER
		   "gcp,a3-highgpu-8g,H100,8,us-central1,88.49,,1000,,v\n"
		   "aws,p4d.24xlarge,A100-SXM4-40GB,8,us-east-1,21.957642,,400,,v\n");
	write_text(d, "commitments.csv", COMMIT_HEADER
		   "aws,p4d.,A100-SXM4-40GB,1,41.46,2022-02-26,x,p4d.24xlarge,us-east-1,32.80\n"
		   "gcp,a3-highgpu-,H100,3,56.08,2025-03-06,x,,,\n");
	assert_int_equal(price_data_check(d, &problems), RC_INPUT);
	assert_int_equal(problems, 2);
	write_text(d, "commitments.csv", COMMIT_HEADER);
	/* A row named after a GPU (a part price) and one whose GPU is unknown
	 * to gpus.csv is refused on read already. */
	write_text(d, "prices.csv", HEADER
		   "gcp,a3-highgpu-8g,H100,8,us-central1,88.49,,1000,,v\n"
		   "aws,p4d.24xlarge,A100-SXM4-40GB,8,us-east-1,21.957642,,400,,v\n"
		   "gcp,H100,H100,1,us-central1,9.8,,,,v\n");
	assert_int_equal(price_data_check(d, &problems), RC_INPUT);
	assert_int_equal(problems, 1);
	write_text(d, "prices.csv", HEADER "gcp,a3-highgpu-8g,NOPE-9000,8,us-central1,88.49,,,,v\n");
	assert_int_equal(price_data_check(d, &problems), RC_INPUT);
	/* Capacity and block rows that sell nothing. */
	write_text(d, "prices.csv", HEADER
		   "gcp,a3-highgpu-8g,H100,8,us-central1,88.49,,1000,,v\n"
		   "aws,p4d.24xlarge,A100-SXM4-40GB,8,us-east-1,21.957642,,400,,v\n");
	{
		char text[512];

		snprintf(text, sizeof(text), "%saws,p4d.,64,4,1,60,,x\nazure,ND,1,1,,,,x\n",
			 cap_header);
		write_text(d, "capacity.csv", text);
		snprintf(text, sizeof(text),
			 "%saws,p4d.24xlarge,us-west-2,14.75,1,64,1,182,1,7,14,2024-12-31,x\n",
			 block_header);
		write_text(d, "blocks.csv", text);
	}
	assert_int_equal(price_data_check(d, &problems), RC_INPUT);
	assert_int_equal(problems, 2);
	/* A row with neither price (sold only as a capacity block): read,
	 * and refused unless a block sells it. */
	write_text(d, "capacity.csv", cap_header);
	write_text(d, "prices.csv", HEADER "aws,p6e-gb200.36xlarge,GB200,4,r1,,,1600,,v\n");
	write_text(d, "blocks.csv", block_header);
	assert_int_equal(price_data_check(d, &problems), RC_INPUT);
	assert_int_equal(problems, 1);
	{
		char text[512];

		snprintf(text, sizeof(text), "%saws,p6e-gb200.,r1,42.328,18,18,1,182,1,7,14,"
			 "2026-06-09,x\n", block_header);
		write_text(d, "blocks.csv", text);
	}
	assert_int_equal(price_data_check(d, &problems), RC_OK);
	rm_rf(d);
}

/* Neither price: allowed in the shipped table only (a capacity-block
 * offering, checked by price_data_check); the user's table and an update
 * must price every row. */
static void test_price_unpriced_rows_shipped_only(void **state)
{
	char *share = share_dir(HEADER "aws,p6e-gb200.36xlarge,GB200,4,r1,,,1600,,v\n");
	char *user = tmp_dir();
	char file[4096];
	struct price_opts o;
	struct price_update_opts u;
	struct price_update_report rep;
	struct price_catalog cat;

	(void)state;
	price_opts_init(&o);
	o.data_dir = share;
	o.user_dir = user;
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_int_equal(cat.n_offers, 1);
	assert_true(cat.offers[0].on_demand_usd_per_hour < 0);
	assert_true(price_offering_usd_per_hour(&cat.offers[0], 0) < 0);
	price_catalog_release(&cat);
	write_text(user, "prices.csv", PRICE_USER_MARKER "\n" HEADER "aws,x,H100,8,r1,,,,,u\n");
	assert_int_equal(price_catalog_load(&cat, &o), RC_INPUT);
	snprintf(file, sizeof(file), "%s/prices.csv", user);
	assert_int_equal(remove(file), 0);
	write_text(user, "in.csv", HEADER "aws,x,H100,8,r1,,,,,u\n");
	snprintf(file, sizeof(file), "%s/in.csv", user);
	price_update_opts_init(&u);
	assert_int_equal(price_update(file, &o, &u, &rep), RC_INPUT);
	/* a price for the shipped row: the user's row, priced */
	write_text(user, "in.csv", HEADER "aws,p6e-gb200.36xlarge,GB200,4,r1,60,,,,u\n");
	assert_int_equal(price_update(file, &o, &u, &rep), RC_OK);
	assert_int_equal(rep.changed, 1);
	price_update_report_release(&rep);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_near(cat.offers[0].on_demand_usd_per_hour, 60, 1e-12);
	price_catalog_release(&cat);
	rm_rf(share);
	rm_rf(user);
}

static void test_price_catalog_load_rejects_bad_user_table(void **state)
{
	char *share = share_dir(SHIPPED_V1), *user = tmp_dir();
	struct price_opts o;
	struct price_catalog cat;

	(void)state;
	price_opts_init(&o);
	o.data_dir = share;
	o.user_dir = user;
	/* A format this gpuplan does not know, and a bad cell. */
	write_text(user, "prices.csv", "# gpuplan-user-prices/3\n" HEADER);
	assert_int_equal(price_catalog_load(&cat, &o), RC_INPUT);
	write_text(user, "prices.csv", PRICE_USER_MARKER "\n" HEADER
		   "aws,p5.48xlarge,H100,8,us-east-1,fifty,,,,u\n");
	assert_int_equal(price_catalog_load(&cat, &o), RC_INPUT);
	/* No rows of the user's: the shipped table alone. */
	write_text(user, "prices.csv", PRICE_USER_MARKER "\n" HEADER);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_int_equal(cat.n_offers, 3);
	assert_int_equal(cat.n_user_offers, 0);
	assert_int_equal(cat.user_legacy, 0);
	price_catalog_release(&cat);
	rm_rf(share);
	rm_rf(user);
}

/* ---- the user's GPU quotas ------------------------------------------------------ */

#define QHEADER "provider,region,gpu,max_gpus,instance_type\n"

static void test_price_quota_update_merges_and_records_history(void **state)
{
	char *dir = tmp_dir();
	char file[512];
	struct price_opts o;
	struct price_update_opts u;
	struct price_quota_report rep;
	struct price_catalog cat;
	struct price_history h;
	char no_quotas[32];

	(void)state;
	opts_for(&o, dir);
	price_update_opts_init(&u);
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	/* No quotas.csv: no quotas, not an error. */
	assert_int_equal(cat.n_quotas, 0);
	assert_null(cat.quotas_path);
	gp_strlcpy(no_quotas, cat.digest, sizeof(no_quotas));
	price_catalog_release(&cat);

	/* Aliases resolve to canonical names; "*" and an empty cell both mean
	 * any instance type; provider names are lower-cased. */
	write_text(dir, "q1.csv", QHEADER
		   "AWS,us-east-1,h100,64,\n"
		   "aws,*,A100-80GB,16,*\n"
		   "gcp,us-central1,L4,8,g2-standard-8\n");
	snprintf(file, sizeof(file), "%s/q1.csv", dir);
	assert_int_equal(price_quota_update(file, &o, &u, &rep), RC_OK);
	assert_int_equal(rep.rows_read, 3);
	assert_int_equal(rep.added, 3);
	assert_int_equal(rep.written, 1);
	assert_int_equal(rep.quotas_after, 3);
	assert_int_equal(rep.n_changes, 3);
	assert_int_equal(rep.changes[0].kind, PRICE_CHANGE_ADDED);
	assert_string_equal(rep.changes[0].gpu, "H100-SXM5-80GB");
	assert_string_equal(rep.changes[0].new_value, "64");
	price_quota_report_release(&rep);

	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_non_null(cat.quotas_path);
	assert_int_equal(cat.n_quotas, 3);
	assert_string_equal(cat.quotas[0].provider, "aws");
	assert_string_equal(cat.quotas[0].gpu, "H100-SXM5-80GB");
	assert_string_equal(cat.quotas[0].instance_type, "");
	assert_int_equal(cat.quotas[0].max_gpus, 64);
	assert_string_equal(cat.quotas[1].region, "*");
	assert_string_equal(cat.quotas[1].gpu, "A100-SXM4-80GB");
	assert_string_equal(cat.quotas[1].instance_type, "");
	assert_string_equal(cat.quotas[2].instance_type, "g2-standard-8");
	/* Plan files record the digest: quotas are part of it. */
	assert_string_not_equal(cat.digest, no_quotas);
	price_catalog_release(&cat);

	/* A row of a stored key (case aside) replaces it; an empty max_gpus
	 * removes it; a removal of a key not stored is counted, not an error. */
	write_text(dir, "q2.csv", "provider,region,gpu,max_gpus\n"
		   "aws,US-EAST-1,H100-SXM5-80GB,128\n"
		   "aws,*,A100-SXM4-80GB,16\n"
		   "gcp,us-central1,L4,\n"
		   "lambda,x,L4,\n");
	snprintf(file, sizeof(file), "%s/q2.csv", dir);
	assert_int_equal(price_quota_update(file, &o, &u, &rep), RC_OK);
	/* gcp's quota names an instance type, so q2's gcp row (any type) is
	 * another key: nothing of it stored. */
	assert_int_equal(rep.changed, 1);
	assert_int_equal(rep.unchanged, 1);
	assert_int_equal(rep.removed, 0);
	assert_int_equal(rep.not_stored, 2);
	assert_int_equal(rep.n_changes, 1);
	assert_int_equal(rep.changes[0].kind, PRICE_CHANGE_CHANGED);
	assert_near(rep.changes[0].old_num, 64, 1e-12);
	assert_near(rep.changes[0].new_num, 128, 1e-12);
	price_quota_report_release(&rep);
	write_text(dir, "q3.csv", QHEADER "gcp,us-central1,L4,,g2-standard-8\n");
	snprintf(file, sizeof(file), "%s/q3.csv", dir);
	assert_int_equal(price_quota_update(file, &o, &u, &rep), RC_OK);
	assert_int_equal(rep.removed, 1);
	assert_int_equal(rep.quotas_after, 2);
	assert_int_equal(rep.changes[0].kind, PRICE_CHANGE_REMOVED);
	assert_string_equal(rep.changes[0].old_value, "8");
	assert_string_equal(rep.changes[0].new_value, "");
	price_quota_report_release(&rep);
	/* The same file again: nothing to remove, nothing written. */
	assert_int_equal(price_quota_update(file, &o, &u, &rep), RC_OK);
	assert_int_equal(rep.n_changes, 0);
	assert_int_equal(rep.written, 0);
	price_quota_report_release(&rep);

	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_int_equal(cat.n_quotas, 2);
	/* The stored spelling follows the latest row of the key. */
	assert_string_equal(cat.quotas[0].region, "US-EAST-1");
	assert_int_equal(cat.quotas[0].max_gpus, 128);
	price_catalog_release(&cat);

	assert_int_equal(price_quota_history_load(&o, &h), RC_OK);
	assert_int_equal(h.n, 5);
	assert_string_equal(h.entries[0].gpu, "H100-SXM5-80GB");
	assert_string_equal(h.entries[0].field, "max_gpus");
	assert_string_equal(h.entries[0].old_value, "");
	assert_string_equal(h.entries[2].instance_type, "g2-standard-8");
	assert_string_equal(h.entries[3].old_value, "64");
	assert_string_equal(h.entries[3].new_value, "128");
	assert_string_equal(h.entries[4].old_value, "8");
	assert_string_equal(h.entries[4].new_value, "");
	price_history_release(&h);
	/* The price history is another file, untouched. */
	assert_int_equal(price_history_load(&o, &h), RC_OK);
	assert_int_equal(h.n, 0);
	price_history_release(&h);
	rm_rf(dir);
}

static void test_price_quota_update_bad_rows_leave_table(void **state)
{
	static const char *const bad[] = {
		/* a misspelt column, a repeated one, a missing one */
		"provider,region,gpu,max_gpu\naws,us-east-1,H100,1\n",
		"provider,region,gpu,max_gpus,gpu\naws,us-east-1,H100,1,H100\n",
		"provider,gpu,max_gpus\naws,H100,1\n",
		/* an unknown GPU, a count out of range or not a number */
		QHEADER "aws,us-east-1,H10O,1,\n",
		QHEADER "aws,us-east-1,H100,1000001,\n",
		QHEADER "aws,us-east-1,H100,-1,\n",
		QHEADER "aws,us-east-1,H100,2.5,\n",
		/* an empty region, shell syntax or a control byte in a name */
		QHEADER "aws,,H100,1,\n",
		QHEADER "aws,us$east,H100,1,\n",
		QHEADER "aws,us-east-1,H100,1,p5\x01\n",
		QHEADER "\"a;b\",us-east-1,H100,1,\n",
		/* a key twice (case aside), no rows, nothing */
		QHEADER "aws,us-east-1,H100,1,\nAWS,US-East-1,h100,2,*\n",
		QHEADER,
		"",
	};
	char *dir = tmp_dir();
	char file[512];
	struct price_opts o;
	struct price_update_opts u;
	struct price_quota_report rep;
	char *before, *hist_before;
	size_t blen, hb;

	(void)state;
	opts_for(&o, dir);
	price_update_opts_init(&u);
	write_text(dir, "good.csv", QHEADER "aws,us-east-1,H100,64,\n");
	snprintf(file, sizeof(file), "%s/good.csv", dir);
	assert_int_equal(price_quota_update(file, &o, &u, &rep), RC_OK);
	price_quota_report_release(&rep);
	before = read_all(dir, "quotas.csv", &blen);
	hist_before = read_all(dir, "quotas.history.csv", &hb);
	assert_non_null(before);
	assert_non_null(hist_before);
	snprintf(file, sizeof(file), "%s/bad.csv", dir);
	for (size_t i = 0; i < GP_ARRAY_LEN(bad); i++) {
		write_text(dir, "bad.csv", bad[i]);
		assert_int_equal(price_quota_update(file, &o, &u, &rep), RC_INPUT);
		assert_file_is(dir, "quotas.csv", before, blen);
		assert_file_is(dir, "quotas.history.csv", hist_before, hb);
	}
	/* A missing file is the caller's bad input too. */
	assert_int_equal(price_quota_update("/nonexistent/q.csv", &o, &u, &rep), RC_INPUT);
	free(before);
	free(hist_before);
	rm_rf(dir);
}

static void test_price_quota_update_dry_run_and_fault_write_nothing(void **state)
{
	char *dir = tmp_dir();
	char file[512];
	struct price_opts o;
	struct price_update_opts u;
	struct price_quota_report rep;
	char *before;
	size_t blen;

	(void)state;
	opts_for(&o, dir);
	price_update_opts_init(&u);
	write_text(dir, "q.csv", QHEADER "aws,us-east-1,H100,64,\n");
	snprintf(file, sizeof(file), "%s/q.csv", dir);
	u.dry_run = 1;
	assert_int_equal(price_quota_update(file, &o, &u, &rep), RC_OK);
	assert_int_equal(rep.added, 1);
	assert_int_equal(rep.written, 0);
	price_quota_report_release(&rep);
	assert_false(file_there(dir, "quotas.csv"));
	assert_false(file_there(dir, "quotas.history.csv"));
	assert_false(file_there(dir, "quotas.lock"));

	u.dry_run = 0;
	assert_int_equal(price_quota_update(file, &o, &u, &rep), RC_OK);
	price_quota_report_release(&rep);
	before = read_all(dir, "quotas.csv", &blen);
	write_text(dir, "q.csv", QHEADER "aws,us-east-1,H100,32,\n");
	setenv("GPUPLAN_FAULT", "before_rename", 1);
	assert_int_equal(price_quota_update(file, &o, &u, &rep), RC_ERR);
	unsetenv("GPUPLAN_FAULT");
	assert_file_is(dir, "quotas.csv", before, blen);
	assert_false(file_there(dir, "quotas.history.pending"));
	free(before);
	rm_rf(dir);
}

static void test_price_catalog_load_rejects_bad_quotas(void **state)
{
	char *dir = tmp_dir();
	struct price_opts o;
	struct price_catalog cat;

	(void)state;
	opts_for(&o, dir);
	write_text(dir, "quotas.csv", "provider,region,gpu,instance_type,max_gpus\n"
		   "aws,us-east-1,H100,,lots\n");
	assert_int_equal(price_catalog_load(&cat, &o), RC_INPUT);
	/* A stored table may not remove: an empty max_gpus is an error there. */
	write_text(dir, "quotas.csv", "provider,region,gpu,instance_type,max_gpus\n"
		   "aws,us-east-1,H100,,\n");
	assert_int_equal(price_catalog_load(&cat, &o), RC_INPUT);
	/* A header alone: every quota removed. */
	write_text(dir, "quotas.csv", "provider,region,gpu,instance_type,max_gpus\n");
	assert_int_equal(price_catalog_load(&cat, &o), RC_OK);
	assert_int_equal(cat.n_quotas, 0);
	assert_non_null(cat.quotas_path);
	price_catalog_release(&cat);
	rm_rf(dir);
}

static void test_price_quota_applies_and_for(void **state)
{
	struct price_offering p5 = { .provider = "aws", .instance_type = "p5.48xlarge",
				     .gpu = "H100-SXM5-80GB", .gpus_per_node = 8,
				     .region = "us-east-1" };
	struct price_quota q[] = {
		{ "aws", "*", "H100-SXM5-80GB", "", 64 },
		{ "AWS", "US-EAST-1", "h100-sxm5-80gb", "P5.48XLARGE", 16 },
		{ "aws", "us-east-1", "H100-SXM5-80GB", "", 32 },
		{ "aws", "us-east-2", "H100-SXM5-80GB", "", 1 },      /* another region */
		{ "aws", "*", "H100-SXM5-80GB", "p5.4xlarge", 0 },    /* another type */
		{ "gcp", "*", "H100-SXM5-80GB", "", 0 },              /* another provider */
		{ "aws", "*", "A100-SXM4-80GB", "", 0 },              /* another GPU */
	};
	struct price_catalog cat;
	struct price_offering other = p5;

	(void)state;
	assert_int_equal(price_quota_applies(&q[0], &p5), 1);
	assert_int_equal(price_quota_applies(&q[1], &p5), 1);
	assert_int_equal(price_quota_applies(&q[2], &p5), 1);
	for (size_t i = 3; i < GP_ARRAY_LEN(q); i++)
		assert_int_equal(price_quota_applies(&q[i], &p5), 0);

	memset(&cat, 0, sizeof(cat));
	cat.quotas = q;
	cat.n_quotas = GP_ARRAY_LEN(q);
	cat.offers = &p5;
	cat.n_offers = 1;
	/* The tightest applicable one: 16 (not the 1 or 0 of other keys). */
	assert_ptr_equal(price_quota_for(&cat, &p5), &q[1]);
	assert_int_equal(price_quota_offerings(&cat, &q[0]), 1);
	assert_int_equal(price_quota_offerings(&cat, &q[3]), 0);
	/* Another region: only the "*" one applies; none for another GPU
	 * than any quota names. */
	gp_strlcpy(other.region, "eu-west-1", sizeof(other.region));
	assert_ptr_equal(price_quota_for(&cat, &other), &q[0]);
	gp_strlcpy(other.gpu, "L4", sizeof(other.gpu));
	assert_null(price_quota_for(&cat, &other));
	cat.n_quotas = 0;
	assert_null(price_quota_for(&cat, &p5));
}

/* ---- model presets -------------------------------------------------------------- */

static void test_sim_model_table_load_shipped(void **state)
{
	struct sim_model_table t;
	const struct sim_model *m;

	(void)state;
	assert_int_equal(sim_model_table_load(&t, TEST_DATA_DIR "/models.csv"), RC_OK);
	assert_true(t.n >= 21);
	/* Llama 3.1 70B config.json: 80 layers, 8192 hidden, 64 heads, 8 KV
	 * heads, FFN 28672, vocab 128256. */
	m = sim_model_find(&t, "LLAMA3-70B");
	assert_non_null(m);
	assert_int_equal(m->layers, 80);
	assert_int_equal(m->hidden, 8192);
	assert_int_equal(m->heads, 64);
	assert_int_equal(m->kv_heads, 8);
	assert_int_equal(m->ffn, 28672);
	assert_int_equal(m->vocab, 128256);
	assert_int_equal(m->seq, 8192);
	assert_int_equal(m->mlp, SIM_MLP_SWIGLU);
	assert_int_equal(m->tied_embeddings, 0);
	/* Megatron SC'21 Table 1, 1T row: 128 layers, h 25600, 160 heads,
	 * batch 3072, FFN 4h. */
	m = sim_model_find(&t, "megatron-1t");
	assert_non_null(m);
	assert_int_equal(m->ffn, 4 * 25600);
	assert_int_equal(m->gbs, 3072);
	assert_near(m->published_params, 1008e9, 1e-12);
	assert_null(sim_model_find(&t, "llama5-1t"));
	sim_model_table_release(&t);
}

/* A preset's batch stands; without one, the largest power of two of
 * sequences within 4 Mi tokens: 4,194,304 / 8192 = 512, / 3000 = 1398.1
 * -> 1024. */
static void test_sim_model_gbs_default(void **state)
{
	struct sim_model m;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.seq = 8192;
	assert_int_equal(sim_model_gbs(&m), 512);
	m.seq = 3000;
	assert_int_equal(sim_model_gbs(&m), 1024);
	m.gbs = 1536;
	assert_int_equal(sim_model_gbs(&m), 1536);
}

/* A misspelt preset gets the nearest name (case folded, '_' and ' '
 * read as '-'); a name far from every preset gets none. */
static void test_sim_model_suggest(void **state)
{
	struct sim_model_table t;
	char near[64];

	(void)state;
	assert_int_equal(sim_model_table_load(&t, TEST_DATA_DIR "/models.csv"), RC_OK);
	assert_int_equal(sim_model_suggest(&t, "llama-3-8b", near, sizeof(near)), 0);
	assert_string_equal(near, "llama3-8b");
	assert_int_equal(sim_model_suggest(&t, "LLaMA3_70B", near, sizeof(near)), 0);
	assert_string_equal(near, "llama3-70b");
	assert_int_equal(sim_model_suggest(&t, "zzz", near, sizeof(near)), -1);
	assert_string_equal(near, "");
	sim_model_table_release(&t);
}

static void test_sim_model_table_load_rejects_bad_rows(void **state)
{
	char *dir = tmp_dir();
	char path[512];
	struct sim_model_table t;

	(void)state;
	snprintf(path, sizeof(path), "%s/m.csv", dir);
	write_text(dir, "m.csv", "name,layers,hidden,heads,vocab,seq_len\nx,2,100,3,10,16\n");
	assert_int_equal(sim_model_table_load(&t, path), RC_INPUT); /* 3 heads do not divide 100 */
	write_text(dir, "m.csv", "name,layers,hidden,heads,vocab,seq_len,mlp\nx,2,96,3,10,16,relu\n");
	assert_int_equal(sim_model_table_load(&t, path), RC_INPUT);
	write_text(dir, "m.csv", "name,layers,hidden,heads,vocab\nx,2,96,3,10\n");
	assert_int_equal(sim_model_table_load(&t, path), RC_INPUT); /* no seq_len column */
	write_text(dir, "m.csv", "name,layers,hidden,heads,vocab,seq_len\nx,2,96,3,10,16\nX,2,96,3,10,16\n");
	assert_int_equal(sim_model_table_load(&t, path), RC_INPUT); /* duplicate name */
	write_text(dir, "m.csv", "name,layers,hidden,heads,vocab,seq_len\nx,2,96,3,10,16\n");
	assert_int_equal(sim_model_table_load(&t, path), RC_OK);
	assert_int_equal(t.models[0].kv_heads, 3);
	assert_int_equal(t.models[0].ffn, 384);
	sim_model_table_release(&t);
	rm_rf(dir);
}

/* The architecture facts: defaults without their columns (a Llama-style
 * model: rope base 10000, RMSNorm, no bias, no dropout, no window), the
 * values as written, and one bad cell of each refused. */
static void test_sim_model_table_load_facts(void **state)
{
	static const char *const bad[] = {
		"x,2,96,3,10,16,sinusoid,,rmsnorm,0,0,t,0\n",   /* position */
		"x,2,96,3,10,16,rope,1e4x,rmsnorm,0,0,t,0\n",   /* rotary base */
		"x,2,96,3,10,16,learned,10000,layernorm,1,0,t,0\n", /* base without rope */
		"x,2,96,3,10,16,rope,,batchnorm,0,0,t,0\n",     /* norm */
		"x,2,96,3,10,16,rope,,rmsnorm,yes,0,t,0\n",     /* bias */
		"x,2,96,3,10,16,rope,,rmsnorm,0,1.5,t,0\n",     /* dropout */
		"x,2,96,3,10,16,rope,,rmsnorm,0,0,t$(x),0\n",   /* tokenizer */
		"x,2,96,3,10,16,rope,,rmsnorm,0,0,t,-1\n",      /* window */
		"x,2,96,3,10,16,rope,,rmsnorm,0,0,t,0,0,0,0\n", /* rotary share */
		"x,2,96,3,10,16,rope,,rmsnorm,0,0,t,0,1.5,0,0\n",
		"x,2,96,3,10,16,alibi,,rmsnorm,0,0,t,0,0.5,0,0\n", /* share without rope */
		"x,2,96,3,10,16,rope,,rmsnorm,0,0,t,0,,2,0\n",  /* parallel residual */
		"x,2,96,3,10,16,rope,,rmsnorm,0,0,t,0,,0,yes\n", /* embedding norm */
	};
	const char *head = "name,layers,hidden,heads,vocab,seq_len,position_embedding,rotary_base,"
			   "norm,linear_bias,dropout,tokenizer,sliding_window,rotary_percent,"
			   "parallel_residual,embedding_norm\n";
	char *dir = tmp_dir();
	char path[512], text[512];
	struct sim_model_table t;
	const struct sim_model *m;

	(void)state;
	snprintf(path, sizeof(path), "%s/m.csv", dir);
	write_text(dir, "m.csv", "name,layers,hidden,heads,vocab,seq_len\nx,2,96,3,10,16\n");
	assert_int_equal(sim_model_table_load(&t, path), RC_OK);
	m = &t.models[0];
	assert_int_equal(m->pos, SIM_POS_ROPE);
	assert_near(m->rotary_base, 10000, 1e-12);
	assert_int_equal(m->norm, SIM_NORM_RMSNORM);
	assert_int_equal(m->linear_bias, 0);
	assert_int_equal(m->window, 0);
	assert_string_equal(m->tokenizer, "");
	assert_near(m->rotary_percent, 0, 1e-12);  /* all */
	assert_int_equal(m->parallel_residual, 0);
	assert_int_equal(m->embedding_norm, 0);
	sim_model_table_release(&t);
	snprintf(text, sizeof(text), "%sx,2,96,3,10,16,rope,,rmsnorm,0,0,t,0,0.25,1,1\n", head);
	write_text(dir, "m.csv", text);
	assert_int_equal(sim_model_table_load(&t, path), RC_OK);
	m = &t.models[0];
	assert_near(m->rotary_percent, 0.25, 1e-12);
	assert_int_equal(m->parallel_residual, 1);
	assert_int_equal(m->embedding_norm, 1);
	sim_model_table_release(&t);
	snprintf(text, sizeof(text), "%sx,2,96,3,10,16,LEARNED,,LayerNorm,1,0.1,org/tok-1.0,8\n", head);
	write_text(dir, "m.csv", text);
	assert_int_equal(sim_model_table_load(&t, path), RC_OK);
	m = &t.models[0];
	assert_int_equal(m->pos, SIM_POS_LEARNED);
	assert_near(m->rotary_base, 0, 1e-12);
	assert_int_equal(m->norm, SIM_NORM_LAYERNORM);
	assert_int_equal(m->linear_bias, 1);
	assert_near(m->dropout, 0.1, 1e-12);
	assert_string_equal(m->tokenizer, "org/tok-1.0");
	assert_int_equal(m->window, 8);
	sim_model_table_release(&t);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s%s", head, bad[i]);
		write_text(dir, "m.csv", text);
		assert_int_equal(sim_model_table_load(&t, path), RC_INPUT);
	}
	rm_rf(dir);
}

/* RoPE's scaling columns: none when empty, the kind, factor and YaRN's
 * mscales as written, and each misplaced or bad cell refused. */
static void test_sim_model_table_load_rope(void **state)
{
	static const char *const bad[] = {
		"x,2,96,3,10,16,rope,ntk,8,,\n",       /* kind */
		"x,2,96,3,10,16,rope,llama3,,,\n",     /* scaling without a factor */
		"x,2,96,3,10,16,rope,yarn,0.5,,\n",    /* factor below 1 */
		"x,2,96,3,10,16,rope,,8,,\n",          /* factor without scaling */
		"x,2,96,3,10,16,rope,llama3,8,1,\n",   /* mscale without yarn */
		"x,2,96,3,10,16,rope,yarn,32,-1,\n",   /* mscale below 0 */
		"x,2,96,3,10,16,learned,yarn,32,,\n",  /* scaling without rope */
	};
	const char *head = "name,layers,hidden,heads,vocab,seq_len,position_embedding,"
			   "rope_scaling,rope_factor,rope_mscale,rope_mscale_all_dim\n";
	char *dir = tmp_dir();
	char path[512], text[512];
	struct sim_model_table t;
	const struct sim_model *m;

	(void)state;
	snprintf(path, sizeof(path), "%s/m.csv", dir);
	snprintf(text, sizeof(text), "%sx,2,96,3,10,16,rope,,,,\n"
		 "y,2,96,3,10,16,rope,YaRN,40,1,0.5\n", head);
	write_text(dir, "m.csv", text);
	assert_int_equal(sim_model_table_load(&t, path), RC_OK);
	m = &t.models[0];
	assert_int_equal(m->rope_scaling, SIM_ROPE_NONE);
	assert_near(m->rope_factor, 0, 1e-12);
	m = &t.models[1];
	assert_int_equal(m->rope_scaling, SIM_ROPE_YARN);
	assert_near(m->rope_factor, 40, 1e-12);
	assert_near(m->rope_mscale, 1, 1e-12);
	assert_near(m->rope_mscale_all_dim, 0.5, 1e-12);
	sim_model_table_release(&t);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s%s", head, bad[i]);
		write_text(dir, "m.csv", text);
		assert_int_equal(sim_model_table_load(&t, path), RC_INPUT);
	}
	rm_rf(dir);
}

int main(void)
{
	/* The date updates record and ages count from (unit_today). */
	setenv("GPUPLAN_NOW", "2026-12-04", 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_price_csv_parse_every_chunk_size),
		cmocka_unit_test(test_price_csv_parse_line_numbers),
		cmocka_unit_test(test_price_csv_parse_lone_cr_lines),
		cmocka_unit_test(test_price_csv_parse_bom_and_quoted_commas),
		cmocka_unit_test(test_price_csv_unknown_columns),
		cmocka_unit_test(test_price_csv_table_load_open),
		cmocka_unit_test(test_price_csv_table_load_closed),
		cmocka_unit_test(test_price_cost_tables_repeated_key),
		cmocka_unit_test(test_price_csv_parse_rejects_bad_quotes),
		cmocka_unit_test(test_price_csv_parse_rejects_long_field),
		cmocka_unit_test(test_price_gpus_load_shipped),
		cmocka_unit_test(test_price_gpus_load_shipped_blackwell),
		cmocka_unit_test(test_price_gpu_lookup_aliases),
		cmocka_unit_test(test_price_gpu_suggest_close_names),
		cmocka_unit_test(test_price_resolve_typed_names),
		cmocka_unit_test(test_price_gpu_eligible_needs_bf16),
		cmocka_unit_test(test_price_gpus_load_rejects_bad_cells),
		cmocka_unit_test(test_price_nvlink_domain),
		cmocka_unit_test(test_price_catalog_load_shipped),
		cmocka_unit_test(test_price_offering_node_limit_rules),
		cmocka_unit_test(test_price_offering_node_limit_policy),
		cmocka_unit_test(test_price_capacity_policy_and_block_product),
		cmocka_unit_test(test_price_capacities_load),
		cmocka_unit_test(test_price_catalog_load_capacity),
		cmocka_unit_test(test_price_offering_units),
		cmocka_unit_test(test_price_catalog_query_sorts_and_filters),
		cmocka_unit_test(test_price_offering_eligible_names_missing_figure),
		cmocka_unit_test(test_price_update_merges_and_records_history),
		cmocka_unit_test(test_price_update_skypilot_folds_zones),
		cmocka_unit_test(test_price_update_skypilot_part_prices),
		cmocka_unit_test(test_price_update_alias_keeps_stored_gpu),
		cmocka_unit_test(test_price_update_bad_input_leaves_table),
		cmocka_unit_test(test_price_update_nvlink_domain),
		cmocka_unit_test(test_price_update_accepts_bom_crlf_quotes_no_eol),
		cmocka_unit_test(test_price_update_dry_run_writes_nothing),
		cmocka_unit_test(test_price_update_fault_keeps_old_table),
		cmocka_unit_test(test_price_update_fault_after_rename_recovers_history),
		cmocka_unit_test(test_price_update_newer_shipped_rows_show_through),
		cmocka_unit_test(test_price_catalog_load_legacy_full_copy),
		cmocka_unit_test(test_price_date_column),
		cmocka_unit_test(test_price_data_check_shipped),
		cmocka_unit_test(test_price_data_check_contradictions),
		cmocka_unit_test(test_price_unpriced_rows_shipped_only),
		cmocka_unit_test(test_price_catalog_load_rejects_bad_user_table),
		cmocka_unit_test(test_price_quota_update_merges_and_records_history),
		cmocka_unit_test(test_price_quota_update_bad_rows_leave_table),
		cmocka_unit_test(test_price_quota_update_dry_run_and_fault_write_nothing),
		cmocka_unit_test(test_price_catalog_load_rejects_bad_quotas),
		cmocka_unit_test(test_price_quota_applies_and_for),
		cmocka_unit_test(test_sim_model_table_load_shipped),
		cmocka_unit_test(test_sim_model_suggest),
		cmocka_unit_test(test_sim_model_gbs_default),
		cmocka_unit_test(test_sim_model_table_load_rejects_bad_rows),
		cmocka_unit_test(test_sim_model_table_load_facts),
		cmocka_unit_test(test_sim_model_table_load_rope),
	};
	return cmocka_run_group_tests_name("pricing", tests, NULL, NULL);
}
