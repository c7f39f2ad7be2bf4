/*
 * test_price_fetch.c - the parsers of `prices fetch` on the recorded
 * responses of tests/fixtures/fetch/, below the network: the streaming
 * CSV reader and AWS's offer file fed in every chunk size (the rows must
 * not depend on how the bytes arrive), Azure's reservations per hour,
 * GCP's nodes as the sum of their SKUs, and Lambda's instance types.  The network path and the merge
 * are tests/cli/test_prices_fetch.sh's.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "price.h"
#include "price_csv.h"
#include "price_fetch_rows.h"

#define FIX "tests/fixtures/fetch/"

/* ---- the streaming CSV reader ------------------------------------------- */

/* Rows a stream handed over, flattened: "line:field|field|...\n" each,
 * a line end inside a field written as \n or \r. */
struct seen {
	char *text;
	size_t len, cap;
};

static int collect(const struct price_csv_row *row, void *s_)
{
	struct seen *s = s_;
	char buf[8192];
	int n = snprintf(buf, sizeof(buf), "%d:", row->line);

	for (int i = 0; i < row->n; i++) {
		if (i)
			buf[n++] = '|';
		/* line ends inside a field written as \n and \r */
		for (const char *c = row->field[i]; *c && n < 8000; c++)
			if (*c == '\n' || *c == '\r') {
				buf[n++] = '\\';
				buf[n++] = *c == '\n' ? 'n' : 'r';
			} else {
				buf[n++] = *c;
			}
	}
	n += snprintf(buf + n, sizeof(buf) - (size_t)n, "\n");
	if (s->len + (size_t)n + 1 > s->cap) {
		s->cap = (s->len + (size_t)n + 1) * 2;
		s->text = realloc(s->text, s->cap);
	}
	memcpy(s->text + s->len, buf, (size_t)n + 1);
	s->len += (size_t)n;
	return 0;
}

/* The rows of in, fed chunk bytes at a time (0: at once); NULL on failure. */
static char *stream(const char *in, size_t len, size_t chunk)
{
	struct seen s = { calloc(1, 1), 0, 1 };
	struct price_csv_stream *cs = price_csv_stream_new("t.csv", collect, &s);
	enum rc rc = RC_OK;

	if (!chunk)
		chunk = len ? len : 1;
	for (size_t off = 0; off < len && rc == RC_OK; off += chunk)
		rc = price_csv_stream_feed(cs, in + off, len - off < chunk ? len - off : chunk);
	if (rc == RC_OK)
		rc = price_csv_stream_finish(cs);
	price_csv_stream_free(cs);
	if (rc != RC_OK) {
		free(s.text);
		return NULL;
	}
	return s.text;
}

static void test_price_csv_stream_every_chunk_size(void **state)
{
	static const char *const inputs[] = {
		"a,b\r\n1,2\r\n\r\n3,4\r\n",
		"\xEF\xBB\xBF" "a,b\n\"x, y\",2\n\"multi\nline\",3\n\n\n5,6",
		"a,b\r\n\"q\"\"uote\",\"cr\r\nlf\"\r\n7,8",
		"\"FormatVersion\",\"v1.0\"\n\"SKU\",\"TermType\"\n\"X\",\"OnDemand\"\n",
	};

	(void)state;
	for (size_t k = 0; k < sizeof(inputs) / sizeof(*inputs); k++) {
		size_t len = strlen(inputs[k]);
		char *whole = stream(inputs[k], len, 0);
		struct price_csv csv;
		size_t rows = 0;

		assert_non_null(whole);
		/* The stream hands over what price_csv_parse keeps, header
		 * included, on the same lines. */
		assert_int_equal(price_csv_parse("t.csv", inputs[k], len, 0, &csv), RC_OK);
		for (const char *p = whole; *p; p++)
			rows += *p == '\n';
		assert_int_equal(rows, csv.n_rows + 1);
		assert_int_equal(atoi(whole), csv.header.line);
		price_csv_release(&csv);
		for (size_t chunk = 1; chunk <= len; chunk++) {
			char *part = stream(inputs[k], len, chunk);

			assert_non_null(part);
			assert_string_equal(whole, part);
			free(part);
		}
		free(whole);
	}
	/* the second row starts on line 3 of the second input (a BOM, no line) */
	{
		static const char in[] = "\xEF\xBB\xBF" "a\n\"x\ny\"\nz\n";
		char *s = stream(in, strlen(in), 1);

		assert_non_null(s);
		assert_string_equal(s, "1:a\n2:x\\ny\n4:z\n");
		free(s);
	}
}

