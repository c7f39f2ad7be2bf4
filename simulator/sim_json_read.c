/*
 * sim_json_read.c - reading plan files (schema "gpuplan.plan/1") back into
 * a struct sim_plan, validating every field it uses and naming the first
 * bad one (file: .path: expected ..., found ...), the interruptions a
 * plan states among them.  Unknown keys are
 * ignored so later versions can add fields; the prediction is read back
 * when present, but callers re-simulate rather than trust it.  Writing is
 * sim_json.c's.
 *
 * It calls down only: sim_check.c (the defaults, the GPU count), sim_shape.c,
 * sim_finetune.c, sim_models.c and sim_names.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_internal.h"

#include "sim.h"

#define SCHEMA SIM_PLAN_SCHEMA

/* ---- reading ------------------------------------------------------- */

struct reader {
	const char *file;
	int bad;          /* 1 once an error was printed */
};

static const cJSON *member(struct reader *r, const cJSON *obj, const char *where,
			   const char *key, int required)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!it && required && !r->bad) {
		gp_error("%s: %s.%s: expected a value, found none", r->file, where, key);
		r->bad = 1;
	}
	return it;
}

static void found(const cJSON *it, char *buf, size_t size)
{
	char *s = cJSON_PrintUnformatted(it);

	snprintf(buf, size, "%s", s ? s : "?");
	free(s);
}

static void get_int(struct reader *r, const cJSON *obj, const char *where,
		    const char *key, int min, int max, int required, int *out)
{
	const cJSON *it = member(r, obj, where, key, required);
	char buf[64];

	if (!it || r->bad)
		return;
	if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble)
	    || it->valuedouble < min || it->valuedouble > max) {
		found(it, buf, sizeof(buf));
		gp_error("%s: %s.%s: expected an integer from %d to %d, found %s",
			 r->file, where, key, min, max, buf);
		r->bad = 1;
		return;
	}
	*out = (int)it->valuedouble;
}

#define SIM_JSON_MAX 1e30

static void get_double_max(struct reader *r, const cJSON *obj, const char *where,
			   const char *key, double min, double max, int required, double *out);

static void get_double(struct reader *r, const cJSON *obj, const char *where,
		       const char *key, double min, int required, double *out)
{
	get_double_max(r, obj, where, key, min, SIM_JSON_MAX, required, out);
}

/* A number from min to max (at most SIM_JSON_MAX) into *out. */
static void get_double_max(struct reader *r, const cJSON *obj, const char *where,
			   const char *key, double min, double max, int required, double *out)
{
	const cJSON *it = member(r, obj, where, key, required);
	char buf[64];

	if (!it || r->bad)
		return;
	/* SIM_JSON_MAX bounds every figure: products of a few (a time by a
	 * token count by a price) stay finite, where 1e308 would not */
	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble < min ||
	    it->valuedouble > max) {
		found(it, buf, sizeof(buf));
		gp_error("%s: %s.%s: expected a number from %g to %g, found %s", r->file, where,
			 key, min, max, buf);
		r->bad = 1;
		return;
	}
	*out = it->valuedouble;
}

static void get_bool(struct reader *r, const cJSON *obj, const char *where,
		     const char *key, int required, int *out)
{
	const cJSON *it = member(r, obj, where, key, required);
	char buf[64];

	if (!it || r->bad)
		return;
	if (!cJSON_IsBool(it)) {
		found(it, buf, sizeof(buf));
		gp_error("%s: %s.%s: expected true or false, found %s", r->file, where,
			 key, buf);
		r->bad = 1;
		return;
	}
	*out = cJSON_IsTrue(it);
}

/* What a string member may hold: any string (an enum's, checked
 * against its names), printable text, or a name (gp_name_is_safe), the
 * last two checked so that no plan can put a control byte in a terminal
 * or a quote in a script written from it. */
enum str_kind { STR_ANY, STR_TEXT, STR_NAME };

static void get_str_kind(struct reader *r, const cJSON *obj, const char *where,
			 const char *key, int required, enum str_kind kind, char *out, size_t size)
{
	const cJSON *it = member(r, obj, where, key, required);
	char buf[64], what[48];
	size_t len, at;

	if (!it || r->bad)
		return;
	if (!cJSON_IsString(it) || strlen(it->valuestring) >= size) {
		found(it, buf, sizeof(buf));
		gp_error("%s: %s.%s: expected a string of at most %zu bytes, found %s",
			 r->file, where, key, size - 1, buf);
		r->bad = 1;
		return;
	}
	len = strlen(it->valuestring);
	if ((kind == STR_NAME && !gp_name_is_safe(it->valuestring, len, &at)) ||
	    (kind == STR_TEXT && !gp_text_is_printable(it->valuestring, len, &at))) {
		gp_error("%s: %s.%s: expected %s, found %s at byte %zu", r->file, where, key,
			 kind == STR_NAME ? "a name of letters, digits and '" GP_NAME_PUNCT "'"
			 : "printable text", gp_char_describe(what, sizeof(what), it->valuestring,
							      len, at), at + 1);
		r->bad = 1;
		return;
	}
	snprintf(out, size, "%s", it->valuestring);
}

