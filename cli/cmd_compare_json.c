/*
 * cmd_compare_json.c - `gpuplan compare --json`: the comparison as a
 * versioned JSON document (schema gpuplan.compare/1) with the figures of
 * the table, in SI units and USD with the unit in each key, keys in a
 * fixed order and no timings, so the same inputs give the same bytes.
 * The only compare file that includes cJSON; it computes nothing the
 * table does not show, except converting months and years to seconds.
 */
#include <math.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "cmd_compare.h"

/* A number, or null when it is not finite (JSON has no NaN). */
static void add_num(cJSON *o, const char *k, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

/* One way to train: a rented offering or the bought machines, with plan
 * --json's keys (plan_candidate_to_json) and the figures per token and
 * per GPU-hour the table shows. */
static cJSON *option_json(const char *option, const struct plan_candidate *c,
			  const struct price_offering *of, double tokens,
			  double usd_per_gpu_hour, const struct plan_opts *o)
{
	char *s = plan_candidate_to_json(c, of, o);
	cJSON *p = s ? cJSON_Parse(s) : NULL;

	free(s);
	if (!p)
		abort();        /* cJSON fails only when out of memory */
	cJSON_AddStringToObject(p, "option", option);
	add_num(p, "usd_per_billion_tokens", c->cost_usd / (tokens / 1e9));
	add_num(p, "usd_per_gpu_hour", usd_per_gpu_hour);
	return p;
}

/* The bought option: the plan on the owned machines, the machine and the
 * owning cost per hour with its parts (pricing/price_cost.c). */
static cJSON *buy_json(const struct compare_entry *e, double tokens, const struct plan_opts *o)
{
	cJSON *p = option_json("buy", &e->buy, &e->buy_offering, tokens,
			       e->oc.usd_per_gpu_hour, o);
	cJSON *x = cJSON_AddObjectToObject(p, "machine");

	cJSON_AddStringToObject(x, "name", e->bought.name);
	cJSON_AddStringToObject(x, "vendor", e->bought.vendor);
	cJSON_AddNumberToObject(x, "count", e->machines);
	cJSON_AddNumberToObject(x, "gpus", e->bought.gpus);
	add_num(x, "price_usd", e->bought.price_usd);
	cJSON_AddStringToObject(x, "price_date", e->bought.price_date);
	{
		/* its age, as a rental price's (null: no date or no today) */
		long days = price_date_age_days(e->bought.price_date, o->today_days);

		if (o->today_days > 0 && days >= 0) {
			cJSON_AddNumberToObject(x, "price_age_days", (double)days);
			cJSON_AddBoolToObject(x, "price_stale", days > o->max_price_age_days);
		} else {
			cJSON_AddNullToObject(x, "price_age_days");
			cJSON_AddNullToObject(x, "price_stale");
		}
	}
	cJSON_AddBoolToObject(x, "cards_only", e->bought.cards_only);
	add_num(x, "power_w", e->oc.power_w);
	add_num(x, "host_power_w", e->bought.host_power_w);
	x = cJSON_AddObjectToObject(p, "owning");
	add_num(x, "usd_per_gpu_hour", e->oc.usd_per_gpu_hour);
	add_num(x, "capex_usd_per_gpu_hour", e->oc.capex_usd_per_gpu_hour);
	add_num(x, "power_usd_per_gpu_hour", e->oc.power_usd_per_gpu_hour);
	add_num(x, "usd_per_machine_hour", e->oc.usd_per_hour);
	add_num(x, "capex_usd_per_machine_hour", e->oc.capex_usd_per_hour);
	add_num(x, "power_usd_per_machine_hour", e->oc.power_usd_per_hour);
	return p;
}

static cJSON *entry_json(const struct compare_entry *e, double tokens, const struct plan_opts *o)
{
	cJSON *p = cJSON_CreateObject();
	const char *be;

	cJSON_AddStringToObject(p, "gpu", e->gpu->name);
	add_num(p, "cheapest_cost_usd", e->best_cost);
	if (e->have_rent)
		cJSON_AddItemToObject(p, "rent", option_json("rent", &e->rent, e->rent.offering, tokens,
							      e->rent.usd_per_hour / (e->rent.nodes *
							      e->rent.cluster.gpus_per_node), o));
	else
		cJSON_AddNullToObject(p, "rent");
	if (e->have_buy) {
		cJSON_AddItemToObject(p, "buy", buy_json(e, tokens, o));
		cJSON_AddNullToObject(p, "why_no_buy");
	} else {
		cJSON_AddNullToObject(p, "buy");
		cJSON_AddStringToObject(p, "why_no_buy", e->why_no_buy ? e->why_no_buy : "");
	}
	/* The table's months are UNIT_HOURS_PER_MONTH hours each. */
	be = !e->have_buy ? "no_buy" : isnan(e->breakeven_months) ? "no_rental"
	     : e->breakeven_months < 0 ? "never" : "pays_back";
	cJSON_AddStringToObject(p, "breakeven", be);
	add_num(p, "breakeven_s", e->have_buy && e->breakeven_months >= 0
		? e->breakeven_months * UNIT_HOURS_PER_MONTH * 3600.0 : NAN);
	return p;
}

char *compare_to_json(const struct compare_report *r)
{
	static const char *const not_included[] = {
		"staff", "colocation rent", "network gear beyond the machine", "financing",
		"resale value",
	};
	const struct price_owned_opts *oo = r->owned;
	const struct plan_opts *o = r->opts;
	cJSON *root = cJSON_CreateObject(), *x, *a;
	char *s;

	cJSON_AddStringToObject(root, "schema", "gpuplan.compare/1");
	cJSON_AddStringToObject(root, "model", r->job->model.name);
	add_num(root, "tokens", r->job->tokens);
	cJSON_AddNumberToObject(root, "gpus", r->gpus);
	x = cJSON_AddArrayToObject(root, "types");
	for (size_t i = 0; i < r->n_ents; i++)
		cJSON_AddItemToArray(x, entry_json(&r->ents[i], r->job->tokens, o));
	x = cJSON_AddObjectToObject(root, "assumptions");
	cJSON_AddBoolToObject(x, "user_prices", r->user_prices);
	cJSON_AddStringToObject(x, "hardware_table",
				r->hardware_path ? r->hardware_path : "data/hardware.csv");
	cJSON_AddStringToObject(x, "rent_purchase", o->filter.spot == 1 ? "spot" : "on-demand");
	cJSON_AddBoolToObject(x, "rent_reservations", o->blocks != NULL && o->filter.spot != 1);
	cJSON_AddBoolToObject(x, "reserved_included", o->commitments != NULL);
	add_num(x, "amortisation_s", oo->amortisation_years * PRICE_HOURS_PER_YEAR * 3600.0);
	add_num(x, "utilisation", oo->utilisation);
	add_num(x, "pue", oo->pue);
	add_num(x, "usd_per_kwh", oo->usd_per_kwh);
	add_num(x, "month_s", UNIT_HOURS_PER_MONTH * 3600.0);
	add_num(x, "checkpoint_bytes_per_param", PLAN_CKPT_BYTES_PER_PARAM);
	/* null: Young/Daly's per plan (PLAN_CKPT_INTERVAL_AUTO) */
	add_num(x, "checkpoint_interval_s", o->ckpt_interval_s >= 0 ? o->ckpt_interval_s : NAN);
	cJSON_AddNumberToObject(x, "checkpoints_kept", o->ckpt_keep);
	add_num(x, "storage_usd_per_gb_month", o->storage_usd_per_gb_month);
	add_num(x, "failures_per_gpu_hour", o->failures_per_gpu_hour);
	add_num(x, "preempt_per_node_hour", o->preempt_per_node_hour);
	add_num(x, "restart_s", o->restart_s);
	a = cJSON_AddArrayToObject(x, "not_included");
	for (size_t i = 0; i < GP_ARRAY_LEN(not_included); i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(not_included[i]));
	s = cJSON_Print(root);
	cJSON_Delete(root);
	if (!s)
		abort();        /* cJSON fails only when out of memory */
	return s;
}
