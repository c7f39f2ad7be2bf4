/*
 * export_skypilot.c - the skypilot format: a SkyPilot task YAML (`sky
 * launch` it as written, or `sky jobs launch` for spot: a managed job); docs.skypilot.co, "YAML Configuration";
 * sky/utils/schemas.py): resources from the plan's offering, num_nodes,
 * and a run: script starting torchrun from SkyPilot's node variables.
 * Strings from the plan are double-quoted in the YAML and single-quoted
 * in the script.  Chooses no cloud the plan did not price.
 */
#include "export_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SkyPilot's AcceleratorName for the canonical GPU gpu on provider, as
 * the catalogs spell it (skypilot-catalog catalogs/v8/common/
 * accelerators.csv and each cloud's vms.csv; data/SOURCES.md): one name
 * for a GPU's form factors on most clouds (H100 for SXM, PCIe and NVL),
 * RunPod's own for its SXM and NVL parts, Lambda's A6000.  A GPU not
 * listed goes by its canonical name, which gpus.csv keeps equal to
 * SkyPilot's where there is one (B200, L40S, RTX4090, MI300X, ...). */
static const char *skypilot_accelerator(const char *provider, const char *gpu)
{
	static const struct {
		const char *provider; /* NULL: any */
		const char *gpu, *name;
	} names[] = {
		{ "runpod", "H100-SXM5-80GB", "H100-SXM" },
		{ "runpod", "H100-NVL-94GB", "H100-NVL" },
		{ "runpod", "H200-SXM-141GB", "H200-SXM" },
		{ "runpod", "A100-SXM4-80GB", "A100-80GB-SXM" },
		{ "lambda", "RTXA6000", "A6000" },
		{ NULL, "H100-SXM5-80GB", "H100" },
		{ NULL, "H100-PCIe-80GB", "H100" },
		{ NULL, "H100-NVL-94GB", "H100" },
		{ NULL, "H200-SXM-141GB", "H200" },
		{ NULL, "A100-SXM4-80GB", "A100-80GB" },
		{ NULL, "A100-PCIe-80GB", "A100-80GB" },
		{ NULL, "A100-SXM4-40GB", "A100" },
		{ NULL, "V100-SXM2-32GB", "V100-32GB" },
		{ NULL, "V100-SXM2-16GB", "V100" },
	};

	for (size_t i = 0; i < GP_ARRAY_LEN(names); i++)
		if ((!names[i].provider || strcmp(names[i].provider, provider) == 0) &&
		    strcmp(names[i].gpu, gpu) == 0)
			return names[i].name;
	return gpu;
}

/* The head of a run: script: the first node's address from
 * SKYPILOT_NODE_IPS (one per line, the head node first) and torchrun over
 * SkyPilot's node variables (docs.skypilot.co, "Distributed Multi-Node
 * Jobs"), leaving the training script and its arguments to the caller. */
static void skypilot_torchrun(struct export_buf *b)
{
	export_printf(b, "MASTER_ADDR=$(echo \"$SKYPILOT_NODE_IPS\" | head -n1)\n"
			 "torchrun --nnodes \"$SKYPILOT_NUM_NODES\""
			 " --nproc-per-node \"$SKYPILOT_NUM_GPUS_PER_NODE\" \\\n"
			 "  --node-rank \"$SKYPILOT_NODE_RANK\" --master-addr \"$MASTER_ADDR\""
			 " --master-port 29500");
}

/* The run: script for p under fw: shell text whose only strings from the
 * plan are export_shell_quote()d. */
static void skypilot_script(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	struct words ws = { 0 };

	export_printf(b, "set -e\necho ");
	export_shell_quote(b, p->model.name);
	export_printf(b, "\necho 'gpuplan layout: tp %d pp %d dp %d cp %d, %d nodes x %d GPUs'\n",
		      p->par.tp, p->par.pp, p->par.dp, p->par.cp, export_nodes(p),
		      export_gpus_per_node(p));
	export_trainer_head(b, p, fw, 0, DS_CONFIG);
	skypilot_torchrun(b);
	export_printf(b, " \\\n ");
	export_trainer_words(&ws, p, fw, DS_CONFIG);
	export_words_shell(b, &ws);
	export_words_release(&ws);
	/* EXTRA_ARGS (data, tokenizer, checkpoints) is the user's, split
	 * into words as given on `sky launch --env`. */
	export_printf(b, " $EXTRA_ARGS\n");
}

/* What to buy by hand before launching p, a plan priced as a reservation
 * (a capacity block, a calendar-mode reservation): SkyPilot rents on
 * demand and spot but buys no reservation, and it uses one only by the id
 * the provider gives when it is bought, through ~/.sky/config.yaml's
 * <cloud>.specific_reservations (docs.skypilot.co, "Reservations & DWS"),
 * which no plan can know.  Strings from the plan are YAML-quoted, so a
 * line break in them cannot end the comment. */
static void skypilot_reservation_comment(struct export_buf *b, const struct sim_plan *p)
{
	const struct price_offering *o = &p->offering;
	double days = ceil(p->time_to_train_s / 86400.0 - 1e-9);

	export_printf(b, "# BUY FIRST, by hand: this plan is priced as a reservation (purchase "
			 "%s): %d x ", price_purchase_str(p->purchase), export_nodes(p));
	export_yaml_quote(b, o->instance_type);
	export_printf(b, " of ");
	export_yaml_quote(b, o->provider);
	export_printf(b, " in ");
	export_yaml_quote(b, o->region);
	if (days > 0)
		export_printf(b, " for at least %.0f day%s (the job's time; the provider's terms "
				 "round it up)", days, days == 1 ? "" : "s");
	export_printf(b, ".\n# SkyPilot does not buy it.  Once bought, put the id the provider "
			 "gives it under\n# <cloud>.specific_reservations in ~/.sky/config.yaml "
			 "(docs.skypilot.co, \"Reservations\n# & DWS\"); without it SkyPilot asks "
			 "for these nodes on demand,\n# which this plan did not price.\n");
}

/* The SkyPilot task for p under fw (export.h's comment). */
void export_write_skypilot(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	const struct price_offering *o = &p->offering;
	int gpn = export_gpus_per_node(p), ds = fw == PLAN_FRAMEWORK_DEEPSPEED;
	int spot = p->purchase == PRICE_PURCHASE_SPOT;
	struct export_buf run = { 0 };

	/* A spot purchase runs as a managed job, which SkyPilot relaunches
	 * after a preemption (docs.skypilot.co, "Managed Jobs"); the script
	 * resumes from CKPT_DIR, which must outlive the nodes. */
	if (spot)
		export_printf(b, "# SkyPilot managed job written by gpuplan: sky jobs launch -n NAME "
				 "THIS.yaml%s\n# (--env EXTRA_ARGS=... for data and tokenizer flags).  "
				 "Spot nodes are preempted: SkyPilot\n# relaunches the job (job_recovery), "
				 "which resumes from the checkpoints, so their\n# directory must be a bucket "
				 "mount (file_mounts) that outlives the nodes.\n",
			      ds ? " --env TRAIN_SCRIPT=..." : "");
	else
		export_printf(b, "# SkyPilot task written by gpuplan: sky launch -c NAME THIS.yaml%s\n"
				 "# (sky launch --env EXTRA_ARGS=... for data and tokenizer flags)\n",
			      ds ? " --env TRAIN_SCRIPT=..." : "");
	if (p->model.tokenizer_gated)
		export_printf(b, "# The tokenizer is gated on the Hugging Face Hub: --env HF_TOKEN "
				 "(from your environment) gives every node the token.\n");
	if (p->purchase == PRICE_PURCHASE_BLOCK)
		skypilot_reservation_comment(b, p);
	export_printf(b, "name: ");
	export_yaml_quote(b, p->model.name);
	export_printf(b, "\nresources:\n  accelerators: {");
	export_yaml_quote(b, skypilot_accelerator(o->provider, p->cluster.gpu.name));
	export_printf(b, ": %d}\n", gpn);
	/* A custom cluster has no offering; hardware the user owns is not a
	 * cloud SkyPilot rents from. */
	if (o->provider[0] && !o->owned) {
		export_printf(b, "  cloud: ");
		export_yaml_quote(b, o->provider);
		/* Region "all" is the price table's word for one price in
		 * every region (the Lambda, RunPod, Oracle and Nebius rows,
		 * data/SOURCES.md), not a region SkyPilot knows: SkyPilot
		 * chooses one. */
		if (o->region[0] && strcmp(o->region, "all") != 0) {
			export_printf(b, "\n  region: ");
			export_yaml_quote(b, o->region);
		}
		/* An instance type fixes the GPUs per node: named only when
		 * the plan fills its nodes. */
		if (o->instance_type[0] && o->gpus_per_node == gpn) {
			export_printf(b, "\n  instance_type: ");
			export_yaml_quote(b, o->instance_type);
		}
		export_printf(b, "\n");
	}
	export_printf(b, "  use_spot: %s\n", spot ? "true" : "false");
	/* FAILOVER: relaunch in the same region first, then others the
	 * resources allow (sky/utils/schemas.py, job_recovery) */
	if (spot)
		export_printf(b, "  job_recovery:\n    strategy: FAILOVER\n");
	export_printf(b, "num_nodes: %d\nenvs:\n  TRAIN_SCRIPT: %s\n  EXTRA_ARGS: \"\"\n",
		      export_nodes(p), ds ? "null" : "\"pretrain_gpt.py\"");
	/* what the Megatron-LM arguments read and only the user knows:
	 * sky launch --env NAME=... */
	if (!ds)
		export_printf(b, "  DATA_PATH: null\n  CKPT_DIR: null\n%s",
			      p->model.tokenizer[0] ? "" : "  TOKENIZER: null\n");
	if (!ds) {
		const char *vars[4];
		int n = export_megatron_model_vars(p, vars, 4);

		for (int i = 0; i < n; i++)
			export_printf(b, "  %s: null\n", vars[i]);
	}
	if (p->model.tokenizer_gated)
		export_printf(b, "  HF_TOKEN: null\n");
	skypilot_script(&run, p, fw);
	/* A literal block: every line indented, so YAML hands the script
	 * back byte for byte. */
	export_printf(b, "run: |\n");
	for (const char *line = run.s; *line;) {
		size_t n = strcspn(line, "\n");

		export_printf(b, "%s%.*s\n", n ? "  " : "", (int)n, line);
		line += n + (line[n] == '\n');
	}
	free(run.s);
}
