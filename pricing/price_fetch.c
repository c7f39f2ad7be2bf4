/*
 * price_fetch.c - `prices fetch`: read a provider's price list over HTTPS
 * with libcurl (the only file that includes <curl/curl.h>), or a saved
 * response from a file, hand the bytes to the provider's parser
 * (price_fetch_aws.c, price_fetch_azure_json.c, price_fetch_gcp_json.c,
 * price_fetch_lambda_json.c) and merge the rows they make through
 * price_update, the validated, atomic update with its diff and history.
 *
 * Nothing is merged until every response has been read whole and parsed:
 * a connection that drops, a status other than 200, a timeout or a
 * malformed page stops the fetch with one line, and the user's table is
 * not touched.  AWS's offer files are fed to the parser as they arrive;
 * a JSON page is held whole (at most PRICE_FETCH_MAX_PAGE_BYTES) and
 * parsed before the next is asked for.  A next page link must stay on the
 * host the fetch began with.  GCP's API key is read from $GOOGLE_API_KEY
 * and Lambda's from $LAMBDA_API_KEY, each sent in a request header, never
 * in a URL, a message or a file.
 *
 * It calls the parsers, price_fetch_rows.c, price_update.c (the merge),
 * price_catalog.c (the table it fetches for), price_csv.c, price_store.c
 * and price_table.c (writing the rows as a price file), price_gpu.c;
 * nothing in pricing/ calls it.  It does not parse (the provider files
 * do) nor validate or write the table (price_update does).
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "price_csv.h"
#include "price_fetch_rows.h"
#include "price_internal.h"

#define GCP_SKUS_PATH "/v1/services/6F81-5844-456A/skus"
#define LAMBDA_TYPES_PATH "/api/v1/instance-types"
#define READ_CHUNK (64 << 10)

void price_fetch_opts_init(struct price_fetch_opts *f)
{
	memset(f, 0, sizeof(*f));
	f->timeout_s = PRICE_FETCH_DEFAULT_TIMEOUT_S;
}

void price_fetch_report_release(struct price_fetch_report *rep)
{
	if (!rep)
		return;
	free(rep->rows);
	price_update_report_release(&rep->update);
	memset(rep, 0, sizeof(*rep));
}

/* ---- what a fetch may price ------------------------------------------ */

static struct price_machine *machine_add(struct price_fetch_ctx *ctx, size_t *cap,
					 const char *instance_type)
{
	struct price_machine *m = (struct price_machine *)price_fetch_machine(ctx, instance_type);

	if (m)
		return m;
	if (ctx->n_machines == *cap) {
		*cap = *cap ? 2 * *cap : 32;
		ctx->machines = xrealloc(ctx->machines, *cap * sizeof(*ctx->machines));
	}
	m = &ctx->machines[ctx->n_machines++];
	memset(m, 0, sizeof(*m));
	gp_strlcpy(m->instance_type, instance_type, sizeof(m->instance_type));
	return m;
}

/* A number cell of machines.csv: empty (0, not stated) or 0..max. */
static int machine_num(const char *path, const struct price_csv_row *row, int col,
		       const char *name, double max, double *out)
{
	const char *s = price_csv_get(row, col);
	char e[64];

	*out = 0;
	if (!*s)
		return 0;
	if (unit_parse_double(s, out) != RC_OK || *out < 0 || *out > max) {
		gp_error("%s:%d:%d: %s: expected a number from 0 to %g or an empty cell, found '%s'",
			 path, row->line, col + 1, name, max, gp_term_escape(e, sizeof(e), s));
		return -1;
	}
	return 0;
}

/* Adds machines.csv's rows of the fetch's provider to ctx: each fills in
 * what the table's row of its instance type lacks, or describes one the
 * table has not priced yet.  An absent file describes nothing. */