static void get_str(struct reader *r, const cJSON *obj, const char *where,
		    const char *key, int required, char *out, size_t size)
{
	get_str_kind(r, obj, where, key, required, STR_ANY, out, size);
}

static void get_name(struct reader *r, const cJSON *obj, const char *where,
		     const char *key, int required, char *out, size_t size)
{
	get_str_kind(r, obj, where, key, required, STR_NAME, out, size);
}

static void get_text(struct reader *r, const cJSON *obj, const char *where,
		     const char *key, int required, char *out, size_t size)
{
	get_str_kind(r, obj, where, key, required, STR_TEXT, out, size);
}

/* Reads a string member that must be one of names[0..n); stores its index. */
/* One of names[0..n-1] into *out (its index); an absent key that is not
 * required leaves *out as it is. */
static void get_enum(struct reader *r, const cJSON *obj, const char *where,
		     const char *key, const char *const *names, int n, int required, int *out)
{
	char s[PRICE_NAME_MAX] = "", expect[128] = "";

	if (!required && !cJSON_GetObjectItemCaseSensitive(obj, key))
		return;
	get_str(r, obj, where, key, 1, s, sizeof(s));
	if (r->bad)
		return;
	for (int i = 0; i < n; i++) {
		if (!strcmp(s, names[i])) {
			*out = i;
			return;
		}
		snprintf(expect + strlen(expect), sizeof(expect) - strlen(expect), "%s%s",
			 i ? (i == n - 1 ? " or " : ", ") : "", names[i]);
	}
	gp_error("%s: %s.%s: expected %s, found \"%s\"", r->file, where, key, expect, s);
	r->bad = 1;
}

/* An optional array of the names of sim_recompute_module bits into *out;
 * each name once at most. */
static void get_modules(struct reader *r, const cJSON *obj, const char *where, const char *key,
			unsigned *out)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, key), *it;
	unsigned bits = 0;
	int i = 0;

	if (!arr || r->bad)
		return;
	if (!cJSON_IsArray(arr)) {
		gp_error("%s: %s.%s: expected an array of module names", r->file, where, key);
		r->bad = 1;
		return;
	}
	cJSON_ArrayForEach(it, arr) {
		int k;

		for (k = 0; k < SIM_RECOMPUTE_MODULES; k++)
			if (cJSON_IsString(it) && !strcmp(it->valuestring, sim_recompute_module_names[k]))
				break;
		if (k == SIM_RECOMPUTE_MODULES || (bits & (1u << k))) {
			gp_error("%s: %s.%s[%d]: expected one of layernorm, mla_up_proj, moe_act or mlp, "
				 "each once", r->file, where, key, i);
			r->bad = 1;
			return;
		}
		bits |= 1u << k;
		i++;
	}
	*out = bits;
}

/* add_model_router's fields, each optional. */
static void get_model_router(struct reader *r, const cJSON *o, struct sim_model *m)
{
	int v = SIM_ROUTER_SOFTMAX;

	get_enum(r, o, ".model", "router_score", sim_router_score_names, 2, 0, &v);
	m->router_score = (enum sim_router_score)v;
	v = SIM_BALANCE_UNKNOWN;
	get_enum(r, o, ".model", "router_balance", sim_balance_names, 5, 0, &v);
	m->router_balance = (enum sim_balance)v;
	get_double_max(r, o, ".model", "router_aux_coeff", 0, 10, 0, &m->router_aux_coeff);
	get_bool(r, o, ".model", "router_expert_bias", 0, &m->router_expert_bias);
	get_double_max(r, o, ".model", "router_bias_rate", 0, 1, 0, &m->router_bias_rate);
	get_int(r, o, ".model", "router_groups", 0, SIM_MAX_EXPERTS, 0, &m->router_groups);
	get_int(r, o, ".model", "router_group_topk", 0, SIM_MAX_EXPERTS, 0, &m->router_group_topk);
	get_double_max(r, o, ".model", "router_topk_scale", 0, 1000, 0, &m->router_topk_scale);
	get_bool(r, o, ".model", "qk_norm", 0, &m->qk_norm);
	v = SIM_GLU_SILU;
	get_enum(r, o, ".model", "glu_act", sim_glu_act_names, 2, 0, &v);
	m->glu_act = (enum sim_glu_act)v;
	get_double_max(r, o, ".model", "glu_offset", 0, 100, 0, &m->glu_offset);
	get_double_max(r, o, ".model", "glu_clamp", 0, 1e6, 0, &m->glu_clamp);
	get_bool(r, o, ".model", "tokenizer_gated", 0, &m->tokenizer_gated);
}

