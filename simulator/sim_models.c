/*
 * sim_models.c - model presets (data/models.csv): load and validate the
 * table, find a preset by name.  Shapes only; the parameter and FLOP counts
 * derived from them are in sim_shape.c.
 *
 * Every bad cell gets one "models.csv:line:col: column: expected X, found
 * Y" line.  Columns are found by header name; kv_heads defaults to heads,
 * ffn_hidden to 4 x hidden (GPT-2/3 style), mlp to gelu, tied_embeddings
 * to 0, global_batch_seqs and published_params_b to "unknown" (0).
 * The architecture facts default to a Llama-style model's
 * (sim_model_facts_init): position_embedding rope, rotary_base 10000
 * and rotary_percent all (with rope; empty otherwise), rope_scaling none
 * (none, linear, llama3 or yarn, with rope_factor and YaRN's rope_mscale
 * and rope_mscale_all_dim as the config states them; empty: unstated),
 * norm rmsnorm,
 * linear_bias 0, dropout 0, tokenizer unknown, sliding_window 0 (none).
 * The other architecture, attention and mixture-of-experts columns are
 * empty for a dense model with plain multi-head attention:
 * parallel_residual and embedding_norm (0/1), head_dim (default hidden /
 * heads), window_full_every, attention_sinks (0/1), q_lora_rank,
 * kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim
 * (multi-head latent attention), experts, top_k, expert_ffn_hidden,
 * shared_experts, shared_ffn_hidden, dense_layers, router_pre_softmax
 * (0/1), mtp_layers,
 * published_active_params_b; the router's recipe: router_score (softmax
 * or sigmoid), router_balance (aux_loss, seq_aux_loss, global_aux_loss or
 * none; empty: unknown), router_aux_coeff, router_expert_bias (0/1),
 * router_bias_rate, router_groups, router_group_topk, router_topk_scale;
 * qk_norm (0/1); the gated MLP's glu_act (silu or quick_gelu), glu_offset
 * and glu_clamp; tokenizer_gated (0/1); sim_model_check says which go
 * together.
 *
 * It calls down only: sim_shape.c and sim_names.c.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_csv.h"
#include "sim.h"

#define F(column, key, flag, field, max) { column, key, flag, offsetof(struct sim_model, field), max }
const struct sim_model_field sim_model_fields[SIM_MODEL_FIELDS] = {
	F("parallel_residual", "parallel_residual", "--parallel-residual", parallel_residual, 1),
	F("embedding_norm", "embedding_norm", "--embedding-norm", embedding_norm, 1),
	F("window_full_every", "window_full_every", "--window-full-every", window_full_every,
	  SIM_MAX_LAYERS),
	F("head_dim", "head_dim", "--head-dim", head_dim, SIM_MAX_RANK),
	F("attention_sinks", "attention_sinks", "--attention-sinks", attn_sinks, 1),
	F("q_lora_rank", "q_lora_rank", "--q-lora-rank", q_lora_rank, SIM_MAX_RANK),
	F("kv_lora_rank", "kv_lora_rank", "--kv-lora-rank", kv_lora_rank, SIM_MAX_RANK),
	F("qk_nope_head_dim", "qk_nope_head_dim", "--qk-nope-dim", qk_nope_dim, SIM_MAX_RANK),
	F("qk_rope_head_dim", "qk_rope_head_dim", "--qk-rope-dim", qk_rope_dim, SIM_MAX_RANK),
	F("v_head_dim", "v_head_dim", "--v-head-dim", v_head_dim, SIM_MAX_RANK),
	F("experts", "experts", "--experts", experts, SIM_MAX_EXPERTS),
	F("top_k", "top_k", "--top-k", top_k, SIM_MAX_EXPERTS),
	F("expert_ffn_hidden", "expert_ffn", "--expert-ffn", expert_ffn, SIM_MAX_FFN),
	F("shared_experts", "shared_experts", "--shared-experts", shared_experts, SIM_MAX_EXPERTS),
	F("shared_ffn_hidden", "shared_ffn", "--shared-ffn", shared_ffn, SIM_MAX_FFN),
	F("dense_layers", "dense_layers", "--dense-layers", dense_layers, SIM_MAX_LAYERS),
	F("router_pre_softmax", "router_pre_softmax", "--router-pre-softmax", router_pre_softmax, 1),
	F("mtp_layers", "mtp_layers", "--mtp-layers", mtp_layers, SIM_MAX_LAYERS),
};
#undef F

struct cols {
	int name, layers, hidden, heads, kv_heads, ffn, vocab, seq, mlp, tied, gbs, params;
	int pos, rotary, rotary_pct, norm, bias, dropout, tokenizer, window, active;
	int rope_scaling, rope_factor, rope_mscale, rope_mscale_all;
	int fields[SIM_MODEL_FIELDS];   /* sim_model_fields' columns */
	int score, balance, aux, ebias, bias_rate, groups, group_topk, scale, qk_norm;
	int glu_act, glu_offset, glu_clamp, gated;
};

