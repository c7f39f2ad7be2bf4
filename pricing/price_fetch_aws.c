/*
 * price_fetch_aws.c - AWS's Price List bulk offer file for EC2 in its CSV
 * form (offers/v1.0/aws/AmazonEC2/current/REGION/index.csv), read row by
 * row as it arrives: a regional file is hundreds of MiB, and only the
 * on-demand Linux rows of the GPU instance types the table knows are kept.
 *
 * The file opens with five metadata rows ("FormatVersion", "Disclaimer",
 * "Publication Date", "Version", "OfferCode"), then the header (SKU,
 * OfferTermCode, RateCode, TermType, ..., PricePerUnit, Currency, ...,
 * Instance Type, ..., Operating System, Tenancy, Pre Installed S/W,
 * CapacityStatus, Region Code, ...).  Columns are found by name.  A row is
 * an instance's list price when TermType is OnDemand, Unit Hrs, Currency
 * USD, Operating System Linux, Tenancy Shared, Pre Installed S/W NA,
 * CapacityStatus Used and (where the columns are) Product Family "Compute
 * Instance" and License Model "No License required"; the others are
 * reserved terms, other systems, dedicated hosts and unused reservations.
 * Spot prices are not in the offer files: a fetch leaves them as stored.
 *
 * It calls price_csv.c (the stream) and price_fetch_rows.c.  It does not
 * fetch (price_fetch.c does) nor merge (price_update does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_csv.h"
#include "price_fetch_rows.h"

enum aws_col {
	C_SKU, C_TERM, C_UNIT, C_PRICE, C_CURRENCY, C_INSTANCE, C_OS, C_TENANCY, C_PREINST,
	C_CAPACITY, C_REGION, C_RATE, C_FAMILY, C_LICENSE, C_N
};

/* The header names of enum aws_col; those from C_RATE on may be absent. */
static const char *const col_names[C_N] = {
	"SKU", "TermType", "Unit", "PricePerUnit", "Currency", "Instance Type",
	"Operating System", "Tenancy", "Pre Installed S/W", "CapacityStatus", "Region Code",
	"RateCode", "Product Family", "License Model",
};
#define C_REQUIRED C_RATE

struct price_fetch_aws {
	struct price_fetch_ctx *ctx;
	struct price_csv_stream *csv;
	int col[C_N];
	int have_header;
	char date[PRICE_DATE_MAX];       /* the file's Publication Date */
	char version[32];                /* the file's Version */
};

static int streq_nocase_trim(const char *a, const char *b)
{
	while (*a == ' ')
		a++;
	return gp_streq_nocase(a, b);
}

static const char *cell(const struct price_fetch_aws *a, const struct price_csv_row *row,
			enum aws_col c)
{
	return price_csv_get(row, a->col[c]);
}

/* A metadata row before the header: keeps the publication date and the
 * version. */
static void metadata(struct price_fetch_aws *a, const struct price_csv_row *row)
{
	const char *key = price_csv_get(row, 0), *val = price_csv_get(row, 1);
	char d[PRICE_DATE_MAX];
	long days;

	if (streq_nocase_trim(key, "Publication Date")) {
		gp_strlcpy(d, val, sizeof(d) < 11 ? sizeof(d) : 11);
		if (unit_parse_date(d, &days) == RC_OK)
			gp_strlcpy(a->date, d, sizeof(a->date));
	} else if (streq_nocase_trim(key, "Version") && gp_name_is_safe(val, strlen(val), NULL)) {
		gp_strlcpy(a->version, val, sizeof(a->version));
	}
}

static int header(struct price_fetch_aws *a, const struct price_csv_row *row)
{
	for (int c = 0; c < C_N; c++) {
		a->col[c] = -1;
		for (int i = 0; i < row->n; i++)
			if (streq_nocase_trim(row->field[i], col_names[c])) {
				a->col[c] = i;
				break;
			}
		if (a->col[c] < 0 && c < C_REQUIRED) {
			gp_error("%s:%d: expected the offer file's column '%s' in its header, found none",
				 a->ctx->what, row->line, col_names[c]);
			return -1;
		}
	}
	a->have_header = 1;
	return 0;
}

