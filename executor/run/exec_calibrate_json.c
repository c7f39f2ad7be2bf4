/*
 * exec_calibrate_json.c - calibration files (schema gpuplan.calibration/1):
 * write them atomically, read them back with every field checked, and say
 * where the user's calibration of a GPU lives.  The only file of the
 * calibration that includes <cjson/cJSON.h>.
 *
 * A file holds what was measured (GEMMs, copies, element-wise kernels,
 * the attention core, collectives, each with its size and time) and the figures the simulator
 * reads instead of the catalog's (exec_calibration_apply); the
 * measurements are there to be looked at and re-fitted, the figures are
 * what is used.
 */
#include <cjson/cJSON.h>

#include "json_internal.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"

/* ---- writing --------------------------------------------------------- */

static void add_num(cJSON *o, const char *k, double v)
{
	char buf[40];

	cJSON_AddRawToObject(o, k, unit_fmt_exact(buf, sizeof(buf), v));
}

char *exec_calibration_to_json(const struct exec_calibration *c)
{
	cJSON *root = cJSON_CreateObject(), *s, *a;
	char *text;

	cJSON_AddStringToObject(root, "schema", EXEC_CALIBRATION_SCHEMA);
	cJSON_AddStringToObject(root, "gpu", c->gpu);
	cJSON_AddStringToObject(root, "device", c->device);
	add_num(root, "device_memory_bytes", c->device_memory_bytes);
	cJSON_AddStringToObject(root, "backend", c->backend);
	cJSON_AddStringToObject(root, "precision", exec_precision_str(c->precision));
	add_num(root, "ranks", c->ranks);
	cJSON_AddStringToObject(root, "date", c->date);
	cJSON_AddStringToObject(root, "clock", c->clock[0] ? c->clock : "wall");
	s = cJSON_AddObjectToObject(root, "sim");
	add_num(s, "bf16_flops_per_s", c->bf16_flops_per_s);
	add_num(s, "hbm_bytes_per_s", c->hbm_bytes_per_s);
	add_num(s, "intra_bytes_per_s", c->intra_bytes_per_s);
	add_num(s, "latency_s", c->latency_s);
	add_num(s, "gemm_dim_half", c->gemm_dim_half);
	add_num(s, "elt_gelu_bytes_per_s", c->elt_bytes_per_s[0]);
	add_num(s, "elt_swiglu_bytes_per_s", c->elt_bytes_per_s[1]);
	add_num(s, "act_gelu_bytes_per_s", c->act_bytes_per_s[0]);
	add_num(s, "act_swiglu_bytes_per_s", c->act_bytes_per_s[1]);
	add_num(s, "attn_flops_per_s", c->attn_flops_per_s);
	add_num(s, "opt_bytes_per_s", c->opt_bytes_per_s);
	a = cJSON_AddArrayToObject(root, "gemm");
	for (int i = 0; i < c->n_gemm; i++) {
		cJSON *g = cJSON_CreateObject();

		add_num(g, "m", c->gemm[i].m);
		add_num(g, "n", c->gemm[i].n);
		add_num(g, "k", c->gemm[i].k);
		cJSON_AddStringToObject(g, "pass", c->gemm[i].backward ? "backward" : "forward");
		add_num(g, "time_s", c->gemm[i].time_s);
		add_num(g, "flops_per_s", c->gemm[i].flops_per_s);
		add_num(g, "predicted_s", c->gemm[i].predicted_s);
		cJSON_AddItemToArray(a, g);
	}
	a = cJSON_AddArrayToObject(root, "copy");
	for (int i = 0; i < c->n_copy; i++) {
		cJSON *g = cJSON_CreateObject();

		add_num(g, "bytes", c->copy[i].bytes);
		add_num(g, "time_s", c->copy[i].time_s);
		add_num(g, "bytes_per_s", c->copy[i].bytes_per_s);
		cJSON_AddItemToArray(a, g);
	}
	a = cJSON_AddArrayToObject(root, "elementwise");
	for (int i = 0; i < c->n_elt; i++) {
		cJSON *g = cJSON_CreateObject();

		cJSON_AddStringToObject(g, "mlp", c->elt[i].mlp);
		add_num(g, "tokens", c->elt[i].tokens);
		add_num(g, "hidden", c->elt[i].hidden);
		add_num(g, "ffn", c->elt[i].ffn);
		add_num(g, "bytes", c->elt[i].bytes);
		add_num(g, "time_s", c->elt[i].time_s);
		add_num(g, "bytes_per_s", c->elt[i].bytes_per_s);
		add_num(g, "act_bytes", c->elt[i].act_bytes);
		add_num(g, "act_time_s", c->elt[i].act_time_s);
		cJSON_AddItemToArray(a, g);
	}
	if (c->attn.batch > 0) {
		cJSON *g = cJSON_AddObjectToObject(root, "attention");

		add_num(g, "batch", c->attn.batch);
		add_num(g, "seq", c->attn.seq);
		add_num(g, "heads", c->attn.heads);
		add_num(g, "kv_heads", c->attn.kv_heads);
		add_num(g, "head_dim", c->attn.head_dim);
		add_num(g, "flops", c->attn.flops);
		add_num(g, "time_s", c->attn.time_s);
		add_num(g, "flops_per_s", c->attn.flops_per_s);
	}
	if (c->opt.params > 0) {
		cJSON *g = cJSON_AddObjectToObject(root, "optimizer");

		add_num(g, "params", c->opt.params);
		add_num(g, "bytes", c->opt.bytes);
		add_num(g, "time_s", c->opt.time_s);
		add_num(g, "bytes_per_s", c->opt.bytes_per_s);
	}
	a = cJSON_AddArrayToObject(root, "collectives");
	for (int i = 0; i < c->n_coll; i++) {
		cJSON *g = cJSON_CreateObject();

		cJSON_AddStringToObject(g, "op", c->coll[i].op);
		add_num(g, "ranks", c->coll[i].ranks);
		add_num(g, "bytes", c->coll[i].bytes);
		add_num(g, "time_s", c->coll[i].time_s);
		add_num(g, "algbw_bytes_per_s", c->coll[i].algbw_bytes_per_s);
		add_num(g, "busbw_bytes_per_s", c->coll[i].busbw_bytes_per_s);
		cJSON_AddItemToArray(a, g);
	}
	text = cJSON_Print(root);
	cJSON_Delete(root);
	if (!text) {
		gp_error("calibration: out of memory formatting JSON");
		abort();
	}
	return text;
}