struct ctx {
	const char *path;
	const struct price_csv *csv;
	const struct price_csv_row *row;
	int errors;
};

static void bad(struct ctx *c, int col, const char *what, const char *found)
{
	c->errors++;
	gp_error("%s:%d:%d: %s: expected %s, found '%s'", c->path, c->row->line, col + 1,
		 c->csv->header.field[col], what, found);
}

static int get_int(struct ctx *c, int col, int min, int max, int fallback, int *out)
{
	const char *s = price_csv_get(c->row, col);
	char what[64];
	int v;

	if (col < 0 || !*s) {
		if (fallback >= 0) {
			*out = fallback;
			return 0;
		}
		if (col < 0)
			return -1;
	}
	if (unit_parse_int(s, &v) != RC_OK || v < min || v > max) {
		snprintf(what, sizeof(what), "an integer from %d to %d", min, max);
		bad(c, col, what, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* A 0/1 cell into *out: 0 when empty or the column is absent. */
static void get_flag(struct ctx *c, int col, int *out)
{
	const char *s = price_csv_get(c->row, col);

	if (!*s || strcmp(s, "0") == 0)
		*out = 0;
	else if (strcmp(s, "1") == 0)
		*out = 1;
	else
		bad(c, col, "0 or 1", s);
}

static struct cols find_cols(const struct price_csv *csv)
{
	struct cols k;

	k.name = price_csv_col(csv, "name");
	k.layers = price_csv_col(csv, "layers");
	k.hidden = price_csv_col(csv, "hidden");
	k.heads = price_csv_col(csv, "heads");
	k.kv_heads = price_csv_col(csv, "kv_heads");
	k.ffn = price_csv_col(csv, "ffn_hidden");
	k.vocab = price_csv_col(csv, "vocab");
	k.seq = price_csv_col(csv, "seq_len");
	k.mlp = price_csv_col(csv, "mlp");
	k.tied = price_csv_col(csv, "tied_embeddings");
	k.gbs = price_csv_col(csv, "global_batch_seqs");
	k.params = price_csv_col(csv, "published_params_b");
	k.pos = price_csv_col(csv, "position_embedding");
	k.rotary = price_csv_col(csv, "rotary_base");
	k.norm = price_csv_col(csv, "norm");
	k.bias = price_csv_col(csv, "linear_bias");
	k.dropout = price_csv_col(csv, "dropout");
	k.tokenizer = price_csv_col(csv, "tokenizer");
	k.window = price_csv_col(csv, "sliding_window");
	k.rotary_pct = price_csv_col(csv, "rotary_percent");
	k.rope_scaling = price_csv_col(csv, "rope_scaling");
	k.rope_factor = price_csv_col(csv, "rope_factor");
	k.rope_mscale = price_csv_col(csv, "rope_mscale");
	k.rope_mscale_all = price_csv_col(csv, "rope_mscale_all_dim");
	k.active = price_csv_col(csv, "published_active_params_b");
	for (int i = 0; i < SIM_MODEL_FIELDS; i++)
		k.fields[i] = price_csv_col(csv, sim_model_fields[i].column);
	k.score = price_csv_col(csv, "router_score");
	k.balance = price_csv_col(csv, "router_balance");
	k.aux = price_csv_col(csv, "router_aux_coeff");
	k.ebias = price_csv_col(csv, "router_expert_bias");
	k.bias_rate = price_csv_col(csv, "router_bias_rate");
	k.groups = price_csv_col(csv, "router_groups");
	k.group_topk = price_csv_col(csv, "router_group_topk");
	k.scale = price_csv_col(csv, "router_topk_scale");
	k.qk_norm = price_csv_col(csv, "qk_norm");
	k.glu_act = price_csv_col(csv, "glu_act");
	k.glu_offset = price_csv_col(csv, "glu_offset");
	k.glu_clamp = price_csv_col(csv, "glu_clamp");
	k.gated = price_csv_col(csv, "tokenizer_gated");
	return k;
}

/* One of names[0..n) (case-insensitive) into *out, or fallback when the
 * cell is empty or the column absent. */
static void get_enum(struct ctx *c, int col, const char *const *names, int n, int fallback,
		     int *out)
{
	const char *s = price_csv_get(c->row, col);
	char what[96] = "";

	*out = fallback;
	if (col < 0 || !*s)
		return;
	for (int i = 0; i < n; i++) {
		if (gp_streq_nocase(s, names[i])) {
			*out = i;
			return;
		}
		snprintf(what + strlen(what), sizeof(what) - strlen(what), "%s%s",
			 i ? (i == n - 1 ? " or " : ", ") : "", names[i]);
	}
	bad(c, col, what, s);
}

static void get_num(struct ctx *c, int col, double lo, double hi, double *out);

/* RoPE's scaling columns of the row into m: empty without rope, the
 * factor with a scaling, mscale and mscale_all_dim with YaRN only. */
static void read_rope(struct ctx *c, const struct cols *k, struct sim_model *m)
{
	const int cols[4] = { k->rope_scaling, k->rope_factor, k->rope_mscale,
			      k->rope_mscale_all };
	int v;

	if (m->pos != SIM_POS_ROPE) {
		for (int i = 0; i < 4; i++)
			if (*price_csv_get(c->row, cols[i]))
				bad(c, cols[i], "an empty cell without rope",
				    price_csv_get(c->row, cols[i]));
		return;
	}
	get_enum(c, k->rope_scaling, sim_rope_scaling_names, 4, SIM_ROPE_NONE, &v);
	m->rope_scaling = (enum sim_rope_scaling)v;
	if (m->rope_scaling == SIM_ROPE_NONE) {
		if (*price_csv_get(c->row, k->rope_factor))
			bad(c, k->rope_factor, "an empty cell without rope_scaling",
			    price_csv_get(c->row, k->rope_factor));
	} else {
		get_num(c, k->rope_factor, 1, 1000, &m->rope_factor);
		if (m->rope_factor == 0)
			bad(c, k->rope_factor, "a factor from 1 to 1000 with rope_scaling", "");
	}
	if (m->rope_scaling == SIM_ROPE_YARN) {
		get_num(c, k->rope_mscale, 0, 100, &m->rope_mscale);
		get_num(c, k->rope_mscale_all, 0, 100, &m->rope_mscale_all_dim);
		return;
	}
	for (int i = 2; i < 4; i++)
		if (*price_csv_get(c->row, cols[i]))
			bad(c, cols[i], "an empty cell without yarn rope_scaling",
			    price_csv_get(c->row, cols[i]));
}

/* The architecture facts of the row into m (the file's comment gives the
 * defaults). */
static void read_facts(struct ctx *c, const struct cols *k, struct sim_model *m)
{
	const char *s;
	int v;
	double d;

	sim_model_facts_init(m);
	get_enum(c, k->pos, sim_pos_names, 3, SIM_POS_ROPE, &v);
	m->pos = (enum sim_pos)v;
	get_enum(c, k->norm, sim_norm_names, 2, SIM_NORM_RMSNORM, &v);
	m->norm = (enum sim_norm)v;
	s = price_csv_get(c->row, k->rotary);
	if (m->pos != SIM_POS_ROPE) {
		m->rotary_base = 0;
		if (*s)
			bad(c, k->rotary, "an empty cell without rope", s);
	} else if (*s) {
		/* Megatron-LM takes an integer (--rotary-base, type=int) */
		if (unit_parse_int(s, &v) != RC_OK || v < 1)
			bad(c, k->rotary, "an integer >= 1", s);
		else
			m->rotary_base = v;
	}
	s = price_csv_get(c->row, k->rotary_pct);
	if (m->pos != SIM_POS_ROPE) {
		if (*s)
			bad(c, k->rotary_pct, "an empty cell without rope", s);
	} else if (*s) {
		/* Megatron-LM's --rotary-percent; GPT-NeoX's rotary_pct */
		if (unit_parse_double(s, &d) != RC_OK || !(d >= 0.01 && d <= 1))
			bad(c, k->rotary_pct, "a share of the head's dimensions from 0.01 to 1", s);
		else
			m->rotary_percent = d;
	}
	read_rope(c, k, m);
	get_flag(c, k->bias, &m->linear_bias);
	s = price_csv_get(c->row, k->dropout);
	if (*s) {
		if (unit_parse_double(s, &d) != RC_OK || !(d >= 0 && d < 1))
			bad(c, k->dropout, "a probability from 0 to below 1", s);
		else
			m->dropout = d;
	}
	s = price_csv_get(c->row, k->tokenizer);
	if (*s && !gp_name_is_safe(s, strlen(s), NULL))
		bad(c, k->tokenizer, "a name of letters, digits and '" GP_NAME_PUNCT "'", s);
	else if (gp_strlcpy(m->tokenizer, s, sizeof(m->tokenizer)) != 0)
		bad(c, k->tokenizer, "a name of at most 63 characters", s);
	get_int(c, k->window, 0, SIM_MAX_SEQ, 0, &m->window);
}

/* The attention, multi-head latent attention and mixture-of-experts
 * columns of the row into m (empty: 0, none). */
static void read_moe(struct ctx *c, const struct cols *k, struct sim_model *m)
{
	const char *s;
	double v;

	for (int i = 0; i < SIM_MODEL_FIELDS; i++)
		get_int(c, k->fields[i], 0, sim_model_fields[i].max, 0,
			sim_model_field(m, &sim_model_fields[i]));
	s = price_csv_get(c->row, k->active);
	if (*s) {
		if (unit_parse_double(s, &v) != RC_OK || v <= 0)
			bad(c, k->active, "a parameter count in billions > 0", s);
		else
			m->published_active_params = v * 1e9;
	}
}

/* A number from lo to hi into *out, 0 when the cell is empty or the
 * column absent. */
static void get_num(struct ctx *c, int col, double lo, double hi, double *out)
{
	const char *s = price_csv_get(c->row, col);
	char what[64];
	double v;

	*out = 0;
	if (col < 0 || !*s)
		return;
	if (unit_parse_double(s, &v) != RC_OK || !(v >= lo && v <= hi)) {
		snprintf(what, sizeof(what), "a number from %g to %g", lo, hi);
		bad(c, col, what, s);
		return;
	}
	*out = v;
}

/* The router's and the gated activation's columns of the row into m
 * (empty: softmax, balancing unknown, no bias, groups or scaling; no q/k
 * norm; SiLU without offset or clamp). */
static void read_router(struct ctx *c, const struct cols *k, struct sim_model *m)
{
	int v;

	get_enum(c, k->score, sim_router_score_names, 2, SIM_ROUTER_SOFTMAX, &v);
	m->router_score = (enum sim_router_score)v;
	get_enum(c, k->balance, sim_balance_names, 5, SIM_BALANCE_UNKNOWN, &v);
	m->router_balance = (enum sim_balance)v;
	get_num(c, k->aux, 0, 10, &m->router_aux_coeff);
	get_flag(c, k->ebias, &m->router_expert_bias);
	get_num(c, k->bias_rate, 0, 1, &m->router_bias_rate);
	get_int(c, k->groups, 0, SIM_MAX_EXPERTS, 0, &m->router_groups);
	get_int(c, k->group_topk, 0, SIM_MAX_EXPERTS, 0, &m->router_group_topk);
	get_num(c, k->scale, 0, 1000, &m->router_topk_scale);
	get_flag(c, k->qk_norm, &m->qk_norm);
	get_enum(c, k->glu_act, sim_glu_act_names, 2, SIM_GLU_SILU, &v);
	m->glu_act = (enum sim_glu_act)v;
	get_num(c, k->glu_offset, 0, 100, &m->glu_offset);
	get_num(c, k->glu_clamp, 0, 1e6, &m->glu_clamp);
	get_flag(c, k->gated, &m->tokenizer_gated);
}

static int read_model(struct ctx *c, const struct cols *k, struct sim_model *m)
{
	int errs = c->errors;
	const char *s;
	char why[160];
	double v;

	memset(m, 0, sizeof(*m));
	s = price_csv_get(c->row, k->name);
	if (!*s)
		bad(c, k->name, "a model name", s);
	else if (!gp_name_is_safe(s, strlen(s), NULL))
		bad(c, k->name, "a name of letters, digits and '" GP_NAME_PUNCT "'", s);
	else if (gp_strlcpy(m->name, s, sizeof(m->name)) != 0)
		bad(c, k->name, "a name of at most 63 characters", s);
	get_int(c, k->layers, 1, SIM_MAX_LAYERS, -1, &m->layers);
	get_int(c, k->hidden, 1, SIM_MAX_HIDDEN, -1, &m->hidden);
	get_int(c, k->heads, 1, SIM_MAX_HEADS, -1, &m->heads);
	get_int(c, k->vocab, 1, SIM_MAX_VOCAB, -1, &m->vocab);
	get_int(c, k->seq, 1, SIM_MAX_SEQ, -1, &m->seq);
	if (c->errors != errs)
		return -1;
	get_int(c, k->kv_heads, 1, SIM_MAX_HEADS, m->heads, &m->kv_heads);
	get_int(c, k->ffn, 1, SIM_MAX_FFN, 4 * m->hidden, &m->ffn);
	get_int(c, k->gbs, 0, SIM_MAX_GBS, 0, &m->gbs);
	s = price_csv_get(c->row, k->mlp);
	if (!*s || gp_streq_nocase(s, "gelu"))
		m->mlp = SIM_MLP_GELU;
	else if (gp_streq_nocase(s, "swiglu"))
		m->mlp = SIM_MLP_SWIGLU;
	else
		bad(c, k->mlp, "gelu or swiglu", s);
	get_flag(c, k->tied, &m->tied_embeddings);
	s = price_csv_get(c->row, k->params);
	if (*s) {
		if (unit_parse_double(s, &v) != RC_OK || v <= 0)
			bad(c, k->params, "a parameter count in billions > 0", s);
		else
			m->published_params = v * 1e9;
	}
	if (c->errors != errs)
		return -1;
	read_facts(c, k, m);
	read_moe(c, k, m);
	read_router(c, k, m);
	if (c->errors != errs)
		return -1;
	/* Multi-head attention splits hidden evenly over the heads unless the
	 * row gives the head width, grouped-query attention shares each K/V
	 * head among heads/kv_heads query heads (Ainslie et al. 2023), and
	 * the MoE and MLA columns go together: the simulator's own rules. */
	if (sim_model_check(m, why, sizeof(why)) != RC_OK) {
		c->errors++;
		gp_error("%s:%d: %s: %s", c->path, c->row->line, m->name, why);
	}
	return c->errors != errs ? -1 : 0;
}

enum rc sim_model_table_load(struct sim_model_table *t, const char *path)
{
	static const char *const need[] = { "name", "layers", "hidden", "heads", "vocab", "seq_len" };
	struct price_csv csv;
	struct ctx c;
	struct cols k;
	enum rc rc;

	memset(t, 0, sizeof(*t));
	rc = price_csv_load(path, &csv);
	if (rc != RC_OK)
		return rc;
	memset(&c, 0, sizeof(c));
	c.path = path;
	c.csv = &csv;
	if (csv.header.n == 0) {
		gp_error("%s:1:1: expected a header row naming the model columns, found an empty file", path);
		price_csv_release(&csv);
		return RC_INPUT;
	}
	for (size_t i = 0; i < GP_ARRAY_LEN(need); i++)
		if (price_csv_col(&csv, need[i]) < 0) {
			gp_error("%s:%d:%d: expected a column named '%s', found none", path,
				 csv.header.line, csv.header.n + 1, need[i]);
			c.errors++;
		}
	if (c.errors) {
		price_csv_release(&csv);
		return RC_INPUT;
	}
	k = find_cols(&csv);
	t->models = xcalloc(csv.n_rows ? csv.n_rows : 1, sizeof(*t->models));
	for (size_t i = 0; i < csv.n_rows; i++) {
		struct sim_model *m = &t->models[t->n];

		c.row = &csv.rows[i];
		if (read_model(&c, &k, m) != 0)
			continue;
		if (sim_model_find(t, m->name)) {
			bad(&c, k.name, "a name not used by an earlier row", m->name);
			continue;
		}
		t->n++;
	}
	price_csv_release(&csv);
	if (c.errors) {
		sim_model_table_release(t);
		return RC_INPUT;
	}
	return RC_OK;
}

void sim_model_table_release(struct sim_model_table *t)
{
	if (!t)
		return;
	free(t->models);
	memset(t, 0, sizeof(*t));
}

int sim_model_gbs(const struct sim_model *m)
{
	double seqs = 4194304.0 / (m->seq > 0 ? m->seq : 2048);
	int g = 1;

	if (m->gbs > 0)
		return m->gbs;
	while (g * 2 <= seqs)
		g *= 2;
	return g;
}

int sim_model_suggest(const struct sim_model_table *t, const char *name, char *buf,
		      size_t size)
{
	size_t best = (size_t)-1;

	buf[0] = '\0';
	for (size_t i = 0; t && name && i < t->n; i++) {
		const char *m = t->models[i].name;
		size_t d = gp_edit_distance(name, strlen(name), m, strlen(m), gp_fold_name);

		if (d < best) {
			best = d;
			snprintf(buf, size, "%s", m);
		}
	}
	if (!name || best > gp_suggest_limit(name)) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

const struct sim_model *sim_model_find(const struct sim_model_table *t, const char *name)
{
	for (size_t i = 0; t && name && i < t->n; i++)
		if (gp_streq_nocase(t->models[i].name, name))
			return &t->models[i];
	return NULL;
}
