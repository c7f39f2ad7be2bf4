/*
 * exec_ckpt_json.c - a checkpoint's manifest.json (schema
 * "gpuplan.checkpoint/1"): the step, what the checkpoint is of (model,
 * layout, seed) and each rank's shard.  The only checkpoint file that
 * includes cJSON; the directory and the shards are exec_ckpt.c's.
 *
 * Keys, in order: schema, step, model {name, layers, hidden, heads,
 * kv_heads, ffn, vocab, seq, mlp, norm, tied_embeddings}, layout {ranks,
 * tp, pp, dp, cp, zero, interleave, mbs, gbs}, lora {rank, targets,
 * alpha} (a LoRA run's only), backend, precision (absent from a manifest
 * written before gpuplan recorded them), seed, data {path, bytes, mtime_s,
 * mtime_nsec, fnv1a64}
 * (null: synthetic data), optimizer {lr, beta1, beta2, eps, weight_decay,
 * grad_clip}, steps, shards [{rank, file, bytes, fnv1a64 (16 hex
 * digits)}].
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "train/exec_train.h"

void exec_ckpt_manifest_release(struct exec_ckpt_manifest *m)
{
	if (!m)
		return;
	free(m->shards);
	memset(m, 0, sizeof(*m));
}

char *exec_ckpt_manifest_to_json(const struct exec_ckpt_manifest *m)
{
	cJSON *root = cJSON_CreateObject(), *o, *a;
	const struct sim_parallel *p = &m->par;
	char *text;

	cJSON_AddStringToObject(root, "schema", EXEC_CKPT_SCHEMA);
	cJSON_AddNumberToObject(root, "step", m->step);
	o = cJSON_AddObjectToObject(root, "model");
	cJSON_AddStringToObject(o, "name", m->model.name);
	cJSON_AddNumberToObject(o, "layers", m->model.layers);
	cJSON_AddNumberToObject(o, "hidden", m->model.hidden);
	cJSON_AddNumberToObject(o, "heads", m->model.heads);
	cJSON_AddNumberToObject(o, "kv_heads", m->model.kv_heads);
	cJSON_AddNumberToObject(o, "ffn", m->model.ffn);
	cJSON_AddNumberToObject(o, "vocab", m->model.vocab);
	cJSON_AddNumberToObject(o, "seq", m->model.seq);
	cJSON_AddStringToObject(o, "mlp", sim_mlp_str(m->model.mlp));
	cJSON_AddStringToObject(o, "norm", m->norm == EXEC_NORM_RMS ? "rmsnorm" : "layernorm");
	cJSON_AddBoolToObject(o, "tied_embeddings", m->model.tied_embeddings != 0);
	/* the fields beyond the basic shape (a mixture of experts'), as plan
	 * files name them, those not 0 */
	for (int i = 0; i < SIM_MODEL_FIELDS; i++) {
		int v = *sim_model_field((struct sim_model *)&m->model, &sim_model_fields[i]);

		if (v)
			cJSON_AddNumberToObject(o, sim_model_fields[i].key, v);
	}
	o = cJSON_AddObjectToObject(root, "layout");
	cJSON_AddNumberToObject(o, "ranks", m->world);
	cJSON_AddNumberToObject(o, "tp", p->tp);
	cJSON_AddNumberToObject(o, "pp", p->pp);
	cJSON_AddNumberToObject(o, "dp", p->dp);
	cJSON_AddNumberToObject(o, "cp", p->cp);
	if (p->ep > 1)
		cJSON_AddNumberToObject(o, "ep", p->ep);
	cJSON_AddNumberToObject(o, "zero", p->zero);
	cJSON_AddNumberToObject(o, "interleave", p->interleave);
	cJSON_AddNumberToObject(o, "mbs", p->mbs);
	cJSON_AddNumberToObject(o, "gbs", p->gbs);
	if (p->ft.method == SIM_FT_LORA) {
		char targets[64];

		sim_lora_targets_str(p->ft.lora_targets, targets, sizeof(targets));
		o = cJSON_AddObjectToObject(root, "lora");
		cJSON_AddNumberToObject(o, "rank", p->ft.lora_rank > 0 ? p->ft.lora_rank
								   : SIM_LORA_DEFAULT_RANK);
		cJSON_AddStringToObject(o, "targets", targets);
		cJSON_AddNumberToObject(o, "alpha", m->lora_alpha);
	}
	if (m->backend[0]) {
		cJSON_AddStringToObject(root, "backend", m->backend);
		cJSON_AddStringToObject(root, "precision", exec_precision_str(m->precision));
	}
	cJSON_AddNumberToObject(root, "seed", (double)m->seed);
	if (m->data.synthetic) {
		cJSON_AddNullToObject(root, "data");
	} else {
		char hash[24];

		o = cJSON_AddObjectToObject(root, "data");
		cJSON_AddStringToObject(o, "path", m->data.path);
		cJSON_AddNumberToObject(o, "bytes", (double)m->data.bytes);
		/* in two integers: nanoseconds since 1970 pass a double's 53 bits */
		cJSON_AddNumberToObject(o, "mtime_s", (double)(m->data.mtime_ns / 1000000000LL));
		cJSON_AddNumberToObject(o, "mtime_nsec", (double)(m->data.mtime_ns % 1000000000LL));
		snprintf(hash, sizeof(hash), "%016" PRIx64, m->data.fnv1a64);
		cJSON_AddStringToObject(o, "fnv1a64", hash);
	}
	o = cJSON_AddObjectToObject(root, "optimizer");
	cJSON_AddNumberToObject(o, "lr", m->optim.lr);
	cJSON_AddNumberToObject(o, "beta1", m->optim.beta1);
	cJSON_AddNumberToObject(o, "beta2", m->optim.beta2);
	cJSON_AddNumberToObject(o, "eps", m->optim.adam_eps);
	cJSON_AddNumberToObject(o, "weight_decay", m->optim.weight_decay);
	cJSON_AddNumberToObject(o, "grad_clip", m->optim.grad_clip);
	cJSON_AddNumberToObject(root, "steps", m->steps);
	a = cJSON_AddArrayToObject(root, "shards");
	for (int r = 0; r < m->world; r++) {
		cJSON *s = cJSON_CreateObject();
		char file[32], hash[24];

		snprintf(file, sizeof(file), "rank-%05d.bin", r);
		snprintf(hash, sizeof(hash), "%016" PRIx64, m->shards[r].fnv1a64);
		cJSON_AddNumberToObject(s, "rank", r);
		cJSON_AddStringToObject(s, "file", file);
		cJSON_AddNumberToObject(s, "bytes", (double)m->shards[r].bytes);
		cJSON_AddStringToObject(s, "fnv1a64", hash);
		cJSON_AddItemToArray(a, s);
	}
	text = cJSON_Print(root);
	cJSON_Delete(root);
	return text;
}