static enum rc machines_load(struct price_fetch_ctx *ctx, size_t *cap, const char *path,
			     const struct price_catalog *cat)
{
	static const char *const cols[] = {
		"provider", "instance_type", "gpu", "gpus", "vcpus", "memory_gib",
		"inter_node_gbps", "sku_gpu", "sku_core", "sku_ram", "source",
	};
	struct price_csv csv;
	int c[11], bad = 0;
	char why[160];
	enum rc rc;

	if (access(path, F_OK) != 0)
		return RC_OK;
	rc = price_csv_load(path, &csv);
	if (rc != RC_OK)
		return rc;
	for (int i = 0; i < 11; i++) {
		c[i] = price_csv_col(&csv, cols[i]);
		if (c[i] < 0) {
			gp_error("%s:%d: expected a column '%s', found none", path, csv.header.line,
				 cols[i]);
			price_csv_release(&csv);
			return RC_INPUT;
		}
	}
	if (price_csv_unknown_col(&csv, cols, 11, 0, why, sizeof(why)) >= 0) {
		gp_error("%s:%d: expected machines.csv's columns, %s", path, csv.header.line, why);
		price_csv_release(&csv);
		return RC_INPUT;
	}
	for (size_t i = 0; i < csv.n_rows && !bad; i++) {
		const struct price_csv_row *row = &csv.rows[i];
		const char *inst = price_csv_get(row, c[1]), *gname = price_csv_get(row, c[2]);
		const struct price_gpu *g = gname[0] ? price_gpu_find(cat, gname) : NULL;
		struct price_machine *m;
		double gpus, net;

		if (!gp_streq_nocase(price_csv_get(row, c[0]), ctx->f->provider))
			continue;
		if (!*inst || !gp_name_is_safe(inst, strlen(inst), NULL) ||
		    strlen(inst) >= PRICE_NAME_MAX || (gname[0] && !g)) {
			gp_error("%s:%d: expected an instance type and a GPU of gpus.csv, found '%s' and '%s'",
				 path, row->line, gp_name_is_safe(inst, strlen(inst), NULL) ? inst : "?",
				 gp_name_is_safe(gname, strlen(gname), NULL) ? gname : "?");
			bad = 1;
			break;
		}
		m = machine_add(ctx, cap, inst);
		if (machine_num(path, row, c[3], "gpus", PRICE_GPUS_PER_NODE_MAX, &gpus) ||
		    machine_num(path, row, c[4], "vcpus", 1e5, &m->vcpus) ||
		    machine_num(path, row, c[5], "memory_gib", 1e7, &m->memory_gib) ||
		    machine_num(path, row, c[6], "inter_node_gbps", PRICE_GBPS_MAX, &net)) {
			bad = 1;
			break;
		}
		if (!m->gpu[0] && g)
			gp_strlcpy(m->gpu, g->name, sizeof(m->gpu));
		if (!m->gpus_per_node)
			m->gpus_per_node = (int)gpus;
		if (!m->inter_node_gbps)
			m->inter_node_gbps = net;
		gp_strlcpy(m->sku_gpu, price_csv_get(row, c[7]), sizeof(m->sku_gpu));
		gp_strlcpy(m->sku_core, price_csv_get(row, c[8]), sizeof(m->sku_core));
		gp_strlcpy(m->sku_ram, price_csv_get(row, c[9]), sizeof(m->sku_ram));
	}
	price_csv_release(&csv);
	if (bad)
		return RC_INPUT;
	/* A machine neither table gives a GPU and a count cannot be priced. */
	for (size_t i = 0; i < ctx->n_machines; i++)
		if (!ctx->machines[i].gpu[0] || ctx->machines[i].gpus_per_node < 1) {
			gp_error("%s: %s: expected a gpu and gpus (the table has no row of it), found none",
				 path, ctx->machines[i].instance_type);
			return RC_INPUT;
		}
	return RC_OK;
}

/* The instance types of the table's rows of the provider, and the regions
 * it prices them in (the default regions of a fetch). */
static void machines_from_table(struct price_fetch_ctx *ctx, size_t *cap,
				const struct price_catalog *cat, char (*regions)[PRICE_NAME_MAX])
{
	for (size_t i = 0; i < cat->n_offers; i++) {
		const struct price_offering *o = &cat->offers[i];
		struct price_machine *m;
		size_t k;

		if (!gp_streq_nocase(o->provider, ctx->f->provider))
			continue;
		m = machine_add(ctx, cap, o->instance_type);
		if (!m->gpu[0]) {
			gp_strlcpy(m->gpu, o->gpu, sizeof(m->gpu));
			m->gpus_per_node = o->gpus_per_node;
			m->inter_node_gbps = o->inter_node_bytes_per_s * 8 / 1e9;
		}
		if (ctx->f->n_regions)
			continue;
		for (k = 0; k < ctx->n_regions; k++)
			if (gp_streq_nocase(ctx->regions[k], o->region))
				break;
		if (k == ctx->n_regions && k < PRICE_FETCH_MAX_REGIONS &&
		    gp_name_is_safe(o->region, strlen(o->region), NULL) && !strchr(o->region, ' ')) {
			gp_strlcpy(regions[k], o->region, PRICE_NAME_MAX);
			ctx->regions[ctx->n_regions++] = regions[k];
		}
	}
}