static void test_price_csv_stream_errors(void **state)
{
	(void)state;
	assert_null(stream("a,b\n\"open,2\n", 12, 0));      /* a quote never closed */
	assert_null(stream("a,b\nx\"y,2\n", 10, 3));         /* a quote inside a field */
}

/* ---- AWS's offer file ------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	buf = malloc(*len + 1);
	assert_int_equal(fread(buf, 1, *len, f), *len);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

static void ctx_init(struct price_fetch_ctx *ctx, struct price_fetch_opts *f,
		     struct price_fetch_report *rep, struct price_machine *m, size_t n)
{
	memset(ctx, 0, sizeof(*ctx));
	memset(rep, 0, sizeof(*rep));
	price_fetch_opts_init(f);
	ctx->f = f;
	ctx->what = "fixture";
	ctx->machines = m;
	ctx->n_machines = n;
	ctx->rep = rep;
	strcpy(ctx->today, "2026-12-04");
}

static const struct price_fetched *row_of(const struct price_fetch_report *rep,
					  const char *instance, const char *region)
{
	for (size_t i = 0; i < rep->n_rows; i++)
		if (strcmp(rep->rows[i].instance_type, instance) == 0 &&
		    strcmp(rep->rows[i].region, region) == 0)
			return &rep->rows[i];
	return NULL;
}

static void test_price_fetch_aws_every_chunk_size(void **state)
{
	struct price_machine m[3] = {
		{ .instance_type = "p5.48xlarge", .gpu = "H100-SXM5-80GB", .gpus_per_node = 8 },
		{ .instance_type = "p5en.48xlarge", .gpu = "H200-SXM-141GB", .gpus_per_node = 8 },
		{ .instance_type = "p6-b200.48xlarge", .gpu = "B200", .gpus_per_node = 8 },
	};
	size_t len;
	char *file = slurp(FIX "aws-us-east-1.csv", &len);

	(void)state;
	for (size_t chunk = 1; chunk <= len; chunk += chunk < 300 ? 1 : 97) {
		struct price_fetch_ctx ctx;
		struct price_fetch_opts f;
		struct price_fetch_report rep;
		struct price_fetch_aws *a;
		const struct price_fetched *r;

		ctx_init(&ctx, &f, &rep, m, 3);
		a = price_fetch_aws_new(&ctx);
		for (size_t off = 0; off < len; off += chunk)
			assert_int_equal(price_fetch_aws_feed(a, file + off,
							      len - off < chunk ? len - off : chunk), RC_OK);
		assert_int_equal(price_fetch_aws_finish(a), RC_OK);
		price_fetch_aws_free(a);
		/* three list prices; Windows, reserved, unused-reservation and
		 * dedicated rows of p5.48xlarge and the CPU row passed over */
		assert_int_equal(rep.n_rows, 3);
		assert_int_equal(rep.items, 8);
		r = row_of(&rep, "p5.48xlarge", "us-east-1");
		assert_non_null(r);
		assert_near(r->on_demand_usd_per_hour, 55.04, 1e-12);
		assert_true(r->spot_usd_per_hour < 0);
		assert_string_equal(r->price_date, "2026-11-20");
		assert_non_null(strstr(r->source, "rate 2Z6QSP2XHCYN8CQH.JRTCKXETXF.6YS6EN2CT7"));
		assert_near(row_of(&rep, "p6-b200.48xlarge", "us-east-1")->on_demand_usd_per_hour,
			    113.9328, 1e-12);
		free(rep.rows);
	}
	free(file);
}