static const cJSON *object(struct reader *r, const cJSON *parent, const char *where,
			   const char *key, int required)
{
	const cJSON *it = member(r, parent, where, key, required);

	if (!it || r->bad)
		return NULL;
	if (!cJSON_IsObject(it)) {
		gp_error("%s: %s.%s: expected an object", r->file, where, key);
		r->bad = 1;
		return NULL;
	}
	return it;
}

/* .interruptions (sim_interrupts): the rates as plan's flags bound them
 * (--failure-rate at most 1, --preempt-rate 1000), mtbf_s null when
 * nothing interrupts, the effective training time in (0, 1]. */
static void read_interrupts(struct reader *r, const cJSON *o, struct sim_interrupts *i)
{
	static const char *const w = ".interruptions";
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "mtbf_s");

	get_double_max(r, o, w, "failures_per_gpu_hour", 0, 1, 1, &i->failures_per_gpu_hour);
	get_double_max(r, o, w, "preemptions_per_node_hour", 0, 1e3, 0,
		       &i->preemptions_per_node_hour);
	if (m && !cJSON_IsNull(m))
		get_double(r, o, w, "mtbf_s", 0, 0, &i->mtbf_s);
	get_double(r, o, w, "restart_s", 0, 0, &i->restart_s);
	get_double(r, o, w, "checkpoint_bytes_per_s_per_node", 0, 0, &i->ckpt_bytes_per_s_per_node);
	get_double(r, o, w, "expected", 0, 1, &i->expected);
	get_double_max(r, o, w, "effective_training_time", 0, 1, 1, &i->effective);
	if (!r->bad && !(i->effective > 0)) {
		gp_error("%s: %s.effective_training_time: expected a number above 0 and at most 1, "
			 "found 0", r->file, w);
		r->bad = 1;
	}
	i->stated = !r->bad;
}

static void read_prediction(struct reader *r, const cJSON *o, struct sim_plan *p)
{
	struct sim_result *res = &p->result;
	const cJSON *b, *m;
	double tf = 0;

	get_double(r, o, ".prediction", "step_time_s", 0, 0, &res->step_time_s);
	get_double(r, o, ".prediction", "tokens_per_s", 0, 0, &res->tokens_per_s);
	get_double(r, o, ".prediction", "model_tflops_per_gpu", 0, 0, &tf);
	res->model_flops_per_gpu_s = tf * 1e12;
	tf = 0;
	get_double(r, o, ".prediction", "hardware_tflops_per_gpu", 0, 0, &tf);
	res->hardware_flops_per_gpu_s = tf * 1e12;
	get_double(r, o, ".prediction", "mfu", 0, 0, &res->mfu);
	get_double(r, o, ".prediction", "hfu", 0, 0, &res->hfu);
	get_int(r, o, ".prediction", "grad_accum", 0, 1 << 30, 0, &res->grad_accum);
	get_bool(r, o, ".prediction", "fits", 0, &res->fits);
	get_double(r, o, ".prediction", "time_to_train_s", 0, 0, &p->time_to_train_s);
	get_double(r, o, ".prediction", "cost_usd", 0, 0, &p->cost_usd);
	b = object(r, o, ".prediction", "breakdown", 0);
	if (b) {
		get_double(r, b, ".prediction.breakdown", "compute", 0, 0, &res->breakdown.compute_s);
		get_double(r, b, ".prediction.breakdown", "tp_comm", 0, 0, &res->breakdown.tp_comm_s);
		get_double(r, b, ".prediction.breakdown", "cp_comm", 0, 0, &res->breakdown.cp_comm_s);
		get_double(r, b, ".prediction.breakdown", "ep_comm", 0, 0, &res->breakdown.ep_comm_s);
		get_double(r, b, ".prediction.breakdown", "ep_comm_total", 0, 0,
			   &res->breakdown.ep_comm_total_s);
		get_double(r, b, ".prediction.breakdown", "pp_bubble", 0, 0, &res->breakdown.pp_bubble_s);
		get_double(r, b, ".prediction.breakdown", "pp_comm", 0, 0, &res->breakdown.pp_comm_s);
		get_double(r, b, ".prediction.breakdown", "dp_comm_exposed", 0, 0,
			   &res->breakdown.dp_comm_exposed_s);
		get_double(r, b, ".prediction.breakdown", "dp_comm_total", 0, 0,
			   &res->breakdown.dp_comm_total_s);
		get_double(r, b, ".prediction.breakdown", "optimizer", 0, 0, &res->breakdown.optimizer_s);
		get_double(r, b, ".prediction.breakdown", "offload", 0, 0, &res->breakdown.offload_s);
	}
	m = object(r, o, ".prediction", "memory", 0);
	if (m) {
		get_double(r, m, ".prediction.memory", "weights", 0, 0, &res->memory.weights);
		get_double(r, m, ".prediction.memory", "grads", 0, 0, &res->memory.grads);
		get_double(r, m, ".prediction.memory", "optimizer", 0, 0, &res->memory.optimizer);
		get_double(r, m, ".prediction.memory", "activations", 0, 0, &res->memory.activations);
		get_double(r, m, ".prediction.memory", "other", 0, 0, &res->memory.other);
		get_double(r, m, ".prediction.memory", "total", 0, 0, &res->memory.total);
		get_double(r, m, ".prediction.memory", "capacity", 0, 0, &res->memory.capacity);
		get_double(r, m, ".prediction.memory", "host_per_node", 0, 0, &res->memory.host);
		get_double(r, m, ".prediction.memory", "host_capacity", 0, 0,
			   &res->memory.host_capacity);
		get_double(r, m, ".prediction.memory", "nvme_per_node", 0, 0, &res->memory.nvme);
	}
}