/* ---- moving bytes: libcurl or a file ---------------------------------- */

/* Where a response's bytes go: fed to AWS's streaming parser, or held
 * whole as one JSON page. */
struct sink {
	struct price_fetch_ctx *ctx;
	struct price_fetch_aws *aws;     /* non-NULL: stream into it */
	char *page;
	size_t len, cap;
	CURL *curl;
	long status;                     /* the HTTP status, once known */
	int failed;                      /* 1: a message was printed; stop */
};

static int sink_put(struct sink *s, const char *buf, size_t n)
{
	s->ctx->rep->bytes += n;
	if (s->aws) {
		if (price_fetch_aws_feed(s->aws, buf, n) != RC_OK) {
			s->failed = 1;
			return -1;
		}
		return 0;
	}
	if (s->len + n > PRICE_FETCH_MAX_PAGE_BYTES) {
		gp_error("%s: expected a page of at most %d MiB, found more", s->ctx->what,
			 PRICE_FETCH_MAX_PAGE_BYTES >> 20);
		s->failed = 1;
		return -1;
	}
	if (s->len + n + 1 > s->cap) {
		s->cap = (s->len + n + 1) * 2;
		s->page = xrealloc(s->page, s->cap);
	}
	memcpy(s->page + s->len, buf, n);
	s->len += n;
	s->page[s->len] = '\0';
	return 0;
}

static size_t on_data(char *buf, size_t size, size_t nmemb, void *s_)
{
	struct sink *s = s_;
	size_t n = size * nmemb;

	/* A body that is not the price list (an error page) is never parsed. */
	if (!s->status)
		curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &s->status);
	if (s->status != 200)
		return 0;
	return sink_put(s, buf, n) == 0 ? n : 0;
}

/* GETs url (shown as `what` in messages) into s, with the request header
 * key_hdr ("Name: value", a credential; NULL: none), which is never
 * shown.  Returns RC_OK, or RC_ERR / RC_INPUT after one line. */
static enum rc http_get(struct sink *s, const char *url, const char *key_hdr)
{
	struct price_fetch_ctx *ctx = s->ctx;
	struct curl_slist *hdr = NULL;
	char err[CURL_ERROR_SIZE] = "";
	CURL *c = curl_easy_init();
	CURLcode cc;
	enum rc rc = RC_OK;

	if (!c) {
		gp_error("%s: cannot start libcurl", ctx->what);
		return RC_ERR;
	}
	s->curl = c;
	s->status = 0;
	if (key_hdr) {
		hdr = curl_slist_append(hdr, key_hdr);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https,http");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "gpuplan-prices-fetch");
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(1000 * (ctx->f->timeout_s < 30 ? ctx->f->timeout_s : 30)));
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(1000 * ctx->f->timeout_s));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
	cc = curl_easy_perform(c);
	if (!s->status)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &s->status);
	if (s->failed) {
		rc = RC_INPUT;
	} else if (cc == CURLE_OK && s->status != 200) {
		gp_error("%s: expected HTTP status 200, found %ld", ctx->what, s->status);
		rc = RC_ERR;
	} else if (cc == CURLE_WRITE_ERROR && s->status != 200) {
		gp_error("%s: expected HTTP status 200, found %ld", ctx->what, s->status);
		rc = RC_ERR;
	} else if (cc == CURLE_COULDNT_RESOLVE_HOST || cc == CURLE_COULDNT_CONNECT ||
		   cc == CURLE_COULDNT_RESOLVE_PROXY) {
		gp_error("%s: cannot connect (%s); is the network down? (--from-file FILE reads a response saved elsewhere)",
			 ctx->what, err[0] ? err : curl_easy_strerror(cc));
		rc = RC_ERR;
	} else if (cc == CURLE_OPERATION_TIMEDOUT) {
		gp_error("%s: expected the whole response within %g s (--timeout), found %zu bytes by then",
			 ctx->what, ctx->f->timeout_s, ctx->rep->bytes);
		rc = RC_ERR;
	} else if (cc != CURLE_OK) {
		gp_error("%s: expected the whole response, found it cut short (%s)", ctx->what,
			 err[0] ? err : curl_easy_strerror(cc));
		rc = RC_ERR;
	}
	curl_easy_cleanup(c);
	curl_slist_free_all(hdr);
	s->curl = NULL;
	ctx->rep->responses++;
	return rc;
}