/* 1 when row is an instance's on-demand Linux list price. */
static int list_price_row(const struct price_fetch_aws *a, const struct price_csv_row *row)
{
	return gp_streq_nocase(cell(a, row, C_TERM), "OnDemand") &&
	       gp_streq_nocase(cell(a, row, C_UNIT), "Hrs") &&
	       gp_streq_nocase(cell(a, row, C_CURRENCY), "USD") &&
	       gp_streq_nocase(cell(a, row, C_OS), "Linux") &&
	       gp_streq_nocase(cell(a, row, C_TENANCY), "Shared") &&
	       gp_streq_nocase(cell(a, row, C_PREINST), "NA") &&
	       gp_streq_nocase(cell(a, row, C_CAPACITY), "Used") &&
	       (a->col[C_FAMILY] < 0 || gp_streq_nocase(cell(a, row, C_FAMILY), "Compute Instance")) &&
	       (a->col[C_LICENSE] < 0 ||
		gp_streq_nocase(cell(a, row, C_LICENSE), "No License required"));
}

static int on_row(const struct price_csv_row *row, void *a_)
{
	struct price_fetch_aws *a = a_;
	struct price_fetch_ctx *ctx = a->ctx;
	const struct price_machine *m;
	struct price_fetched *r;
	const char *inst, *region, *sku;
	double usd;

	if (!a->have_header) {
		if (streq_nocase_trim(price_csv_get(row, 0), "SKU"))
			return header(a, row);
		if (row->n > 2) {
			gp_error("%s:%d: expected the offer file's header (SKU, OfferTermCode, ...) after its metadata rows, found a row of %d fields before it",
				 ctx->what, row->line, row->n);
			return -1;
		}
		metadata(a, row);
		return 0;
	}
	ctx->rep->items++;
	inst = cell(a, row, C_INSTANCE);
	if (!*inst || !list_price_row(a, row))
		return 0;
	m = price_fetch_machine(ctx, inst);
	region = cell(a, row, C_REGION);
	if (!m || !price_fetch_region_wanted(ctx, region))
		return 0;
	if (!gp_name_is_safe(region, strlen(region), NULL) || strlen(region) >= PRICE_NAME_MAX) {
		gp_error("%s:%d: Region Code: expected a region name, found something else",
			 ctx->what, row->line);
		return -1;
	}
	if (unit_parse_double(cell(a, row, C_PRICE), &usd) != RC_OK || usd < 0 ||
	    usd > PRICE_USD_PER_HOUR_MAX) {
		char e[64];

		gp_error("%s:%d: PricePerUnit: expected a price in USD per hour, found '%s'",
			 ctx->what, row->line, gp_term_escape(e, sizeof(e), cell(a, row, C_PRICE)));
		return -1;
	}
	if (usd == 0)
		return 0;
	r = price_fetch_row(ctx, m, region);
	/* Two list rows of one instance and region would be a change of the
	 * file's form; the lower one is kept, as zones of a region are. */
	if (r->on_demand_usd_per_hour >= 0 && r->on_demand_usd_per_hour <= usd)
		return 0;
	r->on_demand_usd_per_hour = usd;
	if (a->date[0])
		gp_strlcpy(r->price_date, a->date, sizeof(r->price_date));
	sku = a->col[C_RATE] >= 0 && *cell(a, row, C_RATE) ? cell(a, row, C_RATE)
							   : cell(a, row, C_SKU);
	if (!gp_name_is_safe(sku, strlen(sku), NULL))
		sku = "?";
	snprintf(r->source, sizeof(r->source), "AWS Price List AmazonEC2 %s rate %s",
		 a->version[0] ? a->version : a->date, sku);
	return 0;
}

struct price_fetch_aws *price_fetch_aws_new(struct price_fetch_ctx *ctx)
{
	struct price_fetch_aws *a = xcalloc(1, sizeof(*a));

	a->ctx = ctx;
	return a;
}

enum rc price_fetch_aws_feed(struct price_fetch_aws *a, const char *buf, size_t len)
{
	if (!a->csv) {
		a->csv = price_csv_stream_new(a->ctx->what, on_row, a);
		if (!a->csv)
			return RC_ERR;
		a->have_header = 0;
		a->date[0] = a->version[0] = '\0';
	}
	return price_csv_stream_feed(a->csv, buf, len);
}

enum rc price_fetch_aws_finish(struct price_fetch_aws *a)
{
	enum rc rc = a->csv ? price_csv_stream_finish(a->csv) : RC_OK;

	if (rc == RC_OK && !a->have_header) {
		gp_error("%s: expected an EC2 offer file (five metadata rows, then a header starting SKU), found %s",
			 a->ctx->what, a->csv ? "no header" : "nothing");
		rc = RC_INPUT;
	}
	price_csv_stream_free(a->csv);
	a->csv = NULL;
	return rc;
}

void price_fetch_aws_free(struct price_fetch_aws *a)
{
	if (!a)
		return;
	price_csv_stream_free(a->csv);
	free(a);
}
