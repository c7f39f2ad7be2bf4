/*
 * test_export.c - every export format carries the fields its tool
 * needs, the DeepSpeed config keeps the batch identity
 * train_batch_size = micro-batch x accumulation x DP, and the SkyPilot task
 * quotes every string it takes from the plan.
 */
#include "testutil.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"

/* Llama-3 70B on 4 nodes of 8 H100: TP 8, PP 4, DP 1, interleave 5,
 * mbs 1, gbs 512 -> accumulation 512. */
static void make_plan(struct sim_plan *p)
{
	memset(p, 0, sizeof(*p));
	strcpy(p->model.name, "llama3-70b");
	p->model.layers = 80;
	p->model.hidden = 8192;
	p->model.heads = 64;
	p->model.kv_heads = 8;
	p->model.ffn = 28672;
	p->model.vocab = 128256;
	p->model.seq = 8192;
	p->model.mlp = SIM_MLP_SWIGLU;
	sim_parallel_init(&p->par);
	p->par.tp = 8;
	p->par.pp = 4;
	p->par.dp = 1;
	p->par.cp = 1;
	p->par.mbs = 1;
	p->par.gbs = 512;
	p->par.interleave = 5;
	p->par.zero = 1;
	p->par.seq_parallel = 1;
	p->par.recompute = SIM_RECOMPUTE_SELECTIVE;
	strcpy(p->cluster.gpu.name, "H100-SXM5-80GB");
	/* what every plan file has (the reader requires them) */
	p->cluster.gpu.memory_bytes = 80e9;
	p->cluster.gpu.bf16_flops_per_s = 989e12;
	p->cluster.gpu.p2p = 1;
	p->cluster.gpus_per_node = 8;
	p->nodes = 4;
	p->time_to_train_s = 10 * 86400.0;
}

static char *export_ok(const struct sim_plan *p, enum export_format f)
{
	enum rc rc;
	char *s = export_plan(p, f, PLAN_FRAMEWORK_MEGATRON, &rc);

	assert_int_equal(rc, RC_OK);
	assert_non_null(s);
	return s;
}

static void test_export_megatron_flags(void **state)
{
	struct sim_plan p;
	char *s;

	(void)state;
	make_plan(&p);
	s = export_ok(&p, EXPORT_MEGATRON);
	assert_non_null(strstr(s, "--tensor-model-parallel-size 8"));
	assert_non_null(strstr(s, "--pipeline-model-parallel-size 4"));
	/* 80 layers / (4 stages x 5 chunks) = 4 layers per virtual stage */
	assert_non_null(strstr(s, "--num-layers-per-virtual-pipeline-stage 4"));
	assert_non_null(strstr(s, "--micro-batch-size 1 --global-batch-size 512"));
	assert_non_null(strstr(s, "--sequence-parallel"));
	assert_non_null(strstr(s, "--recompute-granularity selective"));
	assert_non_null(strstr(s, "--use-distributed-optimizer"));
	assert_non_null(strstr(s, "--num-query-groups 8"));
	assert_non_null(strstr(s, "--swiglu"));
	assert_non_null(strstr(s, "--bf16"));
	assert_non_null(strstr(s, "torchrun --nnodes 4 --nproc-per-node 8"));
	assert_null(strstr(s, "--context-parallel-size"));
	assert_null(strstr(s, "--pipeline-model-parallel-layout"));
	assert_null(strstr(s, "--tp-comm-overlap"));
	free(s);
	/* TP overlap priced: the userbuffers flag, which Megatron-LM takes
	 * only with sequence parallelism */
	p.par.tp_overlap = 1;
	s = export_ok(&p, EXPORT_MEGATRON);
	assert_non_null(strstr(s, "--sequence-parallel"));
	assert_non_null(strstr(s, "--tp-comm-overlap"));
	free(s);
}

/* Chunks Megatron-LM's even split cannot make are spelt out with
 * --pipeline-model-parallel-layout, as the simulator cuts them.  80 layers
 * over pp 8 x v 4: 10 a stage, chunks of 3, 3, 2, 2, so virtual stages
 * 0-15 (chunks 0 and 1 of each stage) hold 3 and 16-31 hold 2, where
 * --num-layers-per-virtual-pipeline-stage 2 (80 / 32) would make 5 chunks
 * a stage.  7 layers over pp 4: 2 + 2 + 2 + 1 (the extra layers to the
 * middle stages, then the first). */
