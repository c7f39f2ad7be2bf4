/*
 * price_fetch_rows.h - what the fetch's files share: the instance types a
 * fetch may price (the table's and data/machines.csv's) and the rows it
 * collects (price_fetch_rows.c, at the bottom), and each provider's parser
 * (price_fetch_aws.c, price_fetch_azure_json.c, price_fetch_gcp_json.c,
 * price_fetch_lambda_json.c, which call only price_fetch_rows.c and
 * price_csv.c).  price_fetch.c, on
 * top, moves the bytes (libcurl or a file) and hands them to a parser; the
 * parsers never see the network, so a saved response and a live one are
 * read alike.
 */
#ifndef GPUPLAN_PRICE_FETCH_ROWS_H
#define GPUPLAN_PRICE_FETCH_ROWS_H

#include <stddef.h>

#include "price.h"

/* An instance type a fetch may price: from a row of the table (its GPU,
 * count and network), or from machines.csv (which also gives GCP's vCPU
 * and memory counts and the billing catalog's SKU names). */
struct price_machine {
	char instance_type[PRICE_NAME_MAX];
	char gpu[PRICE_NAME_MAX];
	int gpus_per_node;
	double inter_node_gbps;          /* 0: not stated */
	double vcpus;                    /* 0: not stated */
	double memory_gib;               /* 0: not stated */
	/* GCP billing catalog SKU descriptions, up to " running in ...":
	 * "Nvidia H100 80GB GPU", "A3 Instance Core", "A3 Instance Ram". */
	char sku_gpu[PRICE_NAME_MAX], sku_core[PRICE_NAME_MAX], sku_ram[PRICE_NAME_MAX];
};

struct price_fetch_ctx {
	const struct price_fetch_opts *f;
	const char *what;                /* the URL (without a key) or file, for messages */
	struct price_machine *machines;  /* of f->provider */
	size_t n_machines;
	char today[PRICE_DATE_MAX];
	const char *regions[PRICE_FETCH_MAX_REGIONS];
	size_t n_regions;                /* 0: any */
	struct price_fetch_report *rep;
	size_t cap_rows;
};

/* ---- price_fetch_rows.c ------------------------------------------------ */

/* The machine of ctx named instance_type (ASCII case-insensitive), or NULL. */
const struct price_machine *price_fetch_machine(const struct price_fetch_ctx *ctx,
						const char *instance_type);
/* 1 when region is one the fetch asked for (or any was). */
int price_fetch_region_wanted(const struct price_fetch_ctx *ctx, const char *region);
/* The row of (instance type m, region), added (prices < 0, dated today,
 * source "") when the report has none. */
struct price_fetched *price_fetch_row(struct price_fetch_ctx *ctx, const struct price_machine *m,
				      const char *region);
/* Notes one offering that could not be priced, and why. */
void price_fetch_skip(struct price_fetch_ctx *ctx, const char *fmt, ...) GP_PRINTF(2, 3);

/* ---- AWS: the Price List bulk offer file, CSV, read as it arrives ------ */

struct price_fetch_aws;
struct price_fetch_aws *price_fetch_aws_new(struct price_fetch_ctx *ctx);
/* Returns RC_OK or RC_INPUT (one message). */
enum rc price_fetch_aws_feed(struct price_fetch_aws *a, const char *buf, size_t len);
/* Ends one offer file: RC_INPUT when it was cut short (no header, an open
 * quote).  The parser is ready for the next region's file. */
enum rc price_fetch_aws_finish(struct price_fetch_aws *a);
void price_fetch_aws_free(struct price_fetch_aws *a);

/* ---- Azure: the Retail Prices API, one page of JSON at a time ---------- */

/* The first page's query (after the base URL): the Virtual Machines items
 * of the instance types of ctx, in a new string. */
char *price_fetch_azure_query(const struct price_fetch_ctx *ctx);
/* Parses one page json[0..len); *next gets a new string, the page's
 * NextPageLink, or NULL on the last page.  Returns RC_OK or RC_INPUT. */
enum rc price_fetch_azure_page(struct price_fetch_ctx *ctx, const char *json, size_t len,
			       char **next);

/* ---- GCP: the Cloud Billing Catalog's Compute Engine SKUs -------------- */

struct price_fetch_gcp;
struct price_fetch_gcp *price_fetch_gcp_new(struct price_fetch_ctx *ctx);
/* Parses one page; *next_token gets a new string, the page's
 * nextPageToken, or NULL on the last page.  Returns RC_OK or RC_INPUT. */
enum rc price_fetch_gcp_page(struct price_fetch_gcp *g, const char *json, size_t len,
			     char **next_token);
/* Prices each machine's whole node from the SKUs read: gpus x the GPU SKU
 * + vcpus x the core SKU + memory_gib x the RAM SKU, on demand and spot
 * (Preemptible); a machine without a figure or a SKU is skipped, named. */
void price_fetch_gcp_finish(struct price_fetch_gcp *g);
void price_fetch_gcp_free(struct price_fetch_gcp *g);

/* ---- Lambda: the Cloud API's instance types, one response of JSON ----- */

/* Parses the response: one on-demand row of region "all" per instance
 * type of ctx.  Returns RC_OK or RC_INPUT (malformed, or an error
 * response). */
enum rc price_fetch_lambda_page(struct price_fetch_ctx *ctx, const char *json, size_t len);

#endif
