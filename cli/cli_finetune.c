/*
 * cli_finetune.c - the fine-tuning flags of simulate, plan, frontier and
 * compare, and the lines that explain a fine-tuning plan (cli_finetune.h).
 * Parsing and printing only.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_finetune.h"

/* --host memory=512G,cores=64,pcie=32,nvme=7: host memory in bytes (SI
 * suffixes), physical cores, PCIe per GPU and NVMe per node in GB/s one
 * direction. */
static enum rc parse_host(const char *arg, struct price_host *h)
{
	struct price_host t = *h;
	char buf[256], *save = NULL, *kv;

	if (gp_strlcpy(buf, arg, sizeof(buf)) != 0) {
		gp_error("--host: expected at most %zu characters, found %zu", sizeof(buf) - 1,
			 strlen(arg));
		return RC_USAGE;
	}
	for (kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		double v;
		enum rc rc;

		if (!eq) {
			gp_error("--host: expected KEY=VALUE, found '%s'", kv);
			return RC_USAGE;
		}
		*eq++ = '\0';
		if (strcmp(kv, "memory") == 0) {
			rc = cli_parse_count("--host memory", eq, &t.memory_bytes);
		} else if (strcmp(kv, "cores") == 0) {
			rc = cli_parse_double("--host cores", eq, 1, PRICE_HOST_MAX_CORES, &v);
			t.cpu_cores = v;
			if (rc == RC_OK && v != floor(v)) {
				gp_error("--host cores: expected a whole number, found '%s'", eq);
				rc = RC_USAGE;
			}
		} else if (strcmp(kv, "pcie") == 0) {
			rc = cli_parse_double("--host pcie", eq, 1e-3, 1e5, &v);
			t.pcie_bytes_per_s = v * 1e9;
		} else if (strcmp(kv, "nvme") == 0) {
			rc = cli_parse_double("--host nvme", eq, 1e-3, 1e5, &v);
			t.nvme_bytes_per_s = v * 1e9;
		} else {
			gp_error("--host: expected a key among memory, cores, pcie, nvme, found '%s'", kv);
			return RC_USAGE;
		}
		if (rc != RC_OK)
			return rc;
	}
	*h = t;
	return RC_OK;
}

static const char *const offload_choices[4] = { "none", "cpu", "nvme", "auto" };

enum rc ft_cli_parse(struct ft_cli *fc, int i, const char *arg)
{
	enum rc rc = RC_OK;
	int v = 0;

	switch (i) {
	case 0:
		rc = cli_parse_choice("--finetune", arg, sim_ft_method_names, 4, &v);
		fc->ft.method = (enum sim_ft_method)v;
		fc->method_set = 1;
		break;
	case 1:
		rc = cli_parse_int("--lora-rank", arg, 1, SIM_LORA_MAX_RANK, &fc->ft.lora_rank);
		fc->rank_set = 1;
		break;
	case 2:
		if (sim_lora_targets_parse(arg, &fc->ft.lora_targets) != RC_OK) {
			gp_error("--lora-targets: expected all or projections among q, k, v, o, gate, "
				 "up, down separated by ',', found '%s'", arg);
			rc = RC_USAGE;
		}
		fc->targets_set = 1;
		break;
	case 3:
		rc = cli_parse_choice("--offload", arg, offload_choices, 4, &v);
		fc->ft.offload = (enum sim_offload)(v == 3 ? 0 : v);
		fc->offload_set = v == 3 ? 2 : 1;
		break;
	case 4:
		rc = cli_parse_double("--epochs", arg, 1e-3, 1e6, &fc->epochs);
		break;
	case 5:
		rc = cli_parse_count("--dataset-tokens", arg, &fc->dataset_tokens);
		break;
	case 6:
		rc = parse_host(arg, &fc->host);
		fc->host_set = 1;
		break;
	default:
		rc = RC_USAGE;
	}
	return rc;
}

enum rc ft_cli_apply(const struct ft_cli *fc, int tokens_given, double *tokens,
		     struct sim_finetune *ft, struct price_host *host)
{
	int lora = fc->method_set ? fc->ft.method == SIM_FT_LORA || fc->ft.method == SIM_FT_QLORA
		   : ft->method == SIM_FT_LORA || ft->method == SIM_FT_QLORA;