static void test_export_megatron_uneven_layout(void **state)
{
	struct sim_plan p;
	char want[512], *s;
	size_t n = 0;

	(void)state;
	make_plan(&p);
	p.par.pp = 8;
	p.par.interleave = 4;
	n += (size_t)snprintf(want + n, sizeof(want) - n, "--pipeline-model-parallel-layout 'E");
	/* 10 layers a stage in 4 chunks: 3, 3, 2, 2, except on the first
	 * stage, whose first chunks (the embedding's) take the fewer */
	for (int k = 0; k < 32; k++)
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%st*%d", k ? "|" : "",
				      k % 8 == 0 ? (k < 16 ? 2 : 3) : (k < 16 ? 3 : 2));
	snprintf(want + n, sizeof(want) - n, ",L'");
	s = export_ok(&p, EXPORT_MEGATRON);
	assert_non_null(strstr(s, want));
	assert_null(strstr(s, "--num-layers-per-virtual-pipeline-stage"));
	free(s);

	p.model.layers = 7;
	p.par.pp = 4;
	p.par.interleave = 1;
	s = export_ok(&p, EXPORT_MEGATRON);
	assert_non_null(strstr(s, "--pipeline-model-parallel-layout 'Et*2|t*2|t*2|t*1,L'"));
	free(s);

	/* Llama 3 405B's layout: one-layer chunks, the embedding's and the
	 * loss's alone (Megatron-LM's --account-for-embedding-in-pipeline-split
	 * --account-for-loss-in-pipeline-split split it so) */
	p.model.layers = 126;
	p.par.pp = 16;
	p.par.interleave = 8;
	p.par.gbs = 16 * p.par.mbs * p.par.dp;
	s = export_ok(&p, EXPORT_MEGATRON);
	assert_non_null(strstr(s, "--pipeline-model-parallel-layout 'E|t*1|t*1|"));
	assert_non_null(strstr(s, "|t*1|t*1|L'"));
	assert_null(strstr(s, "t*0"));
	free(s);

	/* a stated last virtual stage (Megatron-Bridge's DeepSeek-V3
	 * layout: 61 layers, 15 stages of 4, the last 1 with the MTP
	 * module and the loss) */
	p.model.layers = 61;
	p.model.mtp_layers = 1;
	p.par.interleave = 1;
	p.par.pp_last_layers = 1;
	s = export_ok(&p, EXPORT_MEGATRON);
	n = 0;
	n += (size_t)snprintf(want + n, sizeof(want) - n, "--pipeline-model-parallel-layout 'E");
	for (int k = 0; k < 16; k++)
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%st*%d", k ? "|" : "",
				      k == 15 ? 1 : 4);
	snprintf(want + n, sizeof(want) - n, ",m,L'");
	assert_non_null(strstr(s, want));
	free(s);
}

static void test_export_deepspeed_batch_identity(void **state)
{
	struct sim_plan p;
	cJSON *j;
	char *s;
	int tbs, mbs, ga;

	(void)state;
	make_plan(&p);
	p.par.tp = 1;
	p.par.pp = 1;
	p.par.dp = 32;
	p.par.mbs = 2;
	p.par.zero = 3;
	p.par.interleave = 1; /* no pipeline: simulate refuses interleaving */
	s = export_ok(&p, EXPORT_DEEPSPEED);
	j = cJSON_Parse(s);
	assert_non_null(j);
	tbs = cJSON_GetObjectItem(j, "train_batch_size")->valueint;
	mbs = cJSON_GetObjectItem(j, "train_micro_batch_size_per_gpu")->valueint;
	ga = cJSON_GetObjectItem(j, "gradient_accumulation_steps")->valueint;
	assert_int_equal(tbs, 512);
	assert_int_equal(mbs, 2);
	assert_int_equal(ga, 8); /* 512 / (2 x 32) */
	assert_int_equal(tbs, mbs * ga * p.par.dp);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "zero_optimization"),
					     "stage")->valueint, 3);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "bf16"), "enabled")));
	cJSON_Delete(j);
	free(s);
}