/* Reads .offering.price_date: absent or null (not stated, as plans
 * written before it) or a date "YYYY-MM-DD". */
static void read_price_date(struct reader *r, const cJSON *o, struct price_offering *f)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "price_date");
	long days;

	f->price_date[0] = '\0';
	if (r->bad || !d || cJSON_IsNull(d))
		return;
	if (!cJSON_IsString(d) || unit_parse_date(d->valuestring, &days) != RC_OK) {
		gp_error("%s: .offering.price_date: expected a date YYYY-MM-DD or null, found %s",
			 r->file, cJSON_IsString(d) ? "another string" : "another type");
		r->bad = 1;
		return;
	}
	gp_strlcpy(f->price_date, d->valuestring, sizeof(f->price_date));
}

/* Reads .offering.purchase after .offering.spot.  Plans written before
 * the field existed are spot when .offering.spot says so, owned when the
 * provider is "owned" (price_catalog_add_owned), else on-demand.  A
 * purchase that contradicts a stated .offering.spot is refused. */
static void read_purchase(struct reader *r, const cJSON *o, struct sim_plan *p)
{
	const char *names[PRICE_PURCHASE_N];
	const cJSON *spot = cJSON_GetObjectItemCaseSensitive(o, "spot");
	int v;

	if (r->bad)
		return;
	if (!cJSON_GetObjectItemCaseSensitive(o, "purchase")) {
		p->purchase = p->spot ? PRICE_PURCHASE_SPOT
			      : !strcmp(p->offering.provider, "owned") ? PRICE_PURCHASE_OWNED
			      : PRICE_PURCHASE_ON_DEMAND;
	} else {
		for (int i = 0; i < PRICE_PURCHASE_N; i++)
			names[i] = price_purchase_str((enum price_purchase)i);
		v = 0;
		get_enum(r, o, ".offering", "purchase", names, PRICE_PURCHASE_N, 1, &v);
		if (r->bad)
			return;
		p->purchase = (enum price_purchase)v;
		if (spot && p->spot != (p->purchase == PRICE_PURCHASE_SPOT)) {
			gp_error("%s: .offering.purchase: expected %s as .offering.spot is %s, "
				 "found \"%s\"", r->file,
				 p->spot ? "spot" : "on-demand, reserved-1y, reserved-3y, owned or capacity-block",
				 p->spot ? "true" : "false", names[v]);
			r->bad = 1;
			return;
		}
		p->spot = p->purchase == PRICE_PURCHASE_SPOT;
	}
	p->offering.owned = p->purchase == PRICE_PURCHASE_OWNED;
}

/* .assumptions (optional): at most SIM_PLAN_MAX_ASSUMPTIONS objects
 * {field (a name), value (a number), why (printable text)}, each field
 * once. */
static void read_assumptions(struct reader *r, const cJSON *a, struct sim_plan *p)
{
	const cJSON *x;
	char buf[64];
	int i = 0;

	if (!a || r->bad)
		return;
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > SIM_PLAN_MAX_ASSUMPTIONS) {
		found(a, buf, sizeof(buf));
		gp_error("%s: .assumptions: expected an array of at most %d objects, found %s",
			 r->file, SIM_PLAN_MAX_ASSUMPTIONS, buf);
		r->bad = 1;
		return;
	}
	cJSON_ArrayForEach(x, a) {
		struct sim_assumption s;
		char where[32];

		memset(&s, 0, sizeof(s));
		/* a member of what is no object is none: "expected a value" */
		snprintf(where, sizeof(where), ".assumptions[%d]", i++);
		get_name(r, x, where, "field", 1, s.field, sizeof(s.field));
		get_double_max(r, x, where, "value", -SIM_JSON_MAX, SIM_JSON_MAX, 1, &s.value);
		get_text(r, x, where, "why", 1, s.why, sizeof(s.why));
		if (r->bad)
			return;
		if (!*s.field || sim_plan_assumption(p, s.field)) {
			gp_error("%s: %s.field: expected a field not assumed before, found '%s'",
				 r->file, where, s.field);
			r->bad = 1;
			return;
		}
		sim_plan_assume(p, s.field, s.value, s.why);
	}
}