/* Reads the file at path into s in chunks, as a response would arrive. */
static enum rc file_get(struct sink *s, const char *path)
{
	FILE *fp = fopen(path, "rb");
	char *buf;
	size_t n;
	enum rc rc = RC_OK;

	if (!fp) {
		gp_error("%s: cannot read it (%s)", path, strerror(errno));
		return RC_INPUT;
	}
	buf = xmalloc(READ_CHUNK);
	while ((n = fread(buf, 1, READ_CHUNK, fp)) > 0)
		if (sink_put(s, buf, n) != 0) {
			rc = RC_INPUT;
			break;
		}
	if (rc == RC_OK && ferror(fp)) {
		gp_error("%s: cannot read it (%s)", path, strerror(errno));
		rc = RC_INPUT;
	}
	free(buf);
	fclose(fp);
	s->ctx->rep->responses++;
	return rc;
}

/* 1 when url begins with the scheme and host of base: a page link must
 * not send the fetch (or a key) elsewhere. */
static int same_origin(const char *url, const char *base)
{
	const char *p = strstr(base, "://");
	size_t n;

	if (!p)
		return 0;
	p = strchr(p + 3, '/');
	n = p ? (size_t)(p - base) : strlen(base);
	return strncmp(url, base, n) == 0 && (url[n] == '/' || url[n] == '?' || url[n] == '\0');
}

/* 1 when url is printable ASCII without blanks: a link from a response
 * is shown in messages, and must not carry terminal controls. */
static int url_is_plain(const char *url)
{
	for (; *url; url++)
		if (*url <= ' ' || *url > '~')
			return 0;
	return 1;
}

static const char *base_url(const struct price_fetch_opts *f)
{
	const char *env = NULL, *def = NULL;

	if (strcmp(f->provider, "aws") == 0) {
		env = getenv("GPUPLAN_PRICE_URL_AWS");
		def = PRICE_FETCH_URL_AWS;
	} else if (strcmp(f->provider, "azure") == 0) {
		env = getenv("GPUPLAN_PRICE_URL_AZURE");
		def = PRICE_FETCH_URL_AZURE;
	} else if (strcmp(f->provider, "lambda") == 0) {
		env = getenv("GPUPLAN_PRICE_URL_LAMBDA");
		def = PRICE_FETCH_URL_LAMBDA;
	} else {
		env = getenv("GPUPLAN_PRICE_URL_GCP");
		def = PRICE_FETCH_URL_GCP;
	}
	if (f->endpoint)
		return f->endpoint;
	return env && *env ? env : def;
}

/* The region whose offer file holds region's prices: its first three
 * '-'-separated parts ("us-east-1" of "us-east-1-dfw-2a"). */
static void aws_file_region(const char *region, char *buf, size_t size)
{
	const char *p = region;

	for (int dashes = 0; *p; p++)
		if (*p == '-' && ++dashes == 3)
			break;
	snprintf(buf, size, "%.*s", (int)(p - region), region);
}

static enum rc fetch_aws(struct price_fetch_ctx *ctx, const char *base)
{
	struct sink s;
	enum rc rc = RC_OK;
	char url[2048];

	memset(&s, 0, sizeof(s));
	s.ctx = ctx;
	s.aws = price_fetch_aws_new(ctx);
	if (ctx->f->from_file) {
		ctx->what = ctx->f->from_file;
		rc = file_get(&s, ctx->f->from_file);
		if (rc == RC_OK)
			rc = price_fetch_aws_finish(s.aws);
		goto out;
	}
	for (size_t i = 0; i < ctx->n_regions && rc == RC_OK; i++) {
		char file_region[PRICE_NAME_MAX];
		size_t k;

		/* A Local Zone's prices ("us-east-1-dfw-2a") are in its parent
		 * region's offer file; each file is read once. */
		aws_file_region(ctx->regions[i], file_region, sizeof(file_region));
		for (k = 0; k < i; k++) {
			char other[PRICE_NAME_MAX];

			aws_file_region(ctx->regions[k], other, sizeof(other));
			if (strcmp(other, file_region) == 0)
				break;
		}
		if (k < i)
			continue;
		snprintf(url, sizeof(url), "%s/offers/v1.0/aws/AmazonEC2/current/%s/index.csv", base,
			 file_region);
		ctx->what = url;
		gp_info("fetching %s", url);
		rc = http_get(&s, url, NULL);
		if (rc == RC_OK)
			rc = price_fetch_aws_finish(s.aws);
	}
out:
	price_fetch_aws_free(s.aws);
	ctx->what = NULL;
	return rc;
}