static void test_export_slurm_time_margin(void **state)
{
	struct sim_plan p;
	char *s;

	(void)state;
	make_plan(&p);
	s = export_ok(&p, EXPORT_SLURM);
	assert_non_null(strstr(s, "#SBATCH --nodes=4"));
	assert_non_null(strstr(s, "#SBATCH --ntasks-per-node=1\n"));
	assert_non_null(strstr(s, "#SBATCH --gpus-per-node=8"));
	/* 10 d is more than a partition grants: jobs of a day, Megatron-LM
	 * saving and leaving 20 min before the limit, requeued until done */
	assert_non_null(strstr(s, "#SBATCH --time=1-00:00:00\n#SBATCH --requeue\n"));
	assert_null(strstr(s, "--signal"));   /* on demand */
	assert_non_null(strstr(s, "--exit-duration-in-mins 1420"));
	assert_non_null(strstr(s, "scontrol requeue \"$SLURM_JOB_ID\""));
	assert_non_null(strstr(s, "srun --ntasks-per-node=1 --kill-on-bad-exit=1 torchrun --nnodes 4 "
				  "--nproc-per-node 8"));
	assert_null(strstr(s, "gpuplan execute"));
	free(s);
	/* a run shorter than a day: its time, 10% and an hour to spare */
	p.time_to_train_s = 3 * 3600.0;
	p.purchase = PRICE_PURCHASE_SPOT;
	s = export_ok(&p, EXPORT_SLURM);
	assert_non_null(strstr(s, "#SBATCH --time=0-04:18:00\n"));
	assert_non_null(strstr(s, "#SBATCH --signal=TERM@120\n"));
	assert_non_null(strstr(s, "--exit-duration-in-mins 238 --exit-signal-handler"));
	free(s);
	s = export_ok(&p, EXPORT_SLURM_EXECUTE);
	assert_non_null(strstr(s, "gpuplan execute \"${PLAN:-plan.json}\""));
	free(s);
}

static void test_export_torchrun_nccl_env(void **state)
{
	struct sim_plan p;
	char *s;

	(void)state;
	make_plan(&p);
	p.cluster.gpu.p2p = 0; /* RTX 4090: P2P off in the stock driver */
	s = export_ok(&p, EXPORT_TORCHRUN);
	assert_non_null(strstr(s, "NCCL_P2P_DISABLE=1"));
	assert_non_null(strstr(s, "--rdzv-backend c10d"));
	free(s);
	p.cluster.gpu.p2p = 1;
	p.par.pp = 1;
	p.par.interleave = 1;
	s = export_ok(&p, EXPORT_TORCHRUN);
	assert_null(strstr(s, "NCCL_P2P_DISABLE"));
	assert_non_null(strstr(s, "--standalone")); /* 8 GPUs fit one node */
	free(s);
}

static void test_export_mpirun_and_kubernetes(void **state)
{
	struct sim_plan p;
	char *s;

	(void)state;
	make_plan(&p);
	s = export_ok(&p, EXPORT_MPIRUN);
	assert_non_null(strstr(s, "mpirun -np 32 --hostfile \"$HOSTFILE\" --map-by ppr:8:node"));
	assert_non_null(strstr(s, "RANK=$OMPI_COMM_WORLD_RANK"));
	free(s);
	s = export_ok(&p, EXPORT_MPIRUN_EXECUTE);
	assert_non_null(strstr(s, "for i in $(seq 1 4); do echo \"node$i slots=8\"; done > hosts"));
	free(s);
	s = export_ok(&p, EXPORT_KUBERNETES);
	assert_non_null(strstr(s, "kind: PyTorchJob"));
	assert_non_null(strstr(s, "  name: gpuplan-llama3-70b\n"));
	assert_non_null(strstr(s, "  nprocPerNode: \"8\"\n"));
	assert_non_null(strstr(s, "Worker:\n      replicas: 3"));
	assert_non_null(strstr(s, "nvidia.com/gpu: 8"));
	assert_non_null(strstr(s, "mountPath: /dev/shm"));
	assert_non_null(strstr(s, "- \"$(DATA_PATH)\""));
	assert_null(strstr(s, "${"));           /* the CRD expands $(VAR) only */
	free(s);
	/* AMD: the ROCm device plugin's resource; a name with a dot: a label */
	strcpy(p.cluster.gpu.name, "MI300X");
	strcpy(p.model.name, "Megatron_1.7b");
	s = export_ok(&p, EXPORT_KUBERNETES);
	assert_non_null(strstr(s, "amd.com/gpu: 8"));
	assert_null(strstr(s, "nvidia.com"));
	assert_non_null(strstr(s, "  name: gpuplan-megatron-1-7b\n"));
	free(s);
}