/* The parser's state: the first bad field's reason, kept in why. */
struct rd {
	char *why;
	size_t size;
	int bad;
};

static void bad(struct rd *r, const char *where, const char *key, const char *want,
		const cJSON *found)
{
	char f[64];

	if (r->bad)
		return;
	r->bad = 1;
	if (!found)
		snprintf(f, sizeof(f), "nothing");
	else if (cJSON_IsString(found))
		snprintf(f, sizeof(f), "'%.40s'", found->valuestring);
	else if (cJSON_IsNumber(found))
		snprintf(f, sizeof(f), "%.17g", found->valuedouble);
	else
		snprintf(f, sizeof(f), "another type");
	snprintf(r->why, r->size, "%s.%s: expected %s, found %s", where, key, want, f);
}

/* An integer field of o in [lo, hi], into *out. */
static void get_int(struct rd *r, const cJSON *o, const char *where, const char *key,
		    double lo, double hi, long long *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	char want[96];

	snprintf(want, sizeof(want), "an integer from %.0f to %.0f", lo, hi);
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
	    v->valuedouble > hi || v->valuedouble != floor(v->valuedouble)) {
		bad(r, where, key, want, v);
		return;
	}
	*out = (long long)v->valuedouble;
}

static int get_i(struct rd *r, const cJSON *o, const char *where, const char *key, double lo,
		 double hi)
{
	long long v = 0;

	get_int(r, o, where, key, lo, hi, &v);
	return (int)v;
}

/* The same where the field may be absent (a dense model's experts, a
 * layout without expert parallelism): absent, def. */
