/*
 * cli_price.c - what `gpuplan prices` and `gpuplan quotas` print alike:
 * JSON documents, the diff lines of an update, how an update ended, and a
 * table's history.  Printing only; the pricing module reads and writes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "price.h"

void cli_print_json(char *s)
{
	if (s) {
		fputs(s, stdout);
		fputc('\n', stdout);
		free(s);
	}
}

void cli_print_change(const char *key_, const struct price_change *c)
{
	/* Cells and names are the file's, the table path the environment's:
	 * escaped, so a success line cannot carry a control sequence. */
	char key[512], ov[512], nv[512];
	const char *old_value = gp_term_escape(ov, sizeof(ov), c->old_value);
	const char *new_value = gp_term_escape(nv, sizeof(nv), c->new_value);

	gp_term_escape(key, sizeof(key), key_);
	if (c->kind == PRICE_CHANGE_ADDED) {
		if (strcmp(c->field, "row") == 0)
			printf("  + %s: %s\n", key, new_value);
		else
			printf("  + %s: %s %s\n", key, c->field, new_value);
	} else if (c->kind == PRICE_CHANGE_REMOVED) {
		printf("  - %s: %s %s (removed)\n", key, c->field, old_value);
	} else if (isfinite(c->old_num) && isfinite(c->new_num) && c->old_num > 0) {
		printf("  ~ %s: %s %s -> %s (%+.1f%%)\n", key, c->field, old_value, new_value,
		       100.0 * (c->new_num - c->old_num) / c->old_num);
	} else if (isfinite(c->old_num) || isfinite(c->new_num)) {
		/* A number that starts or stops being stated (a price offered). */
		printf("  ~ %s: %s %s -> %s\n", key, c->field, old_value[0] ? old_value : "-",
		       new_value[0] ? new_value : "-");
	} else {
		printf("  ~ %s: %s '%s' -> '%s'\n", key, c->field, old_value, new_value);
	}
}

int cli_print_update_end(int dry_run, int written, const char *table)
{
	char t[1024];

	if (dry_run)
		printf("dry run: nothing written\n");
	else if (!written)
		printf("no changes: %s left as it was\n", gp_term_escape(t, sizeof(t), table));
	return !dry_run && written;
}

const char *cli_any(const char *s)
{
	return s[0] ? s : "*";
}

enum rc cli_show_history(int quotas, int json)
{
	struct price_opts o;
	struct price_history h;
	enum rc rc;

	price_opts_init(&o);
	o.data_dir = cli_data_dir();
	rc = quotas ? price_quota_history_load(&o, &h) : price_history_load(&o, &h);
	if (rc != RC_OK)
		return rc;
	if (json) {
		cli_print_json(quotas ? price_quota_history_to_json(&h) : price_history_to_json(&h));
	} else if (h.n == 0) {
		gp_info("no %s changes recorded yet ('gpuplan %s update FILE' records them)",
			quotas ? "quota" : "price", quotas ? "quotas" : "prices");
	} else if (quotas) {
		printf("%-20s  %-8s  %-16s  %-16s  %-16s  %-8s  %-8s  %s\n", "TIMESTAMP", "PROVIDER",
		       "REGION", "GPU", "INSTANCE", "FIELD", "OLD", "NEW");
		for (size_t i = 0; i < h.n; i++) {
			const struct price_history_entry *e = &h.entries[i];

			printf("%-20s  %-8s  %-16s  %-16s  %-16s  %-8s  %-8s  %s\n", e->timestamp,
			       e->provider, e->region, e->gpu, cli_any(e->instance_type), e->field,
			       e->old_value[0] ? e->old_value : "-",
			       e->new_value[0] ? e->new_value : "-");
		}
	} else {
		printf("%-20s  %-8s  %-26s  %-16s  %-22s  %-12s  %s\n", "TIMESTAMP", "PROVIDER",
		       "INSTANCE", "REGION", "FIELD", "OLD", "NEW");
		for (size_t i = 0; i < h.n; i++) {
			const struct price_history_entry *e = &h.entries[i];

			printf("%-20s  %-8s  %-26s  %-16s  %-22s  %-12s  %s\n", e->timestamp,
			       e->provider, e->instance_type, e->region, e->field,
			       e->old_value[0] ? e->old_value : "-", e->new_value);
		}
	}
	price_history_release(&h);
	return RC_OK;
}