/* The TrainJob (Kubeflow Trainer v2.3.0's trainjob_types.go): the
 * torch-distributed runtime, the nodes and GPUs per node as numNodes,
 * numProcPerNode and resourcesPerNode, each flag joined to its value
 * (the CRD holds 128 args at most), /dev/shm as a runtime patch of the
 * runtime's node job and container; amd.com/gpu for AMD. */
static void test_export_trainjob(void **state)
{
	struct sim_plan p;
	size_t args = 0;
	const char *a, *end;
	char *s;

	(void)state;
	make_plan(&p);
	s = export_ok(&p, EXPORT_TRAINJOB);
	assert_non_null(strstr(s, "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"));
	assert_non_null(strstr(s, "  runtimeRef:\n    name: torch-distributed\n"));
	assert_non_null(strstr(s, "    numNodes: 4\n    numProcPerNode: 8\n"));
	assert_non_null(strstr(s, "      limits:\n        nvidia.com/gpu: 8\n"));
	assert_non_null(strstr(s, "      - \"--tensor-model-parallel-size=8\"\n"));
	assert_non_null(strstr(s, "      - \"--lr=$(LR)\"\n"));
	assert_non_null(strstr(s, "      - \"--sequence-parallel\"\n"));
	assert_null(strstr(s, "--nnodes"));   /* the runtime's PET_NNODES */
	assert_non_null(strstr(s, "              - name: node\n"));
	assert_non_null(strstr(s, "                          - name: node\n"
				  "                            volumeMounts:\n"
				  "                              - name: dshm\n"
				  "                                mountPath: /dev/shm\n"));
	a = strstr(s, "    args:\n");
	end = strstr(s, "    env:\n");
	assert_non_null(a);
	assert_non_null(end);
	for (; a < end; a++)
		args += strncmp(a, "\n      - ", 9) == 0;
	assert_true(args > 20 && args <= 128);
	free(s);
	strcpy(p.cluster.gpu.name, "MI300X");
	s = export_ok(&p, EXPORT_TRAINJOB);
	assert_non_null(strstr(s, "        amd.com/gpu: 8\n"));
	assert_null(strstr(s, "nvidia.com"));
	free(s);
}

/* What Megatron-LM cannot build is refused for every format that starts
 * it, and exported under DeepSpeed; GPT-NeoX's partial rotary is
 * --rotary-percent. */
static void test_export_megatron_model_facts(void **state)
{
	static const enum export_format launchers[] = {
		EXPORT_MEGATRON, EXPORT_SLURM, EXPORT_MPIRUN,
		EXPORT_KUBERNETES, EXPORT_TRAINJOB, EXPORT_SKYPILOT,
	};
	struct sim_plan p;
	enum rc rc;
	char *s;

	(void)state;
	for (int fact = 0; fact < 3; fact++) {
		make_plan(&p);
		if (fact == 0)
			p.model.pos = SIM_POS_ALIBI;
		else if (fact == 1)
			p.model.parallel_residual = 1;
		else
			p.model.embedding_norm = 1;
		for (size_t k = 0; k < GP_ARRAY_LEN(launchers); k++) {
			assert_null(export_plan(&p, launchers[k], PLAN_FRAMEWORK_MEGATRON, &rc));
			assert_int_equal(rc, RC_INPUT);
			if (launchers[k] == EXPORT_MEGATRON)
				continue;
			s = export_plan(&p, launchers[k], PLAN_FRAMEWORK_DEEPSPEED, &rc);
			assert_int_equal(rc, RC_OK);
			assert_non_null(strstr(s, "--deepspeed"));
			free(s);
		}
	}
	make_plan(&p);
	p.model.rotary_percent = 0.25;
	s = export_ok(&p, EXPORT_MEGATRON);
	assert_non_null(strstr(s, "--rotary-percent 0.25"));
	free(s);
	p.model.rotary_percent = 1;
	s = export_ok(&p, EXPORT_MEGATRON);
	assert_null(strstr(s, "--rotary-percent"));
	free(s);
}

/* Slurm and mpirun under DeepSpeed: the config written before the launch,
 * the training length and save interval in the environment (and passed on
 * by mpirun), a requeue on Slurm's signal before the limit in place of
 * Megatron-LM's --exit-duration-in-mins. */
