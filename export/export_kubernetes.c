/*
 * export_kubernetes.c - the kubernetes and trainjob formats.  Two
 * manifests: Kubeflow's PyTorchJob (kubeflow.org/v1, the Training
 * Operator, v1.9) and Kubeflow Trainer's TrainJob (trainer.kubeflow.org/
 * v1alpha1, v2.2 and later; field names as pkg/apis/trainer/v1alpha1/
 * trainjob_types.go has them at v2.3.0).  Both start torchrun in a
 * container with the trainer's arguments; the operator gives torchrun the
 * nodes, the node's rank and the first node's address through PET_*
 * variables.  Creates no volume claims and names no image: the
 * placeholders fail loudly until the user sets them.
 */
#include "export_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The Kubernetes resource name of p's GPUs: AMD's device plugin
 * advertises amd.com/gpu, NVIDIA's nvidia.com/gpu. */
static const char *k8s_gpu_resource(const struct sim_plan *p)
{
	return price_gpu_is_amd(&p->cluster.gpu) ? "amd.com/gpu" : "nvidia.com/gpu";
}

/* The placeholder image: not a valid image reference (upper case), so a
 * manifest applied unedited fails with InvalidImageName, naming it. */
#define K8S_IMAGE_MEGATRON "SET-IMAGE-TO-A-MEGATRON-LM-CONTAINER"
#define K8S_IMAGE_DEEPSPEED "SET-IMAGE-TO-A-CONTAINER-WITH-DEEPSPEED-AND-YOUR-SCRIPT"
/* Where a DeepSpeed container writes the config it gets in
 * GPUPLAN_DS_CONFIG before it starts torchrun. */
#define K8S_DS_CONFIG "/tmp/ds_config.json"
/* The Secret holding a gated tokenizer's Hugging Face token (key token). */
#define K8S_HF_SECRET "gpuplan-hf-token"

/* The trainer part of a container at indent: command, args and env.
 * torchrun with the trainer's arguments; a PyTorchJob's names the nodes
 * and GPUs per node (with_shape), a TrainJob's leaves them to the
 * PET_NNODES and PET_NPROC_PER_NODE its numNodes and numProcPerNode give
 * and joins each flag to its value (export_words_yaml).  Under DeepSpeed, bash
 * first writes the config from GPUPLAN_DS_CONFIG to K8S_DS_CONFIG. */