/* Azure and GCP: pages of JSON, each parsed by page() before the next. */
static enum rc fetch_pages(struct price_fetch_ctx *ctx, const char *base)
{
	struct sink s;
	struct price_fetch_gcp *gcp = NULL;
	int azure = strcmp(ctx->f->provider, "azure") == 0;
	const char *key = NULL;
	char *url = NULL, *next = NULL, *query = NULL, key_hdr[512] = "";
	enum rc rc = RC_OK;

	memset(&s, 0, sizeof(s));
	s.ctx = ctx;
	if (!azure)
		gcp = price_fetch_gcp_new(ctx);
	if (!azure && !ctx->f->from_file) {
		key = getenv("GOOGLE_API_KEY");
		if (!key || !*key) {
			gp_error("GOOGLE_API_KEY: expected a Cloud Billing API key in the environment, found none");
			gp_hint("create one in the Google Cloud console (APIs & Services, Credentials), then GOOGLE_API_KEY=... gpuplan prices fetch gcp; or --from-file a saved page");
			rc = RC_USAGE;
			goto out;
		}
		/* Google's APIs take the key in this header as well as in
		 * ?key=: a URL is what logs and messages show. */
		snprintf(key_hdr, sizeof(key_hdr), "X-goog-api-key: %s", key);
	}
	if (ctx->f->from_file) {
		ctx->what = ctx->f->from_file;
		rc = file_get(&s, ctx->f->from_file);
		if (rc == RC_OK)
			rc = azure ? price_fetch_azure_page(ctx, s.page ? s.page : "", s.len, &next)
				   : price_fetch_gcp_page(gcp, s.page ? s.page : "", s.len, &next);
		if (rc == RC_OK && next)
			gp_info("%s: one saved page read; the source has more (fetch them the same way and run once for each)",
				ctx->f->from_file);
		goto out;
	}
	if (azure) {
		query = price_fetch_azure_query(ctx);
		url = xmalloc(strlen(base) + strlen(query) + 1);
		sprintf(url, "%s%s", base, query);
	} else {
		url = xmalloc(strlen(base) + 128);
		sprintf(url, "%s%s?currencyCode=USD&pageSize=5000", base, GCP_SKUS_PATH);
	}
	for (size_t page = 0; rc == RC_OK; page++) {
		if (page == PRICE_FETCH_MAX_PAGES) {
			gp_error("%s: expected at most %d pages, found more", base, PRICE_FETCH_MAX_PAGES);
			rc = RC_INPUT;
			break;
		}
		ctx->what = url;
		gp_info("fetching %s", url);
		s.len = 0;
		rc = http_get(&s, url, key ? key_hdr : NULL);
		if (rc != RC_OK)
			break;
		rc = azure ? price_fetch_azure_page(ctx, s.page ? s.page : "", s.len, &next)
			   : price_fetch_gcp_page(gcp, s.page ? s.page : "", s.len, &next);
		if (rc != RC_OK || !next)
			break;
		free(url);
		if (azure) {
			if (!same_origin(next, base) || !url_is_plain(next)) {
				gp_error("%s: NextPageLink: expected a link on %s, found one elsewhere",
					 ctx->what, base);
				url = NULL;
				rc = RC_INPUT;
				break;
			}
			url = next;
		} else {
			size_t n = strlen(base) + strlen(next) * 3 + 128, len = 0;
			const char *t;

			url = xmalloc(n);
			len = (size_t)snprintf(url, n, "%s%s?currencyCode=USD&pageSize=5000&pageToken=",
					       base, GCP_SKUS_PATH);
			/* A page token is opaque: only its safe bytes pass. */
			for (t = next; *t && len + 4 < n; t++)
				if ((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') ||
				    (*t >= '0' && *t <= '9') || *t == '-' || *t == '_' || *t == '.' || *t == '~')
					url[len++] = *t;
				else
					len += (size_t)snprintf(url + len, n - len, "%%%02X", (unsigned char)*t);
			url[len] = '\0';
			free(next);
		}
		next = NULL;
	}
out:
	if (rc == RC_OK && gcp)
		price_fetch_gcp_finish(gcp);
	price_fetch_gcp_free(gcp);
	free(s.page);
	free(next);
	free(url);
	free(query);
	memset(key_hdr, 0, sizeof(key_hdr));
	ctx->what = NULL;
	return rc;
}

/* Lambda: one response of JSON, with the API key of $LAMBDA_API_KEY. */
static enum rc fetch_lambda(struct price_fetch_ctx *ctx, const char *base)
{
	struct sink s;
	const char *key;
	char *url = NULL, key_hdr[512];
	enum rc rc;