enum rc exec_calibration_write(const char *path, const struct exec_calibration *c)
{
	char *text = exec_calibration_to_json(c);
	enum rc rc = gp_write_text_atomic(path, text);

	free(text);
	return rc;
}

/* ---- reading --------------------------------------------------------- */

struct reader {
	const char *file;
	int bad;          /* 1 once an error was printed */
};

static void found(const cJSON *it, char *buf, size_t size)
{
	char *s = it ? cJSON_PrintUnformatted(it) : NULL;

	snprintf(buf, size, "%s", s ? s : "none");
	free(s);
}

static const cJSON *member(struct reader *r, const cJSON *obj, const char *where,
			   const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!it && !r->bad) {
		gp_error("%s: %s.%s: expected a value, found none", r->file, where, key);
		r->bad = 1;
	}
	return it;
}

static void get_double(struct reader *r, const cJSON *obj, const char *where, const char *key,
		       double *out)
{
	const cJSON *it = member(r, obj, where, key);
	char buf[64];

	if (!it || r->bad)
		return;
	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble < 0) {
		found(it, buf, sizeof(buf));
		gp_error("%s: %s.%s: expected a number >= 0, found %s", r->file, where, key, buf);
		r->bad = 1;
		return;
	}
	*out = it->valuedouble;
}

static void get_int(struct reader *r, const cJSON *obj, const char *where, const char *key,
		    int min, int max, int *out)
{
	const cJSON *it = member(r, obj, where, key);
	char buf[64];

	if (!it || r->bad)
		return;
	if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) ||
	    it->valuedouble < min || it->valuedouble > max) {
		found(it, buf, sizeof(buf));
		gp_error("%s: %s.%s: expected an integer from %d to %d, found %s", r->file, where,
			 key, min, max, buf);
		r->bad = 1;
		return;
	}
	*out = (int)it->valuedouble;
}

static void get_str(struct reader *r, const cJSON *obj, const char *where, const char *key,
		    char *out, size_t size)
{
	const cJSON *it = member(r, obj, where, key);
	char buf[64];

	if (!it || r->bad)
		return;
	if (!cJSON_IsString(it) || strlen(it->valuestring) >= size) {
		found(it, buf, sizeof(buf));
		gp_error("%s: %s.%s: expected a string of at most %zu bytes, found %s", r->file,
			 where, key, size - 1, buf);
		r->bad = 1;
		return;
	}
	snprintf(out, size, "%s", it->valuestring);
}