static int get_opt_i(struct rd *r, const cJSON *o, const char *where, const char *key, double lo,
		     double hi, int def)
{
	return cJSON_GetObjectItemCaseSensitive(o, key) ? get_i(r, o, where, key, lo, hi) : def;
}

static const char *get_str(struct rd *r, const cJSON *o, const char *where, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsString(v)) {
		bad(r, where, key, "a string", v);
		return "";
	}
	return v->valuestring;
}

static const cJSON *get_obj(struct rd *r, const cJSON *o, const char *where, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsObject(v)) {
		bad(r, where, key, "an object", v);
		return NULL;
	}
	return v;
}

static void read_model(struct rd *r, const cJSON *o, struct exec_ckpt_manifest *m)
{
	const char *mlp, *norm;
	const cJSON *tied;

	gp_strlcpy(m->model.name, get_str(r, o, ".model", "name"), sizeof(m->model.name));
	m->model.layers = get_i(r, o, ".model", "layers", 1, 1 << 24);
	m->model.hidden = get_i(r, o, ".model", "hidden", 1, 1 << 24);
	m->model.heads = get_i(r, o, ".model", "heads", 1, 1 << 24);
	m->model.kv_heads = get_i(r, o, ".model", "kv_heads", 1, 1 << 24);
	m->model.ffn = get_i(r, o, ".model", "ffn", 1, 1 << 26);
	m->model.vocab = get_i(r, o, ".model", "vocab", 1, 1 << 24);
	m->model.seq = get_i(r, o, ".model", "seq", 1, 1 << 24);
	mlp = get_str(r, o, ".model", "mlp");
	if (!r->bad && strcmp(mlp, "gelu") != 0 && strcmp(mlp, "swiglu") != 0)
		bad(r, ".model", "mlp", "gelu or swiglu", cJSON_GetObjectItemCaseSensitive(o, "mlp"));
	m->model.mlp = strcmp(mlp, "swiglu") == 0 ? SIM_MLP_SWIGLU : SIM_MLP_GELU;
	norm = get_str(r, o, ".model", "norm");
	if (!r->bad && strcmp(norm, "layernorm") != 0 && strcmp(norm, "rmsnorm") != 0)
		bad(r, ".model", "norm", "layernorm or rmsnorm",
		    cJSON_GetObjectItemCaseSensitive(o, "norm"));
	m->norm = strcmp(norm, "rmsnorm") == 0 ? EXEC_NORM_RMS : EXEC_NORM_LAYER;
	tied = cJSON_GetObjectItemCaseSensitive(o, "tied_embeddings");
	if (!cJSON_IsBool(tied))
		bad(r, ".model", "tied_embeddings", "true or false", tied);
	m->model.tied_embeddings = cJSON_IsTrue(tied);
	for (int i = 0; i < SIM_MODEL_FIELDS; i++)
		*sim_model_field(&m->model, &sim_model_fields[i]) =
			get_opt_i(r, o, ".model", sim_model_fields[i].key, 0, sim_model_fields[i].max, 0);
}

static void read_layout(struct rd *r, const cJSON *o, struct exec_ckpt_manifest *m)
{
	struct sim_parallel *p = &m->par;

	m->world = get_i(r, o, ".layout", "ranks", 1, 1 << 20);
	p->tp = get_i(r, o, ".layout", "tp", 1, 1 << 20);
	p->pp = get_i(r, o, ".layout", "pp", 1, 1 << 20);
	p->dp = get_i(r, o, ".layout", "dp", 1, 1 << 20);
	p->cp = get_i(r, o, ".layout", "cp", 1, 1 << 20);
	p->ep = get_opt_i(r, o, ".layout", "ep", 1, 1 << 20, 1);
	p->zero = get_i(r, o, ".layout", "zero", 0, 3);
	p->interleave = get_i(r, o, ".layout", "interleave", 1, 1 << 20);
	p->mbs = get_i(r, o, ".layout", "mbs", 1, 1 << 30);
	p->gbs = get_i(r, o, ".layout", "gbs", 1, 1 << 30);
	if (!r->bad && (double)p->tp * p->pp * p->dp * p->cp != m->world) {
		r->bad = 1;
		snprintf(r->why, r->size, ".layout.ranks: expected tp x pp x dp x cp = %.0f, "
			 "found %d", (double)p->tp * p->pp * p->dp * p->cp, m->world);
	}
}

