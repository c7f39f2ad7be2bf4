/*
 * recipes.c - reads and checks the MoE recipes' facts and the systems of
 * bench/data (recipes.h), and applies them to a run's configuration.  It
 * calls only the library (price_csv for the files, the simulator's enum
 * names).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipes.h"

static const char *const fact_cols[] = { "fact", "model", "system", "mbs", "pp", "vp", "ep",
					 "from_container", "until_container", "value", "source" };
static const char *const system_cols[] = { "system", "gpu", "gpus_per_node", "nvlink_domain",
					   "inter_node_gbps", "source" };
static const char *const zero_names[] = { "0", "1", "2", "3" };
static const char *const bool_names[] = { "0", "1" };
static const char *const layout_names[] = { "even", "front_filled_last" };

/* Each fact and the values it takes (recompute_modules: "none", or one
 * or more of its names, separated by spaces). */
static const struct {
	const char *name;
	const char *const *values;
	size_t n;
} facts[] = {
	{ "zero", zero_names, 4 },
	{ "dispatcher", sim_ep_dispatcher_names, 2 },
	{ "a2a_overlap", bool_names, 2 },
	{ "moe_gemm", sim_moe_gemm_names, 3 },
	{ "recompute_modules", sim_recompute_module_names, SIM_RECOMPUTE_MODULES },
	{ "pp_layout", layout_names, 2 },
	{ "fp8_param_gather", bool_names, 2 },
};
enum { F_ZERO, F_DISPATCHER, F_A2A, F_GEMM, F_RECOMPUTE, F_LAYOUT, F_FP8_GATHER };

static int find_name(const char *const *names, size_t n, const char *s, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(names[i]) == len && !strncmp(names[i], s, len))
			return (int)i;
	return -1;
}

/* The bits of a recompute_modules value, or -1 when a word is unknown. */
static int module_bits(const char *s)
{
	int bits = 0;

	if (!strcmp(s, "none"))
		return 0;
	while (*s) {
		size_t len = strcspn(s, " ");
		int k = find_name(sim_recompute_module_names, SIM_RECOMPUTE_MODULES, s, len);

		if (k < 0 || !len)
			return -1;
		bits |= 1 << k;
		s += len;
		s += *s == ' ';
	}
	return bits;
}

/* 1 when s is empty or a whole number from 1 (an int). */
static int count_ok(const char *s)
{
	char *end;
	long v;

	if (!*s)
		return 1;
	v = strtol(s, &end, 10);
	return end != s && !*end && v >= 1 && v <= SIM_MAX_DEGREE;
}

/* 1 when s is empty or a release: digits, up to three parts. */
static int release_ok(const char *s)
{
	int parts = 0;

	if (!*s)
		return 1;
	while (parts < 3) {
		size_t d = strspn(s, "0123456789");

		if (d == 0 || d > 4)
			return 0;
		parts++;
		s += d;
		if (!*s)
			return 1;
		if (*s++ != '.')
			return 0;
	}
	return 0;
}

long moe_release_num(const char *s)
{
	long part[3] = { 0, 0, 0 };
	char *end;

	for (int i = 0; i < 3 && *s; i++) {
		part[i] = strtol(s, &end, 10);
		if (end == s)
			break;
		s = *end == '.' ? end + 1 : end;
	}
	return part[0] * 10000 + part[1] * 100 + part[2];
}

static enum rc bad(const struct price_csv *csv, const struct price_csv_row *row, const char *col,
		   const char *expected)
{
	char found[160];

	gp_term_escape(found, sizeof(found), price_csv_get(row, price_csv_col(csv, col)));
	fprintf(stderr, "error: %s:%d: %s: expected %s, found '%s'\n", csv->path, row->line, col,
		expected, found);
	return RC_INPUT;
}

/* The columns of csv are exactly names (in any order). */
static enum rc columns(const struct price_csv *csv, const char *const *names, size_t n)
{
	char why[256];