/* The array member key of at most EXEC_CALIB_MAX_POINTS objects; NULL
 * after a message when it is something else. */
static const cJSON *points(struct reader *r, const cJSON *root, const char *key, int *n)
{
	const cJSON *a = member(r, root, "", key);
	char buf[64];

	*n = 0;
	if (!a || r->bad)
		return NULL;
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > EXEC_CALIB_MAX_POINTS) {
		found(a, buf, sizeof(buf));
		gp_error("%s: .%s: expected an array of at most %d measurements, found %s",
			 r->file, key, EXEC_CALIB_MAX_POINTS, buf);
		r->bad = 1;
		return NULL;
	}
	*n = cJSON_GetArraySize(a);
	return a;
}

/* Element i of array a as an object, its path "where" in buf. */
static const cJSON *point(struct reader *r, const cJSON *a, const char *key, int i, char *where,
			  size_t size)
{
	const cJSON *it = cJSON_GetArrayItem(a, i);

	snprintf(where, size, ".%s[%d]", key, i);
	if (!cJSON_IsObject(it) && !r->bad) {
		gp_error("%s: %s: expected an object, found another value", r->file, where);
		r->bad = 1;
		return NULL;
	}
	return it;
}

static void read_calibration(struct reader *r, const cJSON *root, struct exec_calibration *c)
{
	char schema[64] = "", backend[16] = "", prec[16] = "", where[48];
	const cJSON *s, *a;
	int n;

	get_str(r, root, "", "schema", schema, sizeof(schema));
	if (!r->bad && strcmp(schema, EXEC_CALIBRATION_SCHEMA) != 0) {
		gp_error("%s: .schema: expected \"%s\", found \"%s\"", r->file,
			 EXEC_CALIBRATION_SCHEMA, schema);
		r->bad = 1;
	}
	get_str(r, root, "", "gpu", c->gpu, sizeof(c->gpu));
	if (!r->bad && !c->gpu[0]) {
		gp_error("%s: .gpu: expected the catalog GPU the calibration is for, found \"\"",
			 r->file);
		r->bad = 1;
	}
	get_str(r, root, "", "device", c->device, sizeof(c->device));
	get_double(r, root, "", "device_memory_bytes", &c->device_memory_bytes);
	get_str(r, root, "", "backend", backend, sizeof(backend));
	if (!r->bad && strcmp(backend, "cpu") != 0 && strcmp(backend, "cuda") != 0) {
		gp_error("%s: .backend: expected cpu or cuda, found \"%s\"", r->file, backend);
		r->bad = 1;
	}
	gp_strlcpy(c->backend, backend, sizeof(c->backend));
	get_str(r, root, "", "precision", prec, sizeof(prec));
	if (!r->bad && exec_precision_parse(prec, &c->precision) != RC_OK) {
		gp_error("%s: .precision: expected bf16 or fp32, found \"%s\"", r->file, prec);
		r->bad = 1;
	}
	get_int(r, root, "", "ranks", 1, 1 << 20, &c->ranks);
	get_str(r, root, "", "date", c->date, sizeof(c->date));
	/* files written before the field were timed by the wall clock */
	gp_strlcpy(c->clock, "wall", sizeof(c->clock));
	if (cJSON_GetObjectItemCaseSensitive(root, "clock")) {
		get_str(r, root, "", "clock", c->clock, sizeof(c->clock));
		if (!r->bad && strcmp(c->clock, "cpu") != 0 && strcmp(c->clock, "wall") != 0) {
			char buf[64];

			found(cJSON_GetObjectItemCaseSensitive(root, "clock"), buf, sizeof(buf));
			gp_error("%s: .clock: expected \"cpu\" or \"wall\", found %s", r->file, buf);
			r->bad = 1;
		}
	}
	s = member(r, root, "", "sim");
	if (s && !r->bad && !cJSON_IsObject(s)) {
		gp_error("%s: .sim: expected an object", r->file);
		r->bad = 1;
	}
	if (s && !r->bad) {
		get_double(r, s, ".sim", "bf16_flops_per_s", &c->bf16_flops_per_s);
		get_double(r, s, ".sim", "hbm_bytes_per_s", &c->hbm_bytes_per_s);
		get_double(r, s, ".sim", "intra_bytes_per_s", &c->intra_bytes_per_s);
		get_double(r, s, ".sim", "latency_s", &c->latency_s);
		/* files written before the knee or the element-wise rate was
		 * fitted keep the defaults */
		if (cJSON_GetObjectItemCaseSensitive(s, "gemm_dim_half"))
			get_double(r, s, ".sim", "gemm_dim_half", &c->gemm_dim_half);
		if (cJSON_GetObjectItemCaseSensitive(s, "elt_gelu_bytes_per_s"))
			get_double(r, s, ".sim", "elt_gelu_bytes_per_s", &c->elt_bytes_per_s[0]);
		if (cJSON_GetObjectItemCaseSensitive(s, "elt_swiglu_bytes_per_s"))
			get_double(r, s, ".sim", "elt_swiglu_bytes_per_s", &c->elt_bytes_per_s[1]);
		/* and before the MLP activation was timed apart */
		if (cJSON_GetObjectItemCaseSensitive(s, "act_gelu_bytes_per_s"))
			get_double(r, s, ".sim", "act_gelu_bytes_per_s", &c->act_bytes_per_s[0]);
		if (cJSON_GetObjectItemCaseSensitive(s, "act_swiglu_bytes_per_s"))
			get_double(r, s, ".sim", "act_swiglu_bytes_per_s", &c->act_bytes_per_s[1]);
		if (cJSON_GetObjectItemCaseSensitive(s, "attn_flops_per_s"))
			get_double(r, s, ".sim", "attn_flops_per_s", &c->attn_flops_per_s);
		if (cJSON_GetObjectItemCaseSensitive(s, "opt_bytes_per_s"))
			get_double(r, s, ".sim", "opt_bytes_per_s", &c->opt_bytes_per_s);
	}
	a = points(r, root, "gemm", &n);
	for (int i = 0; a && i < n && !r->bad; i++) {
		const cJSON *p = point(r, a, "gemm", i, where, sizeof(where));
		struct exec_calib_gemm *g = &c->gemm[i];

		if (!p)
			break;
		get_double(r, p, where, "m", &g->m);
		get_double(r, p, where, "n", &g->n);
		get_double(r, p, where, "k", &g->k);
		/* files written before backward GEMMs were timed hold forward ones */
		if (cJSON_GetObjectItemCaseSensitive(p, "pass")) {
			char pass[16] = "";

			get_str(r, p, where, "pass", pass, sizeof(pass));
			if (!r->bad && strcmp(pass, "forward") != 0 && strcmp(pass, "backward") != 0) {
				gp_error("%s: %s.pass: expected forward or backward, found \"%s\"",
					 r->file, where, pass);
				r->bad = 1;
			}
			g->backward = strcmp(pass, "backward") == 0;
		}
		get_double(r, p, where, "time_s", &g->time_s);
		get_double(r, p, where, "flops_per_s", &g->flops_per_s);
		get_double(r, p, where, "predicted_s", &g->predicted_s);
		c->n_gemm = i + 1;
	}
	a = points(r, root, "copy", &n);
	for (int i = 0; a && i < n && !r->bad; i++) {
		const cJSON *p = point(r, a, "copy", i, where, sizeof(where));
		struct exec_calib_copy *g = &c->copy[i];

		if (!p)
			break;
		get_double(r, p, where, "bytes", &g->bytes);
		get_double(r, p, where, "time_s", &g->time_s);
		get_double(r, p, where, "bytes_per_s", &g->bytes_per_s);
		c->n_copy = i + 1;
	}
	a = cJSON_GetObjectItemCaseSensitive(root, "elementwise") ? points(r, root, "elementwise", &n)
								  : NULL;
	if (a && n > (int)GP_ARRAY_LEN(c->elt)) {
		gp_error("%s: .elementwise: expected at most %d measurements, found %d", r->file,
			 (int)GP_ARRAY_LEN(c->elt), n);
		r->bad = 1;
	}
	for (int i = 0; a && i < n && !r->bad; i++) {
		const cJSON *p = point(r, a, "elementwise", i, where, sizeof(where));
		struct exec_calib_elt *g = &c->elt[i];
		char mlp[sizeof(g->mlp)] = "";

		if (!p)
			break;
		get_str(r, p, where, "mlp", mlp, sizeof(mlp));
		if (!r->bad && strcmp(mlp, "gelu") != 0 && strcmp(mlp, "swiglu") != 0) {
			gp_error("%s: %s.mlp: expected gelu or swiglu, found \"%s\"", r->file, where,
				 mlp);
			r->bad = 1;
		}
		gp_strlcpy(g->mlp, mlp, sizeof(g->mlp));
		get_double(r, p, where, "tokens", &g->tokens);
		get_double(r, p, where, "hidden", &g->hidden);
		get_double(r, p, where, "ffn", &g->ffn);
		get_double(r, p, where, "bytes", &g->bytes);
		get_double(r, p, where, "time_s", &g->time_s);
		get_double(r, p, where, "bytes_per_s", &g->bytes_per_s);
		if (cJSON_GetObjectItemCaseSensitive(p, "act_bytes"))
			get_double(r, p, where, "act_bytes", &g->act_bytes);
		if (cJSON_GetObjectItemCaseSensitive(p, "act_time_s"))
			get_double(r, p, where, "act_time_s", &g->act_time_s);
		c->n_elt = i + 1;
	}
	/* files written before attention was timed have none */
	s = cJSON_GetObjectItemCaseSensitive(root, "attention");
	if (s && !r->bad && !cJSON_IsObject(s)) {
		gp_error("%s: .attention: expected an object", r->file);
		r->bad = 1;
	}
	if (s && !r->bad) {
		struct exec_calib_attn *g = &c->attn;

		get_int(r, s, ".attention", "batch", 1, 1 << 20, &g->batch);
		get_int(r, s, ".attention", "seq", 1, 1 << 24, &g->seq);
		get_int(r, s, ".attention", "heads", 1, 1 << 16, &g->heads);
		get_int(r, s, ".attention", "kv_heads", 1, 1 << 16, &g->kv_heads);
		get_int(r, s, ".attention", "head_dim", 1, 1 << 16, &g->head_dim);
		get_double(r, s, ".attention", "flops", &g->flops);
		get_double(r, s, ".attention", "time_s", &g->time_s);
		get_double(r, s, ".attention", "flops_per_s", &g->flops_per_s);
	}
	/* nor have those written before the optimizer was */
	s = cJSON_GetObjectItemCaseSensitive(root, "optimizer");
	if (s && !r->bad && !cJSON_IsObject(s)) {
		gp_error("%s: .optimizer: expected an object", r->file);
		r->bad = 1;
	}
	if (s && !r->bad) {
		struct exec_calib_opt *g = &c->opt;

		get_double(r, s, ".optimizer", "params", &g->params);
		get_double(r, s, ".optimizer", "bytes", &g->bytes);
		get_double(r, s, ".optimizer", "time_s", &g->time_s);
		get_double(r, s, ".optimizer", "bytes_per_s", &g->bytes_per_s);
	}
	a = points(r, root, "collectives", &n);
	for (int i = 0; a && i < n && !r->bad; i++) {
		const cJSON *p = point(r, a, "collectives", i, where, sizeof(where));
		struct exec_calib_coll *g = &c->coll[i];

		if (!p)
			break;
		get_str(r, p, where, "op", g->op, sizeof(g->op));
		get_int(r, p, where, "ranks", 1, 1 << 20, &g->ranks);
		get_double(r, p, where, "bytes", &g->bytes);
		get_double(r, p, where, "time_s", &g->time_s);
		get_double(r, p, where, "algbw_bytes_per_s", &g->algbw_bytes_per_s);
		get_double(r, p, where, "busbw_bytes_per_s", &g->busbw_bytes_per_s);
		c->n_coll = i + 1;
	}
}