static void read_lora(struct rd *r, const cJSON *o, struct exec_ckpt_manifest *m)
{
	const cJSON *alpha = cJSON_GetObjectItemCaseSensitive(o, "alpha");
	const char *targets;

	m->par.ft.method = SIM_FT_LORA;
	m->par.ft.lora_rank = get_i(r, o, ".lora", "rank", 1, SIM_LORA_MAX_RANK);
	targets = get_str(r, o, ".lora", "targets");
	if (!r->bad && sim_lora_targets_parse(targets, &m->par.ft.lora_targets) != RC_OK)
		bad(r, ".lora", "targets", "all or names among q, k, v, o, gate, up, down",
		    cJSON_GetObjectItemCaseSensitive(o, "targets"));
	if (!r->bad && (!cJSON_IsNumber(alpha) || !(alpha->valuedouble > 0) ||
			!isfinite(alpha->valuedouble)))
		bad(r, ".lora", "alpha", "a number > 0", alpha);
	if (!r->bad)
		m->lora_alpha = alpha->valuedouble;
}

/* The backend and precision of the run that wrote the manifest, both or
 * neither (a manifest written before gpuplan recorded them: backend ""). */
static void read_compute(struct rd *r, const cJSON *root, struct exec_ckpt_manifest *m)
{
	const char *backend, *precision;

	if (!cJSON_GetObjectItemCaseSensitive(root, "backend") &&
	    !cJSON_GetObjectItemCaseSensitive(root, "precision"))
		return;
	backend = get_str(r, root, "", "backend");
	if (!r->bad && (!*backend || strlen(backend) >= sizeof(m->backend) ||
			strspn(backend, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(backend)))
		bad(r, "", "backend", "a backend's name (cpu, cuda)",
		    cJSON_GetObjectItemCaseSensitive(root, "backend"));
	precision = get_str(r, root, "", "precision");
	if (!r->bad && exec_precision_parse(precision, &m->precision) != RC_OK)
		bad(r, "", "precision", "bf16 or fp32",
		    cJSON_GetObjectItemCaseSensitive(root, "precision"));
	if (!r->bad)
		gp_strlcpy(m->backend, backend, sizeof(m->backend));
}

/* A 16-hex-digit FNV-1a hash field of o. */
static uint64_t get_hash(struct rd *r, const cJSON *o, const char *where, const char *key)
{
	const char *h = get_str(r, o, where, key);
	uint64_t v;
	char *end;

	if (r->bad)
		return 0;
	v = strtoull(h, &end, 16);
	if (strlen(h) != 16 || *end)
		bad(r, where, key, "16 hex digits", cJSON_GetObjectItemCaseSensitive(o, key));
	return v;
}

/* A number field of o, finite and >= lo. */
static double get_num(struct rd *r, const cJSON *o, const char *where, const char *key,
		      double lo)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	char want[64];

	snprintf(want, sizeof(want), "a finite number >= %g", lo);
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo) {
		bad(r, where, key, want, v);
		return 0;
	}
	return v->valuedouble;
}

static void read_data(struct rd *r, const cJSON *o, struct exec_ckpt_manifest *m)
{
	struct exec_ckpt_data *d = &m->data;
	long long sec = 0, nsec = 0;
	const char *path;
	size_t at;

	if (cJSON_IsNull(o)) {
		d->synthetic = 1;
		return;
	}
	if (!cJSON_IsObject(o)) {
		bad(r, "", "data", "an object, or null for synthetic data", o);
		return;
	}
	path = get_str(r, o, ".data", "path");
	if (!r->bad && (!*path || strlen(path) >= sizeof(d->path) ||
			!gp_text_is_printable(path, strlen(path), &at)))
		bad(r, ".data", "path", "a printable path of 1 to 1023 bytes",
		    cJSON_GetObjectItemCaseSensitive(o, "path"));
	gp_strlcpy(d->path, path, sizeof(d->path));
	get_int(r, o, ".data", "bytes", 0, 9007199254740992.0, &d->bytes);
	get_int(r, o, ".data", "mtime_s", -9.2e9, 9.2e9, &sec);
	get_int(r, o, ".data", "mtime_nsec", -999999999, 999999999, &nsec);
	d->mtime_ns = sec * 1000000000LL + nsec;
	d->fnv1a64 = get_hash(r, o, ".data", "fnv1a64");
}