	if ((fc->rank_set || fc->targets_set) && !lora) {
		gp_error("%s: expected --finetune lora or qlora with it, found %s",
			 fc->rank_set ? "--lora-rank" : "--lora-targets",
			 sim_ft_method_names[fc->method_set ? fc->ft.method : ft->method]);
		return RC_USAGE;
	}
	if ((fc->epochs > 0) != (fc->dataset_tokens > 0)) {
		gp_error("%s: expected --epochs E and --dataset-tokens N together, found only %s",
			 fc->epochs > 0 ? "--epochs" : "--dataset-tokens",
			 fc->epochs > 0 ? "--epochs" : "--dataset-tokens");
		return RC_USAGE;
	}
	if (fc->epochs > 0 && tokens_given) {
		gp_error("--tokens: expected either --tokens or --epochs with --dataset-tokens, "
			 "found both");
		return RC_USAGE;
	}
	if (fc->epochs > 0) {
		*tokens = fc->epochs * fc->dataset_tokens;
		if (!(*tokens <= UNIT_COUNT_MAX)) {
			gp_error("--epochs: expected epochs x dataset tokens of at most %g, found %g",
				 UNIT_COUNT_MAX, *tokens);
			return RC_USAGE;
		}
	}
	if (fc->method_set)
		ft->method = fc->ft.method;
	if (fc->rank_set)
		ft->lora_rank = fc->ft.lora_rank;
	if (fc->targets_set)
		ft->lora_targets = fc->ft.lora_targets;
	if (fc->offload_set == 1)
		ft->offload = fc->ft.offload;
	if (host)
		ft_cli_host(fc, host);
	return RC_OK;
}

void ft_cli_host(const struct ft_cli *fc, struct price_host *host)
{
	if (!fc->host_set)
		return;
	if (fc->host.memory_bytes > 0)
		host->memory_bytes = fc->host.memory_bytes;
	if (fc->host.cpu_cores > 0)
		host->cpu_cores = fc->host.cpu_cores;
	if (fc->host.pcie_bytes_per_s > 0)
		host->pcie_bytes_per_s = fc->host.pcie_bytes_per_s;
	if (fc->host.nvme_bytes_per_s > 0)
		host->nvme_bytes_per_s = fc->host.nvme_bytes_per_s;
}

void ft_cli_help(FILE *f, int plan)
{
	fprintf(f, "fine-tuning:\n"
	       "  --finetune none|full|lora|qlora   what trains: none is pre-training; full\n"
	       "                          fine-tunes every weight; lora trains rank-r adapters\n"
	       "                          beside frozen bf16 weights; qlora with the frozen\n"
	       "                          weights in 4-bit NF4 (default: none)\n"
	       "  --lora-rank R           adapter rank (default: %d)\n"
	       "  --lora-targets LIST     projections adapted: all, or q,k,v,o,gate,up,down\n"
	       "                          separated by ',' (default: all)\n",
	       SIM_LORA_DEFAULT_RANK);
	if (plan)
		fprintf(f, "  --offload auto|none|cpu|nvme   optimizer states (and ZeRO-3's weights) in\n"
		       "                          host memory or on NVMe, the step on the CPU: auto\n"
		       "                          searches them where GPU memory binds (default: auto)\n");
	else
		fprintf(f, "  --offload none|cpu|nvme optimizer states (and ZeRO-3's weights) in host\n"
		       "                          memory or on NVMe, the step on the CPU (default: none)\n");
	fprintf(f, "  --epochs E              passes over the dataset; with --dataset-tokens, in\n"
	       "                          place of --tokens (default: none)\n"
	       "  --dataset-tokens N      tokens of the dataset, e.g. 50M (default: none)\n"
	       "  --host KEY=V,...        the host of your machine, for offload: memory (bytes,\n"
	       "                          e.g. 512G), cores (physical), pcie (GB/s per GPU, one\n"
	       "                          direction), nvme (GB/s a node) (default: hardware.csv's\n"
	       "                          or hosts.csv's figures)\n");
}

