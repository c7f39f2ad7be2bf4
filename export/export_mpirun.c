/*
 * export_mpirun.c - the mpirun format (Open MPI starting the trainer
 * directly, one rank a GPU, torch.distributed's variables from Open MPI's)
 * and mpirun-execute (gpuplan execute under mpirun: a measurement, not
 * training).  Writes no hostfile of real hosts: those are the user's.
 */
#include "export_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Open MPI starting fw directly, one rank a GPU: the plan's GPUs as -np,
 * each rank's torch.distributed variables, which Megatron-LM and
 * DeepSpeed's init_distributed read, from Open MPI's
 * (OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _SIZE), and the variables the
 * script's head exports passed on with -x. */
void export_write_mpirun(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	int nodes = export_nodes(p), gpn = export_gpus_per_node(p);
	struct words ws = { 0 };
	char e[4 * PRICE_NAME_MAX];

	export_printf(b, "#!/usr/bin/env bash\n# %s for %s under Open MPI: %d ranks, %d nodes x "
			 "%d GPUs (written by gpuplan)\n", export_framework_title(fw),
		      gp_term_escape(e, sizeof(e), p->model.name), export_gpus(p), nodes, gpn);
	export_trainer_head(b, p, fw, 0, DS_CONFIG);
	if (nodes > 1)
		export_printf(b, ": \"${HOSTFILE:?set HOSTFILE to an Open MPI hostfile of the %d nodes, "
				 "one line HOST slots=%d per node}\"\n"
				 ": \"${MASTER_ADDR:?set MASTER_ADDR to the address of the first host}\"\n",
			      nodes, gpn);
	else
		export_printf(b, "MASTER_ADDR=${MASTER_ADDR:-localhost}\n");
	export_printf(b, "mpirun -np %d%s --map-by ppr:%d:node --bind-to numa \\\n"
			 "  -x MASTER_ADDR=\"$MASTER_ADDR\" -x MASTER_PORT=29500", export_gpus(p),
		      nodes > 1 ? " --hostfile \"$HOSTFILE\"" : "", gpn);
	if (export_one_connection(p, fw))
		export_printf(b, " -x CUDA_DEVICE_MAX_CONNECTIONS");
	if (!p->cluster.gpu.p2p)
		export_printf(b, " -x NCCL_P2P_DISABLE");
	if (nodes > 1)
		export_printf(b, " -x NCCL_IB_DISABLE");
	if (fw == PLAN_FRAMEWORK_DEEPSPEED)
		export_printf(b, " -x GPUPLAN_TRAIN_SAMPLES -x GPUPLAN_SAVE_INTERVAL_STEPS");
	if (fw == PLAN_FRAMEWORK_DEEPSPEED && p->model.experts > 0)
		export_printf(b, " -x GPUPLAN_NUM_EXPERTS -x GPUPLAN_MOE_TOP_K -x GPUPLAN_EP_SIZE");
	if (p->model.tokenizer_gated)
		export_printf(b, " -x HF_TOKEN");
	export_printf(b, " \\\n  bash -c 'RANK=$OMPI_COMM_WORLD_RANK LOCAL_RANK=$OMPI_COMM_WORLD_LOCAL_RANK "
			 "WORLD_SIZE=$OMPI_COMM_WORLD_SIZE \\\n    exec python3 \"$@\"' mpirun-rank");
	export_trainer_words(&ws, p, fw, DS_CONFIG);
	export_words_shell(b, &ws);
	export_words_release(&ws);
	export_printf(b, "\n");
}

/* The mpirun-execute format: gpuplan's own measurement of p under mpirun. */
void export_write_mpirun_execute(struct export_buf *b, const struct sim_plan *p,
				 enum plan_framework fw)
{
	int nodes = export_nodes(p), gpn = export_gpus_per_node(p);

	(void)fw;
	export_printf(b, "# gpuplan's own measurement run of the plan (gpuplan execute), not "
		      "training\n");
	export_printf(b, "# hostfile: one line per node; replace node1..node%d with your hosts\n",
		      nodes);
	export_printf(b, "for i in $(seq 1 %d); do echo \"node$i slots=%d\"; done > hosts\n",
		      nodes, gpn);
	export_printf(b, "mpirun -np %d --hostfile hosts --map-by ppr:%d:node --bind-to numa",
		      export_gpus(p), gpn);
	if (!p->cluster.gpu.p2p)
		export_printf(b, " -x NCCL_P2P_DISABLE=1");
	export_printf(b, " -x CUDA_DEVICE_MAX_CONNECTIONS=1 gpuplan execute \"${PLAN:-plan.json}\""
		      " --backend cuda\n");
}