enum rc exec_calibration_parse(const char *name, const char *buf, size_t len,
			       struct exec_calibration *out)
{
	struct reader r = { name, 0 };
	struct exec_calibration *c;
	cJSON *root = gp_json_parse(name, buf, len);

	if (!root)
		return RC_INPUT;
	if (!cJSON_IsObject(root)) {
		gp_error("%s: expected a JSON object at the top level", name);
		cJSON_Delete(root);
		return RC_INPUT;
	}
	c = xcalloc(1, sizeof(*c));
	read_calibration(&r, root, c);
	cJSON_Delete(root);
	if (!r.bad)
		*out = *c;
	free(c);
	return r.bad ? RC_INPUT : RC_OK;
}

enum rc exec_calibration_read(const char *path, struct exec_calibration *out)
{
	char *buf;
	size_t len;
	enum rc rc = gp_read_file(path, &buf, &len);

	if (rc != RC_OK)
		return rc;
	rc = exec_calibration_parse(path, buf, len, out);
	free(buf);
	return rc;
}

void exec_calibration_path(char *buf, size_t size, const char *dir, const char *gpu)
{
	char name[PRICE_NAME_MAX];
	size_t i;

	for (i = 0; gpu[i] && i + 1 < sizeof(name); i++) {
		char ch = gpu[i];

		name[i] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_' ? ch : '_';
	}
	name[i] = 0;
	snprintf(buf, size, "%s/calibration/%s.json", dir, name);
}