static void test_price_fetch_aws_cut_short(void **state)
{
	struct price_machine m = { .instance_type = "p5.48xlarge", .gpu = "H100-SXM5-80GB",
				   .gpus_per_node = 8 };
	struct price_fetch_ctx ctx;
	struct price_fetch_opts f;
	struct price_fetch_report rep;
	struct price_fetch_aws *a;

	(void)state;
	/* the metadata rows only: no header ever came */
	ctx_init(&ctx, &f, &rep, &m, 1);
	a = price_fetch_aws_new(&ctx);
	assert_int_equal(price_fetch_aws_feed(a, "\"FormatVersion\",\"v1.0\"\n", 23), RC_OK);
	assert_int_equal(price_fetch_aws_finish(a), RC_INPUT);
	price_fetch_aws_free(a);
	free(rep.rows);
}

/* ---- Azure and GCP pages ---------------------------------------------- */

static void test_price_fetch_azure_reservations_per_hour(void **state)
{
	struct price_machine m[2] = {
		{ .instance_type = "Standard_ND96isr_H100_v5", .gpu = "H100-SXM5-80GB", .gpus_per_node = 8 },
		{ .instance_type = "Standard_ND96isr_H200_v5", .gpu = "H200-SXM-141GB", .gpus_per_node = 8 },
	};
	struct price_fetch_ctx ctx;
	struct price_fetch_opts f;
	struct price_fetch_report rep;
	const struct price_fetched *r;
	size_t len;
	char *page = slurp(FIX "azure-page1.json", &len), *next = NULL;

	(void)state;
	ctx_init(&ctx, &f, &rep, m, 2);
	assert_int_equal(price_fetch_azure_page(&ctx, page, len, &next), RC_OK);
	assert_non_null(next);  /* page 1 links to page 2 */
	assert_non_null(strstr(next, "$skip=1000"));
	r = row_of(&rep, "Standard_ND96isr_H100_v5", "eastus");
	assert_non_null(r);
	assert_near(r->on_demand_usd_per_hour, 98.32, 1e-12);
	assert_near(r->spot_usd_per_hour, 18.169536, 1e-12);
	/* a reservation's retailPrice is the whole term's */
	assert_near(r->reserved_usd_per_hour[0], 538000.0 / 8760, 1e-12);
	assert_near(r->reserved_usd_per_hour[1], 1099920.0 / 26280, 1e-12);
	assert_int_equal(rep.n_rows, 1);  /* Windows, Low Priority and D2s v3 passed over */
	free(next);
	free(page);
	free(rep.rows);

	/* a page cut short is malformed JSON, nothing kept from it */
	page = slurp(FIX "azure-page2.json", &len);
	ctx_init(&ctx, &f, &rep, m, 2);
	assert_int_equal(price_fetch_azure_page(&ctx, page, len / 2, &next), RC_INPUT);
	assert_null(next);
	free(page);
	free(rep.rows);
}

static void test_price_fetch_gcp_node_is_sum_of_skus(void **state)
{
	struct price_machine m[2] = {
		{ .instance_type = "a3-highgpu-8g", .gpu = "H100-SXM5-80GB", .gpus_per_node = 8,
		  .vcpus = 208, .memory_gib = 1872, .sku_gpu = "Nvidia H100 80GB GPU",
		  .sku_core = "A3 Instance Core", .sku_ram = "A3 Instance Ram" },
		{ .instance_type = "a4-highgpu-8g", .gpu = "B200", .gpus_per_node = 8,
		  .vcpus = 224, .sku_gpu = "A4 Nvidia B200 (1 gpu slice)", .sku_core = "A4 Instance Core",
		  .sku_ram = "A4 Instance Ram" },
	};
	struct price_fetch_ctx ctx;
	struct price_fetch_opts f;
	struct price_fetch_report rep;
	struct price_fetch_gcp *g;
	const struct price_fetched *r;
	size_t len1, len2;
	char *p1 = slurp(FIX "gcp-page1.json", &len1), *p2 = slurp(FIX "gcp-page2.json", &len2);
	char *next = NULL;

	(void)state;
	ctx_init(&ctx, &f, &rep, m, 2);
	ctx.regions[0] = "us-central1";
	ctx.n_regions = 1;
	g = price_fetch_gcp_new(&ctx);
	assert_int_equal(price_fetch_gcp_page(g, p1, len1, &next), RC_OK);
	assert_non_null(next);
	free(next);
	assert_int_equal(price_fetch_gcp_page(g, p2, len2, &next), RC_OK);
	assert_null(next);
	price_fetch_gcp_finish(g);
	price_fetch_gcp_free(g);
	r = row_of(&rep, "a3-highgpu-8g", "us-central1");
	assert_non_null(r);
	/* gpus x GPU SKU + vCPUs x core SKU + GiB x RAM SKU (units + nanos),
	 * rounded to a millionth of a dollar */
	assert_near(r->on_demand_usd_per_hour, 8 * 9.796550569 + 208 * 0.031611 + 1872 * 0.00265, 1e-8);
	assert_near(r->spot_usd_per_hour, 8 * 2.25 + 208 * 0.007903 + 1872 * 0.000663, 1e-9);
	assert_null(row_of(&rep, "a3-highgpu-8g", "us-east4"));   /* not asked for */
	/* no memory figure: named and skipped, never priced as GPUs alone */
	assert_null(row_of(&rep, "a4-highgpu-8g", "us-central1"));
	assert_non_null(strstr(rep.skipped_why, "a4-highgpu-8g: machines.csv states no memory_gib"));
	free(p1);
	free(p2);
	free(rep.rows);
}

