/*
 * main.c - gpuplan's dispatcher: a command table, global help and the one
 * place where a status becomes an exit code.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define GPUPLAN_VERSION "0.1.0"

struct command {
	const char *name;
	enum rc (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "plan", cmd_plan, "choose GPUs, count and parallelism within a budget or deadline" },
	{ "frontier", cmd_frontier, "print the cost-versus-time Pareto frontier across offerings" },
	{ "compare", cmd_compare, "rent or buy: time, cost and break-even across GPU types for one job" },
	{ "simulate", cmd_simulate, "predict step time, throughput, MFU and memory of one plan" },
	{ "scaling", cmd_scaling, "throughput and scaling efficiency against GPU count, beside ideal" },
	{ "execute", cmd_execute, "run a plan's training steps over MPI and compare with the prediction" },
	{ "calibrate", cmd_calibrate, "measure this machine's GEMM, memory and collective speeds for the simulator" },
	{ "export", cmd_export, "write a plan as Megatron, DeepSpeed, torchrun, Slurm, mpirun, Kubernetes or SkyPilot config" },
	{ "prices", cmd_prices, "list, update and show the history of GPU price tables" },
	{ "quotas", cmd_quotas, "list, update and show the history of your GPU quotas" },
	{ "gpus", cmd_gpus, "list the GPU catalog" },
	{ "models", cmd_models, "list or show model presets" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: gpuplan <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < GP_ARRAY_LEN(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "  %-10s %s\n", "help", "this list, or `gpuplan help CMD` for a command's options");
	fprintf(f, "  %-10s %s\n", "version", "print the version");
	fprintf(f, "\nexit status: 0 ok, 1 runtime error, 2 bad usage or input, "
		   "3 no feasible plan, 4 GPU/NCCL/MPI unavailable\n");
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < GP_ARRAY_LEN(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct command *cmd;

	cli_set_command_line(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return rc_exit_code(RC_USAGE);
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		if (argc > 2 && (cmd = find(argv[2]))) {
			char *hargv[] = { argv[2], "--help", NULL };
			return rc_exit_code(cmd->fn(2, hargv));
		}
		if (argc > 2) {
			gp_error("help: unknown command '%s'", argv[2]);
			return rc_exit_code(RC_USAGE);
		}
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("gpuplan %s\n", GPUPLAN_VERSION);
		return 0;
	}
	cmd = find(argv[1]);
	if (!cmd) {
		gp_error("unknown command '%s'", argv[1]);
		gp_hint("run 'gpuplan help' for the list of commands");
		return rc_exit_code(RC_USAGE);
	}
	return rc_exit_code(cmd->fn(argc - 1, argv + 1));
}
