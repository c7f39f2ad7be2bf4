/*
 * cmd_models.c - `gpuplan models list|show NAME [--json]`: the model
 * presets of data/models.csv with their exact parameter counts, total
 * and active per token (from the simulator's sim_model_params and
 * sim_model_active_params), beside the counts their authors published.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sim.h"

static void help(void)
{
	printf("usage: gpuplan models [list] [--json]\n"
	       "       gpuplan models show NAME [--json]\n\n"
	       "Lists the model presets (data/models.csv) or shows one preset's shapes and\n"
	       "exact parameter count.  NAME is case-insensitive (llama3-70b, gpt3-175b, ...).\n\n"
	       "  --json       JSON (schema gpuplan.models/1 or gpuplan.model/1; default off)\n"
	       "  -h, --help   this help\n");
}

/* 70553706496 -> "70,553,706,496". */
static void fmt_int(char *buf, size_t size, double v)
{
	char digits[64];
	size_t n, o = 0;

	snprintf(digits, sizeof(digits), "%.0f", v);
	n = strlen(digits);
	for (size_t i = 0; i < n && o + 2 < size; i++) {
		buf[o++] = digits[i];
		if ((n - i - 1) % 3 == 0 && i + 1 < n)
			buf[o++] = ',';
	}
	buf[o] = '\0';
}

/* A published count in billions, "-" when not stated. */
static void fmt_billions(char *buf, size_t size, double v)
{
	if (v > 0)
		snprintf(buf, size, "%.4g", v / 1e9);
	else
		snprintf(buf, size, "-");
}

static void print_list(const struct sim_model_table *t)
{
	printf("%-16s %6s %6s %5s %4s %6s %7s %6s %-6s %4s %5s %8s %10s %10s %9s %10s\n",
	       "NAME", "LAYERS", "HIDDEN", "HEADS", "KV", "FFN", "VOCAB", "SEQ", "MLP", "TIED",
	       "GBS", "EXPERTS", "PARAMS_B", "PUBLISHED", "ACTIVE_B", "PUB_ACTIVE");
	for (size_t i = 0; i < t->n; i++) {
		const struct sim_model *m = &t->models[i];
		char gbs[16], pub[16], pub_active[16], experts[16];

		snprintf(gbs, sizeof(gbs), m->gbs ? "%d" : "-", m->gbs);
		/* routed, top-k: "256/8" */
		if (m->experts > 0)
			snprintf(experts, sizeof(experts), "%d/%d", m->experts, m->top_k);
		else
			snprintf(experts, sizeof(experts), "-");
		fmt_billions(pub, sizeof(pub), m->published_params);
		fmt_billions(pub_active, sizeof(pub_active), m->published_active_params);
		printf("%-16s %6d %6d %5d %4d %6d %7d %6d %-6s %4s %5s %8s %10.3f %10s %9.3f %10s\n",
		       m->name, m->layers, m->hidden, m->heads, m->kv_heads, m->ffn, m->vocab,
		       m->seq, sim_mlp_str(m->mlp), m->tied_embeddings ? "yes" : "no", gbs, experts,
		       sim_model_params(m) / 1e9, pub, sim_model_active_params(m) / 1e9, pub_active);
	}
}