static void test_export_deepspeed_launchers(void **state)
{
	struct sim_plan p;
	enum rc rc;
	char *s;

	(void)state;
	make_plan(&p);
	p.tokens = 1e9;                   /* 122071 sequences of 8192 */
	p.result.step_time_s = 10;
	p.ckpt_interval_s = 1800;         /* 180 steps */
	s = export_plan(&p, EXPORT_SLURM, PLAN_FRAMEWORK_DEEPSPEED, &rc);
	assert_int_equal(rc, RC_OK);
	assert_non_null(strstr(s, "#SBATCH --signal=B:USR1@1200\n"));
	assert_non_null(strstr(s, "\nexport GPUPLAN_TRAIN_SAMPLES=122071\n"));
	assert_non_null(strstr(s, "\nexport GPUPLAN_SAVE_INTERVAL_STEPS=180\n"));
	assert_non_null(strstr(s, "cat > 'ds_config.json' <<'GPUPLAN_DS_CONFIG'\n{"));
	assert_non_null(strstr(s, "trap 'scontrol requeue \"$SLURM_JOB_ID\"' USR1\n"));
	assert_non_null(strstr(s, "--deepspeed --deepspeed_config 'ds_config.json'"));
	assert_non_null(strstr(s, " &\nwait $!\n"));
	assert_null(strstr(s, "--exit-duration-in-mins"));
	assert_null(strstr(s, "--num-layers"));
	free(s);
	s = export_plan(&p, EXPORT_MPIRUN, PLAN_FRAMEWORK_DEEPSPEED, &rc);
	assert_int_equal(rc, RC_OK);
	assert_non_null(strstr(s, "mpirun -np 32 "));
	assert_non_null(strstr(s, " -x GPUPLAN_TRAIN_SAMPLES -x GPUPLAN_SAVE_INTERVAL_STEPS"));
	assert_non_null(strstr(s, "cat > 'ds_config.json'"));
	free(s);
	/* Megatron-LM's Slurm job saves and exits before the limit itself */
	s = export_plan(&p, EXPORT_SLURM, PLAN_FRAMEWORK_MEGATRON, &rc);
	assert_non_null(strstr(s, "--exit-duration-in-mins"));
	assert_null(strstr(s, "USR1"));
	assert_null(strstr(s, "GPUPLAN_"));
	free(s);
}

/* 12 GPUs on 8-GPU nodes start as 2 x 6, never 16; 20 GPUs in the
 * plan's 3 nodes have no even split with tp 4: refused. */
static void test_export_world_size(void **state)
{
	struct sim_plan p;
	enum rc rc;
	char *s;

	(void)state;
	make_plan(&p);
	p.par.tp = 2;
	p.par.pp = 1;
	p.par.interleave = 1;
	p.par.dp = 6;
	p.par.gbs = 12;
	p.nodes = 2;
	s = export_ok(&p, EXPORT_MEGATRON);
	assert_non_null(strstr(s, "torchrun --nnodes 2 --nproc-per-node 6 "));
	free(s);
	s = export_ok(&p, EXPORT_KUBERNETES);
	assert_non_null(strstr(s, "nprocPerNode: \"6\""));
	assert_non_null(strstr(s, "nvidia.com/gpu: 6"));
	free(s);
	p.par.tp = 4;
	p.par.dp = 5;
	p.par.gbs = 20;
	p.nodes = 3;
	assert_null(export_plan(&p, EXPORT_MEGATRON, PLAN_FRAMEWORK_MEGATRON, &rc));
	assert_int_equal(rc, RC_INPUT);
}

static void test_export_rejects_bad_batch(void **state)
{
	struct sim_plan p;
	enum rc rc;

	(void)state;
	make_plan(&p);
	p.par.gbs = 511; /* not a multiple of mbs x dp = 1 ... but dp 3 below */
	p.par.dp = 3;
	assert_null(export_plan(&p, EXPORT_DEEPSPEED, PLAN_FRAMEWORK_MEGATRON, &rc));
	assert_int_equal(rc, RC_INPUT);
}