static void read_plan(struct reader *r, const cJSON *root, struct sim_plan *p)
{
	const cJSON *o, *g;
	char schema[64] = "", why[160];
	int v;

	get_str(r, root, "", "schema", 1, schema, sizeof(schema));
	if (!r->bad && strcmp(schema, SCHEMA)) {
		gp_error("%s: .schema: expected \"%s\", found \"%s\"", r->file, SCHEMA, schema);
		r->bad = 1;
	}

	o = object(r, root, "", "model", 1);
	if (o) {
		struct sim_model *m = &p->model;

		get_name(r, o, ".model", "name", 0, m->name, sizeof(m->name));
		get_int(r, o, ".model", "layers", 1, SIM_MAX_LAYERS, 1, &m->layers);
		get_int(r, o, ".model", "hidden", 1, SIM_MAX_HIDDEN, 1, &m->hidden);
		get_int(r, o, ".model", "heads", 1, SIM_MAX_HEADS, 1, &m->heads);
		m->kv_heads = m->heads;
		get_int(r, o, ".model", "kv_heads", 1, SIM_MAX_HEADS, 0, &m->kv_heads);
		get_int(r, o, ".model", "ffn", 1, SIM_MAX_FFN, 1, &m->ffn);
		get_int(r, o, ".model", "vocab", 1, SIM_MAX_VOCAB, 1, &m->vocab);
		get_int(r, o, ".model", "seq", 1, SIM_MAX_SEQ, 1, &m->seq);
		v = 0;
		get_enum(r, o, ".model", "mlp", sim_mlp_names, 2, 1, &v);
		m->mlp = (enum sim_mlp)v;
		get_bool(r, o, ".model", "tied_embeddings", 0, &m->tied_embeddings);
		/* Optional: a plan written before the facts were carried reads
		 * as the Llama-style model the simulator priced it as. */
		sim_model_facts_init(m);
		v = m->pos;
		get_enum(r, o, ".model", "position_embedding", sim_pos_names, 3, 0, &v);
		m->pos = (enum sim_pos)v;
		if (m->pos != SIM_POS_ROPE) {
			m->rotary_base = 0;
		} else {
			get_double_max(r, o, ".model", "rotary_base", 1, 1e9, 0, &m->rotary_base);
			get_double_max(r, o, ".model", "rotary_percent", 0.01, 1, 0,
				       &m->rotary_percent);
			v = 0;
			get_enum(r, o, ".model", "rope_scaling", sim_rope_scaling_names, 4, 0, &v);
			m->rope_scaling = (enum sim_rope_scaling)v;
			get_double_max(r, o, ".model", "rope_factor", 1, 1000, v != SIM_ROPE_NONE,
				       &m->rope_factor);
			get_double_max(r, o, ".model", "rope_mscale", 0, 100, 0, &m->rope_mscale);
			get_double_max(r, o, ".model", "rope_mscale_all_dim", 0, 100, 0,
				       &m->rope_mscale_all_dim);
		}
		v = m->norm;
		get_enum(r, o, ".model", "norm", sim_norm_names, 2, 0, &v);
		m->norm = (enum sim_norm)v;
		get_bool(r, o, ".model", "linear_bias", 0, &m->linear_bias);
		get_double_max(r, o, ".model", "dropout", 0, 0.999, 0, &m->dropout);
		get_name(r, o, ".model", "tokenizer", 0, m->tokenizer, sizeof(m->tokenizer));
		get_int(r, o, ".model", "sliding_window", 0, SIM_MAX_SEQ, 0, &m->window);
		for (int i = 0; i < SIM_MODEL_FIELDS; i++)
			get_int(r, o, ".model", sim_model_fields[i].key, 0, sim_model_fields[i].max, 0,
				sim_model_field(m, &sim_model_fields[i]));
		get_model_router(r, o, m);
		if (!r->bad && sim_model_check(m, why, sizeof(why)) != RC_OK) {
			gp_error("%s: .model: %s", r->file, why);
			r->bad = 1;
		}
	}

	o = object(r, root, "", "cluster", 1);
	if (o) {
		struct sim_cluster *c = &p->cluster;

		g = object(r, o, ".cluster", "gpu", 1);
		if (g) {
			get_name(r, g, ".cluster.gpu", "name", 1, c->gpu.name, sizeof(c->gpu.name));
			get_double(r, g, ".cluster.gpu", "memory_bytes", 1, 1, &c->gpu.memory_bytes);
			get_double(r, g, ".cluster.gpu", "hbm_bytes_per_s", 0, 0, &c->gpu.hbm_bytes_per_s);
			get_double(r, g, ".cluster.gpu", "bf16_flops_per_s", 1, 1,
				   &c->gpu.bf16_flops_per_s);
			get_double(r, g, ".cluster.gpu", "mfu_flops_per_s", 0, 0, &c->gpu.mfu_flops_per_s);
			get_double(r, g, ".cluster.gpu", "fp8_flops_per_s", 0, 0, &c->gpu.fp8_flops_per_s);
			get_double(r, g, ".cluster.gpu", "mxfp8_flops_per_s", 0, 0,
				   &c->gpu.mxfp8_flops_per_s);
			get_double(r, g, ".cluster.gpu", "nvfp4_flops_per_s", 0, 0,
				   &c->gpu.nvfp4_flops_per_s);
			get_double(r, g, ".cluster.gpu", "tf32_flops_per_s", 0, 0, &c->gpu.tf32_flops_per_s);
			get_double(r, g, ".cluster.gpu", "fp32_flops_per_s", 0, 0, &c->gpu.fp32_flops_per_s);
			get_text(r, g, ".cluster.gpu", "intra_link", 0, c->gpu.intra_link,
				sizeof(c->gpu.intra_link));
			get_double(r, g, ".cluster.gpu", "intra_bytes_per_s", 0, 0,
				   &c->gpu.intra_bytes_per_s);
			get_bool(r, g, ".cluster.gpu", "nvlink", 0, &c->gpu.nvlink);
			get_bool(r, g, ".cluster.gpu", "p2p", 0, &c->gpu.p2p);
			get_double(r, g, ".cluster.gpu", "tdp_w", 0, 0, &c->gpu.tdp_w);
		}
		get_int(r, o, ".cluster", "gpus_per_node", 1, SIM_MAX_DEGREE, 1, &c->gpus_per_node);
		get_int(r, o, ".cluster", "nodes", 0, 1 << 24, 0, &p->nodes);
		get_double(r, o, ".cluster", "intra_bytes_per_s", 0, 0, &c->intra_bytes_per_s);
		get_double(r, o, ".cluster", "inter_bytes_per_s", 0, 0, &c->inter_bytes_per_s);
		get_int(r, o, ".cluster", "nvlink_domain", 0, PRICE_MAX_NVLINK_DOMAIN, 0,
			&c->nvlink_domain);
		get_double(r, o, ".cluster", "latency_s", 0, 0, &c->latency_s);
		get_double(r, o, ".cluster", "host_layer_s", -1, 0, &c->host_layer_s);
		g = object(r, o, ".cluster", "host", 0);
		if (g) {
			get_double(r, g, ".cluster.host", "memory_bytes", 0, 0, &c->host.memory_bytes);
			get_double_max(r, g, ".cluster.host", "cpu_cores", 0, PRICE_HOST_MAX_CORES, 0,
				       &c->host.cpu_cores);
			get_double(r, g, ".cluster.host", "pcie_bytes_per_s", 0, 0,
				   &c->host.pcie_bytes_per_s);
			get_double(r, g, ".cluster.host", "nvme_bytes_per_s", 0, 0,
				   &c->host.nvme_bytes_per_s);
		}
	}

	o = object(r, root, "", "offering", 0);
	if (o) {
		struct price_offering *f = &p->offering;

		get_name(r, o, ".offering", "provider", 1, f->provider, sizeof(f->provider));
		get_name(r, o, ".offering", "instance_type", 0, f->instance_type,
			sizeof(f->instance_type));
		get_name(r, o, ".offering", "gpu", 0, f->gpu, sizeof(f->gpu));
		get_int(r, o, ".offering", "gpus_per_node", 0, PRICE_GPUS_PER_NODE_MAX, 0, &f->gpus_per_node);
		get_name(r, o, ".offering", "region", 0, f->region, sizeof(f->region));
		f->on_demand_usd_per_hour = f->spot_usd_per_hour = -1;
		/* the ranges of prices.csv (price.h), -1 for "not offered" */
		get_double_max(r, o, ".offering", "on_demand_usd_per_hour", -1,
			       PRICE_USD_PER_HOUR_MAX, 0, &f->on_demand_usd_per_hour);
		get_double_max(r, o, ".offering", "spot_usd_per_hour", -1, PRICE_USD_PER_HOUR_MAX,
			       0, &f->spot_usd_per_hour);
		get_double_max(r, o, ".offering", "inter_node_bytes_per_s", 0,
			       price_gbps_to_bytes_per_s(PRICE_GBPS_MAX), 0,
			       &f->inter_node_bytes_per_s);
		get_int(r, o, ".offering", "max_nodes", 0, PRICE_MAX_NODES_MAX, 0, &f->max_nodes);
		get_text(r, o, ".offering", "version", 0, f->version, sizeof(f->version));
		read_price_date(r, o, f);
		get_bool(r, o, ".offering", "spot", 0, &p->spot);
		read_purchase(r, o, p);
	}

	o = object(r, root, "", "parallel", 1);
	if (o) {
		struct sim_parallel *q = &p->par;

		sim_parallel_init(q);
		get_int(r, o, ".parallel", "tp", 1, SIM_MAX_DEGREE, 1, &q->tp);
		get_int(r, o, ".parallel", "pp", 1, SIM_MAX_DEGREE, 1, &q->pp);
		get_int(r, o, ".parallel", "dp", 1, SIM_MAX_DP, 1, &q->dp);
		get_int(r, o, ".parallel", "cp", 1, SIM_MAX_DEGREE, 0, &q->cp);
		/* optional: a plan written before them has no experts to split */
		get_int(r, o, ".parallel", "ep", 1, SIM_MAX_DEGREE, 0, &q->ep);
		get_int(r, o, ".parallel", "etp", 1, SIM_MAX_DEGREE, 0, &q->etp);
		get_double_max(r, o, ".parallel", "moe_imbalance", 1, 1000, 0, &q->moe_imbalance);
		get_bool(r, o, ".parallel", "ep_overlap", 0, &q->ep_overlap);
		get_enum(r, o, ".parallel", "ep_dispatcher", sim_ep_dispatcher_names, 2, 0,
			 &q->ep_flex);
		get_int(r, o, ".parallel", "mbs", 1, SIM_MAX_MBS, 1, &q->mbs);
		get_int(r, o, ".parallel", "gbs", 1, SIM_MAX_GBS, 1, &q->gbs);
		get_int(r, o, ".parallel", "zero", 0, 3, 0, &q->zero);
		v = 0;
		get_enum(r, o, ".parallel", "recompute", sim_recompute_names, 3, 1, &v);
		q->recompute = (enum sim_recompute)v;
		/* optional: plans written before them recompute no module and
		 * keep fp32 moments */
		get_modules(r, o, ".parallel", "recompute_modules", &q->recompute_modules);
		v = 0;
		get_enum(r, o, ".parallel", "optimizer_moments", sim_opt_state_names, 4, 0, &v);
		q->opt_states = (enum sim_opt_states)v;
		/* optional: plans written before it priced Megatron-LM's */
		v = 0;
		get_enum(r, o, ".parallel", "loss", sim_loss_names, 3, 0, &v);
		q->loss = (enum sim_loss)v;
		get_int(r, o, ".parallel", "interleave", 1, SIM_MAX_DEGREE, 0, &q->interleave);
		/* optional: the simulator's split when absent */
		get_int(r, o, ".parallel", "pp_last_layers", 0, SIM_MAX_LAYERS, 0, &q->pp_last_layers);
		get_bool(r, o, ".parallel", "seq_parallel", 0, &q->seq_parallel);
		get_bool(r, o, ".parallel", "flash", 0, &q->flash);
		v = 0;
		get_enum(r, o, ".parallel", "precision", sim_precision_names, 4, 1, &v);
		q->precision = (enum sim_precision)v;
		get_bool(r, o, ".parallel", "tp_overlap", 0, &q->tp_overlap);
		/* Optional: plans written before these fields existed keep
		 * sim_parallel_init's (gathers by block, ZeRO-2 once a step,
		 * every DP collective overlapped, the architecture's attention
		 * kernel). */
		v = q->attn_kernel;
		get_enum(r, o, ".parallel", "attn_kernel", sim_attn_kernel_names, 5, 0, &v);
		q->attn_kernel = (enum sim_attn_kernel)v;
		v = q->moe_gemm;
		get_enum(r, o, ".parallel", "moe_gemm", sim_moe_gemm_names, 3, 0, &v);
		q->moe_gemm = (enum sim_moe_gemm)v;
		/* the release named (SIM_STACK_UNSTATED where none is) */
		v = q->stack - 1;
		get_enum(r, o, ".parallel", "stack", sim_stack_names + 1, 2, 0, &v);
		q->stack = (enum sim_stack)(v + 1);
		v = q->zero3_gather;
		get_enum(r, o, ".parallel", "zero3_gather", sim_zero3_gather_names, 2, 0, &v);
		q->zero3_gather = (enum sim_zero3_gather)v;
		get_enum(r, o, ".parallel", "zero2_reduce", sim_zero2_reduce_names, 2, 0,
			 &q->zero2_every_micro_batch);
		get_enum(r, o, ".parallel", "pp_send", sim_pp_send_names, 2, 0,
			 &q->pp_send_whole);
		get_bool(r, o, ".parallel", "fp8_param_gather", 0, &q->fp8_param_gather);
		v = q->dp_overlap;
		get_enum(r, o, ".parallel", "dp_overlap", sim_dp_overlap_names, 3, 0, &v);
		q->dp_overlap = (enum sim_dp_overlap)v;
		if (cJSON_GetObjectItemCaseSensitive(o, "grad_bytes")) {
			v = 2;
			get_int(r, o, ".parallel", "grad_bytes", 1, 8, 0, &v);
			q->grad_bytes_per_param = v;
		}
		if (!r->bad && sim_parallel_gpus(q) > SIM_MAX_GPUS) {
			gp_error("%s: .parallel: expected tp x pp x dp x cp of at most %d GPUs, "
				 "found %.0f", r->file, SIM_MAX_GPUS, sim_parallel_gpus(q));
			r->bad = 1;
		}
	}

	o = object(r, root, "", "finetune", 0);
	if (o && !r->bad) {
		struct sim_finetune *ft = &p->par.ft;
		char t[128] = "";

		v = 0;
		get_enum(r, o, ".finetune", "method", sim_ft_method_names, 4, 1, &v);
		ft->method = (enum sim_ft_method)v;
		get_int(r, o, ".finetune", "lora_rank", 1, SIM_LORA_MAX_RANK, 0, &ft->lora_rank);
		get_str(r, o, ".finetune", "lora_targets", 0, t, sizeof(t));
		if (!r->bad && t[0] && sim_lora_targets_parse(t, &ft->lora_targets) != RC_OK) {
			gp_error("%s: .finetune.lora_targets: expected all or projections among "
				 "q, k, v, o, gate, up, down separated by ',', found \"%s\"", r->file, t);
			r->bad = 1;
		}
		v = 0;
		get_enum(r, o, ".finetune", "offload", sim_offload_names, 3, 0, &v);
		ft->offload = (enum sim_offload)v;
	}

	o = object(r, root, "", "job", 0);
	if (o) {
		get_double(r, o, ".job", "tokens", 0, 0, &p->tokens);
		get_double(r, o, ".job", "epochs", 0, 0, &p->epochs);
		get_double(r, o, ".job", "dataset_tokens", 0, 0, &p->dataset_tokens);
		get_double(r, o, ".job", "usd_per_gpu_hour", 0, 0, &p->usd_per_gpu_hour);
		get_double(r, o, ".job", "checkpoint_interval_s", 0, 0, &p->ckpt_interval_s);
	}
	o = object(r, root, "", "costs", 0);
	if (o) {
		get_double(r, o, ".costs", "checkpoint_interval_s", 0, 0, &p->ckpt_interval_s);
		get_int(r, o, ".costs", "checkpoints_kept", 0, 1 << 20, 0, &p->ckpt_keep);
	}
	o = object(r, root, "", "interruptions", 0);
	if (o)
		read_interrupts(r, o, &p->interrupts);
	o = object(r, root, "", "inputs", 0);
	if (o) {
		get_text(r, o, ".inputs", "command", 0, p->command, sizeof(p->command));
		get_text(r, o, ".inputs", "catalog_digest", 0, p->catalog_digest,
			sizeof(p->catalog_digest));
		p->framework = 0;
		get_enum(r, o, ".inputs", "framework", sim_plan_framework_names + 1, 3, 0,
			 &p->framework);
		if (cJSON_GetObjectItemCaseSensitive(o, "framework"))
			p->framework++;
	}
	read_assumptions(r, cJSON_GetObjectItemCaseSensitive(root, "assumptions"), p);
	o = object(r, root, "", "prediction", 0);
	if (o)
		read_prediction(r, o, p);
}

enum rc sim_plan_parse(const char *name, const char *buf, size_t len, struct sim_plan *out)
{
	struct reader r = { name, 0 };
	struct sim_plan p;
	cJSON *root;

	root = gp_json_parse(name, buf, len);
	if (!root)
		return RC_INPUT;
	if (!cJSON_IsObject(root)) {
		gp_error("%s: expected a JSON object at the top level", name);
		cJSON_Delete(root);
		return RC_INPUT;
	}
	memset(&p, 0, sizeof(p));
	read_plan(&r, root, &p);
	cJSON_Delete(root);
	if (r.bad)
		return RC_INPUT;
	if (!p.nodes)
		p.nodes = (int)ceil(sim_parallel_gpus(&p.par) / p.cluster.gpus_per_node);
	*out = p;
	return RC_OK;
}

enum rc sim_plan_read(const char *path, struct sim_plan *out)
{
	char *buf;
	size_t len;
	enum rc rc = gp_read_file(path, &buf, &len);

	if (rc != RC_OK)
		return rc;
	rc = sim_plan_parse(path, buf, len, out);
	free(buf);
	return rc;
}