	for (size_t k = 0; k < n; k++)
		if (price_csv_col(csv, names[k]) < 0) {
			fprintf(stderr, "error: %s:%d: expected a column '%s'\n", csv->path,
				csv->header.line, names[k]);
			return RC_INPUT;
		}
	if (price_csv_unknown_col(csv, names, n, 0, why, sizeof(why)) >= 0) {
		fprintf(stderr, "error: %s:%d: %s\n", csv->path, csv->header.line, why);
		return RC_INPUT;
	}
	return RC_OK;
}

static enum rc check_fact(const struct price_csv *csv, const struct price_csv_row *row)
{
	const char *fact = price_csv_get(row, price_csv_col(csv, "fact"));
	const char *value = price_csv_get(row, price_csv_col(csv, "value"));
	static const char *const counts[] = { "mbs", "pp", "vp", "ep" };
	size_t f;

	for (f = 0; f < GP_ARRAY_LEN(facts) && strcmp(facts[f].name, fact); f++)
		;
	if (f == GP_ARRAY_LEN(facts))
		return bad(csv, row, "fact", "zero, dispatcher, a2a_overlap, moe_gemm, "
			   "recompute_modules, pp_layout or fp8_param_gather");
	if (f == F_RECOMPUTE ? module_bits(value) < 0
	    : find_name(facts[f].values, facts[f].n, value, strlen(value)) < 0)
		return bad(csv, row, "value", "a value the fact takes (bench/data/RUNS.md)");
	for (size_t k = 0; k < GP_ARRAY_LEN(counts); k++)
		if (!count_ok(price_csv_get(row, price_csv_col(csv, counts[k]))))
			return bad(csv, row, counts[k], "empty (any) or a whole number from 1");
	if (!release_ok(price_csv_get(row, price_csv_col(csv, "from_container"))))
		return bad(csv, row, "from_container", "empty or a release such as 26.06.01");
	if (!release_ok(price_csv_get(row, price_csv_col(csv, "until_container"))))
		return bad(csv, row, "until_container", "empty or a release such as 26.06.01");
	if (!*price_csv_get(row, price_csv_col(csv, "source")))
		return bad(csv, row, "source", "where the fact was read");
	return RC_OK;
}

static enum rc read_systems(struct moe_recipes *r)
{
	const struct price_csv *csv = &r->systems_csv;

	r->systems = calloc(csv->n_rows ? csv->n_rows : 1, sizeof(*r->systems));
	if (!r->systems) {
		fprintf(stderr, "error: accuracy: out of memory\n");
		return RC_ERR;
	}
	for (size_t i = 0; i < csv->n_rows; i++) {
		const struct price_csv_row *row = &csv->rows[i];
		struct moe_system *s = &r->systems[i];
		const char *n[3] = { "gpus_per_node", "nvlink_domain", "inter_node_gbps" };
		double v[3];

		for (int k = 0; k < 3; k++) {
			const char *cell = price_csv_get(row, price_csv_col(csv, n[k]));
			char *end;

			v[k] = strtod(cell, &end);
			if (end == cell || *end || !(v[k] >= 1 && v[k] <= SIM_MAX_GPUS) ||
			    (k < 2 && v[k] != (int)v[k]))
				return bad(csv, row, n[k], k < 2 ? "a whole number from 1"
					   : "a bandwidth from 1 Gb/s");
		}
		s->name = price_csv_get(row, price_csv_col(csv, "system"));
		s->gpu = price_csv_get(row, price_csv_col(csv, "gpu"));
		if (!*s->name || !*s->gpu || !*price_csv_get(row, price_csv_col(csv, "source")))
			return bad(csv, row, !*s->name ? "system" : !*s->gpu ? "gpu" : "source",
				   "a name");
		s->gpus_per_node = (int)v[0];
		s->nvlink_domain = (int)v[1];
		s->inter_gbps = v[2];
		r->n_systems++;
	}
	return RC_OK;
}

enum rc moe_recipes_load(const char *bench_dir, struct moe_recipes *out)
{
	char path[1024];
	enum rc rc;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/moe_recipes.csv", bench_dir);
	rc = price_csv_load(path, &out->facts);
	if (rc == RC_OK)
		rc = columns(&out->facts, fact_cols, GP_ARRAY_LEN(fact_cols));
	for (size_t i = 0; rc == RC_OK && i < out->facts.n_rows; i++)
		rc = check_fact(&out->facts, &out->facts.rows[i]);
	snprintf(path, sizeof(path), "%s/moe_systems.csv", bench_dir);
	if (rc == RC_OK)
		rc = price_csv_load(path, &out->systems_csv);
	if (rc == RC_OK)
		rc = columns(&out->systems_csv, system_cols, GP_ARRAY_LEN(system_cols));
	if (rc == RC_OK)
		rc = read_systems(out);
	if (rc != RC_OK)
		moe_recipes_release(out);
	return rc;
}

