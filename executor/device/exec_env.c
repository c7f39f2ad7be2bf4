/*
 * exec_env.c - what the launcher (mpirun, srun) told this process before
 * MPI starts: whether it runs under one, its world rank and size, and its
 * place among the ranks of its node, read from the environment.  Every
 * layer reads these, from the device (which GPU is this rank's, which
 * rank a message names) up; starting a launcher is exec_launch.c's.
 */
#include <stdlib.h>

#include "exec.h"

/* What each launcher tells its ranks before MPI_Init: Open MPI's mpirun
 * OMPI_COMM_WORLD_RANK and _SIZE; PMI-1 and PMI-2 (srun --mpi=pmi2,
 * MPICH's and Intel MPI's launchers) PMI_RANK and PMI_SIZE; PMIx (srun
 * --mpi=pmix, as the Slurm script of `gpuplan export` runs it) PMIX_RANK
 * alone, Slurm giving the step's size as SLURM_STEP_NUM_TASKS. */
static const char *first_env(const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = getenv(names[i]);

		if (v && *v)
			return v;
	}
	return NULL;
}

int exec_under_launcher(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK" };

	return first_env(vars, GP_ARRAY_LEN(vars)) != NULL;
}

int exec_launcher_rank(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK" };
	const char *r = first_env(vars, GP_ARRAY_LEN(vars));

	return r ? atoi(r) : 0;
}

int exec_launcher_size(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE" };
	static const char *const slurm[] = { "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS" };
	const char *r = first_env(vars, GP_ARRAY_LEN(vars));

	if (!r && getenv("PMIX_RANK"))
		r = first_env(slurm, GP_ARRAY_LEN(slurm));
	return r ? atoi(r) : 1;
}

int exec_launcher_local_rank(void)
{
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID", "LOCAL_RANK",
	};
	const char *v = first_env(vars, GP_ARRAY_LEN(vars));

	return v ? atoi(v) : 0;
}

int exec_launcher_local_size(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS" };
	const char *v = first_env(vars, GP_ARRAY_LEN(vars));
	int n = v ? atoi(v) : exec_launcher_size();

	return n > 0 ? n : 1;
}