static void read_optim(struct rd *r, const cJSON *o, struct exec_ckpt_manifest *m)
{
	m->optim.lr = get_num(r, o, ".optimizer", "lr", 0);
	m->optim.beta1 = get_num(r, o, ".optimizer", "beta1", 0);
	m->optim.beta2 = get_num(r, o, ".optimizer", "beta2", 0);
	m->optim.adam_eps = get_num(r, o, ".optimizer", "eps", 0);
	m->optim.weight_decay = get_num(r, o, ".optimizer", "weight_decay", 0);
	m->optim.grad_clip = get_num(r, o, ".optimizer", "grad_clip", 0);
}

static void read_shards(struct rd *r, const cJSON *a, struct exec_ckpt_manifest *m)
{
	int n = 0;
	const cJSON *s;

	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != m->world) {
		char want[64];

		snprintf(want, sizeof(want), "an array of %d shards (one a rank)", m->world);
		bad(r, "", "shards", want, a);
		return;
	}
	m->shards = xcalloc((size_t)m->world, sizeof(*m->shards));
	cJSON_ArrayForEach(s, a) {
		long long bytes = 0;

		if (get_i(r, s, ".shards[]", "rank", 0, 1 << 20) != n && !r->bad)
			bad(r, ".shards[]", "rank", "the shards in rank order",
			    cJSON_GetObjectItemCaseSensitive(s, "rank"));
		get_int(r, s, ".shards[]", "bytes", 0, 9007199254740992.0, &bytes);
		m->shards[n].fnv1a64 = get_hash(r, s, ".shards[]", "fnv1a64");
		if (r->bad)
			return;
		m->shards[n].bytes = bytes;
		n++;
	}
}

enum rc exec_ckpt_manifest_parse(const char *buf, size_t len, struct exec_ckpt_manifest *out,
				 char *why, size_t size)
{
	struct exec_ckpt_manifest m;
	struct rd r = { why, size, 0 };
	const char *schema;
	long long seed = 0;
	const cJSON *o;
	cJSON *root;

	memset(&m, 0, sizeof(m));
	root = cJSON_ParseWithLength(buf, len);
	if (!cJSON_IsObject(root)) {
		snprintf(why, size, "expected a JSON object (schema %s), found %s", EXEC_CKPT_SCHEMA,
			 root ? "another type" : "text that is not JSON");
		cJSON_Delete(root);
		return RC_INPUT;
	}
	schema = get_str(&r, root, "", "schema");
	if (!r.bad && strcmp(schema, EXEC_CKPT_SCHEMA) != 0)
		bad(&r, "", "schema", "'" EXEC_CKPT_SCHEMA "'",
		    cJSON_GetObjectItemCaseSensitive(root, "schema"));
	m.step = get_i(&r, root, "", "step", 1, 2147483647.0);
	if ((o = get_obj(&r, root, "", "model")))
		read_model(&r, o, &m);
	if ((o = get_obj(&r, root, "", "layout")))
		read_layout(&r, o, &m);
	if (!r.bad && cJSON_GetObjectItemCaseSensitive(root, "lora") &&
	    (o = get_obj(&r, root, "", "lora")))
		read_lora(&r, o, &m);
	if (!r.bad)
		read_compute(&r, root, &m);
	get_int(&r, root, "", "seed", 0, 9007199254740992.0, &seed);
	m.seed = (uint64_t)seed;
	if (!r.bad) {
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "data");

		if (!d)
			bad(&r, "", "data", "the data trained on (null: synthetic)", d);
		else
			read_data(&r, d, &m);
	}
	if (!r.bad && (o = get_obj(&r, root, "", "optimizer")))
		read_optim(&r, o, &m);
	m.steps = get_i(&r, root, "", "steps", 1, 2147483647.0);
	if (!r.bad)
		read_shards(&r, cJSON_GetObjectItemCaseSensitive(root, "shards"), &m);
	cJSON_Delete(root);
	if (r.bad) {
		exec_ckpt_manifest_release(&m);
		return RC_INPUT;
	}
	*out = m;
	return RC_OK;
}