	memset(&s, 0, sizeof(s));
	s.ctx = ctx;
	if (ctx->f->from_file) {
		ctx->what = ctx->f->from_file;
		rc = file_get(&s, ctx->f->from_file);
		if (rc == RC_OK)
			rc = price_fetch_lambda_page(ctx, s.page ? s.page : "", s.len);
		goto out;
	}
	key = getenv("LAMBDA_API_KEY");
	if (!key || !*key) {
		gp_error("LAMBDA_API_KEY: expected a Lambda Cloud API key in the environment, found none");
		gp_hint("create one in the Lambda Cloud dashboard (API keys), then LAMBDA_API_KEY=... gpuplan prices fetch lambda; or --from-file a saved response");
		rc = RC_USAGE;
		goto out;
	}
	if (strlen(key) > sizeof(key_hdr) - 32 || !url_is_plain(key)) {
		gp_error("LAMBDA_API_KEY: expected an API key (printable, at most %zu characters), found something else",
			 sizeof(key_hdr) - 32);
		rc = RC_USAGE;
		goto out;
	}
	snprintf(key_hdr, sizeof(key_hdr), "Authorization: Bearer %s", key);
	url = xmalloc(strlen(base) + sizeof(LAMBDA_TYPES_PATH));
	sprintf(url, "%s%s", base, LAMBDA_TYPES_PATH);
	ctx->what = url;
	gp_info("fetching %s", url);
	rc = http_get(&s, url, key_hdr);
	memset(key_hdr, 0, sizeof(key_hdr));
	if (rc == RC_OK)
		rc = price_fetch_lambda_page(ctx, s.page ? s.page : "", s.len);
out:
	free(s.page);
	free(url);
	ctx->what = NULL;
	return rc;
}

/* ---- the merge ------------------------------------------------------- */

/* The stored offering of r's key, or NULL. */
static const struct price_offering *stored(const struct price_fetch_ctx *ctx,
					   const struct price_catalog *cat,
					   const struct price_fetched *r)
{
	for (size_t k = 0; k < cat->n_offers; k++) {
		const struct price_offering *o = &cat->offers[k];

		if (gp_streq_nocase(o->provider, ctx->f->provider) &&
		    strcmp(o->instance_type, r->instance_type) == 0 &&
		    strcmp(o->region, r->region) == 0)
			return o;
	}
	return NULL;
}

/* Writes the rows as a gpuplan price file into a new temporary file;
 * *path gets its name.  Spot prices go in only when the source gives
 * them (AWS's offer files do not: the stored ones stay).  A price the
 * source does not give this time (GCP's spot node when a spot SKU is
 * missing, an Azure SKU sold on demand only) keeps the stored one of cat:
 * a fetch adds and changes what it read, never erases. */
static enum rc write_rows(const struct price_fetch_ctx *ctx, const struct price_catalog *cat,
			  char *path, size_t size)
{
	const struct price_fetch_report *rep = ctx->rep;
	const char *tmp = getenv("TMPDIR");
	int spot = strcmp(ctx->f->provider, "aws") != 0, fd;
	static const char *const cols[] = {
		"provider", "instance_type", "gpu", "gpus_per_node", "region",
		"on_demand_usd_per_hour", "spot_usd_per_hour", "inter_node_gbps",
		"catalog_version", "price_date",
	};
	struct price_line line = { NULL, 0, 0 };
	char num[48];
	enum rc rc = RC_OK;

	snprintf(path, size, "%s/gpuplan-fetch-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp",
		 ctx->f->provider);
	fd = mkstemp(path);
	if (fd < 0) {
		gp_error("%s: cannot create a temporary file (%s)", path, strerror(errno));
		return RC_ERR;
	}
	for (size_t c = 0; c < sizeof(cols) / sizeof(*cols); c++)
		if (spot || strcmp(cols[c], "spot_usd_per_hour") != 0)
			price_csv_append(&line, cols[c], c + 1 == sizeof(cols) / sizeof(*cols));
	for (size_t i = 0; i < rep->n_rows; i++) {
		const struct price_fetched *r = &rep->rows[i];
		const struct price_machine *m = price_fetch_machine(ctx, r->instance_type);
		const struct price_offering *o = stored(ctx, cat, r);
		double od = r->on_demand_usd_per_hour, sp = r->spot_usd_per_hour;

		if (o && od < 0)
			od = o->on_demand_usd_per_hour;
		if (o && sp < 0)
			sp = o->spot_usd_per_hour;

		price_csv_append(&line, ctx->f->provider, 0);
		price_csv_append(&line, r->instance_type, 0);
		price_csv_append(&line, r->gpu, 0);
		snprintf(num, sizeof(num), "%d", r->gpus_per_node);
		price_csv_append(&line, num, 0);
		price_csv_append(&line, r->region, 0);
		price_num_format(num, sizeof(num), od, 0);
		price_csv_append(&line, num, 0);
		if (spot) {
			price_num_format(num, sizeof(num), sp, 0);
			price_csv_append(&line, num, 0);
		}
		price_num_format(num, sizeof(num), m ? m->inter_node_gbps : 0, 1);
		price_csv_append(&line, num, 0);
		price_csv_append(&line, r->source, 0);
		price_csv_append(&line, r->price_date, 1);
	}
	if (write(fd, line.s, line.len) != (ssize_t)line.len || fsync(fd) != 0) {
		gp_error("%s: cannot write it (%s)", path, strerror(errno));
		rc = RC_ERR;
	}
	close(fd);
	free(line.s);
	if (rc != RC_OK)
		unlink(path);
	return rc;
}

/* Writes the reservations of rep as commitments.csv rows to path: for
 * each instance type and term, the discount off the on-demand price of
 * the region with the lowest on-demand price that states both (one row
 * per key, as commitments.csv takes; its base_* columns name that
 * region's price).  A reservation not below the on-demand price is no
 * discount and is left out. */
static enum rc write_commitments(const struct price_fetch_opts *f,
				 struct price_fetch_report *rep, const char *path)
{
	static const char *const cols[] = {
		"provider", "instance_prefix", "gpu", "term_years", "discount_pct", "price_date",
		"source", "base_instance_type", "base_region", "base_usd_per_hour",
	};
	struct price_line line = { NULL, 0, 0 };
	char num[48], src[PRICE_SOURCE_MAX];
	enum rc rc;

