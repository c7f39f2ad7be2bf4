/*
 * cli.h - the command table's entry points and the small helpers every
 * command front-end shares (flag parsing with one error style, catalog
 * loading).  Commands parse argv with getopt_long, call module APIs and
 * print; they hold no model logic.
 *
 * Layers (tests/layers/test_layers.sh): common < pricing < simulator <
 * planner < executor < cli; a file includes and calls only its own layer
 * and those before it.  The CLI is the top: it reads
 * every module's public header, and no command calls another's file (what
 * two share lives in a cli_*.c helper).
 */
#ifndef GPUPLAN_CLI_H
#define GPUPLAN_CLI_H

#include "common.h"

/* Each command returns an enum rc; main() maps it to the exit code.
 * argv[0] is the command name. */
enum rc cmd_gpus(int argc, char **argv);
enum rc cmd_models(int argc, char **argv);
enum rc cmd_prices(int argc, char **argv);
enum rc cmd_simulate(int argc, char **argv);
enum rc cmd_plan(int argc, char **argv);
enum rc cmd_frontier(int argc, char **argv);
enum rc cmd_execute(int argc, char **argv);
enum rc cmd_calibrate(int argc, char **argv);
enum rc cmd_export(int argc, char **argv);
enum rc cmd_compare(int argc, char **argv);
enum rc cmd_scaling(int argc, char **argv);
enum rc cmd_quotas(int argc, char **argv);

/* The command line gpuplan was started with, as one string (arguments
 * with blanks or quotes single-quoted), recorded in the plan files it
 * writes.  main() sets it once. */
void cli_set_command_line(int argc, char **argv);
const char *cli_command_line(void);

/* Directory of the shipped data files: $GPUPLAN_SHARE_DIR, else data/ next
 * to the executable's build tree, else the install prefix's share/gpuplan. */
const char *cli_data_dir(void);

/* Flag parsers: on bad input print "error: --flag: expected ..., found
 * '...'" and return RC_USAGE. */
enum rc cli_parse_int(const char *flag, const char *arg, int min, int max, int *out);
/* A finite number from min to max: every figure a flag takes is bounded,
 * so that products of a few (a price by hours by GPUs) stay finite. */
enum rc cli_parse_double(const char *flag, const char *arg, double min, double max,
			 double *out);
/* --storage-price's bound, USD per GB-month (S3 Standard: 0.023). */
#define CLI_STORAGE_USD_MAX 1000.0
enum rc cli_parse_count(const char *flag, const char *arg, double *out);
enum rc cli_parse_usd(const char *flag, const char *arg, double *out);
enum rc cli_parse_duration(const char *flag, const char *arg, double *out_s);
/* Fills opts[0 .. SIM_MODEL_FIELDS] with the model fields' flags
 * (sim_model_fields: "--experts", "--head-dim", ...), each taking a value,
 * field i's option value first + i, then getopt_long's closing zero
 * entry: what simulate and execute append to their own options. */
struct option;
void cli_model_field_options(struct option *opts, int first);
/* Parses arg as the value of the model field whose flag is "--" name
 * (sim_model_fields) into m, *field pointing at it.  Returns RC_OK, or
 * RC_USAGE after the message (an unknown name is a programmer's error). */
struct sim_model;
enum rc cli_parse_model_field(const char *name, const char *arg, struct sim_model *m,
			      int **field);
/* One of names[0..n-1]: *out = its index ("expected a, b or c"). */
enum rc cli_parse_choice(const char *flag, const char *arg, const char *const *names, int n,
			 int *out);
/* "--recompute-modules mla_up_proj,moe_act": each a name of
 * sim_recompute_module_names, once; *out = their bits.  RC_USAGE after
 * the message otherwise. */
enum rc cli_parse_recompute_modules(const char *arg, unsigned *out);

/* JSON for `models list|show` (cli/cmd_models_json.c): every preset of t,
 * or only m when m is not NULL.  Returns a string the caller frees. */
struct sim_model_table;
struct sim_model;
char *cli_models_to_json(const struct sim_model_table *t, const struct sim_model *m);

/* Finds a model preset of t, read from path, by name (cli/cli_util.c).
 * Returns it, or NULL after "error: FLAG: expected a preset of PATH,
 * found '...'" and a hint: the nearest preset's name when one is near,
 * else `otherwise`. */
const struct sim_model *cli_model_find(const struct sim_model_table *t, const char *flag,
				       const char *path, const char *name,
				       const char *otherwise);

/* What `prices` and `quotas` print alike (cli/cli_price.c).
 * cli_print_json prints the JSON document s and a newline to stdout and
 * frees s (NULL: nothing).  cli_print_change prints one change of an
 * update as "  + KEY: ...", "  ~ KEY: field old -> new (+x%)" or
 * "  - KEY: field old (removed)".  cli_print_update_end prints how an
 * update ended when it wrote nothing (a dry run, or no changes to table)
 * and returns 1 when it wrote, for the caller to say what.
 * cli_show_history prints the history of the user's prices (quotas 0) or
 * quotas (1) as a table or JSON; returns the loader's status.  cli_any
 * gives a quota's instance type for people: "*" when it is "" (any). */
struct price_change;
void cli_print_json(char *s);
void cli_print_change(const char *key, const struct price_change *c);
int cli_print_update_end(int dry_run, int written, const char *table);
enum rc cli_show_history(int quotas, int json);
const char *cli_any(const char *s);

/* An expected count of interruptions for people into buf: three
 * significant digits ("0.327", "2.69", "17.8"), whole from 100 on
 * ("1602", never "1.6e+03"). */
const char *cli_fmt_expected(char *buf, size_t size, double n);

/* The effective training time that waste (the share of wall time
 * interruptions and checkpoints take) leaves, for people into buf:
 * a percentage with two decimals ("98.93%"). */
const char *cli_fmt_effective(char *buf, size_t size, double waste);

/* Reports an unknown option or missing argument the getopt way, as one
 * line, and returns RC_USAGE. */
enum rc cli_bad_option(const char *cmd, int optopt_, const char *arg);

/* Progress for a command that runs as rank 0 of a job it may have
 * launched itself (execute, calibrate).  Under mpirun a rank's stderr is
 * a pipe, so cli_progress_pass(), called before launching, tells the ranks
 * through $GPUPLAN_PROGRESS_TTY that the user's stderr is a terminal;
 * cli_progress_start() is gp_progress_start() that also draws then
 * (never with --quiet).  Both read gp_log_is_quiet(). */
struct gp_progress;
void cli_progress_pass(void);
struct gp_progress *cli_progress_start(const char *what, size_t total);

#endif