static void test_export_format_parse_names(void **state)
{
	enum export_format f;

	(void)state;
	assert_int_equal(export_format_parse("DeepSpeed", &f), RC_OK);
	assert_int_equal(f, EXPORT_DEEPSPEED);
	assert_int_equal(export_format_parse("k8s", &f), RC_OK);
	assert_int_equal(f, EXPORT_KUBERNETES);
	assert_int_equal(export_format_parse("TrainJob", &f), RC_OK);
	assert_int_equal(f, EXPORT_TRAINJOB);
	assert_int_equal(export_format_parse("SkyPilot", &f), RC_OK);
	assert_int_equal(f, EXPORT_SKYPILOT);
	assert_int_equal(export_format_parse("horovod", &f), RC_USAGE);
}

/* The format table is what the CLI reads: every format once, found by
 * its name, --framework for the launchers only, a writer and a help line
 * each, and the names in the order help and errors give them. */
static void test_export_format_table(void **state)
{
	unsigned seen = 0;

	(void)state;
	assert_int_equal(export_formats_len, EXPORT_TRL + 1);
	for (size_t i = 0; i < export_formats_len; i++) {
		const struct export_format_info *fi = &export_formats[i];
		int launcher = fi->format == EXPORT_SLURM || fi->format == EXPORT_MPIRUN ||
			       fi->format == EXPORT_KUBERNETES || fi->format == EXPORT_TRAINJOB ||
			       fi->format == EXPORT_SKYPILOT;

		assert_ptr_equal(export_format_find(fi->name), fi);
		assert_false(seen & (1u << fi->format));
		seen |= 1u << fi->format;
		assert_int_equal(fi->takes_framework, launcher);
		assert_non_null(fi->write);
		assert_true(fi->help && fi->help[0]);
	}
	assert_int_equal(export_format_find("KubeFlow")->format, EXPORT_KUBERNETES);
	assert_null(export_format_find("horovod"));
	assert_string_equal(export_format_names(),
			    "megatron, deepspeed, torchrun, slurm, mpirun, kubernetes, trainjob, "
			    "skypilot, slurm-execute, mpirun-execute, trl");
}

/* The launcher needs the layout too: 4 nodes x 8 GPUs (make_plan), a
 * hostfile for several nodes, the config file named, and the TP/PP sizes
 * the config cannot carry. */
static void test_export_deepspeed_launch(void **state)
{
	struct sim_plan p;
	char *s;

	(void)state;
	make_plan(&p);
	s = export_deepspeed_launch(&p, "cfg/ds.json");
	assert_non_null(s);
	assert_non_null(strstr(s, "deepspeed --num_nodes 4 --num_gpus 8 --hostfile hostfile "));
	assert_non_null(strstr(s, "--deepspeed --deepspeed_config 'cfg/ds.json' \\\n"));
	assert_non_null(strstr(s, "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4"));
	assert_non_null(strstr(s, "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"));
	free(s);
	/* One node of 8, pure data parallel: no hostfile, no TP/PP note. */
	p.par.tp = 1;
	p.par.pp = 1;
	p.par.dp = 8;
	p.par.interleave = 1;
	p.nodes = 1;
	s = export_deepspeed_launch(&p, "ds_config.json");
	assert_non_null(strstr(s, "deepspeed --num_nodes 1 --num_gpus 8 \""));
	assert_null(strstr(s, "--hostfile"));
	assert_null(strstr(s, "tensor-model-parallel"));
	free(s);
}

/* The SkyPilot task: make_plan's 4 nodes of 8 on an AWS spot offering,
 * SkyPilot's name for the GPU (H100, RunPod's H100-SXM), and torchrun
 * over SkyPilot's node variables. */