void ft_cli_print_memory(const struct sim_plan *p)
{
	const struct sim_memory *x = &p->result.memory;
	char a[32], b[32], c[32], d[32], e[32], f[32], g[32];

	printf("memory    per GPU %s of %s: weights %s, gradients %s, optimizer %s, activations %s, "
	       "other %s", unit_fmt_bytes(a, sizeof(a), x->total),
	       unit_fmt_bytes(b, sizeof(b), x->capacity), unit_fmt_bytes(c, sizeof(c), x->weights),
	       unit_fmt_bytes(d, sizeof(d), x->grads), unit_fmt_bytes(e, sizeof(e), x->optimizer),
	       unit_fmt_bytes(f, sizeof(f), x->activations), unit_fmt_bytes(g, sizeof(g), x->other));
	if (p->par.ft.offload != SIM_OFFLOAD_NONE)
		printf("; host %s of %s per node", unit_fmt_bytes(a, sizeof(a), x->host),
		       unit_fmt_bytes(b, sizeof(b), x->host_capacity));
	if (x->nvme > 0)
		printf(", NVMe %s", unit_fmt_bytes(c, sizeof(c), x->nvme));
	printf("\n");
}

void ft_cli_print(const struct sim_plan *p)
{
	const struct sim_parallel *q = &p->par;
	const struct sim_finetune *ft = &q->ft;
	const struct sim_result *r = &p->result;
	const struct sim_cluster *c = &p->cluster;
	int gpus = q->tp * q->pp * q->dp * q->cp;
	char b1[32], b2[32], t[64];

	if (gpus > 1 && !c->gpu.nvlink && !c->gpu.p2p)
		printf("links     %s has no NVLink and no peer-to-peer: TP and DP collectives "
		       "go through host memory at PCIe speed (half the link each way)\n",
		       c->gpu.name);
	if (ft->method == SIM_FT_NONE && ft->offload == SIM_OFFLOAD_NONE)
		return;
	printf("finetune  %s", sim_ft_method_names[ft->method]);
	if (ft->method == SIM_FT_LORA || ft->method == SIM_FT_QLORA) {
		double adapters, dequant;

		sim_lora_targets_str(ft->lora_targets, t, sizeof(t));
		printf(" rank %d on %s: %s trainable of %s (%.2f%%); base frozen%s, so no weight "
		       "gradients for it\n", ft->lora_rank > 0 ? ft->lora_rank : SIM_LORA_DEFAULT_RANK,
		       t, unit_fmt_count(b1, sizeof(b1), sim_trainable_params(&p->model, ft)),
		       unit_fmt_count(b2, sizeof(b2), sim_model_params(&p->model)),
		       100 * sim_trainable_params(&p->model, ft) / sim_model_params(&p->model),
		       ft->method == SIM_FT_QLORA ? " in NF4 (4.127 bits a weight)" : "");
		sim_finetune_parts(&p->model, q, c, &adapters, &dequant);
		printf("          of the compute: adapters %s", unit_fmt_duration(b1, sizeof(b1),
										 adapters));
		if (ft->method == SIM_FT_QLORA)
			printf(", NF4 dequantisation %s", unit_fmt_duration(b2, sizeof(b2), dequant));
		printf("\n");
	} else {
		printf(": every weight trains (%s)\n",
		       unit_fmt_count(b1, sizeof(b1), sim_model_params(&p->model)));
	}
	if (ft->offload == SIM_OFFLOAD_NONE)
		return;
	printf("offload   %s: optimizer states%s on the %s, the optimizer step on %.0f CPU "
	       "cores (%s), host transfers exposed %s\n", sim_offload_names[ft->offload],
	       q->zero >= 3 ? " and weights" : "",
	       ft->offload == SIM_OFFLOAD_NVME ? "host's NVMe" : "host", c->host.cpu_cores,
	       unit_fmt_duration(b1, sizeof(b1), r->breakdown.optimizer_s),
	       unit_fmt_duration(b2, sizeof(b2), r->breakdown.offload_s));
}
