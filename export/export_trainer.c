/*
 * export_trainer.c - the trainer a launcher starts, either framework: the
 * head of its shell script (what the framework runs otherwise than
 * priced, notes, NCCL environment, Megatron-LM's placeholders or
 * DeepSpeed's variables and config) and its argument words.  Chooses
 * between export_megatron_args.c and export_deepspeed_json.c; starts
 * nothing itself.
 */
#include "export_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Comment lines on what the trainer is told beyond the layout: the
 * training length and the checkpoint interval, by the names fw reads them
 * (Megatron-LM's flags; the GPUPLAN_ variables of deepspeed_env), and the
 * precision. */
void export_trainer_notes(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	int ds = fw == PLAN_FRAMEWORK_DEEPSPEED;
	char iv[32], st[32], tok[64], gpu[4 * PRICE_NAME_MAX];
	long long samples = export_train_samples(p);

	if (samples > 0)
		export_printf(b, "# %s tokens = %lld sequences of %d (%s)\n",
			      unit_fmt_count(tok, sizeof(tok), p->tokens), samples, p->model.seq,
			      ds ? "GPUPLAN_TRAIN_SAMPLES" : "--train-samples");
	export_printf(b, "# checkpoints every %s%s = %lld steps of %s (%s); the plan keeps %d\n",
		      unit_fmt_duration(iv, sizeof(iv), export_ckpt_interval_s(p)),
		      p->ckpt_interval_s > 0 ? " (the plan's)" : " (the plan states none: gpuplan's default)",
		      export_save_interval_steps(p), unit_fmt_duration(st, sizeof(st), p->result.step_time_s),
		      ds ? "GPUPLAN_SAVE_INTERVAL_STEPS" : "--save-interval",
		      p->ckpt_keep > 0 ? p->ckpt_keep : PLAN_DEFAULT_CKPT_KEEP);
	if (!price_gpu_has_bf16(&p->cluster.gpu))
		export_printf(b, "# %s has no bf16: fp16 with dynamic loss scaling (%s)\n",
			      gp_term_escape(gpu, sizeof(gpu), p->cluster.gpu.name), ds ? "\"fp16\" in ds_config.json" : "--fp16");
}

/* The head every shell script starting a trainer shares: what fw runs
 * otherwise than priced (export_framework_predict), the notes, set -eu, the NCCL
 * environment, MASTER_ADDR's check where a rendezvous needs it
 * (check_master); then Megatron-LM's placeholders, or DeepSpeed's
 * variables and, where config is not NULL, the ds_config.json the
 * arguments name written at config (a quoted here-document: the shell
 * expands nothing in it). */
void export_trainer_head(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw,
			 int check_master, const char *config)
{
	struct sim_result r;
	char why[256];

	if (export_framework_predict(p, fw, &r, why, sizeof(why)) == 1)
		export_framework_comment(b, p, fw, &r);
	export_trainer_notes(b, p, fw);
	export_printf(b, "set -eu\n");
	export_nccl_env(b, p, "export ", export_one_connection(p, fw));
	if (check_master)
		export_master_addr_check(b, p);
	export_hf_token_check(b, p);
	if (fw != PLAN_FRAMEWORK_DEEPSPEED) {
		export_megatron_env(b, p);
		return;
	}
	export_deepspeed_env(b, p);
	if (config) {
		char *cfg = export_deepspeed_config(p, 0), *q = gp_shell_quote(config);

		export_printf(b, "cat > %s <<'GPUPLAN_DS_CONFIG'\n%s\nGPUPLAN_DS_CONFIG\n", q, cfg);
		free(q);
		free(cfg);
	}
}

/* The training script and its arguments under fw: "$TRAIN_SCRIPT"
 * (export_trainer_head sets or checks it), then Megatron-LM's arguments, or the
 * DeepSpeed script's naming the config at config. */
void export_trainer_words(struct words *ws, const struct sim_plan *p, enum plan_framework fw,
			  const char *config)
{
	export_words_push(ws, 0, WORD_VAR, "TRAIN_SCRIPT");
	if (fw == PLAN_FRAMEWORK_DEEPSPEED)
		export_deepspeed_words(ws, p, config);
	else
		export_megatron_words(ws, p);
}