static void test_export_skypilot_resources(void **state)
{
	struct sim_plan p;
	enum rc rc;
	char *s;

	(void)state;
	make_plan(&p);
	strcpy(p.offering.provider, "aws");
	strcpy(p.offering.instance_type, "p5.48xlarge");
	strcpy(p.offering.region, "us-east-1");
	p.offering.gpus_per_node = 8;
	p.purchase = PRICE_PURCHASE_SPOT;
	s = export_ok(&p, EXPORT_SKYPILOT);
	assert_non_null(strstr(s, "\nresources:\n  accelerators: {\"H100\": 8}\n"
				  "  cloud: \"aws\"\n  region: \"us-east-1\"\n"
				  "  instance_type: \"p5.48xlarge\"\n  use_spot: true\n"
				  "  job_recovery:\n    strategy: FAILOVER\nnum_nodes: 4\n"));
	/* a spot purchase is a managed job */
	assert_non_null(strstr(s, "# SkyPilot managed job written by gpuplan: sky jobs launch"));
	assert_non_null(strstr(s, "--nproc-per-node \"$SKYPILOT_NUM_GPUS_PER_NODE\""));
	assert_non_null(strstr(s, "--node-rank \"$SKYPILOT_NODE_RANK\""));
	assert_non_null(strstr(s, "  --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4"));
	free(s);
	/* on-demand on RunPod, 6 GPUs of a node of 8: no instance type */
	strcpy(p.offering.provider, "runpod");
	p.purchase = PRICE_PURCHASE_ON_DEMAND;
	p.par.tp = 6;
	p.par.pp = 1;
	p.par.interleave = 1;
	p.model.hidden = 6144; /* 48 heads of 128 */
	p.par.seq_parallel = 0; /* 8192 tokens do not split 6 ways */
	p.model.ffn = 24576;
	p.model.heads = 48;
	p.model.kv_heads = 6;
	p.cluster.gpus_per_node = 6;
	s = export_plan(&p, EXPORT_SKYPILOT, PLAN_FRAMEWORK_DEEPSPEED, &rc);
	assert_int_equal(rc, RC_OK);
	assert_non_null(strstr(s, "  accelerators: {\"H100-SXM\": 6}\n"));
	assert_null(strstr(s, "instance_type"));
	assert_non_null(strstr(s, "  use_spot: false\n"));
	assert_non_null(strstr(s, "--deepspeed --deepspeed_config 'ds_config.json'"));
	assert_non_null(strstr(s, "\"train_batch_size\":\t512"));
	free(s);
}

/* Strings from a plan file: double-quoted with escapes in the YAML,
 * single-quoted in the script, refused there with a control character. */
static void test_export_skypilot_quotes_strings(void **state)
{
	struct sim_plan p;
	enum rc rc;
	char *s;

	(void)state;
	make_plan(&p);
	strcpy(p.model.name, "x'$(touch pwned)\"");
	strcpy(p.offering.provider, "gcp");
	strcpy(p.offering.region, "r\n\": x\\");
	s = export_ok(&p, EXPORT_SKYPILOT);
	assert_non_null(strstr(s, "\nname: \"x'$(touch pwned)\\\"\"\n"));
	assert_non_null(strstr(s, "\n  region: \"r\\x0A\\\": x\\\\\"\n"));
	assert_non_null(strstr(s, "\n  echo 'x'\\''$(touch pwned)\"'\n"));
	free(s);
	strcpy(p.model.name, "a\rb");
	assert_null(export_plan(&p, EXPORT_SKYPILOT, PLAN_FRAMEWORK_MEGATRON, &rc));
	assert_int_equal(rc, RC_INPUT);
}

/* A directory with stub launchers (torchrun, srun, mpirun, deepspeed,
 * sbatch, kubectl, scontrol) that only record their arguments in args.log, one per
 * line, for scripts run with PATH set to it. */
static void make_stubs(const char *dir)
{
	static const char *const names[] = { "torchrun", "srun", "mpirun", "deepspeed",
					     "sbatch", "kubectl", "gpuplan", "scontrol" };
	char path[512];

	for (size_t i = 0; i < GP_ARRAY_LEN(names); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		f = fopen(path, "w");
		assert_non_null(f);
		fprintf(f, "#!/bin/sh\nprintf '%%s\\n' \"$0\" \"$@\" >> \"$(dirname \"$0\")/args.log\"\n");
		fclose(f);
		assert_int_equal(chmod(path, 0755), 0);
	}
}

/* Runs text as a bash script in a fresh directory with the stubs first on
 * PATH, and returns 1 when the file 'pwned' appeared there (a payload ran). */