/* Lambda: one row of region "all" per type the table knows; a type whose
 * GPU count the API states otherwise is named and skipped; an error
 * response, a missing price or malformed JSON is refused. */
static void test_price_fetch_lambda_types(void **state)
{
	struct price_machine m[2] = {
		{ .instance_type = "gpu_8x_h100_sxm5", .gpu = "H100-SXM5-80GB", .gpus_per_node = 8 },
		{ .instance_type = "gpu_1x_gh200", .gpu = "GH200", .gpus_per_node = 2 },
	};
	struct price_fetch_ctx ctx;
	struct price_fetch_opts f;
	struct price_fetch_report rep;
	const struct price_fetched *r;
	size_t len;
	char *page = slurp(FIX "lambda-instance-types.json", &len);
	static const char *const bad[] = {
		"{\"error\": {\"code\": \"global/invalid-api-key\", \"message\": \"no\"}}",
		"{\"data\": []}",
		"{\"data\": {\"gpu_8x_h100_sxm5\": {\"instance_type\": {\"name\": \"gpu_8x_h100_sxm5\"}}}}",
		"{\"data\": {\"gpu_8x_h100_sxm5\": {\"instance_type\": {\"name\": \"gpu_8x_h100_sxm5\", "
		"\"price_cents_per_hour\": \"3192\"}}}}",
		"{\"data\": {",
	};

	(void)state;
	ctx_init(&ctx, &f, &rep, m, 2);
	assert_int_equal(price_fetch_lambda_page(&ctx, page, len), RC_OK);
	r = row_of(&rep, "gpu_8x_h100_sxm5", "all");
	assert_non_null(r);
	assert_near(r->on_demand_usd_per_hour, 31.92, 1e-12);
	assert_true(r->spot_usd_per_hour < 0);
	assert_string_equal(r->price_date, "2026-12-04");
	/* the table says 2 GPUs, the API 1: skipped, named */
	assert_null(row_of(&rep, "gpu_1x_gh200", "all"));
	assert_non_null(strstr(rep.skipped_why, "gpu_1x_gh200: the API says 1 GPUs, the table 2"));
	assert_int_equal(rep.n_rows, 1);
	free(rep.rows);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ctx_init(&ctx, &f, &rep, m, 2);
		assert_int_equal(price_fetch_lambda_page(&ctx, bad[i], strlen(bad[i])), RC_INPUT);
		free(rep.rows);
	}
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_price_csv_stream_every_chunk_size),
		cmocka_unit_test(test_price_csv_stream_errors),
		cmocka_unit_test(test_price_fetch_aws_every_chunk_size),
		cmocka_unit_test(test_price_fetch_aws_cut_short),
		cmocka_unit_test(test_price_fetch_azure_reservations_per_hour),
		cmocka_unit_test(test_price_fetch_gcp_node_is_sum_of_skus),
		cmocka_unit_test(test_price_fetch_lambda_types),
	};
	return cmocka_run_group_tests_name("price_fetch", tests, NULL, NULL);
}
