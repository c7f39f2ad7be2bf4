/*
 * plan_jobs.c - the jobs file of `gpuplan plan --jobs`: one training job a
 * row, read with the pricing module's CSV reader so that every error names
 * file:line:column.  Columns by header name: model and tokens (required),
 * deadline, priority, gbs and name (optional; empty cells take defaults;
 * a name, the model's by default, must differ from every other job's).
 * It does not plan: plan_run() takes the jobs it returns.
 */
#include "plan_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_csv.h"

/* The ranges the flags hold (--gbs), and a priority's: a weight */
#define PLAN_JOB_GBS_MAX (1 << 24)
#define PLAN_JOB_PRIORITY_MAX 1e6

static enum rc bad_cell(const struct price_csv *csv, const struct price_csv_row *row,
			int col, const char *expected)
{
	char h[96], e[96];

	gp_error("%s:%d:%d: %s: expected %s, found '%s'", csv->path, row->line, col + 1,
		 gp_term_escape(h, sizeof(h), price_csv_get(&csv->header, col)), expected,
		 gp_term_escape(e, sizeof(e), price_csv_get(row, col)));
	return RC_INPUT;
}

static enum rc parse_row(const struct price_csv *csv, const struct price_csv_row *row,
			 const int *col, const struct sim_model_table *models,
			 struct plan_job *j)
{
	const char *v;
	const struct sim_model *m;
	double d;
	int gbs;

	v = price_csv_get(row, col[0]);
	m = sim_model_find(models, v);
	if (!m) {
		char near[128];
		enum rc rc = bad_cell(csv, row, col[0], "a model preset (see 'gpuplan models')");

		if (sim_model_suggest(models, v, near, sizeof(near)) == 0)
			gp_hint("did you mean '%s'?", near);
		return rc;
	}
	if (unit_parse_count(price_csv_get(row, col[1]), &d) != RC_OK)
		return bad_cell(csv, row, col[1], "a token count like 1T or 300B");
	plan_job_init(j, m, d);
	v = price_csv_get(row, col[2]);
	if (*v) {
		if (unit_parse_duration(v, &d) != RC_OK || !(d > 0) || d > UNIT_SPAN_S_MAX)
			return bad_cell(csv, row, col[2],
					"a duration like 30d or 72h, at most 100 years (--deadline's range)");
		j->deadline_s = d;
	}
	v = price_csv_get(row, col[3]);
	if (*v) {
		if (unit_parse_double(v, &d) != RC_OK || !(d > 0) || d > PLAN_JOB_PRIORITY_MAX)
			return bad_cell(csv, row, col[3], "a priority above 0 and at most 1e6");
		j->priority = d;
	}
	v = price_csv_get(row, col[4]);
	if (*v) {
		if (unit_parse_int(v, &gbs) != RC_OK || gbs < 1 || gbs > PLAN_JOB_GBS_MAX)
			return bad_cell(csv, row, col[4],
					"a global batch in sequences from 1 to 16777216 (--gbs's range)");
		j->gbs = gbs;
	}
	v = price_csv_get(row, col[5]);
	if (*v && gp_strlcpy(j->name, v, sizeof(j->name)) != 0)
		return bad_cell(csv, row, col[5], "a name shorter than 64 bytes");
	/* the name goes into the job's plan file name (plan-NAME.json) */
	if (!gp_name_is_safe(v, strlen(v), NULL) || strchr(v, '/'))
		return bad_cell(csv, row, col[5], "a name of letters, digits and ' ._-:+(),@' (no '/')");
	return RC_OK;
}

enum rc plan_jobs_load(const char *path, const struct sim_model_table *models,
		       struct plan_job **jobs, size_t *n)
{
	static const char *const names[] = { "model", "tokens", "deadline", "priority", "gbs",
					     "name" };
	struct price_csv csv;
	struct plan_job *js;
	int col[GP_ARRAY_LEN(names)], bad;
	char why[256];
	enum rc rc;

	rc = price_csv_load(path, &csv);
	if (rc != RC_OK)
		return rc;
	for (size_t k = 0; k < GP_ARRAY_LEN(names); k++)
		col[k] = price_csv_col(&csv, names[k]);
	/* 'priorty' would leave every job its default priority */
	bad = price_csv_unknown_col(&csv, names, GP_ARRAY_LEN(names), 0, why, sizeof(why));
	if (bad >= 0) {
		gp_error("%s:%d:%d: header: expected each of model, tokens, deadline, priority, "
			 "gbs, name once, %s", path, csv.header.line, bad + 1, why);
		price_csv_release(&csv);
		return RC_INPUT;
	}
	for (size_t k = 0; k < 2; k++)
		if (col[k] < 0) {
			gp_error("%s:%d: header: expected a '%s' column, found none", path,
				 csv.header.line, names[k]);
			price_csv_release(&csv);
			return RC_INPUT;
		}
	if (csv.n_rows == 0) {
		gp_error("%s: expected at least one job row, found none", path);
		price_csv_release(&csv);
		return RC_INPUT;
	}
	js = xcalloc(csv.n_rows, sizeof(*js));
	for (size_t i = 0; i < csv.n_rows; i++) {
		rc = parse_row(&csv, &csv.rows[i], col, models, &js[i]);
		/* a job's name is its plan file's (plan-NAME.json): two jobs of
		 * one name would write one file, the second over the first */
		for (size_t k = 0; rc == RC_OK && k < i; k++)
			if (strcmp(js[k].name, js[i].name) == 0) {
				gp_error("%s:%d: name: expected a name no other job has, found "
					 "'%s' (the job on line %d)", path, csv.rows[i].line,
					 js[i].name, csv.rows[k].line);
				gp_hint("give each job its own name in a 'name' column");
				rc = RC_INPUT;
			}
		if (rc != RC_OK) {
			free(js);
			price_csv_release(&csv);
			return rc;
		}
	}
	*jobs = js;
	*n = csv.n_rows;
	price_csv_release(&csv);
	return RC_OK;
}