static int run_script(const char *text, char *args, size_t size)
{
	char dir[] = "/tmp/gpuplan-test-export-XXXXXX", cmd[1024], path[600];
	FILE *f;
	int pwned;
	size_t n;

	assert_non_null(mkdtemp(dir));
	make_stubs(dir);
	snprintf(path, sizeof(path), "%s/run.sh", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cd '%s' && MASTER_ADDR=h TRAIN_SCRIPT=t.py IMAGE=i DATA_PATH=d CKPT_DIR=c HOSTFILE=f "
		 "SLURM_JOB_ID=1 SLURM_JOB_NODELIST=n1 TRAIN_SAMPLES=1 GPUPLAN_TRAIN_SAMPLES=1 TOKENIZER=tok "
		 "PATH='%s':/usr/bin:/bin bash run.sh >/dev/null 2>&1", dir, dir);
	assert_int_not_equal(system(cmd), -1);
	snprintf(path, sizeof(path), "%s/pwned", dir);
	pwned = access(path, F_OK) == 0;
	snprintf(path, sizeof(path), "%s/args.log", dir);
	args[0] = '\0';
	f = fopen(path, "r");
	if (f) {
		n = fread(args, 1, size - 1, f);
		args[n] = '\0';
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return pwned;
}

/* A plan whose name is a shell payload (as no plan file can carry: the
 * reader refuses it) still gives scripts that run nothing but the
 * launcher, with the name as one argument; the YAML keeps it quoted. */
static void test_export_quotes_hostile_names(void **state)
{
	static const char *const names[] = {
		"$(touch pwned)", "`touch pwned`", "x'; touch pwned; '", "x\ntouch pwned\n#",
		"x\"; touch pwned; \"",
	};
	static const enum export_format shells[] = {
		EXPORT_MEGATRON, EXPORT_TORCHRUN, EXPORT_SLURM, EXPORT_MPIRUN,
	};
	char args[8192];

	(void)state;
	for (size_t i = 0; i < GP_ARRAY_LEN(names); i++) {
		struct sim_plan p;

		make_plan(&p);
		gp_strlcpy(p.model.name, names[i], sizeof(p.model.name));
		gp_strlcpy(p.cluster.gpu.name, names[i], sizeof(p.cluster.gpu.name));
		for (size_t k = 0; k < GP_ARRAY_LEN(shells); k++) {
			char *s = export_ok(&p, shells[k]);

			assert_false(run_script(s, args, sizeof(args)));
			/* the launcher ran, so the script got that far */
			assert_non_null(strstr(args, shells[k] == EXPORT_SLURM ? "srun" :
					      shells[k] == EXPORT_MPIRUN ? "mpirun" : "torchrun"));
			if (shells[k] == EXPORT_TORCHRUN || shells[k] == EXPORT_MEGATRON) {
				char want[128];

				/* the rendezvous id arrives whole, as one argument */
				snprintf(want, sizeof(want), "--rdzv-id\ngpuplan-%s\n", names[i]);
				assert_non_null(strstr(args, want));
			}
			free(s);
		}
		{
			char *s = export_deepspeed_launch(&p, names[i]);

			assert_false(run_script(s, args, sizeof(args)));
			assert_non_null(strstr(args, "--deepspeed_config"));
			free(s);
		}
		{
			char *s = export_ok(&p, EXPORT_KUBERNETES);
			const char *m = strstr(s, "  name: ");

			assert_non_null(m);
			/* an RFC 1035 label, plain in YAML: "gpuplan-" and
			 * [a-z0-9-], no '-' at the end, at most 48 characters */
			assert_int_equal(strncmp(m + 8, "gpuplan-", 8), 0);
			for (m += 8; *m != '\n'; m++)
				assert_non_null(strchr("abcdefghijklmnopqrstuvwxyz0123456789-", *m));
			assert_int_not_equal(m[-1], '-');
			free(s);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_export_megatron_flags),
		cmocka_unit_test(test_export_megatron_uneven_layout),
		cmocka_unit_test(test_export_deepspeed_batch_identity),
		cmocka_unit_test(test_export_slurm_time_margin),
		cmocka_unit_test(test_export_torchrun_nccl_env),
		cmocka_unit_test(test_export_mpirun_and_kubernetes),
		cmocka_unit_test(test_export_trainjob),
		cmocka_unit_test(test_export_megatron_model_facts),
		cmocka_unit_test(test_export_deepspeed_launchers),
		cmocka_unit_test(test_export_rejects_bad_batch),
		cmocka_unit_test(test_export_world_size),
		cmocka_unit_test(test_export_format_parse_names),
		cmocka_unit_test(test_export_format_table),
		cmocka_unit_test(test_export_deepspeed_launch),
		cmocka_unit_test(test_export_skypilot_resources),
		cmocka_unit_test(test_export_skypilot_quotes_strings),
		cmocka_unit_test(test_export_quotes_hostile_names),
	};
	return cmocka_run_group_tests_name("export", tests, NULL, NULL);
}