static void print_show(const struct sim_model *m)
{
	double params = sim_model_params(m), active = sim_model_active_params(m);
	double emb = (double)m->vocab * m->hidden;
	char exact[48];

	fmt_int(exact, sizeof(exact), params);
	printf("model            %s\n", m->name);
	printf("layers           %d\n", m->layers);
	printf("hidden           %d\n", m->hidden);
	printf("heads            %d (head dim %g)\n", m->heads, sim_qk_head_dim(m));
	printf("kv_heads         %d%s\n", m->kv_heads,
	       m->kv_heads < m->heads ? " (grouped-query attention)" : "");
	printf("ffn_hidden       %d (%.3g x hidden)\n", m->ffn, (double)m->ffn / m->hidden);
	printf("vocab            %d\n", m->vocab);
	printf("seq_len          %d\n", m->seq);
	printf("mlp              %s\n", sim_mlp_str(m->mlp));
	printf("tied_embeddings  %s\n", m->tied_embeddings ? "yes" : "no");
	if (m->gbs)
		printf("global_batch     %d sequences (%.3g M tokens)\n", m->gbs,
		       (double)m->gbs * m->seq / 1e6);
	else
		printf("global_batch     not stated by the source\n");
	if (m->head_dim > 0)
		printf("head_dim         %d\n", m->head_dim);
	if (m->window > 0) {
		printf("sliding_window   %d tokens", m->window);
		if (m->window_full_every > 0)
			printf(", every %d%s layer full", m->window_full_every,
			       m->window_full_every == 2 ? "nd" : m->window_full_every == 3 ? "rd" : "th");
		printf("\n");
	}
	if (m->attn_sinks)
		printf("attention sinks  one learned logit per head\n");
	if (m->kv_lora_rank > 0)
		printf("attention        MLA: q rank %d, kv rank %d, heads of %d nope + %d rope, values %d\n",
		       m->q_lora_rank, m->kv_lora_rank, m->qk_nope_dim, m->qk_rope_dim, m->v_head_dim);
	if (m->experts > 0) {
		printf("experts          %d routed of %d, top-%d", m->experts, m->expert_ffn, m->top_k);
		if (m->shared_experts > 0)
			printf(", %d shared of %d", m->shared_experts,
			       m->shared_ffn > 0 ? m->shared_ffn : m->expert_ffn);
		printf("\n");
		if (m->dense_layers > 0)
			printf("dense layers     the first %d (MLP of ffn_hidden)\n", m->dense_layers);
	}
	if (m->mtp_layers > 0)
		printf("mtp layers       %d (%.3f B more parameters, trained beside the model)\n",
		       m->mtp_layers, sim_mtp_params(m) / 1e9);
	printf("parameters       %s (%.3f B)\n", exact, params / 1e9);
	if (m->published_params > 0)
		printf("published        %.4g B (%+.2f%%)\n", m->published_params / 1e9,
		       100.0 * (params - m->published_params) / m->published_params);
	fmt_int(exact, sizeof(exact), active);
	printf("active           %s (%.3f B; %.3f B counting the input embedding)\n", exact,
	       active / 1e9, (active + emb) / 1e9);
	if (m->published_active_params > 0)
		printf("published active %.4g B\n", m->published_active_params / 1e9);
}

enum rc cmd_models(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sim_model_table t;
	const struct sim_model *m = NULL;
	const char *sub = "list", *name = NULL;
	char path[4096];
	int json = 0, c;
	enum rc rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'h': help(); return RC_OK;
		default: return cli_bad_option("models", optopt, argv[optind - 1]);
		}
	}
	if (optind < argc)
		sub = argv[optind++];
	if (strcmp(sub, "show") == 0) {
		if (optind != argc - 1) {
			gp_error("models show: expected one model name, found %d arguments", argc - optind);
			gp_hint("gpuplan models show llama3-70b ('gpuplan models list' shows every name)");
			return RC_USAGE;
		}
		name = argv[optind];
	} else if (strcmp(sub, "list") != 0 || optind < argc) {
		gp_error("models: expected 'list' or 'show NAME', found '%s'",
			 optind < argc ? argv[optind] : sub);
		return RC_USAGE;
	}
	snprintf(path, sizeof(path), "%s/models.csv", cli_data_dir());
	rc = sim_model_table_load(&t, path);
	if (rc != RC_OK)
		return rc;
	if (name) {
		m = cli_model_find(&t, "models show", path, name,
				   "'gpuplan models list' shows every name");
		if (!m) {
			sim_model_table_release(&t);
			return RC_USAGE;
		}
	}
	if (json) {
		char *s = cli_models_to_json(&t, m);

		if (s) {
			printf("%s\n", s);
			free(s);
		}
	} else if (m) {
		print_show(m);
	} else {
		print_list(&t);
	}
	sim_model_table_release(&t);
	return RC_OK;
}