static void k8s_trainer(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw,
			int in, int trainjob)
{
	int ds = fw == PLAN_FRAMEWORK_DEEPSPEED;
	long long samples = export_train_samples(p);
	struct words ws = { 0 };
	char warm[32], steps[32], total[32], *cfg = NULL, *q;

	snprintf(warm, sizeof(warm), "%lld", samples / 100 > 0 ? samples / 100 : 1000);
	snprintf(steps, sizeof(steps), "%lld", export_save_interval_steps(p));
	snprintf(total, sizeof(total), "%lld", samples);
	if (ds) {
		cfg = export_deepspeed_config(p, 1);
		q = gp_yaml_quote("printf '%s\\n' \"$GPUPLAN_DS_CONFIG\" > " K8S_DS_CONFIG
				  " && exec torchrun \"$@\"");
		export_printf(b, "%*scommand: [\"bash\", \"-c\", %s, \"torchrun\"]\n", in, "", q);
		free(q);
	} else {
		export_printf(b, "%*scommand: [\"torchrun\"]\n", in, "");
	}
	export_printf(b, "%*sargs:\n", in, "");
	if (!trainjob)
		export_printf(b, "%*s  - \"--nnodes=%d\"\n%*s  - \"--nproc-per-node=%d\"\n", in, "",
			      export_nodes(p), in, "", export_gpus_per_node(p));
	export_trainer_words(&ws, p, fw, K8S_DS_CONFIG);
	export_words_yaml(b, &ws, in + 2, trainjob);
	export_words_release(&ws);
	export_printf(b, "%*senv:\n", in, "");
	{
		const char *env[][2] = {
			{ "TRAIN_SCRIPT", ds ? "SET-TRAIN_SCRIPT-TO-YOUR-DEEPSPEED-SCRIPT.py"
					     : "/opt/megatron-lm/pretrain_gpt.py" },
			{ "CUDA_DEVICE_MAX_CONNECTIONS", export_one_connection(p, fw) ? "1" : NULL },
			{ "NCCL_P2P_DISABLE", p->cluster.gpu.p2p ? NULL : "1" },
			{ "GPUPLAN_DS_CONFIG", cfg },
			{ "GPUPLAN_TRAIN_SAMPLES", ds ? (samples > 0 ? total : "SET-TRAIN_SAMPLES") : NULL },
			{ "GPUPLAN_SAVE_INTERVAL_STEPS", ds ? steps : NULL },
			{ "DATA_PATH", ds ? NULL : "/data/SET-DATA_PATH-TO-A-MEGATRON-DATASET-PREFIX" },
			{ "CKPT_DIR", ds ? NULL : "/checkpoints" },
			{ "TOKENIZER", ds || p->model.tokenizer[0] ? NULL : "SET-TOKENIZER" },
			{ "TRAIN_SAMPLES", ds || samples > 0 ? NULL : "SET-TRAIN_SAMPLES" },
			{ "LR", ds ? NULL : "3.0e-4" },
			{ "MIN_LR", ds ? NULL : "3.0e-5" },
			{ "LR_DECAY_STYLE", ds ? NULL : "cosine" },
			{ "LR_WARMUP_SAMPLES", ds ? NULL : warm },
		};

		for (size_t i = 0; i < GP_ARRAY_LEN(env); i++) {
			if (!env[i][1])
				continue;
			q = gp_yaml_quote(env[i][1]);
			export_printf(b, "%*s  - name: %s\n%*s    value: %s\n", in, "", env[i][0], in, "", q);
			free(q);
		}
		if (!ds) {
			const char *vars[4];
			int n = export_megatron_model_vars(p, vars, 4);

			for (int i = 0; i < n; i++)
				export_printf(b, "%*s  - name: %s\n%*s    value: \"SET-%s\"\n", in, "", vars[i],
					      in, "", vars[i]);
		}
		/* a gated tokenizer: the token from a Secret the user creates
		 * (k8s_comment says which), never in the manifest */
		if (p->model.tokenizer_gated)
			export_printf(b, "%*s  - name: HF_TOKEN\n%*s    valueFrom:\n%*s      secretKeyRef:\n"
					 "%*s        name: " K8S_HF_SECRET "\n%*s        key: token\n",
				      in, "", in, "", in, "", in, "", in, "");
	}
	free(cfg);
}

/* The container's mounts at indent: /dev/shm, the checkpoints and the
 * data (k8s_volumes). */
static void k8s_mounts(struct export_buf *b, int in)
{
	export_printf(b, "%*svolumeMounts:\n%*s  - name: dshm\n%*s    mountPath: /dev/shm\n"
			 "%*s  - name: checkpoints\n%*s    mountPath: /checkpoints\n"
			 "%*s  - name: data\n%*s    mountPath: /data\n%*s    readOnly: true\n",
		      in, "", in, "", in, "", in, "", in, "", in, "", in, "", in, "");
}

/* The pod's volumes at indent: /dev/shm in memory (NCCL and the data
 * loaders' shared memory; a container's default is 64 MiB), and the
 * claims the user creates for checkpoints and data. */
static void k8s_volumes(struct export_buf *b, int in)
{
	export_printf(b, "%*svolumes:\n%*s  - name: dshm\n%*s    emptyDir:\n%*s      medium: Memory\n"
			 "%*s  - name: checkpoints\n%*s    persistentVolumeClaim:\n"
			 "%*s      claimName: gpuplan-checkpoints\n"
			 "%*s  - name: data\n%*s    persistentVolumeClaim:\n%*s      claimName: gpuplan-data\n",
		      in, "", in, "", in, "", in, "", in, "", in, "", in, "", in, "", in, "", in, "");
}

/* The comment heading both manifests: what runs where, and what to set
 * before kubectl apply. */
