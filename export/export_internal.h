/*
 * export_internal.h - what the files of export/ share, bottom up; none of
 * it leaves the folder (export.h is the public side).
 *
 *   export_quote.c         the text buffer, words, shell and YAML quoting
 *   export_launch.c        the launch shape, training length, NCCL, torchrun
 *   export_framework.c     what Megatron-LM or DeepSpeed runs otherwise than priced
 *   export_megatron_args.c Megatron-LM's arguments      (the trainers)
 *   export_deepspeed_json.c DeepSpeed's config and variables
 *   export_trainer.c       either trainer's script head and words
 *   export_megatron.c ... export_skypilot.c   one file a format (the writers)
 *   export.c               the format table, the checks, export_plan
 *
 * Each file calls only files above it in this list.
 */
#ifndef GPUPLAN_EXPORT_INTERNAL_H
#define GPUPLAN_EXPORT_INTERNAL_H

#include "export.h"
#include "plan.h"

/* ---- export_quote.c ------------------------------------------------- */

/* A growable NUL-terminated string; { 0 } is empty, the caller frees s. */
struct export_buf {
	char *s;
	size_t len, cap;
};

/* Appends printf-formatted text to b. */
void export_printf(struct export_buf *b, const char *fmt, ...) GP_PRINTF(2, 3);

/* The trainer's argument list, built once as words, then written for a
 * shell (megatron, torchrun, slurm, mpirun, skypilot) or as a YAML list
 * (kubernetes).  A word is a flag or number gpuplan writes (plain), a
 * string from the plan (quoted for its language) or a variable the user
 * sets (the shell's "$NAME", the Kubernetes $(NAME) that the kubelet
 * expands in args).  { 0 } is empty; export_words_release frees it. */
enum word_kind { WORD_PLAIN, WORD_QUOTED, WORD_VAR };

struct word {
	char *s;
	enum word_kind kind;
	int brk;               /* 1: starts a new line in a script */
};

struct words {
	struct word *w;
	size_t n, cap;
};

void export_words_push(struct words *ws, int brk, enum word_kind kind, const char *s);
/* Plain words, split at blanks, the first starting a new line. */
void export_words_line(struct words *ws, const char *fmt, ...) GP_PRINTF(2, 3);
void export_words_release(struct words *ws);
/* ws as shell words, each line after a backslash-newline. */
void export_words_shell(struct export_buf *b, const struct words *ws);
/* ws as YAML block-list items at indent; joined: --flag=value items. */
void export_words_yaml(struct export_buf *b, const struct words *ws, int indent, int joined);
/* s as a YAML double-quoted scalar, or as one shell word. */
void export_yaml_quote(struct export_buf *b, const char *s);
void export_shell_quote(struct export_buf *b, const char *s);
/* 1 when s holds a control character. */
int export_has_control(const char *s);

/* ---- export_launch.c ------------------------------------------------ */

/* The plan's GPUs: tp x pp x dp x cp. */
int export_gpus(const struct sim_plan *p);
/* How the GPUs start: *nodes x *gpn; 0, or -1 with a reason in why. */
int export_launch_shape(const struct sim_plan *p, int *nodes, int *gpn, char *why, size_t size);
int export_gpus_per_node(const struct sim_plan *p);
int export_nodes(const struct sim_plan *p);
int export_grad_accum(const struct sim_plan *p);
void export_nccl_env(struct export_buf *b, const struct sim_plan *p, const char *prefix,
		     int one_connection);
/* Sequences to train (0: the plan has no tokens), the checkpoint interval
 * in seconds and in optimizer steps. */
long long export_train_samples(const struct sim_plan *p);
double export_ckpt_interval_s(const struct sim_plan *p);
long long export_save_interval_steps(const struct sim_plan *p);
void export_torchrun_line(struct export_buf *b, const struct sim_plan *p);
void export_master_addr_check(struct export_buf *b, const struct sim_plan *p);
/* HF_TOKEN's check where the tokenizer is gated (model.tokenizer_gated). */
void export_hf_token_check(struct export_buf *b, const struct sim_plan *p);
char *export_job_label(char *buf, size_t size, const char *name, int k8s);

/* ---- export_framework.c --------------------------------------------- */

int export_megatron_fsdp(const struct sim_plan *p);
int export_zero1_instead(const struct sim_plan *p, enum plan_framework fw);
const char *export_framework_title(enum plan_framework fw);
/* 0: fw runs p as priced; 1: otherwise, its prediction in *r; -1: not
 * re-priceable, the reason in why. */
int export_framework_predict(const struct sim_plan *p, enum plan_framework fw,
			     struct sim_result *r, char *why, size_t size);
void export_framework_comment(struct export_buf *b, const struct sim_plan *p,
			      enum plan_framework fw, const struct sim_result *r);
void export_framework_warn(const struct sim_plan *p, enum plan_framework fw,
			   const struct sim_result *r);
int export_one_connection(const struct sim_plan *p, enum plan_framework fw);

/* ---- the trainers: export_megatron_args.c, export_deepspeed_json.c -- */

/* What Megatron-LM cannot build of m, in words, or NULL. */
const char *export_megatron_lacks(const struct sim_model *m);
void export_megatron_words(struct words *ws, const struct sim_plan *p);
/* The model's placeholders (router coefficients no source gives) into
 * names[n]; returns how many. */
int export_megatron_model_vars(const struct sim_plan *p, const char *names[], int n);
void export_megatron_env(struct export_buf *b, const struct sim_plan *p);
/* ds_config.json, indented or on one line (compact); the caller frees it. */
char *export_deepspeed_config(const struct sim_plan *p, int compact);
void export_deepspeed_words(struct words *ws, const struct sim_plan *p, const char *config);
void export_deepspeed_env(struct export_buf *b, const struct sim_plan *p);

/* ---- export_trainer.c ----------------------------------------------- */

/* Where the Slurm, mpirun and SkyPilot scripts write the config: the
 * working directory, which every node of a multi-node run reads. */
#define DS_CONFIG "ds_config.json"

void export_trainer_notes(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw);
void export_trainer_head(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw,
			 int check_master, const char *config);
void export_trainer_words(struct words *ws, const struct sim_plan *p, enum plan_framework fw,
			  const char *config);

/* ---- the writers, one a format -------------------------------------- */

/* Appends format's text for p to b, trainer fw (export_plan has checked
 * p for it: export_check). */
void export_write_megatron(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw);
void export_write_deepspeed(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw);
void export_write_torchrun(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw);
void export_write_trl(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw);
void export_write_slurm(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw);
void export_write_slurm_execute(struct export_buf *b, const struct sim_plan *p,
				enum plan_framework fw);
void export_write_mpirun(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw);
void export_write_mpirun_execute(struct export_buf *b, const struct sim_plan *p,
				 enum plan_framework fw);
void export_write_pytorchjob(struct export_buf *b, const struct sim_plan *p,
			     enum plan_framework fw);
void export_write_trainjob(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw);
void export_write_skypilot(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw);

#endif