	for (size_t c = 0; c < sizeof(cols) / sizeof(*cols); c++)
		price_csv_append(&line, cols[c], c + 1 == sizeof(cols) / sizeof(*cols));
	for (size_t i = 0; i < rep->n_rows; i++)
		for (int t = 0; t < 2; t++) {
			const struct price_fetched *r = &rep->rows[i], *best = NULL;
			int seen = 0;

			/* once per instance type: at its first row */
			for (size_t k = 0; k < rep->n_rows; k++) {
				const struct price_fetched *q = &rep->rows[k];

				if (strcmp(q->instance_type, r->instance_type) != 0)
					continue;
				if (k < i) {
					seen = 1;
					break;
				}
				if (q->reserved_usd_per_hour[t] > 0 &&
				    q->reserved_usd_per_hour[t] < q->on_demand_usd_per_hour &&
				    (!best || q->on_demand_usd_per_hour < best->on_demand_usd_per_hour))
					best = q;
			}
			if (seen || !best)
				continue;
			price_csv_append(&line, f->provider, 0);
			price_csv_append(&line, best->instance_type, 0);
			price_csv_append(&line, best->gpu, 0);
			price_csv_append(&line, t ? "3" : "1", 0);
			snprintf(num, sizeof(num), "%.4f",
				 100 * (1 - best->reserved_usd_per_hour[t] / best->on_demand_usd_per_hour));
			price_csv_append(&line, num, 0);
			price_csv_append(&line, best->price_date, 0);
			snprintf(src, sizeof(src), "%s: %d-year reservation %.6g USD an hour of its term, on demand %.6g",
				 best->source, t ? 3 : 1, best->reserved_usd_per_hour[t],
				 best->on_demand_usd_per_hour);
			price_csv_append(&line, src, 0);
			price_csv_append(&line, best->instance_type, 0);
			price_csv_append(&line, best->region, 0);
			price_num_format(num, sizeof(num), best->on_demand_usd_per_hour, 0);
			price_csv_append(&line, num, 1);
			rep->commitments++;
		}
	rc = gp_write_file_atomic(path, line.s, line.len);
	free(line.s);
	return rc;
}

enum rc price_fetch(const struct price_fetch_opts *f, const struct price_opts *o,
		    struct price_fetch_report *rep)
{
	struct price_fetch_ctx ctx;
	struct price_catalog cat;
	struct price_update_opts u;
	char regions[PRICE_FETCH_MAX_REGIONS][PRICE_NAME_MAX], *path, tmp[1100];
	size_t cap = 0;
	long today;
	int have_cat = 0;
	enum rc rc;