static void k8s_comment(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw,
			const char *kind)
{
	int ds = fw == PLAN_FRAMEWORK_DEEPSPEED;

	export_printf(b, "# %s written by gpuplan: %s on %d nodes x %d GPUs.\n", kind,
		      export_framework_title(fw), export_nodes(p), export_gpus_per_node(p));
	export_trainer_notes(b, p, fw);
	export_printf(b, "# Before kubectl apply: set the image (a container with %s),\n"
			 "# %s, and create the PersistentVolumeClaims gpuplan-checkpoints and\n"
			 "# gpuplan-data.\n", ds ? "DeepSpeed, PyTorch and your script" :
		      "Megatron-LM and PyTorch", ds ? "TRAIN_SCRIPT" : "DATA_PATH");
	if (p->model.tokenizer_gated)
		export_printf(b, "# The tokenizer is gated on the Hugging Face Hub: kubectl create secret "
				 "generic " K8S_HF_SECRET "\n# --from-literal=token=YOUR-TOKEN (HF_TOKEN on "
				 "every node).\n");
}

/* A Kubeflow PyTorchJob (kubeflow.org/v1): a Master and Workers, one pod
 * a node, nprocPerNode workers in each. */
void export_write_pytorchjob(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	int nodes = export_nodes(p);
	char lab[4 * PRICE_NAME_MAX];

	k8s_comment(b, p, fw, "Kubeflow PyTorchJob");
	export_printf(b, "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: gpuplan-%s\n"
			 "spec:\n  nprocPerNode: \"%d\"\n  pytorchReplicaSpecs:\n",
		      export_job_label(lab, sizeof(lab), p->model.name, 1), export_gpus_per_node(p));
	for (int w = 0; w < 2; w++) {
		int replicas = w ? nodes - 1 : 1;

		if (w && replicas == 0)
			break;
		export_printf(b, "    %s:\n      replicas: %d\n      restartPolicy: OnFailure\n"
				 "      template:\n        spec:\n          containers:\n",
			      w ? "Worker" : "Master", replicas);
		export_printf(b, "            - name: pytorch\n              image: \"%s\"\n",
			      fw == PLAN_FRAMEWORK_DEEPSPEED ? K8S_IMAGE_DEEPSPEED : K8S_IMAGE_MEGATRON);
		k8s_trainer(b, p, fw, 14, 0);
		export_printf(b, "              resources:\n                limits:\n                  "
				 "%s: %d\n", k8s_gpu_resource(p), export_gpus_per_node(p));
		k8s_mounts(b, 14);
		k8s_volumes(b, 10);
	}
}

/* A Kubeflow Trainer TrainJob (trainer.kubeflow.org/v1alpha1) on the
 * torch-distributed ClusterTrainingRuntime the Trainer installs: the
 * trainer's image, command, args and env, numNodes, numProcPerNode and
 * resourcesPerNode; the volumes and mounts as a runtime patch of the
 * runtime's "node" job and container (RuntimePatch, Trainer v2.2 and
 * later, strategic-merged into the JobSet by name). */
void export_write_trainjob(struct export_buf *b, const struct sim_plan *p, enum plan_framework fw)
{
	char lab[4 * PRICE_NAME_MAX];

	k8s_comment(b, p, fw, "Kubeflow Trainer TrainJob");
	export_printf(b, "# Needs Kubeflow Trainer v2.2 or later and its torch-distributed runtime.\n");
	export_printf(b, "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n"
			 "  name: gpuplan-%s\nspec:\n  runtimeRef:\n    name: torch-distributed\n"
			 "    apiGroup: trainer.kubeflow.org\n    kind: ClusterTrainingRuntime\n"
			 "  trainer:\n    image: \"%s\"\n", export_job_label(lab, sizeof(lab), p->model.name, 1),
		      fw == PLAN_FRAMEWORK_DEEPSPEED ? K8S_IMAGE_DEEPSPEED : K8S_IMAGE_MEGATRON);
	k8s_trainer(b, p, fw, 4, 1);
	export_printf(b, "    numNodes: %d\n    numProcPerNode: %d\n    resourcesPerNode:\n"
			 "      limits:\n        %s: %d\n", export_nodes(p), export_gpus_per_node(p),
		      k8s_gpu_resource(p), export_gpus_per_node(p));
	export_printf(b, "  runtimePatches:\n    - manager: gpuplan\n      trainingRuntimeSpec:\n"
			 "        template:\n          spec:\n            replicatedJobs:\n"
			 "              - name: node\n                template:\n                  spec:\n"
			 "                    template:\n                      spec:\n");
	k8s_volumes(b, 24);
	export_printf(b, "                        containers:\n                          - name: node\n");
	k8s_mounts(b, 28);
}