void moe_recipes_release(struct moe_recipes *r)
{
	price_csv_release(&r->facts);
	price_csv_release(&r->systems_csv);
	free(r->systems);
	memset(r, 0, sizeof(*r));
}

const struct moe_system *moe_system_find(const struct moe_recipes *r, const char *name)
{
	for (size_t k = 0; k < r->n_systems; k++)
		if (!strcmp(r->systems[k].name, name))
			return &r->systems[k];
	return NULL;
}

/* 1 when a count key is empty or equals v. */
static int count_matches(const struct price_csv *csv, const struct price_csv_row *row,
			 const char *col, int v)
{
	const char *s = price_csv_get(row, price_csv_col(csv, col));

	return !*s || atoi(s) == v;
}

/* The value of fact f for the run, or NULL when no row gives it. */
static const char *fact_value(const struct moe_recipes *r, int f, const char *model,
			      const char *system, long release, const struct sim_parallel *p)
{
	const struct price_csv *csv = &r->facts;

	for (size_t i = 0; i < csv->n_rows; i++) {
		const struct price_csv_row *row = &csv->rows[i];
		const char *mod = price_csv_get(row, price_csv_col(csv, "model"));
		const char *sys = price_csv_get(row, price_csv_col(csv, "system"));
		const char *from = price_csv_get(row, price_csv_col(csv, "from_container"));
		const char *until = price_csv_get(row, price_csv_col(csv, "until_container"));

		if (strcmp(price_csv_get(row, price_csv_col(csv, "fact")), facts[f].name) ||
		    (*mod && strcmp(mod, model)) || (*sys && strcmp(sys, system)) ||
		    (*from && release < moe_release_num(from)) ||
		    (*until && release >= moe_release_num(until)) ||
		    !count_matches(csv, row, "mbs", p->mbs) || !count_matches(csv, row, "pp", p->pp) ||
		    !count_matches(csv, row, "vp", p->interleave) ||
		    !count_matches(csv, row, "ep", p->ep))
			continue;
		return price_csv_get(row, price_csv_col(csv, "value"));
	}
	return NULL;
}

void moe_recipes_apply(const struct moe_recipes *r, const char *model, const char *system,
		       long release, const struct sim_model *m, struct sim_parallel *p)
{
	const char *v[GP_ARRAY_LEN(facts)];

	/* every fact read at the run's layout before any is set */
	for (size_t f = 0; f < GP_ARRAY_LEN(facts); f++)
		v[f] = fact_value(r, (int)f, model, system, release, p);
	if (v[F_ZERO])
		p->zero = atoi(v[F_ZERO]);
	if (v[F_DISPATCHER])
		p->ep_flex = !strcmp(v[F_DISPATCHER], "flex");
	if (v[F_A2A])
		p->ep_overlap = atoi(v[F_A2A]);
	if (v[F_GEMM])
		p->moe_gemm = (enum sim_moe_gemm)find_name(sim_moe_gemm_names, 3, v[F_GEMM],
							   strlen(v[F_GEMM]));
	if (v[F_RECOMPUTE] && module_bits(v[F_RECOMPUTE])) {
		p->recompute = SIM_RECOMPUTE_SELECTIVE;
		p->recompute_modules = (unsigned)module_bits(v[F_RECOMPUTE]);
	}
	if (v[F_LAYOUT] && !strcmp(v[F_LAYOUT], "front_filled_last"))
		p->pp_last_layers = sim_front_filled_last(m, p->pp, p->interleave);
	/* the simulator applies it only to FP8 and MXFP8 GEMMs under ZeRO */
	if (v[F_FP8_GATHER])
		p->fp8_param_gather = atoi(v[F_FP8_GATHER]);
}