	memset(rep, 0, sizeof(*rep));
	memset(&ctx, 0, sizeof(ctx));
	if (!f->provider || (strcmp(f->provider, "aws") != 0 && strcmp(f->provider, "azure") != 0 &&
			     strcmp(f->provider, "gcp") != 0 && strcmp(f->provider, "lambda") != 0)) {
		gp_error("prices fetch: expected a provider aws, azure, gcp or lambda, found '%s'",
			 f->provider ? f->provider : "");
		return RC_USAGE;
	}
	ctx.f = f;
	ctx.rep = rep;
	gp_strlcpy(rep->provider, f->provider, sizeof(rep->provider));
	rc = unit_today(&today);
	if (rc != RC_OK)
		return rc;
	unit_fmt_date(ctx.today, sizeof(ctx.today), today);
	for (size_t i = 0; i < f->n_regions && i < PRICE_FETCH_MAX_REGIONS; i++)
		ctx.regions[ctx.n_regions++] = f->regions[i];

	rc = price_catalog_load(&cat, o);
	if (rc != RC_OK)
		return rc;
	have_cat = 1;
	machines_from_table(&ctx, &cap, &cat, regions);
	path = xmalloc(strlen(o && o->data_dir ? o->data_dir : "data") + 16);
	sprintf(path, "%s/machines.csv", o && o->data_dir ? o->data_dir : "data");
	rc = machines_load(&ctx, &cap, path, &cat);
	free(path);
	if (rc != RC_OK)
		goto out;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		gp_error("prices fetch: cannot initialise libcurl");
		rc = RC_ERR;
		goto out;
	}
	if (strcmp(f->provider, "aws") == 0)
		rc = fetch_aws(&ctx, base_url(f));
	else if (strcmp(f->provider, "lambda") == 0)
		rc = fetch_lambda(&ctx, base_url(f));
	else
		rc = fetch_pages(&ctx, base_url(f));
	curl_global_cleanup();
	if (rc != RC_OK)
		goto out;
	if (rep->n_rows == 0) {
		gp_error("%s: expected prices of the GPU instance types the table knows%s, found none in %zu items",
			 f->from_file ? f->from_file : base_url(f),
			 ctx.n_regions ? " in the regions asked for" : "", rep->items);
		rc = RC_INPUT;
		goto out;
	}
	rc = write_rows(&ctx, &cat, tmp, sizeof(tmp));
	price_catalog_release(&cat);
	have_cat = 0;
	if (rc != RC_OK)
		goto out;
	price_update_opts_init(&u);
	u.provider = f->provider;
	u.dry_run = f->dry_run;
	rc = price_update(tmp, o, &u, &rep->update);
	unlink(tmp);
	if (rc == RC_OK && f->commitments_out && !f->dry_run)
		rc = write_commitments(f, rep, f->commitments_out);
out:
	if (have_cat)
		price_catalog_release(&cat);
	free(ctx.machines);
	if (rc != RC_OK)
		price_fetch_report_release(rep);
	return rc;
}
